//! Secrets stay secret: the value of a `secret: true` input (and of a secret return value)
//! never reaches the journal, run results, run events, errors or the audit log, in any of the
//! forms it takes on a terminal, whatever the tool calls it.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::common;
use common::line_client::LineServer;

const TOKEN: &str = "S3cr3t-T0ken-value";
/// A printable value with quotes: typed as `'it'\''s ...'`.
const QUOTED: &str = "it's a 'quoted' pass";
/// A value with a tab: typed as printf octal escapes.
const TABBED: &str = "tab\tsecret-9f";
const OUT: &str = "out-S3cr3t-T0ken-value";

const MANIFEST: &str = r#"name: secretive
description: Uses secrets the ways workflows do.
arguments:
  TOKEN: { description: a token, secret: true }
  QUOTED: { description: a password with quotes, secret: true }
  TABBED: { description: a value with a tab, secret: true }
return_values:
  OUT: { description: derived from the token, secret: true }
initial_state: show
states:
  show:
    description: The screen, with the echo of the export line on it.
    action: { tool: get_screen_content, params: { content_mode: history } }
    transitions: [ { condition: always, next_state: echo } ]
  echo:
    action: { tool: run_command, params: { command: 'echo "token is $TOKEN and $QUOTED"; export OUT="out-$TOKEN"' } }
    transitions: [ { condition: always, next_state: capture } ]
  capture:
    action:
      tool: await_output
      params: { pattern: "token is ([^$ ]\\S*)", since: all, timeout: 5, captures: { CAPTURED: 1 } }
    transitions: [ { condition: always, next_state: fail } ]
  fail:
    description: Fails, with the secret in its output.
    action: { tool: run_command, params: { command: 'echo "bad $TOKEN" >&2; echo "captured $CAPTURED"; false' } }
"#;

/// Every form a secret takes as flowdeck types it.
fn forms() -> Vec<String> {
    let mut forms = vec![
        TOKEN.to_string(),
        QUOTED.to_string(),
        TABBED.to_string(),
        OUT.to_string(),
    ];
    forms.push(QUOTED.replace('\'', "'\\''"));
    forms.push("tab\\011secret-9f".to_string());
    // And as JSON writes them.
    forms.push(
        serde_json::to_string(TABBED)
            .unwrap()
            .trim_matches('"')
            .to_string(),
    );
    forms
}

fn assert_clean(what: &str, text: &str) {
    for form in forms() {
        assert!(
            !text.contains(&form),
            "{what} holds the secret {form:?}:\n{text}"
        );
    }
}

fn inputs() -> Value {
    json!({"TOKEN": TOKEN, "QUOTED": QUOTED, "TABBED": TABBED})
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn secret_values_reach_no_journal_result_event_error_or_audit_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secretive.yaml"), MANIFEST).unwrap();
    let mut server = LineServer::start(dir.path());
    server.initialize();

    // By name, waiting: the full result.
    let result = server.request(
        2,
        "tools/call",
        json!({"name": "run_workflow", "arguments": {"workflow_name": "secretive", "inputs": inputs()}}),
    );
    let structured = &result["result"]["structuredContent"];
    assert_eq!(structured["final_state"], "completed", "{result}");
    // The run did see the values: the masks stand where they were.
    let text = result.to_string();
    assert!(text.contains("token is ********"), "{text}");
    assert_clean("the run result", &text);
    let run_id = structured["run_id"].as_str().unwrap().to_string();
    // Its terminal was recorded; the recording is checked for secrets below, with the journal.
    let recordings = structured["recordings"].as_array().unwrap();
    assert_eq!(recordings.len(), 1, "{structured}");
    let shown = common::recorded_output(recordings[0].as_str().unwrap());
    assert!(shown.contains("token is ********"), "{shown}");

    // The same run, through every tool that reads it back.
    let events = server.call(
        3,
        "run_events",
        json!({"run_id": run_id, "wait_seconds": 0}),
    );
    assert_clean("run_events", &events.to_string());
    let status = server.call(4, "run_status", json!({"run_id": run_id}));
    assert_clean("run_status", &status.to_string());
    assert_eq!(
        &status["result"]["recordings"], &structured["recordings"],
        "{status}"
    );

    // Other ways of naming the workflow, and an inline manifest.
    let resolved = server.request(
        5,
        "tools/call",
        json!({"name": "workflow_resolve_inputs", "arguments": {"name": "secretive", "inputs": inputs()}}),
    );
    assert_clean("workflow_resolve_inputs", &resolved.to_string());
    let inline = server.request(
        6,
        "tools/call",
        json!({"name": "run_workflow", "arguments": {"content": MANIFEST.replace("name: secretive", "name: inline_secretive"), "inputs": inputs()}}),
    );
    assert_clean("an inline run's result", &inline.to_string());
    let dynamic = server.request(
        7,
        "tools/call",
        json!({"name": "wf_secretive", "arguments": inputs()}),
    );
    assert_clean("a wf_ tool's result", &dynamic.to_string());
    // The last run's values are offered for the next one, never a secret's.
    let preview = server.call(8, "workflow_preview_inputs", json!({"name": "secretive"}));
    assert_clean("workflow_preview_inputs", &preview.to_string());
    assert!(!preview.to_string().contains("last_value"), "{preview}");

    drop(server.stdin.take());
    assert_eq!(server.exit_status(), Some(0));

    let meta = dir.path().join(".flowdeck");
    let runs = meta.join("runs");
    for entry in std::fs::read_dir(&runs).unwrap() {
        let path = entry.unwrap().path();
        assert_clean(
            &path.display().to_string(),
            &std::fs::read_to_string(&path).unwrap(),
        );
        assert_eq!(mode(&path), 0o600, "{}", path.display());
    }
    let audit = meta.join("audit.jsonl");
    let audit_text = std::fs::read_to_string(&audit).unwrap();
    assert!(audit_text.contains("run_workflow"), "{audit_text}");
    assert_clean("the audit log", &audit_text);
    assert_eq!(mode(&audit), 0o600);
}

const TYPIST: &str = r#"name: typist
description: Types a password into a silent prompt, as a person would.
arguments:
  PASSWORD: { description: the password, secret: true }
return_values:
  LENGTH: { description: how long the password read was }
initial_state: ask
states:
  ask:
    action: { tool: send_input, params: { input_text: "read -rs -p 'Password: ' PW; echo; LENGTH=${#PW}; echo \"read $LENGTH\"\n" } }
    transitions: [ { condition: always, next_state: prompted } ]
  prompted:
    action: { tool: await_output, params: { pattern: '^Password: $', since: last_input, timeout: 20 } }
    transitions: [ { condition: success, next_state: type } ]
  type:
    action: { tool: send_input, params: { keys: [{ var: PASSWORD }, { key: enter }] } }
    transitions: [ { condition: always, next_state: done } ]
  done:
    action: { tool: await_output, params: { pattern: '^read (\d+)$', timeout: 20 } }
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_var_key_types_a_secret_into_a_silent_prompt_and_nothing_writes_it_down() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("typist.yaml"), TYPIST).unwrap();
    let engine = common::test_engine(dir.path(), 1, false);
    let request = common::run_request("typist", &[("PASSWORD", TOKEN)]);
    let result = engine.run(request).await.unwrap();
    assert!(result.success, "{result:?}");
    assert_eq!(
        result.return_values.get("LENGTH").map(String::as_str),
        Some(TOKEN.len().to_string().as_str()),
        "{result:?}"
    );
    let runs = dir.path().join(".flowdeck/runs");
    let files: Vec<_> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(
        files
            .iter()
            .any(|p| p.extension().is_some_and(|e| e == "cast")),
        "{files:?}"
    );
    for path in files {
        assert_clean(
            &path.display().to_string(),
            &std::fs::read_to_string(&path).unwrap(),
        );
    }
    assert_clean("the result", &serde_json::to_string(&result).unwrap());
    engine.shutdown().await;
}
