//! Terminal methods of the engine: the manifest's tool parameters in, serializable results
//! out. This is where the manifest's vocabulary (keys, `since`, timeouts in seconds) is
//! turned into the terminal layer's.
//!
//! Here: what the tools answer. Opening, listing, resizing and closing sessions are in
//! sessions.rs (on a host: the ssh command in hosts.rs), telling their activity in activity.rs, typing and reading in io.rs, the
//! shell's tools in shell.rs, who may type in claims.rs, and the vocabulary's translation in
//! vocabulary.rs.

mod activity;
mod claims;
pub mod hosts;
mod io;
mod sessions;
mod shell;
mod vocabulary;

use crate::term::{self, AwaitResult, SessionInfo, Teardown};
use crate::workflow::action::ContentMode;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Serialize;
use std::time::Duration;

/// How long `open_terminal` waits for a shell's first prompt before returning.
const READY_WAIT: Duration = Duration::from_secs(2);
/// Lines `tail` reads when none are given.
const DEFAULT_TAIL_LINES: u32 = 50;

/// The answer to `send_input`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct SentInput {
    pub session_id: String,
    /// Bytes queued for the program.
    pub bytes: usize,
}

/// The answer to `get_screen_content`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct ScreenContent {
    pub session_id: String,
    pub content_mode: ContentMode,
    pub content: String,
    pub cols: u16,
    pub rows: u16,
    pub cursor_row: u16,
    pub cursor_col: u16,
    pub running: bool,
    pub exit: Option<term::ExitInfo>,
}

/// The answer to `await_output`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AwaitOutput {
    pub session_id: String,
    #[serde(flatten)]
    pub result: AwaitResult,
    /// The wait that applied, in seconds, and whether the one asked for was clamped.
    pub timeout_seconds: f64,
    pub timeout_clamped: bool,
}

/// The answer to `run_command`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CommandOutput {
    pub session_id: String,
    #[serde(flatten)]
    pub result: term::CommandResult,
    pub timeout_seconds: f64,
}

/// The answer to `set_env`.
#[derive(Debug, Clone, Serialize)]
pub struct SetEnvResult {
    pub session_id: String,
    /// The names exported, in order.
    pub exported: Vec<String>,
}

/// Variables read from a session; `null` for one that is not set.
#[derive(Debug, Clone, Serialize)]
pub struct EnvValues {
    pub session_id: String,
    pub values: IndexMap<String, Option<String>>,
}

/// The answer to `list_terminal_sessions`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct SessionList {
    pub sessions: Vec<SessionInfo>,
}

/// The answer to `exit_terminal`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct ClosedSession {
    pub session_id: String,
    pub teardown: Teardown,
}

/// The answer to `resize_terminal`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct Resized {
    pub session_id: String,
    pub cols: u16,
    pub rows: u16,
    /// The size asked for was out of range and was clamped.
    pub clamped: bool,
}

#[cfg(test)]
mod tests {
    use crate::engine::events::{Actor, Change, EngineEvent};
    use crate::engine::{Engine, EngineError};
    use crate::term::TermError;
    use std::time::Duration;
    use tokio::sync::broadcast;

    fn params<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
        serde_json::from_value(v).expect("test parameters")
    }

    /// A bash with a plain prompt, opened by a person: its session's id.
    async fn open_bash(engine: &Engine) -> String {
        engine
            .open_terminal(
                &params(serde_json::json!({
                    "command": ["bash", "--norc", "--noprofile"],
                    "env": {"PS1": "$ "},
                })),
                &Actor::person(),
            )
            .await
            .expect("bash")
            .session_id
    }

    /// The first `session_failed` event, within 20 s: its session and reason.
    async fn failed_event(events: &mut broadcast::Receiver<EngineEvent>) -> (String, String) {
        tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                match events.recv().await {
                    Ok(event) => {
                        if let Change::SessionFailed { session_id, reason } = event.change {
                            break (session_id, reason);
                        }
                    }
                    Err(e) => panic!("event stream: {e}"),
                }
            }
        })
        .await
        .expect("a session_failed event within 20 s")
    }

    /// Input and new waits on a failed session are refused with its failure.
    async fn assert_refused(engine: &Engine, id: &str) {
        let refused = engine.send_input(
            id,
            &params(serde_json::json!({"input_text": "echo hi\n"})),
            &Actor::person(),
        );
        assert!(
            matches!(refused, Err(EngineError::Term(TermError::Failed { .. }))),
            "{refused:?}"
        );
        let again = engine
            .await_output(
                id,
                &params(serde_json::json!({"pattern": "x", "timeout": 120})),
                None,
                &Actor::person(),
            )
            .await;
        assert!(
            matches!(again, Err(EngineError::Term(TermError::Failed { .. }))),
            "{again:?}"
        );
    }

    /// A session whose output reader dies (here on a test-only sequence, as a bug would) is
    /// marked failed with the reason: a wait in progress ends at once with it, input and new
    /// waits are refused, front ends hear of it, and it can still be closed.
    #[tokio::test]
    async fn a_dead_reader_fails_its_session_and_ends_its_waits_at_once() {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = crate::engine::EngineConfig {
            watch: false,
            ..Default::default()
        };
        let engine = Engine::open(dir.path(), config).expect("engine");
        let mut events = engine.subscribe();
        let id = open_bash(&engine).await;
        let long_wait = {
            let (engine, id) = (engine.clone(), id.clone());
            tokio::spawn(async move {
                engine
                    .await_output(
                        &id,
                        &params(serde_json::json!({"pattern": "never printed", "timeout": 120})),
                        None,
                        &Actor::person(),
                    )
                    .await
            })
        };
        // The echo of this line holds the backslash escapes, not the sequence itself.
        let kill = r"printf '\033]flowdeck-reader-dies\007'";
        engine
            .send_input(
                &id,
                &params(serde_json::json!({"input_text": format!("{kill}\n")})),
                &Actor::person(),
            )
            .expect("input");
        let ended = tokio::time::timeout(Duration::from_secs(20), long_wait)
            .await
            .expect("the 120 s wait ended with the failure, within 20 s")
            .expect("the wait task");
        match ended {
            Err(EngineError::Term(TermError::Failed { reason, .. })) => {
                assert!(
                    reason.contains("the test asked the reader to die"),
                    "{reason}"
                );
            }
            other => panic!("expected the session's failure, got {other:?}"),
        }
        let failed = failed_event(&mut events).await;
        assert_eq!(failed.0, id);
        let info = engine.list_terminal_sessions().sessions;
        assert_eq!(info[0].failed.as_deref(), Some(failed.1.as_str()));
        assert_refused(&engine, &id).await;
        engine
            .exit_terminal(&id, &Actor::person())
            .await
            .expect("a failed session closes");
        assert!(engine.list_terminal_sessions().sessions.is_empty());
    }
}
