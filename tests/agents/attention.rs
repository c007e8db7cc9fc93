//! The attention list as an agent reads it (issue 39), through `flowdeck mcp` and the folder's
//! server it starts: a terminal that goes quiet, whose program fails, that is acknowledged;
//! the resource's notifications; and the counts in `flowdeck ls`.

#![allow(clippy::unwrap_used)]

use crate::common;

use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long anything here may take to show.
const DEADLINE: Duration = Duration::from_secs(30);

fn state(item: Option<&Value>) -> Option<&str> {
    item.and_then(|i| i["state"].as_str())
}

/// `flowdeck ls` under `runtime`: its output.
fn ls(folder: &Path, runtime: &Path) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(folder)
        .arg("ls")
        .env("XDG_RUNTIME_DIR", runtime)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_terminal_goes_quiet_fails_and_is_cleared_once_acknowledged() {
    let (folder, runtime) = common::tiny_folder();
    // A short setting, which reaches the server the agent's `flowdeck mcp` starts.
    let mut agent = common::mcp_agent_with(
        folder.path(),
        runtime.path(),
        &[],
        &[("FLOWDECK_QUIET_AFTER", "1s")],
    );
    let mut ids = 10;
    let session = agent.open_bash(2);

    // Nothing printed after its prompt: quiet, since its last output.
    let list = agent.attention_until(&mut ids, &session, "the terminal quiet", |i| {
        state(i) == Some("quiet")
    });
    let item = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == session.as_str())
        .unwrap()
        .clone();
    assert_eq!(item["kind"], "terminal", "{item}");
    assert_eq!(item["reason"], "no output for 1s or more", "{item}");
    assert_eq!(list["counts"]["quiet"], 1, "{list}");
    assert!(
        ls(folder.path(), runtime.path()).contains("attention: 1 quiet"),
        "flowdeck ls counts it"
    );

    // Output wakes it: quiet again only after a second without any, since the new output.
    agent.type_into(3, &session, "echo woke\n");
    agent.attention_until(&mut ids, &session, "quiet since the new output", |i| {
        state(i) == Some("quiet") && i.unwrap()["since"].as_str() > item["since"].as_str()
    });

    // Its program exits non-zero: failed, and it stays so.
    agent.type_into(4, &session, "exit 3\n");
    let list = agent.attention_until(&mut ids, &session, "the terminal failed", |i| {
        state(i) == Some("failed")
    });
    assert!(
        list.to_string().contains("bash ended: exit code 3"),
        "{list:#}"
    );
    assert!(
        ls(folder.path(), runtime.path()).contains("attention: 1 failed"),
        "flowdeck ls counts it"
    );

    // Acknowledged: gone for everyone; an id with nothing to clear is said to be ignored.
    ids += 1;
    let acked = agent.call(ids, "attention", json!({"ack": [session, "s999"]}));
    assert_eq!(
        acked["acknowledged"],
        json!({"cleared": [session], "ignored": ["s999"]}),
        "{acked}"
    );
    assert!(
        !acked.to_string().contains(&format!("\"id\":\"{session}\"")),
        "{acked:#}"
    );
    ids += 1;
    let again = agent.call(ids, "attention", json!({"ack": [session]}));
    assert_eq!(
        again["acknowledged"]["ignored"],
        json!([session]),
        "a second ack clears nothing: {again}"
    );
}

#[test]
fn the_attention_resource_is_told_when_the_list_changes() {
    let (folder, runtime) = common::tiny_folder();
    let mut agent = common::mcp_agent(folder.path(), runtime.path(), &[]);
    let listed = agent.request(2, "resources/list", json!({}));
    assert!(
        listed.to_string().contains("flowdeck://attention"),
        "{listed}"
    );
    agent.request(
        3,
        "resources/subscribe",
        json!({"uri": "flowdeck://attention"}),
    );

    // A terminal opened is a new item: the subscriber is told, without a list change.
    agent.send(
        &json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "open_terminal", "arguments": {"command": ["bash", "--norc", "--noprofile"]}}}).to_string(),
    );
    let (_, before) = agent.response_after(4);
    let end = Instant::now() + DEADLINE;
    let mut seen = before;
    let told = |m: &Value| {
        m["method"] == "notifications/resources/updated"
            && m["params"]["uri"] == "flowdeck://attention"
    };
    while !seen.iter().any(told) {
        assert!(
            Instant::now() < end,
            "no update of flowdeck://attention: {seen:#?}"
        );
        seen.push(agent.next_message());
    }
    assert!(
        !seen
            .iter()
            .any(|m| m["method"] == "notifications/tools/list_changed"),
        "the attention list is no tool list change: {seen:#?}"
    );
    let read = agent.request(5, "resources/read", json!({"uri": "flowdeck://attention"}));
    let text = read["result"]["contents"][0]["text"].as_str().unwrap();
    let list: Value = serde_json::from_str(text).unwrap();
    assert_eq!(list["counts"]["running"], 1, "{list:#}");
    assert_eq!(list["items"][0]["kind"], "terminal", "{list:#}");
}

/// `flowdeck run` at a terminal asks its question, says who else may answer it, and once an
/// agent has, stops asking and goes on to the end.
#[test]
fn flowdeck_run_says_its_question_may_be_answered_elsewhere_and_stops_asking_once_it_is() {
    use std::io::Read;
    let (folder, runtime) = common::tiny_folder();
    std::fs::write(folder.path().join("asker.yaml"), common::studio::ASKER).unwrap();
    let mut server = common::serve_with(folder.path(), runtime.path(), &[]);
    let mut run = std::process::Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(folder.path())
        .args(["run", "asker"])
        .envs(common::studio::quiet_env())
        .env("XDG_RUNTIME_DIR", runtime.path())
        .env("SHELL", "/bin/bash")
        // Held open and never written: only someone else can answer.
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut agent = common::mcp_agent(folder.path(), runtime.path(), &[]);
    let mut ids = 10;
    let mut run_id = String::new();
    let end = Instant::now() + DEADLINE;
    while run_id.is_empty() {
        ids += 1;
        let list = agent.call(ids, "attention", json!({}));
        if let Some(item) = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["state"] == "needs_you")
        {
            run_id = item["id"].as_str().unwrap().to_string();
        }
        assert!(
            Instant::now() < end,
            "the run never needed anyone: {list:#}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    ids += 1;
    agent.call(
        ids,
        "workflow_next",
        json!({"workflowId": "asker", "run_id": run_id, "answer": "staging"}),
    );
    let status = common::wait_until(DEADLINE, "flowdeck run to end", || run.try_wait().unwrap());
    let mut said = String::new();
    run.stderr
        .take()
        .unwrap()
        .read_to_string(&mut said)
        .unwrap();
    let mut out = String::new();
    run.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    assert!(status.success(), "{said}\n{out}");
    assert!(
        said.contains(&format!(
            "run {run_id} needs an answer: type it here, or answer it in a studio"
        )),
        "{said}"
    );
    assert!(said.contains("? Which environment?"), "{said}");
    assert!(said.contains("answered by agent: wire"), "{said}");
    assert!(out.contains("asker: completed"), "{said}\n{out}");
    let _ = server.kill();
    let _ = server.wait();
}
