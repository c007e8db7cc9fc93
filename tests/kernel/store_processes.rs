//! The workflows folder through real `flowdeck mcp` processes.
//!
//! Two processes on one folder: a save, rename or delete with the version both read must
//! succeed in exactly one of them, whichever is faster, and the file on disk must be the
//! winner's. The in-process lock alone cannot give that; these tests fail without the lock file
//! in `.flowdeck/`. And a folder holding a named pipe answers every tool.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use flowdeck::store::content_version;
use serde_json::{Value, json};
use std::path::Path;

use crate::common;
use common::line_client::LineServer;

const ROUNDS: u64 = 40;

fn manifest(name: &str, marker: &str) -> String {
    format!(
        "# {marker}\nname: {name}\ndescription: written by {marker}\ninitial_state: start\nstates:\n  start:\n    action: {{tool: send_input, params: {{input_text: \"echo {marker}\\n\"}}}}\n"
    )
}

/// A started, initialized server whose engine has loaded the folder.
fn server(dir: &Path, id: &mut u64) -> LineServer {
    let mut server = LineServer::start(dir);
    server.initialize();
    *id += 1;
    // The engine opens alongside the handshake; a list waits for it.
    server.call(*id, "workflow_list", json!({}));
    server
}

fn tool_call(id: u64, tool: &str, args: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}})
        .to_string()
}

/// `Ok(())` for a successful call, else the error payload's `error_code`.
fn outcome(response: &Value) -> Result<(), String> {
    let result = &response["result"];
    if result["isError"] != true {
        return Ok(());
    }
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    let payload: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    Err(payload["error_code"]
        .as_str()
        .unwrap_or("unparsable error payload")
        .to_string())
}

/// Sends both calls before reading either answer, so that the two processes race.
fn race(
    servers: &mut [LineServer; 2],
    id: &mut u64,
    calls: [(&str, Value); 2],
) -> [Result<(), String>; 2] {
    let base = *id;
    for (i, (tool, args)) in calls.into_iter().enumerate() {
        servers[i].send(&tool_call(base + 1 + i as u64, tool, args));
    }
    *id += 2;
    [
        outcome(&servers[0].response(base + 1)),
        outcome(&servers[1].response(base + 2)),
    ]
}

/// The index of the one call that succeeded; the other must have failed with one of `losing`.
fn one_winner(round: u64, results: &[Result<(), String>; 2], losing: &[&str]) -> usize {
    let winners: Vec<usize> = (0..2).filter(|i| results[*i].is_ok()).collect();
    let [winner] = winners[..] else {
        panic!("round {round}: expected exactly one success, got {results:?}");
    };
    let loser = results[1 - winner].as_ref().err().map(String::as_str);
    assert!(
        loser.is_some_and(|code| losing.contains(&code)),
        "round {round}: the loser gets one of {losing:?}, not {loser:?}"
    );
    winner
}

#[test]
fn concurrent_saves_from_two_processes_one_wins() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shared.yaml");
    std::fs::write(&file, manifest("shared", "base")).unwrap();
    let mut id = 1;
    let mut servers = [server(dir.path(), &mut id), server(dir.path(), &mut id)];
    for round in 0..ROUNDS {
        let base = content_version(&std::fs::read(&file).unwrap());
        let contents = [
            manifest("shared", &format!("a{round}")),
            manifest("shared", &format!("b{round}")),
        ];
        let call = |content: &str| {
            (
                "workflow_save",
                json!({"content": content, "expected_version": base}),
            )
        };
        let results = race(
            &mut servers,
            &mut id,
            [call(&contents[0]), call(&contents[1])],
        );
        let winner = one_winner(round, &results, &["WORKFLOW_VERSION_CONFLICT"]);
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            contents[winner],
            "round {round}: the file on disk is the winner's"
        );
    }
}

#[test]
fn concurrent_renames_and_deletes_from_two_processes_one_wins() {
    let dir = tempfile::tempdir().unwrap();
    let mut id = 1;
    let mut servers = [server(dir.path(), &mut id), server(dir.path(), &mut id)];
    for round in 0..ROUNDS / 2 {
        let name = format!("subject_{round}");
        let content = manifest(&name, "base");
        let file = dir.path().join(format!("{name}.yaml"));
        std::fs::write(&file, &content).unwrap();
        let version = content_version(content.as_bytes());
        // Each process must know the file before it can rename or delete it.
        for server in servers.iter_mut() {
            id += 1;
            common::wait_until(
                std::time::Duration::from_secs(10),
                "both servers to see the new file",
                || {
                    id += 1;
                    let doc = server.request(
                        id,
                        "tools/call",
                        json!({"name": "workflow_get", "arguments": {"name": name}}),
                    );
                    (doc["result"]["structuredContent"]["version"] == json!(version)).then_some(())
                },
            );
        }
        let renamed = format!("renamed_{round}");
        let rename = (
            "workflow_rename",
            json!({"name": name, "new_name": renamed, "expected_version": version}),
        );
        let delete = (
            "workflow_delete",
            json!({"name": name, "expected_version": version}),
        );
        let calls = if round % 2 == 0 {
            [rename, delete]
        } else {
            [delete, rename]
        };
        let rename_first = round % 2 == 0;
        let results = race(&mut servers, &mut id, calls);
        // The loser's own watcher may or may not have seen the winner's change yet: the name
        // is either gone from its catalog or still there with a file that is not.
        let winner = one_winner(
            round,
            &results,
            &["WORKFLOW_VERSION_CONFLICT", "WORKFLOW_NOT_FOUND"],
        );
        let rename_won = (winner == 0) == rename_first;
        let renamed_file = dir.path().join(format!("{renamed}.yaml"));
        assert!(!file.exists(), "round {round}: the old file is gone");
        assert_eq!(
            renamed_file.exists(),
            rename_won,
            "round {round}: the renamed file exists exactly when the rename won"
        );
    }
}

/// A manifest name that is a link to a named pipe once blocked the folder scan with the
/// catalog locked: the engine never opened and every workflow tool hung. Each answer below
/// must come within the line client's deadline.
#[test]
fn a_fifo_in_the_folder_hangs_no_tool() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("fine.yaml"), manifest("fine", "x")).unwrap();
    let pipe = dir.path().join("pipe");
    nix::unistd::mkfifo(&pipe, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    std::os::unix::fs::symlink(&pipe, dir.path().join("piped.yaml")).unwrap();
    let mut id = 1;
    let mut server = server(dir.path(), &mut id);
    let list = server.call(10, "workflow_list", json!({}));
    let workflows = list["workflows"].as_array().unwrap();
    let status_of = |name: &str| {
        workflows
            .iter()
            .find(|w| w["name"] == name)
            .map(|w| w["status"].clone())
    };
    assert_eq!(status_of("fine"), Some(json!("valid")), "{list}");
    assert_eq!(status_of("piped.yaml"), Some(json!("invalid")), "{list}");
    let doc = server.call(11, "workflow_get", json!({"name": "piped.yaml"}));
    assert_eq!(doc["violations"][0]["rule"], "not_a_regular_file", "{doc}");
    server.call(12, "workflow_get", json!({"name": "fine"}));
}
