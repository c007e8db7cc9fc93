//! `flowdeck mcp` at the wire: raw JSON-RPC lines, garbage, a giant message, stdin closing,
//! SIGTERM, and a client that leaves in the middle of a run.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

const LONG: Duration = Duration::from_secs(30);

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("sleeper.yaml"),
            "name: sleeper\ndescription: Sleeps.\ninitial_state: a\nstates:\n  a: { action: { tool: run_command, params: { command: 'sleep 300', timeout: 300 } } }\n",
        )
        .unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_flowdeck"))
            .arg("--workflows")
            .arg(dir.path())
            .arg("mcp")
            .env("SHELL", "/bin/bash")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Server {
            child,
            stdin,
            lines,
            _dir: dir,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        self.response(id)
    }

    /// The response with this id; every line on stdout must be JSON-RPC.
    fn response(&mut self, id: u64) -> Value {
        loop {
            let line = self.lines.recv_timeout(LONG).expect("no response");
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|_| panic!("stdout carried a non-JSON line: {line}"));
            assert_eq!(message["jsonrpc"], "2.0", "{line}");
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    fn initialize(&mut self) {
        let init = self.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "wire", "version": "0"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "flowdeck");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    /// A call that must succeed: its structuredContent. An error result carries its payload
    /// as JSON text in `content`, shown when the call fails.
    fn call(&mut self, id: u64, tool: &str, args: Value) -> Value {
        let r = self.request(id, "tools/call", json!({"name": tool, "arguments": args}));
        assert_ne!(
            r["result"]["isError"], true,
            "{tool} failed: {}",
            r["result"]["content"][0]["text"]
        );
        r["result"]["structuredContent"].clone()
    }

    /// Waits for the process to exit on its own.
    fn exit_status(&mut self) -> Option<i32> {
        let deadline = Instant::now() + LONG;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("flowdeck mcp did not exit");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn garbage_and_giant_lines_do_not_break_the_server() {
    let mut s = Server::start();
    s.send("this is not json");
    s.send("{\"unclosed\": ");
    s.initialize();
    // Valid JSON that is not a message.
    s.send(r#"{"jsonrpc":"2.0","id":7,"whatever":true}"#);
    s.send(r#"[1, 2, 3]"#);
    // A line over the 16 MiB limit is dropped.
    let giant = format!(
        r#"{{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{{"name":"workflow_validate","arguments":{{"content":"{}"}}}}}}"#,
        "a".repeat(17 << 20)
    );
    s.send(&giant);
    // A 4 MiB message is read and answered: the manifest in it is too large, and says so.
    let big = format!(
        "name: big\ndescription: {}\ninitial_state: a\nstates:\n  a: {{ action: {{ tool: list_terminal_sessions }} }}\n",
        "b".repeat(4 << 20)
    );
    let checked = s.call(9, "workflow_validate", json!({"content": big}));
    assert_eq!(
        checked["violations"][0]["rule"], "file_too_large",
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
fn a_client_that_leaves_mid_run_cancels_it_and_nothing_survives() {
    let mut s = Server::start();
    s.initialize();
    let started = s.call(
        2,
        "run_workflow",
        json!({"workflow_name": "sleeper", "wait": false}),
    );
    let run_id = started["run_id"].as_str().unwrap().to_string();
    // Wait until the run's command is running, then note the session's shell.
    let mut id = 3;
    let pid = loop {
        id += 1;
        let listed = s.call(id, "list_terminal_sessions", json!({}));
        let status = s.call(id + 1000, "run_status", json!({"run_id": run_id}));
        if let Some(session) = listed["sessions"].as_array().unwrap().first()
            && status["states_executed"] == json!(1)
        {
            break session["pid"].as_u64().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // The client goes away: stdin closes.
    drop(s.stdin.take());
    assert_eq!(s.exit_status(), Some(0));
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the run's shell outlived the server"
    );
    // The journal says what happened to the run.
    let journal = std::fs::read_to_string(
        s._dir
            .path()
            .join(".flowdeck/runs")
            .join(format!("{run_id}.jsonl")),
    )
    .unwrap();
    assert!(
        journal.contains("\"final_state\":\"canceled\""),
        "{journal}"
    );
}
