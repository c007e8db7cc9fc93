//! The engine's terminal methods, called with the same parameters a manifest step or an MCP
//! tool call carries.
// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use flowdeck::engine::{Actor, Engine, EngineError};
use flowdeck::mcp::errors::ToolError;
use flowdeck::term::WaitOutcome;
use flowdeck::workflow::action::{
    AwaitOutputParams, GetScreenContentParams, OpenTerminalParams, RunCommandParams,
    SendInputParams, SetEnvParams,
};
use serde_json::json;
use std::sync::Arc;

use crate::common;
use common::params;

fn engine() -> (Arc<Engine>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (common::test_engine(dir.path(), 8, false), dir)
}

#[tokio::test]
async fn a_step_sequence_through_the_engine() {
    let (e, _dir) = engine();
    let info = e
        .open_terminal(
            &params::<OpenTerminalParams>(json!({
                "command": ["bash", "--norc", "--noprofile"],
                "env": {"PS1": "$ ", "HISTFILE": "/dev/null"},
                "cols": 100, "rows": 20, "name": "steps"
            })),
            &Actor::Cli,
        )
        .await
        .unwrap();
    assert_eq!(
        (info.cols, info.rows, info.name.as_deref()),
        (100, 20, Some("steps"))
    );
    let id = info.session_id;

    e.send_input(
        &id,
        &params::<SendInputParams>(
            json!({"keys": [{"text": "echo hi-$((1+1))"}, {"key": "enter"}]}),
        ),
        &Actor::Cli,
    )
    .unwrap();
    let out = e
        .await_output(
            &id,
            &params::<AwaitOutputParams>(json!({"pattern": "^hi-(\\d)$", "timeout": 1e6})),
            None,
            &Actor::Cli,
        )
        .await
        .unwrap();
    assert_eq!(out.result.outcome, WaitOutcome::Matched);
    assert_eq!(out.result.groups, [Some("2".to_string())]);
    assert!(out.timeout_clamped);
    assert_eq!(out.timeout_seconds, 300.0);

    // The state's timeout applies when the step gives none.
    let out = e
        .await_output(
            &id,
            &params::<AwaitOutputParams>(json!({"pattern": "never"})),
            Some(0.2),
            &Actor::Cli,
        )
        .await
        .unwrap();
    assert_eq!(out.result.outcome, WaitOutcome::Timeout);
    assert_eq!(out.timeout_seconds, 0.2);

    let bad = e
        .await_output(
            &id,
            &params::<AwaitOutputParams>(json!({"pattern": "(unclosed"})),
            None,
            &Actor::Cli,
        )
        .await;
    assert!(matches!(bad, Err(EngineError::Pattern { .. })), "{bad:?}");

    e.set_env(
        &id,
        &params::<SetEnvParams>(json!({"vars": {"TARGET": "it's $(x)", "COUNT": 3, "ON": true}})),
        None,
        &Actor::Cli,
    )
    .await
    .unwrap();
    let values = e
        .read_env(
            &id,
            &["TARGET", "COUNT", "ON", "MISSING"],
            None,
            &Actor::Cli,
        )
        .await
        .unwrap();
    assert_eq!(values.values["TARGET"].as_deref(), Some("it's $(x)"));
    assert_eq!(values.values["COUNT"].as_deref(), Some("3"));
    assert_eq!(values.values["ON"].as_deref(), Some("true"));
    assert_eq!(values.values["MISSING"], None);

    let r = e
        .run_command(
            &id,
            &params::<RunCommandParams>(
                json!({"command": "echo $TARGET; exit_code=4; (exit $exit_code)"}),
            ),
            None,
            &Actor::Cli,
        )
        .await
        .unwrap();
    assert_eq!(
        (r.result.exit_code, r.result.output.as_str()),
        (Some(4), "it's $(x)")
    );

    for (mode, expect) in [
        ("screen", "it's $(x)"),
        ("history", "hi-2"),
        ("since_input", "it's $(x)"),
    ] {
        let c = e
            .get_screen_content(
                &id,
                &params::<GetScreenContentParams>(json!({"content_mode": mode})),
                &Actor::Cli,
            )
            .unwrap();
        assert!(c.content.contains(expect), "{mode}: {}", c.content);
    }
    // run_command returns at its (hidden) end marker; the prompt comes just after its
    // output, which is where the typist's "since the last input" begins.
    let prompt = e
        .await_output(
            &id,
            &params::<AwaitOutputParams>(
                json!({"pattern": "^it's \\$\\(x\\)\\n\\$ $", "since": "last_input", "timeout": 20}),
            ),
            None,
            &Actor::Cli,
        )
        .await
        .unwrap();
    assert_eq!(prompt.result.outcome, WaitOutcome::Matched);
    let tail = e
        .get_screen_content(
            &id,
            &params::<GetScreenContentParams>(json!({"content_mode": "tail", "lines": 1})),
            &Actor::Cli,
        )
        .unwrap();
    assert_eq!(tail.content, "$ ");

    let resized = e.resize_terminal(&id, 0, 0, &Actor::Cli).unwrap();
    assert!(resized.clamped);
    assert_eq!(e.list_terminal_sessions().sessions.len(), 1);
    let closed = e.exit_terminal("steps", &Actor::Cli).await.unwrap();
    assert_eq!(closed.session_id, id);
    assert_eq!(closed.teardown.survivors, 0);
    assert!(e.list_terminal_sessions().sessions.is_empty());
    let gone = e.send_input(
        &id,
        &params::<SendInputParams>(json!({"input_text": "x"})),
        &Actor::Cli,
    );
    assert_eq!(gone.unwrap_err().code(), "session_not_found");
}

#[tokio::test]
async fn shell_and_command_are_exclusive_and_errors_are_clear() {
    let (e, _dir) = engine();
    let both = e
        .open_terminal(
            &params::<OpenTerminalParams>(json!({"shell": "/bin/sh", "command": ["cat"]})),
            &Actor::Cli,
        )
        .await;
    assert_eq!(both.unwrap_err().code(), "invalid_params");
    let missing = e
        .open_terminal(
            &params::<OpenTerminalParams>(json!({"command": ["/no/such/binary"]})),
            &Actor::Cli,
        )
        .await
        .unwrap_err();
    assert_eq!(missing.code(), "spawn_failed");
    assert!(missing.to_string().contains("/no/such/binary"), "{missing}");
    // A NUL in an environment entry is a mistake in the arguments, not a failed spawn.
    for env in [json!({"X": "a\u{0}b"}), json!({"X\u{0}Y": "v"})] {
        let err = e
            .open_terminal(
                &params::<OpenTerminalParams>(json!({"command": ["bash"], "env": env})),
                &Actor::Cli,
            )
            .await
            .unwrap_err();
        let payload = ToolError::from(err);
        assert_eq!(
            payload.error_code, "INVALID_ARGUMENTS",
            "{}",
            payload.message
        );
    }
    e.shutdown().await;
}

#[tokio::test]
async fn key_chords_take_exactly_one_character() {
    let (e, _dir) = engine();
    let id = e
        .open_terminal(
            &params::<OpenTerminalParams>(
                json!({"command": ["bash", "--norc", "--noprofile"], "env": {"PS1": "$ "}}),
            ),
            &Actor::Cli,
        )
        .await
        .unwrap()
        .session_id;
    for key in [
        json!({"ctrl": "cd"}),
        json!({"ctrl": ""}),
        json!({"alt": "xy"}),
        json!({"alt": ""}),
    ] {
        let err = e
            .send_input(
                &id,
                &params::<SendInputParams>(json!({"keys": [key.clone()]})),
                &Actor::Cli,
            )
            .unwrap_err();
        assert_eq!(err.code(), "invalid_params", "{key}: {err}");
        let (kind, text) = key.as_object().unwrap().iter().next().unwrap();
        assert!(
            err.to_string().contains(&format!("{{\"{kind}\": {text}}}")),
            "{key}: {err}"
        );
        assert_eq!(ToolError::from(err).error_code, "INVALID_ARGUMENTS");
    }
    // Nothing was typed: the first key that is fine still works.
    e.send_input(
        &id,
        &params::<SendInputParams>(
            json!({"keys": [{"text": "echo ok-$((1+1))"}, {"key": "enter"}]}),
        ),
        &Actor::Cli,
    )
    .unwrap();
    let out = e
        .await_output(
            &id,
            &params::<AwaitOutputParams>(json!({"pattern": "^ok-2$", "timeout": 20})),
            None,
            &Actor::Cli,
        )
        .await
        .unwrap();
    assert_eq!(out.result.outcome, WaitOutcome::Matched);
    e.shutdown().await;
}

/// Each typist's "since the last input" is its own: a person typing into a shell an agent
/// waits on does not move the agent's wait, nor what it reads since its input.
#[tokio::test]
async fn one_typists_input_never_moves_anothers_wait() {
    let (e, _dir) = engine();
    let agent = Actor::Agent {
        client: "test-agent".into(),
        connection: "c1".into(),
    };
    let id = e
        .open_terminal(
            &params::<OpenTerminalParams>(json!({
                "command": ["bash", "--norc", "--noprofile"],
                "env": {"PS1": "$ ", "HISTFILE": "/dev/null"},
            })),
            &Actor::person(),
        )
        .await
        .unwrap()
        .session_id;
    let send = |who: &Actor, text: &str| {
        e.send_input(
            &id,
            &params::<SendInputParams>(json!({"input_text": text})),
            who,
        )
        .unwrap();
    };
    let wait = |who: Actor, pattern: &'static str, since: &'static str| {
        let e = e.clone();
        let id = id.clone();
        async move {
            let out = e
                .await_output(
                    &id,
                    &params::<AwaitOutputParams>(
                        json!({"pattern": pattern, "since": since, "timeout": 10}),
                    ),
                    None,
                    &who,
                )
                .await
                .unwrap();
            assert_eq!(
                out.result.outcome,
                WaitOutcome::Matched,
                "{who}: /{pattern}/ since {since}: {:#?}",
                out.result
            );
        }
    };

    send(&agent, "echo AGENT-$((40+2))\n");
    // The agent's output has arrived (seen by a wait that does not depend on anyone's input).
    wait(agent.clone(), "^AGENT-42", "all").await;
    // Then the person types, and sees their own output.
    send(&Actor::person(), "echo PERSON-$((1+1))\n");
    wait(Actor::person(), "^PERSON-2", "last_input").await;

    // The agent's wait still starts after the agent's own input.
    wait(agent.clone(), "^AGENT-42", "last_input").await;
    let read = |who: &Actor| {
        e.get_screen_content(
            &id,
            &params::<GetScreenContentParams>(json!({"content_mode": "since_input"})),
            who,
        )
        .unwrap()
        .content
    };
    let agents = read(&agent);
    assert!(agents.contains("AGENT-42"), "{agents:?}");
    let persons = read(&Actor::person());
    assert!(!persons.contains("AGENT-42"), "{persons:?}");
    assert!(persons.contains("PERSON-2"), "{persons:?}");
    // Someone who never typed here reads from the latest input of anyone.
    let other = Actor::Agent {
        client: "other".into(),
        connection: "c2".into(),
    };
    assert_eq!(read(&other), persons);
}
