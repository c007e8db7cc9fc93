//! Waiting for a program to settle (`await_output` with `quiet_ms`), against real programs:
//! `ls`, vim starting up, a spinner that stops, a program that never goes quiet.
// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use flowdeck::engine::{Actor, AwaitOutput, Engine, EngineError};
use flowdeck::term::WaitOutcome;
use flowdeck::workflow::action::{
    AwaitOutputParams, GetScreenContentParams, OpenTerminalParams, SendInputParams,
};
use serde_json::{Value, json};
use std::sync::Arc;

use crate::common;
use common::params;

async fn bash(cols: u16, rows: u16) -> (Arc<Engine>, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let engine = common::test_engine(dir.path(), 8, false);
    let id = engine
        .open_terminal(
            &params::<OpenTerminalParams>(json!({
                "command": ["bash", "--norc", "--noprofile"],
                "env": {"PS1": "$ ", "HISTFILE": "/dev/null"},
                "cwd": dir.path(),
                "cols": cols, "rows": rows,
            })),
            &Actor::person(),
        )
        .await
        .unwrap()
        .session_id;
    (engine, id, dir)
}

fn send(e: &Engine, id: &str, text: &str) {
    e.send_input(
        id,
        &params::<SendInputParams>(json!({"input_text": text})),
        &Actor::person(),
    )
    .unwrap();
}

async fn wait(e: &Engine, id: &str, p: Value) -> AwaitOutput {
    e.await_output(id, &params::<AwaitOutputParams>(p), None, &Actor::person())
        .await
        .unwrap()
}

fn screen(e: &Engine, id: &str) -> String {
    e.get_screen_content(id, &GetScreenContentParams::default(), &Actor::person())
        .unwrap()
        .content
}

#[tokio::test]
async fn quiet_after_ls_returns_once_the_listing_and_prompt_are_drawn() {
    let (e, id, dir) = bash(100, 30).await;
    for name in ["alpha", "beta", "gamma"] {
        std::fs::write(dir.path().join(name), b"").unwrap();
    }
    send(&e, &id, "ls\n");
    let out = wait(&e, &id, json!({"quiet_ms": 200, "timeout": 30})).await;
    assert_eq!(out.result.outcome, WaitOutcome::Matched, "{out:?}");
    assert!(out.result.quiet_ms.unwrap() >= 200.0, "{out:?}");
    assert_eq!(out.result.matched_text, None);
    let shown = screen(&e, &id);
    assert!(
        shown.contains("alpha") && shown.contains("gamma"),
        "{shown}"
    );
    assert!(
        shown.trim_end().ends_with('$'),
        "the prompt is back: {shown}"
    );
}

#[tokio::test]
async fn the_pattern_then_quiet_waits_past_later_output() {
    let (e, id, _dir) = bash(100, 30).await;
    // After START, a pause shorter than the quiet asked for, then more output.
    send(&e, &id, "echo START; sleep 0.2; echo MORE-$((6*7))\n");
    let out = wait(
        &e,
        &id,
        json!({"pattern": "^START", "quiet_ms": 1500, "timeout": 30}),
    )
    .await;
    assert_eq!(out.result.outcome, WaitOutcome::Matched, "{out:?}");
    assert_eq!(out.result.matched_text.as_deref(), Some("START"));
    assert!(out.result.quiet_ms.unwrap() >= 1500.0, "{out:?}");
    assert!(
        screen(&e, &id).contains("MORE-42"),
        "it waited past the pause"
    );
}

#[tokio::test]
async fn quiet_after_vim_starts_sees_its_whole_first_screen() {
    let (e, id, dir) = bash(80, 24).await;
    std::fs::write(dir.path().join("notes.txt"), "first line\nsecond line\n").unwrap();
    send(&e, &id, "vim -u NONE -N -i NONE notes.txt\n");
    let out = wait(
        &e,
        &id,
        json!({"quiet_ms": 300, "quiet_on": "screen", "timeout": 30}),
    )
    .await;
    assert_eq!(out.result.outcome, WaitOutcome::Matched, "{out:?}");
    let shown = screen(&e, &id);
    assert!(shown.starts_with("first line\nsecond line\n~"), "{shown}");
    assert!(
        shown.contains("\"notes.txt\""),
        "vim's message line: {shown}"
    );
    send(&e, &id, "\x1b:q!\r");
    // The shell is back (typed before vim is gone, the next line would go to vim).
    let prompt = wait(&e, &id, json!({"pattern": "^\\$ $", "timeout": 30})).await;
    assert_eq!(prompt.result.outcome, WaitOutcome::Matched, "{prompt:?}");
    send(&e, &id, "echo BACK-$((1+1))\n");
    let back = wait(&e, &id, json!({"pattern": "^BACK-2", "timeout": 30})).await;
    assert_eq!(back.result.outcome, WaitOutcome::Matched, "{back:?}");
}

/// A spinner that turns, then keeps redrawing its last frame for ever: the output is never
/// quiet, the screen is.
#[tokio::test]
async fn a_spinner_that_stops_is_quiet_on_screen_and_never_on_output() {
    let (e, id, _dir) = bash(100, 30).await;
    send(
        &e,
        &id,
        "f='|/-\\'; for i in $(seq 1 30); do printf '\\r%s working' \"${f:i%4:1}\"; sleep 0.01; done; while :; do printf '\\rDONE   working'; sleep 0.02; done\n",
    );
    let settled = wait(
        &e,
        &id,
        json!({"pattern": "DONE", "since": "screen", "quiet_ms": 300, "quiet_on": "screen", "timeout": 30}),
    )
    .await;
    assert_eq!(settled.result.outcome, WaitOutcome::Matched, "{settled:?}");
    assert!(screen(&e, &id).contains("DONE   working"));
    // The same program never stops writing: quiet on output runs out of time.
    let never = wait(&e, &id, json!({"quiet_ms": 300, "timeout": 1.5})).await;
    assert_eq!(never.result.outcome, WaitOutcome::Timeout, "{never:?}");
    assert_eq!(never.result.quiet_ms, None);
    send(&e, &id, "\x03");
}

#[tokio::test]
async fn stop_patterns_and_the_programs_end_still_end_a_quiet_wait() {
    let (e, id, _dir) = bash(100, 30).await;
    send(
        &e,
        &id,
        "echo GO; sleep 0.2; echo FATAL: disk full; sleep 5\n",
    );
    let stopped = wait(
        &e,
        &id,
        json!({"pattern": "^GO", "quiet_ms": 3000, "stop_patterns": ["^FATAL: (.*)"], "timeout": 30}),
    )
    .await;
    assert_eq!(stopped.result.outcome, WaitOutcome::Stopped, "{stopped:?}");
    assert_eq!(stopped.result.groups, vec![Some("disk full".to_string())]);
    send(&e, &id, "\x03");
    send(&e, &id, "exit 3\n");
    let ended = wait(&e, &id, json!({"quiet_ms": 60000, "timeout": 30})).await;
    assert_eq!(ended.result.outcome, WaitOutcome::Exited, "{ended:?}");
}

#[tokio::test]
async fn bad_quiet_parameters_are_clear_errors() {
    let (e, id, _dir) = bash(100, 30).await;
    for (p, says) in [
        (
            json!({"timeout": 1}),
            "needs `pattern`, `quiet_ms`, or both",
        ),
        (json!({"quiet_ms": 0}), "quiet_ms must be 1 to 60000"),
        (json!({"quiet_ms": 60001}), "quiet_ms must be 1 to 60000"),
    ] {
        let got = e
            .await_output(
                &id,
                &params::<AwaitOutputParams>(p.clone()),
                None,
                &Actor::person(),
            )
            .await;
        match got {
            Err(EngineError::InvalidParams(message)) => {
                assert!(message.contains(says), "{p}: {message}")
            }
            other => panic!("{p}: expected invalid parameters, got {other:?}"),
        }
    }
    let unknown =
        serde_json::from_value::<AwaitOutputParams>(json!({"quiet_ms": 5, "quiet_on": "silence"}));
    assert!(unknown.is_err(), "quiet_on takes output or screen");
}

/// Issue 36: stop patterns of a quiet wait cover what its `since` covers (by default the
/// output since the last input), not only what comes after the wait begins.
#[tokio::test]
async fn a_stop_printed_between_the_input_and_a_quiet_wait_stops_it() {
    let (e, id, _dir) = bash(100, 30).await;
    // The typed line holds FATAL_42 too: its echo is not output and never stops a wait.
    send(&e, &id, "echo FATAL_42; sleep 30\n");
    let printed = wait(&e, &id, json!({"pattern": "^FATAL_42", "timeout": 30})).await;
    assert_eq!(printed.result.outcome, WaitOutcome::Matched, "{printed:?}");
    let stopped = wait(
        &e,
        &id,
        json!({"quiet_ms": 1000, "stop_patterns": ["FATAL_(\\d+)"], "timeout": 30}),
    )
    .await;
    assert_eq!(stopped.result.outcome, WaitOutcome::Stopped, "{stopped:?}");
    assert_eq!(stopped.result.stop_pattern.as_deref(), Some("FATAL_(\\d+)"));
    assert_eq!(stopped.result.matched_line.as_deref(), Some("FATAL_42"));
    assert_eq!(stopped.result.groups, vec![Some("42".to_string())]);
    // On the visible screen, as `since: screen` reads it, too.
    let on_screen = wait(
        &e,
        &id,
        json!({"quiet_ms": 1000, "stop_patterns": ["^FATAL_42$"], "since": "screen", "timeout": 30}),
    )
    .await;
    assert_eq!(
        on_screen.result.outcome,
        WaitOutcome::Stopped,
        "{on_screen:?}"
    );
    send(&e, &id, "\x03");
}

#[tokio::test]
async fn a_stop_before_the_last_input_or_only_in_its_echo_does_not_stop_a_quiet_wait() {
    let (e, id, _dir) = bash(100, 30).await;
    send(&e, &id, "echo FATAL_42\n");
    let printed = wait(&e, &id, json!({"pattern": "^FATAL_42", "timeout": 30})).await;
    assert_eq!(printed.result.outcome, WaitOutcome::Matched, "{printed:?}");
    // Typed after the error, and naming another one that only its echo holds.
    send(&e, &id, "echo fine-$((1+1)) # FATAL_7\n");
    let settled = wait(
        &e,
        &id,
        json!({"quiet_ms": 300, "stop_patterns": ["FATAL_42", "FATAL_7"], "timeout": 30}),
    )
    .await;
    assert_eq!(settled.result.outcome, WaitOutcome::Matched, "{settled:?}");
    assert!(screen(&e, &id).contains("fine-2"), "{settled:?}");
}

#[tokio::test]
async fn a_stop_that_comes_with_the_pattern_stops_the_quiet_after_it() {
    let (e, id, _dir) = bash(100, 30).await;
    // One write: the stop arrives in the same chunk as the pattern, before the waiter wakes.
    send(&e, &id, "printf 'GO\\nFATAL_42\\n'; sleep 30\n");
    let stopped = wait(
        &e,
        &id,
        json!({"pattern": "^GO", "quiet_ms": 1000, "stop_patterns": ["^FATAL_42"], "timeout": 30}),
    )
    .await;
    assert_eq!(stopped.result.outcome, WaitOutcome::Stopped, "{stopped:?}");
    assert_eq!(stopped.result.matched_text.as_deref(), Some("FATAL_42"));
    send(&e, &id, "\x03");
}
