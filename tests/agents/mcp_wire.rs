//! `flowdeck mcp` at the wire: raw JSON-RPC lines, garbage, a giant message, stdin closing,
//! SIGTERM, and a client that leaves while its run is awaited. Each test's folder gets a
//! server of its own, started by its first `flowdeck mcp`.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use crate::common;
use common::line_client::LineServer;

/// A folder with one workflow that sleeps, and a server on it; the folder lives as long as
/// the server.
struct Server {
    server: LineServer,
    dir: tempfile::TempDir,
}

impl std::ops::Deref for Server {
    type Target = LineServer;
    fn deref(&self) -> &LineServer {
        &self.server
    }
}

impl std::ops::DerefMut for Server {
    fn deref_mut(&mut self) -> &mut LineServer {
        &mut self.server
    }
}

impl Server {
    fn start() -> Server {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("sleeper.yaml"), common::SLEEPER).unwrap();
        Server {
            server: LineServer::start(dir.path()),
            dir,
        }
    }
}

/// The error a message got, with its id: the next message on stdout must be it.
fn next_error(s: &mut Server) -> (Value, i64, String) {
    let m = s.next_message();
    assert!(
        m["error"].is_object(),
        "expected an error response, got {m}"
    );
    (
        m["id"].clone(),
        m["error"]["code"].as_i64().unwrap(),
        m["error"]["message"].as_str().unwrap().to_string(),
    )
}

#[test]
fn every_message_that_cannot_be_served_gets_an_answer() {
    let mut s = Server::start();
    // Before the handshake: a request is told what to do; a notification gets nothing (and
    // does not end the connection, as it would in rmcp).
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s.send(r#"{"jsonrpc":"2.0","id":"early","method":"tools/list"}"#);
    let (id, code, message) = next_error(&mut s);
    assert_eq!((id, code), (json!("early"), -32600));
    assert!(message.contains("send `initialize` first"), "{message}");
    // Not JSON: a parse error with a null id.
    s.send("this is not json");
    assert_eq!(next_error(&mut s).0, Value::Null);
    s.send("{\"unclosed\": ");
    let (id, code, _) = next_error(&mut s);
    assert_eq!((id, code), (Value::Null, -32700));
    s.initialize();
    // Valid JSON that is not a message: invalid request, with the id when it has one.
    s.send(r#"{"jsonrpc":"2.0","id":7,"whatever":true}"#);
    let (id, code, message) = next_error(&mut s);
    assert_eq!((id, code), (json!(7), -32600), "{message}");
    s.send(r#"[1, 2, 3]"#);
    let (id, code, message) = next_error(&mut s);
    assert_eq!((id, code), (Value::Null, -32600));
    assert!(message.contains("batches"), "{message}");
    // Arguments that are not an object, and params that do not fit the method.
    s.send(r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"workflow_list","arguments":[1]}}"#);
    let (id, code, message) = next_error(&mut s);
    assert_eq!((id, code), (json!(12), -32602));
    assert!(message.contains("must be a JSON object"), "{message}");
    s.send(r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":3}}"#);
    let (id, code, message) = next_error(&mut s);
    assert_eq!((id, code), (json!(13), -32602), "{message}");
    // A line over the 16 MiB limit is not kept, yet answered with its id and the limit, even
    // with the id after the giant part.
    let giant = format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"workflow_validate","arguments":{{"content":"{}"}}}},"id":8}}"#,
        "a".repeat(17 << 20)
    );
    s.send(&giant);
    let (id, code, message) = next_error(&mut s);
    assert_eq!((id, code), (json!(8), -32600));
    assert!(message.contains("16777216 bytes"), "{message}");
    // A giant notification gets no answer: the next message is the next response.
    let giant_notification = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/x","params":{{"p":"{}"}}}}"#,
        "n".repeat(17 << 20)
    );
    s.send(&giant_notification);
    // A 4 MiB message is read and answered: the manifest in it is too large, and says so.
    let big = format!(
        "name: big\ndescription: {}\ninitial_state: a\nstates:\n  a: {{ action: {{ tool: list_terminal_sessions }} }}\n",
        "b".repeat(4 << 20)
    );
    s.send(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "workflow_validate", "arguments": {"content": big}}}).to_string());
    let checked = s.next_message();
    assert_eq!(checked["id"], 9, "{checked}");
    assert_eq!(
        checked["result"]["structuredContent"]["violations"][0]["rule"], "file_too_large",
        "{checked}"
    );
    // And the server still answers normally.
    let listed = s.call(10, "workflow_list", json!({}));
    assert_eq!(listed["workflows"][0]["name"], "sleeper");
    // A method that does not exist is a JSON-RPC error, not silence.
    let unknown = s.request(11, "no/such/method", json!({}));
    assert!(unknown["error"]["code"].is_number(), "{unknown}");
    drop(s.stdin.take());
    assert_eq!(s.exit_status(), Some(0));
}

#[test]
fn sigterm_ends_the_server_cleanly() {
    let mut s = Server::start();
    s.initialize();
    let pid = nix::unistd::Pid::from_raw(s.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    assert_eq!(s.exit_status(), Some(0));
}

#[test]
fn a_client_that_leaves_while_its_run_is_awaited_cancels_it_and_nothing_of_it_survives() {
    let mut s = Server::start();
    s.initialize();
    // The call waits for the run (the default): the run is the call's.
    s.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "run_workflow", "arguments": {"workflow_name": "sleeper"}}})
        .to_string(),
    );
    // Wait until the run's command is running, then note the session's shell.
    let mut id = 3;
    let (run_id, pid) = common::wait_until(common::LONG, "the run's command to start", || {
        id += 1;
        let runs = s.call(id, "run_list", json!({}));
        let run = runs["active"].as_array()?.first()?.clone();
        let listed = s.call(id + 1000, "list_terminal_sessions", json!({}));
        let session = listed["sessions"].as_array()?.first()?.clone();
        (run["states_executed"] == json!(1)).then(|| {
            (
                run["run_id"].as_str().unwrap_or_default().to_string(),
                session["pid"].as_u64().unwrap_or_default(),
            )
        })
    });
    // The client goes away: stdin closes, the relay ends.
    drop(s.stdin.take());
    assert_eq!(s.exit_status(), Some(0));
    // The server cancels the call it no longer has anyone to answer, and with it the run.
    let journal_file = s
        .dir
        .path()
        .join(".flowdeck/runs")
        .join(format!("{run_id}.jsonl"));
    let journal = common::wait_until(common::LONG, "the run's end", || {
        std::fs::read_to_string(&journal_file)
            .ok()
            .filter(|j| j.contains("\"run_finished\""))
    });
    assert!(
        journal.contains("\"final_state\":\"canceled\""),
        "{journal}"
    );
    common::wait_until(common::LONG, "the run's shell gone", || {
        (!std::path::Path::new(&format!("/proc/{pid}")).exists()).then_some(())
    });
}

#[test]
fn sizes_out_of_range_are_clamped_whatever_they_are() {
    let mut s = Server::start();
    s.initialize();
    let opened = s.call(2, "open_terminal", json!({"command": ["cat"]}));
    let id = opened["session_id"].as_str().unwrap().to_string();
    for (n, (cols, rows, expected)) in [
        (json!(70000), json!(-5), (1000, 2)),
        (json!(1e30), json!(3.6), (1000, 4)),
        (
            json!(0),
            json!(99999999999999999999u128.to_string().parse::<f64>().unwrap()),
            (2, 500),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let resized = s.call(
            10 + n as u64,
            "resize_terminal",
            json!({"session_id": id, "cols": cols, "rows": rows}),
        );
        assert_eq!(
            (
                resized["cols"].as_u64().unwrap(),
                resized["rows"].as_u64().unwrap()
            ),
            expected,
            "{resized}"
        );
        assert_eq!(resized["clamped"], true, "{resized}");
    }
}

#[test]
fn an_answer_for_one_workflow_never_answers_another_ones_run() {
    let mut s = Server::start();
    std::fs::write(
        s.dir.path().join("asker.yaml"),
        "name: asker\ndescription: Asks.\ninitial_state: ask\nstates:\n  ask: { action: { tool: prompt, params: { prompt: 'Go?' } } }\n",
    )
    .unwrap();
    s.initialize();
    let started = s.call(
        2,
        "run_workflow",
        json!({"workflow_name": "asker", "wait": false}),
    );
    let run_id = started["run_id"].as_str().unwrap().to_string();
    let mut id = 100;
    common::wait_until(common::LONG, "the prompt", || {
        id += 1;
        let status = s.call(id, "run_status", json!({"run_id": run_id}));
        (status["status"] == "waiting_for_input").then_some(())
    });
    let wrong = s.request(
        3,
        "tools/call",
        json!({"name": "workflow_next", "arguments": {"workflowId": "sleeper", "run_id": run_id, "answer": "yes"}}),
    );
    assert_eq!(wrong["result"]["isError"], true, "{wrong}");
    let payload: Value =
        serde_json::from_str(wrong["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(payload["error_code"], "INVALID_ARGUMENTS", "{payload}");
    assert!(
        payload["message"]
            .as_str()
            .unwrap()
            .contains("is a run of 'asker'"),
        "{payload}"
    );
    // Still waiting: the wrong call answered nothing.
    let status = s.call(4, "run_status", json!({"run_id": run_id}));
    assert_eq!(status["status"], "waiting_for_input", "{status}");
    let right = s.call(
        5,
        "workflow_next",
        json!({"workflowId": "asker", "run_id": run_id, "answer": "yes"}),
    );
    assert_eq!(right["answered"], true, "{right}");
}
