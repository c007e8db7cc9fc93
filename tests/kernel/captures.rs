//! Values a step captures reach the shell for the steps after it, whoever had the terminal
//! when they were captured (issue 37, F27: interactive_installer's path never reached `cat`).

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use flowdeck::engine::FinalState;

use crate::common;
use common::LONG;

/// A program prints a path, then reads a line before it ends: the path is captured while the
/// program has the terminal, the line typed goes to the program (and nothing else does), and
/// the command after it, at the shell's prompt, finds both captures exported.
const CAPTURED_WHILE_BUSY: &str = r#"
name: captured_while_busy
description: Captures from a program in the foreground, used by the next command.
return_values:
  SEEN: { description: what the shell had in WHERE and GOT }
initial_state: start
states:
  start:
    action: { tool: send_input, params: { input_text: "bash -c 'echo \"at: /tmp/cap-$((6*7))\"; read -r x; echo \"got-$x-end\"; sleep 0.3'\n" } }
    transitions: [{ next_state: capture }]
  capture:
    action: { tool: await_output, params: { pattern: 'at: (/tmp/cap-\d+)', timeout: 10, captures: { WHERE: 1 } } }
    transitions: [{ condition: success, next_state: answer }]
  answer:
    action: { tool: send_input, params: { input_text: "hello\n" } }
    transitions: [{ next_state: answered }]
  answered:
    action: { tool: await_output, params: { pattern: 'got-([a-z]+)-end', timeout: 10, captures: { GOT: 1 } } }
    transitions: [{ condition: success, next_state: use }]
  use:
    action: { tool: run_command, params: { command: 'export SEEN="$WHERE $GOT"' } }
"#;

#[tokio::test]
async fn a_value_captured_while_a_program_has_the_terminal_reaches_the_next_command() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("captured_while_busy.yaml"),
        CAPTURED_WHILE_BUSY,
    )
    .unwrap();
    let engine = common::test_engine(dir.path(), 8, false);
    let result = common::within(
        LONG,
        "the run to end",
        engine.run(common::run_request("captured_while_busy", &[])),
    )
    .await
    .unwrap();
    assert_eq!(
        result.final_state,
        FinalState::Completed,
        "{:?}\n{}",
        result.error,
        serde_json::to_string_pretty(&result.execution_log).unwrap()
    );
    // "got-hello-end": the program read exactly the line typed for it, no export.
    assert_eq!(result.return_values["SEEN"], "/tmp/cap-42 hello");
}
