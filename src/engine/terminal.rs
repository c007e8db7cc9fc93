//! Terminal methods of the engine: the manifest's tool parameters in, serializable results
//! out. This is where the manifest's vocabulary (keys, `since`, timeouts in seconds) is
//! turned into the terminal layer's.

use super::events::{Actor, Change};
use super::{Engine, EngineError};
use crate::term::{
    self, AwaitResult, AwaitSpec, Content, KeyPress, Named, OpenOptions, Program, SessionInfo,
    Size, Teardown,
};
use crate::workflow::action::{
    self, AwaitOutputParams, ContentMode, GetScreenContentParams, Key, NamedKey,
    OpenTerminalParams, RunCommandParams, SendInputParams, SetEnvParams,
};
use crate::workflow::pattern;
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

/// A wait in seconds as asked (or the state's, or the default), clamped.
fn wait_duration(asked: Option<f64>, state_default: Option<f64>) -> (Duration, f64, bool) {
    let seconds = asked
        .or(state_default)
        .unwrap_or(action::DEFAULT_WAIT_SECONDS);
    let (seconds, clamped) = action::clamp_wait(seconds);
    (Duration::from_secs_f64(seconds), seconds, clamped)
}

fn compile(pattern: &str) -> Result<regex::Regex, EngineError> {
    pattern::compile(pattern).map_err(|source| EngineError::Pattern {
        pattern: pattern.to_string(),
        source,
    })
}

fn key_press(key: &Key) -> Result<KeyPress, EngineError> {
    // A chord is one key: taking the first character of "ab", or NUL for "", would press a
    // key nobody asked for.
    let one = |kind: &str, text: &str| {
        let mut chars = text.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => Ok(c),
            _ => Err(EngineError::InvalidParams(format!(
                "key {{\"{kind}\": {text:?}}} needs exactly one character, not {}",
                text.chars().count()
            ))),
        }
    };
    Ok(match key {
        Key::Text { text } => KeyPress::Text(text.clone()),
        Key::Named { key } => KeyPress::Named(named(*key)),
        Key::Ctrl { ctrl } => KeyPress::Ctrl(one("ctrl", ctrl)?),
        Key::Alt { alt } => KeyPress::Alt(one("alt", alt)?),
    })
}

fn named(key: NamedKey) -> Named {
    match key {
        NamedKey::Enter => Named::Enter,
        NamedKey::Tab => Named::Tab,
        NamedKey::Escape => Named::Escape,
        NamedKey::Backspace => Named::Backspace,
        NamedKey::Up => Named::Up,
        NamedKey::Down => Named::Down,
        NamedKey::Left => Named::Left,
        NamedKey::Right => Named::Right,
        NamedKey::Home => Named::Home,
        NamedKey::End => Named::End,
        NamedKey::PageUp => Named::PageUp,
        NamedKey::PageDown => Named::PageDown,
        NamedKey::Insert => Named::Insert,
        NamedKey::Delete => Named::Delete,
        NamedKey::F1 => Named::F(1),
        NamedKey::F2 => Named::F(2),
        NamedKey::F3 => Named::F(3),
        NamedKey::F4 => Named::F(4),
        NamedKey::F5 => Named::F(5),
        NamedKey::F6 => Named::F(6),
        NamedKey::F7 => Named::F(7),
        NamedKey::F8 => Named::F(8),
        NamedKey::F9 => Named::F(9),
        NamedKey::F10 => Named::F(10),
        NamedKey::F11 => Named::F(11),
        NamedKey::F12 => Named::F(12),
    }
}

fn since(mode: action::Since) -> term::Since {
    match mode {
        action::Since::LastInput => term::Since::LastInput,
        action::Since::Entry => term::Since::Entry,
        action::Since::Screen => term::Since::Screen,
        action::Since::All => term::Since::All,
    }
}

/// The shortest time between two activity events of one session: a frame at 120 Hz.
const ACTIVITY_FRAME: Duration = Duration::from_millis(8);
/// How long after a key typed into a session its output is told at a quicker pace: the echo.
const ECHO_WINDOW: Duration = Duration::from_millis(100);
/// That quicker pace: a flood typed into costs at most 100 more events a key.
const ECHO_PAUSE: Duration = Duration::from_millis(1);

/// Interrupts a session's foreground job when dropped while armed, as its typist.
struct InterruptOnDrop(Option<std::sync::Arc<crate::term::Session>>, String);

impl Drop for InterruptOnDrop {
    fn drop(&mut self) {
        if let Some(session) = self.0.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let by = std::mem::take(&mut self.1);
            runtime.spawn_blocking(move || {
                session.interrupt_foreground(Duration::from_millis(500), &by)
            });
        }
    }
}

impl Engine {
    /// Opens a session and, for a shell, waits (briefly) for its first prompt, so that input
    /// sent next is not typed before the line editor is ready.
    pub async fn open_terminal(
        &self,
        p: &OpenTerminalParams,
        actor: &Actor,
    ) -> Result<SessionInfo, EngineError> {
        let session = self.open_session(p, actor)?;
        Self::wait_until_ready(&session).await;
        Ok(session.info())
    }

    /// Opens a session without waiting for it (callers that must record the session before
    /// anything can cancel them wait with [`Engine::wait_until_ready`] afterwards).
    pub(super) fn open_session(
        &self,
        p: &OpenTerminalParams,
        actor: &Actor,
    ) -> Result<std::sync::Arc<crate::term::Session>, EngineError> {
        let program = match (&p.shell, &p.command) {
            (Some(_), Some(_)) => {
                return Err(EngineError::InvalidParams(
                    "give `shell` or `command`, not both".into(),
                ));
            }
            (_, Some(argv)) => Program::Command(argv.clone()),
            (shell, None) => Program::Shell(shell.clone()),
        };
        let options = OpenOptions {
            program,
            cwd: p.cwd.as_ref().map(Into::into),
            env: p.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            size: Size {
                cols: p.cols.unwrap_or(120),
                rows: p.rows.unwrap_or(30),
            },
            name: p.name.clone(),
            opened_by: Some(actor.clone()),
        };
        let session = self.terminals.open(options)?;
        self.publish(
            actor.clone(),
            Change::SessionOpened {
                session: session.info(),
            },
        );
        self.follow_activity(&session);
        Ok(session)
    }

    /// Publishes a session's output activity (at most one event per frame, however fast the
    /// output, but for the echo of each key typed) and its exit, for front ends that redraw
    /// it.
    fn follow_activity(&self, session: &std::sync::Arc<crate::term::Session>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let hub = self.events.clone();
        let id = session.id().to_string();
        // Weak: the watcher must not keep a closed session alive.
        let weak = std::sync::Arc::downgrade(session);
        let mut activity = session.activity();
        let mut typed = session.typed();
        runtime.spawn(async move {
            let mut told_failure = false;
            let mut last_typed: Option<tokio::time::Instant> = None;
            while activity.changed().await.is_ok() {
                if typed.has_changed().unwrap_or(false) {
                    typed.borrow_and_update();
                    last_typed = Some(tokio::time::Instant::now());
                }
                let now = *activity.borrow_and_update();
                hub.publish(
                    Actor::System,
                    Change::SessionActivity {
                        session_id: id.clone(),
                        bytes: now.bytes,
                    },
                );
                if now.failed
                    && !told_failure
                    && let Some(reason) = weak.upgrade().and_then(|s| s.failure())
                {
                    told_failure = true;
                    hub.publish(
                        Actor::System,
                        Change::SessionFailed {
                            session_id: id.clone(),
                            reason,
                        },
                    );
                }
                if now.exited {
                    if let Some(exit) = weak.upgrade().and_then(|s| s.exit()) {
                        hub.publish(
                            Actor::System,
                            Change::SessionExited {
                                session_id: id.clone(),
                                exit,
                            },
                        );
                    }
                    break;
                }
                // A frame's pause, but a short one while a key was typed a moment ago, and
                // cut short by a key typed meanwhile: its echo is published as it comes, not
                // up to a frame later. A window, not "the next change": output already on its
                // way when the key was typed would use the exemption up. A flood that nobody
                // types into keeps its frames.
                let pause = if last_typed.is_some_and(|at| at.elapsed() < ECHO_WINDOW) {
                    ECHO_PAUSE
                } else {
                    ACTIVITY_FRAME
                };
                tokio::select! {
                    () = tokio::time::sleep(pause) => {}
                    Ok(()) = typed.changed() => {
                        typed.borrow_and_update();
                        last_typed = Some(tokio::time::Instant::now());
                    }
                }
            }
        });
    }

    /// Waits (at most 2 s) for a shell's first prompt.
    pub async fn wait_until_ready(session: &crate::term::Session) {
        if session.is_shell() {
            session.wait_for_output(READY_WAIT).await;
        }
    }

    pub fn send_input(
        &self,
        session: &str,
        p: &SendInputParams,
        actor: &Actor,
    ) -> Result<SentInput, EngineError> {
        let s = self.terminals.get(session)?;
        self.claim_input(&s, actor)?;
        let bytes = match (&p.input_text, &p.keys) {
            (Some(text), None) => s.send_text(text, &actor.typist())?,
            (None, Some(keys)) => {
                let keys = keys.iter().map(key_press).collect::<Result<Vec<_>, _>>()?;
                s.send_keys(&keys, &actor.typist())?
            }
            _ => {
                return Err(EngineError::InvalidParams(
                    "send_input needs exactly one of `input_text` and `keys`".into(),
                ));
            }
        };
        Ok(SentInput {
            session_id: s.id().to_string(),
            bytes,
        })
    }

    /// Reads a session; `since_input` is the last input of `actor`.
    pub fn get_screen_content(
        &self,
        session: &str,
        p: &GetScreenContentParams,
        actor: &Actor,
    ) -> Result<ScreenContent, EngineError> {
        let s = self.terminals.get(session)?;
        let mode = p.content_mode.unwrap_or_default();
        let what = match mode {
            ContentMode::Screen => Content::Screen,
            ContentMode::History => Content::History,
            ContentMode::Tail => Content::Tail(p.lines.unwrap_or(DEFAULT_TAIL_LINES) as usize),
            ContentMode::SinceInput => Content::SinceInput(Some(actor.typist())),
        };
        let content = s.content(what);
        let info = s.info();
        let (cursor_row, cursor_col) = s.with_screen(|screen| screen.cursor_position());
        Ok(ScreenContent {
            session_id: info.session_id,
            content_mode: mode,
            content,
            cols: info.cols,
            rows: info.rows,
            cursor_row,
            cursor_col,
            running: info.running,
            exit: info.exit,
        })
    }

    /// Waits for output. `state_timeout` is the running state's `timeout_seconds`, used when
    /// the step gives none; `since: last_input` is the last input of `actor`, so that one
    /// typist's input never moves another's wait.
    pub async fn await_output(
        &self,
        session: &str,
        p: &AwaitOutputParams,
        state_timeout: Option<f64>,
        actor: &Actor,
    ) -> Result<AwaitOutput, EngineError> {
        let s = self.terminals.get(session)?;
        let (timeout, timeout_seconds, timeout_clamped) = wait_duration(p.timeout, state_timeout);
        if p.pattern.is_none() && p.quiet_ms.is_none() {
            return Err(EngineError::InvalidParams(
                "await_output needs `pattern`, `quiet_ms`, or both (the pattern, then quiet)"
                    .into(),
            ));
        }
        let quiet = match p.quiet_ms {
            Some(ms) if ms == 0 || ms > action::MAX_QUIET_MS => {
                return Err(EngineError::InvalidParams(format!(
                    "quiet_ms must be 1 to {} (milliseconds), not {ms}",
                    action::MAX_QUIET_MS
                )));
            }
            Some(ms) => Some(term::Quiet {
                quiet: Duration::from_millis(ms),
                on: match p.quiet_on.unwrap_or_default() {
                    action::QuietOn::Output => term::QuietOn::Output,
                    action::QuietOn::Screen => term::QuietOn::Screen,
                },
            }),
            None => None,
        };
        let spec = AwaitSpec {
            pattern: p.pattern.as_deref().map(compile).transpose()?,
            stop_patterns: p
                .stop_patterns
                .iter()
                .map(|sp| compile(sp))
                .collect::<Result<_, _>>()?,
            since: since(p.since.unwrap_or_default()),
            timeout,
            typist: Some(actor.typist()),
            quiet,
        };
        let result = s.await_output(spec).await?;
        Ok(AwaitOutput {
            session_id: s.id().to_string(),
            result,
            timeout_seconds,
            timeout_clamped,
        })
    }

    pub async fn run_command(
        &self,
        session: &str,
        p: &RunCommandParams,
        state_timeout: Option<f64>,
        actor: &Actor,
    ) -> Result<CommandOutput, EngineError> {
        let s = self.terminals.get(session)?;
        self.claim_input(&s, actor)?;
        let (timeout, timeout_seconds, _) = wait_duration(p.timeout, state_timeout);
        // Whoever stops waiting (an agent cancelling its call, a cancelled run, a person
        // leaving) interrupts the command it typed, rather than leave it running. Armed only
        // once the shell is ready, so it never hits a program the command did not start.
        term::shell::ready_shell(&s, READY_WAIT).await?;
        let typist = actor.typist();
        let mut armed = InterruptOnDrop(Some(s.clone()), typist.clone());
        let result = term::shell::run_command(&s, &p.command, timeout, &typist).await;
        armed.0 = None;
        let result = result?;
        Ok(CommandOutput {
            session_id: s.id().to_string(),
            result,
            timeout_seconds,
        })
    }

    /// Waits (at most 2 s) for the session's shell to be at its prompt; `not_a_shell` when a
    /// REPL or another program keeps the terminal.
    pub async fn shell_ready(&self, session: &str) -> Result<(), EngineError> {
        let s = self.terminals.get(session)?;
        term::shell::ready_shell(&s, Duration::from_secs(2)).await?;
        Ok(())
    }

    /// Exports variables into the session's shell, stored literally.
    pub async fn set_env(
        &self,
        session: &str,
        p: &SetEnvParams,
        state_timeout: Option<f64>,
        actor: &Actor,
    ) -> Result<SetEnvResult, EngineError> {
        let s = self.terminals.get(session)?;
        self.claim_input(&s, actor)?;
        let (timeout, _, _) = wait_duration(None, state_timeout);
        let vars: Vec<(String, String)> = p
            .vars
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect();
        term::shell::export_env(&s, &vars, timeout, &actor.typist()).await?;
        Ok(SetEnvResult {
            session_id: s.id().to_string(),
            exported: p.vars.keys().cloned().collect(),
        })
    }

    /// Reads variables from the session's shell.
    pub async fn read_env(
        &self,
        session: &str,
        names: &[&str],
        timeout: Option<f64>,
        actor: &Actor,
    ) -> Result<EnvValues, EngineError> {
        let s = self.terminals.get(session)?;
        // Reading types a command, so it is input like any other.
        self.claim_input(&s, actor)?;
        let (timeout, _, _) = wait_duration(timeout, None);
        let values = term::shell::read_env(&s, names, timeout, &actor.typist()).await?;
        Ok(EnvValues {
            session_id: s.id().to_string(),
            values,
        })
    }

    /// A session used by a run in progress belongs to that run: input from anyone else would
    /// change what the run's step waits for. Refused with a clear, retryable error, and an
    /// event so that front ends can show the attempt.
    fn claim_input(
        &self,
        session: &crate::term::Session,
        actor: &Actor,
    ) -> Result<(), EngineError> {
        let holder = self
            .input_holders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(session.id())
            .filter(|holder| *holder != actor)
            .cloned();
        if let Some(holder) = holder {
            let error = EngineError::InputHeld {
                session_id: session.id().to_string(),
                holder: holder.label(),
            };
            self.publish(
                actor.clone(),
                Change::SessionInputRejected {
                    session_id: session.id().to_string(),
                    reason: format!("{} tried to type: {error}", actor.label()),
                },
            );
            return Err(error);
        }
        let Some(run) = self.runs().running_in_session(session.id()) else {
            return Ok(());
        };
        if *actor
            == (Actor::Run {
                run_id: run.run_id.clone(),
            })
        {
            return Ok(());
        }
        let error = EngineError::InputOwned {
            session_id: session.id().to_string(),
            run_id: run.run_id,
            workflow: run.workflow_name,
        };
        self.publish(
            actor.clone(),
            Change::SessionInputRejected {
                session_id: session.id().to_string(),
                reason: error.to_string(),
            },
        );
        Err(error)
    }

    /// `actor` holds the session's input (a person in focus mode on its pane): anyone else's
    /// input is refused with a retryable error until it is released.
    /// Refused while someone else holds it (another person in focus mode on it, at another
    /// studio): the error names who.
    pub fn hold_input(&self, session: &str, actor: &Actor) -> Result<(), EngineError> {
        let id = self.terminals.get(session)?.id().to_string();
        let mut holders = self
            .input_holders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(holder) = holders.get(&id).filter(|holder| *holder != actor) {
            return Err(EngineError::InputHeld {
                session_id: id,
                holder: holder.label(),
            });
        }
        holders.insert(id, actor.clone());
        Ok(())
    }

    /// Gives up holding the session's input, if `actor` holds it.
    pub fn release_input(&self, session: &str, actor: &Actor) {
        let mut holders = self
            .input_holders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if holders.get(session) == Some(actor) {
            holders.remove(session);
        }
    }

    pub fn list_terminal_sessions(&self) -> SessionList {
        SessionList {
            sessions: self.terminals.list(),
        }
    }

    /// Closes a session and everything running in it.
    pub async fn exit_terminal(
        &self,
        session: &str,
        actor: &Actor,
    ) -> Result<ClosedSession, EngineError> {
        let id = self.terminals.get(session)?.id().to_string();
        let teardown = self.terminals.close(&id).await?;
        self.publish(
            actor.clone(),
            Change::SessionClosed {
                session_id: id.clone(),
            },
        );
        Ok(ClosedSession {
            session_id: id,
            teardown,
        })
    }

    pub fn resize_terminal(
        &self,
        session: &str,
        cols: u16,
        rows: u16,
        actor: &Actor,
    ) -> Result<Resized, EngineError> {
        let s = self.terminals.get(session)?;
        let size = s.resize(cols, rows)?;
        self.publish(
            actor.clone(),
            Change::SessionResized {
                session_id: s.id().to_string(),
                cols: size.cols,
                rows: size.rows,
            },
        );
        Ok(Resized {
            session_id: s.id().to_string(),
            cols: size.cols,
            rows: size.rows,
            clamped: size.cols != cols || size.rows != rows,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_default_and_clamp() {
        assert_eq!(wait_duration(None, None).1, 30.0);
        assert_eq!(wait_duration(None, Some(5.0)).1, 5.0);
        assert_eq!(wait_duration(Some(2.0), Some(5.0)).1, 2.0);
        let (_, seconds, clamped) = wait_duration(Some(1e9), None);
        assert_eq!((seconds, clamped), (300.0, true));
        let (_, seconds, clamped) = wait_duration(Some(f64::NAN), None);
        assert_eq!((seconds, clamped), (300.0, true));
        let (_, seconds, clamped) = wait_duration(Some(-1.0), None);
        assert_eq!((seconds, clamped), (0.0, true));
    }

    fn params<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
        serde_json::from_value(v).expect("test parameters")
    }

    /// A session whose output reader dies (here on a test-only sequence, as a bug would) is
    /// marked failed with the reason: a wait in progress ends at once with it, input and new
    /// waits are refused, front ends hear of it, and it can still be closed.
    #[tokio::test]
    #[expect(clippy::too_many_lines, reason = "issue 23 splits it by its jobs")]
    async fn a_dead_reader_fails_its_session_and_ends_its_waits_at_once() {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = crate::engine::EngineConfig {
            watch: false,
            ..Default::default()
        };
        let engine = Engine::open(dir.path(), config).expect("engine");
        let mut events = engine.subscribe();
        let id = engine
            .open_terminal(
                &params(serde_json::json!({
                    "command": ["bash", "--norc", "--noprofile"],
                    "env": {"PS1": "$ "},
                })),
                &Actor::person(),
            )
            .await
            .expect("bash")
            .session_id;
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
            Err(EngineError::Term(crate::term::TermError::Failed { reason, .. })) => {
                assert!(
                    reason.contains("the test asked the reader to die"),
                    "{reason}"
                );
            }
            other => panic!("expected the session's failure, got {other:?}"),
        }
        let failed = tokio::time::timeout(Duration::from_secs(20), async {
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
        .expect("a session_failed event within 20 s");
        assert_eq!(failed.0, id);
        let info = engine.list_terminal_sessions().sessions;
        assert_eq!(info[0].failed.as_deref(), Some(failed.1.as_str()));
        let refused = engine.send_input(
            &id,
            &params(serde_json::json!({"input_text": "echo hi\n"})),
            &Actor::person(),
        );
        assert!(
            matches!(
                refused,
                Err(EngineError::Term(crate::term::TermError::Failed { .. }))
            ),
            "{refused:?}"
        );
        let again = engine
            .await_output(
                &id,
                &params(serde_json::json!({"pattern": "x", "timeout": 120})),
                None,
                &Actor::person(),
            )
            .await;
        assert!(
            matches!(
                again,
                Err(EngineError::Term(crate::term::TermError::Failed { .. }))
            ),
            "{again:?}"
        );
        engine
            .exit_terminal(&id, &Actor::person())
            .await
            .expect("a failed session closes");
        assert!(engine.list_terminal_sessions().sessions.is_empty());
    }
}
