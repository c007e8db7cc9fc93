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

/// A secret the terminal shows in the ways that once slipped past the masks.
const SHOWN: &str = "Hunter2Short-Pw9";

const SHOWN_MANY_WAYS: &str = r#"name: shown_many_ways
description: A secret echoed after a prompt so wide that it wraps, printed a colour a letter, and printed in two writes.
arguments:
  TOKEN: { description: a password, secret: true }
initial_state: ask
states:
  ask:
    action: { tool: send_input, params: { input_text: "read -r -p \"$(printf '%0110d' 0)\" ANSWER\n" } }
    transitions: [ { condition: always, next_state: prompted } ]
  prompted:
    action: { tool: await_output, params: { pattern: '0{110}$', since: last_input, timeout: 20 } }
    transitions: [ { condition: success, next_state: type } ]
  type:
    description: Its echo wraps at the 120th column, in the middle of the secret.
    action: { tool: send_input, params: { keys: [{ var: TOKEN }, { key: enter }] } }
    transitions: [ { condition: always, next_state: read } ]
  read:
    action: { tool: run_command, params: { command: 'echo "read ${#ANSWER}"' } }
    transitions: [ { condition: success, next_state: wrapped } ]
  wrapped:
    action: { tool: get_screen_content, params: {} }
    transitions: [ { condition: always, next_state: colours } ]
  colours:
    action: { tool: run_command, params: { command: 'printf ''%s'' "$TOKEN" | while IFS= read -r -n1 c; do printf ''%s\033[0m'' "$c"; done; echo' } }
    transitions: [ { condition: success, next_state: chunks } ]
  chunks:
    action: { tool: run_command, params: { command: 'printf "%s" "${TOKEN:0:7}"; sleep 0.3; printf "%s\n" "${TOKEN:7}"' } }
    transitions: [ { condition: success, next_state: screen } ]
  screen:
    action: { tool: get_screen_content, params: {} }
"#;

/// The characters a terminal would print for `text`: escape sequences and control
/// characters (line breaks among them) left out, as `vte` reads them.
fn printed(text: &str) -> String {
    struct Printed(String);
    impl vte::Perform for Printed {
        fn print(&mut self, c: char) {
            self.0.push(c);
        }
    }
    let mut out = Printed(String::new());
    vte::Parser::new().advance(&mut out, text.as_bytes());
    out.0
}

/// Fails when `text` shows SHOWN, whatever is between its letters.
fn assert_not_shown(what: &str, text: &str) {
    assert!(
        !printed(text).contains(SHOWN) && !text.contains(SHOWN),
        "{what} shows the secret:\n{text:?}"
    );
}

/// Every string in a JSON value, checked as the terminal would show it.
fn assert_json_not_shown(what: &str, value: &Value) {
    match value {
        Value::String(text) => assert_not_shown(what, text),
        Value::Array(items) => items.iter().for_each(|i| assert_json_not_shown(what, i)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            assert_not_shown(what, k);
            assert_json_not_shown(what, v);
        }),
        _ => {}
    }
}

#[test]
fn a_secret_wrapped_coloured_or_cut_by_the_terminal_reaches_no_journal_event_result_cast_replay_or_draft()
 {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("shown_many_ways.yaml"), SHOWN_MANY_WAYS).unwrap();
    let mut server = LineServer::start(dir.path());
    server.initialize();
    let result = server.call(
        2,
        "run_workflow",
        json!({"workflow_name": "shown_many_ways", "inputs": {"TOKEN": SHOWN}, "keep_session": true}),
    );
    assert_eq!(result["final_state"], "completed", "{result}");
    // The run saw the secret where it was shown: masks stand there, in every form.
    let log = result["execution_log"].to_string();
    assert!(log.contains("read 16"), "{log}");
    assert!(log.matches("********").count() >= 3, "{log}");
    assert_json_not_shown("the run's result", &result);
    let run_id = result["run_id"].as_str().unwrap();
    let session = result["session_id"].as_str().unwrap();

    let events = server.call(
        3,
        "run_events",
        json!({"run_id": run_id, "wait_seconds": 0}),
    );
    assert!(!events["events"].as_array().unwrap().is_empty(), "{events}");
    assert_json_not_shown("run_events", &events);

    let draft = server.call(
        4,
        "workflow_draft_from_session",
        json!({"session_id": session, "name": "drafted"}),
    );
    assert!(
        draft["content"].as_str().unwrap().contains("read -r -p"),
        "{draft}"
    );
    assert_json_not_shown("the draft of the run's session", &draft);
    drop(server.stdin.take());
    assert_eq!(server.exit_status(), Some(0));

    // The journal and the recording, as written.
    let runs = dir.path().join(".flowdeck/runs");
    let journal = std::fs::read_to_string(runs.join(format!("{run_id}.jsonl"))).unwrap();
    for line in journal.lines() {
        assert_json_not_shown("the journal", &serde_json::from_str(line).unwrap());
    }
    let stream =
        common::recorded_output(&runs.join(format!("{run_id}.cast")).display().to_string());
    assert!(stream.contains("read 16"), "{stream:?}");
    assert_not_shown("the recording", &stream);

    // Replayed: its plain text, and the stream as it was recorded.
    for raw in [false, true] {
        let mut replay = std::process::Command::new(env!("CARGO_BIN_EXE_flowdeck"));
        replay
            .arg("--workflows")
            .arg(dir.path())
            .args(["replay", run_id]);
        if raw {
            replay.arg("--raw");
        }
        let out = replay.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let shown = String::from_utf8(out.stdout).unwrap();
        assert!(shown.contains("read 16"), "{shown:?}");
        assert_not_shown(&format!("flowdeck replay (raw: {raw})"), &shown);
    }
}
