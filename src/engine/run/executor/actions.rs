//! A state's action, run through the same engine methods a front end calls, and what it did
//! as the transitions see it: a status, the output it observed, and its result for the log.

use super::Exec;
use super::bounded::to_log_value;
use crate::engine::transition::{StepOutcome, StepStatus};
use crate::engine::{Engine, EngineError};
use crate::term::{AwaitResult, CommandOutcome, WaitOutcome};
use crate::workflow::action::{
    Action, AwaitOutputParams, CaptureGroup, Key, ListSessionsParams, RunCommandParams,
    SendInputParams,
};
use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Value, json};

/// What one action did.
pub(super) struct Acted {
    pub outcome: StepOutcome,
    pub result: Value,
    pub error: Option<String>,
}

impl Acted {
    pub fn ok(result: impl Serialize, observed: String) -> Self {
        Acted {
            outcome: StepOutcome {
                status: StepStatus::Success,
                observed,
                validation: None,
            },
            result: to_log_value(&result),
            error: None,
        }
    }

    pub fn failed(error: impl std::fmt::Display) -> Self {
        let error = error.to_string();
        Acted {
            outcome: StepOutcome {
                status: StepStatus::Failure,
                observed: error.clone(),
                validation: None,
            },
            result: json!({ "error": error }),
            error: Some(error),
        }
    }

    /// Not a success after all: `status`, and why.
    fn fell_short(mut self, status: StepStatus, error: impl FnOnce() -> String) -> Self {
        self.outcome.status = status;
        if status != StepStatus::Success {
            self.error = Some(error());
        }
        self
    }
}

impl Exec<'_> {
    /// Runs a state's action in the run's session (or the one the action names).
    pub(super) async fn action(
        &mut self,
        state_name: &str,
        action: &Action,
        timeout: Option<f64>,
    ) -> Acted {
        let engine = self.engine;
        let actor = self.actor();
        let session = match action {
            Action::OpenTerminal(_) | Action::ListTerminalSessions(_) | Action::Prompt(_) => None,
            other => match self.session_id(other.session_id()) {
                Ok(id) => Some(id),
                Err(e) => return Acted::failed(e),
            },
        };
        if let Some(id) = &session {
            self.start_recording(id);
        }
        let sid = session.as_deref().unwrap_or_default();
        self.export_held_before(sid, action).await;
        match action {
            Action::OpenTerminal(p) => match engine.open_session(p, &actor) {
                Ok(session) => {
                    // The run continues in the new session and closes it at the end.
                    self.run.own(session.id());
                    self.session = Some(session.id().to_string());
                    self.start_recording(session.id());
                    engine.runs().set_session(self.run, self.session.clone());
                    if let Err(e) =
                        Engine::wait_until_ready(&session, Some(p), &actor.typist()).await
                    {
                        return Acted::failed(e);
                    }
                    let info = session.info();
                    let observed = info.session_id.clone();
                    Acted::ok(info, observed)
                }
                Err(e) => Acted::failed(e),
            },
            Action::SendInput(p) => match self
                .with_values(p)
                .and_then(|p| engine.send_input(sid, &p, &actor))
            {
                Ok(sent) => {
                    let screen = engine
                        .terminals()
                        .get(sid)
                        .map(|s| s.content(crate::term::Content::Screen));
                    Acted::ok(sent, screen.unwrap_or_default())
                }
                Err(e) => Acted::failed(e),
            },
            Action::GetScreenContent(p) => match engine.get_screen_content(sid, p, &actor) {
                Ok(content) => {
                    let observed = content.content.clone();
                    Acted::ok(content, observed)
                }
                Err(e) => Acted::failed(e),
            },
            Action::AwaitOutput(p) => self.await_output(sid, p, timeout).await,
            Action::RunCommand(p) => self.run_command(sid, p, timeout).await,
            Action::SetEnv(p) => match engine.set_env(sid, p, timeout, &actor).await {
                Ok(done) => {
                    for (k, v) in &p.vars {
                        self.vars.insert(k.clone(), v.to_string());
                    }
                    Acted::ok(done, String::new())
                }
                Err(e) => Acted::failed(e),
            },
            Action::ListTerminalSessions(ListSessionsParams {}) => {
                let list = engine.list_terminal_sessions();
                let observed = list
                    .sessions
                    .iter()
                    .map(|s| s.session_id.as_str())
                    .collect::<Vec<_>>()
                    .join("\n");
                Acted::ok(list, observed)
            }
            Action::ExitTerminal(_) => self.exit_terminal(sid).await,
            Action::Prompt(p) => self.prompt(state_name, p).await,
        }
    }

    /// `await_output`: a match is a success whose captures become run variables; a stop
    /// pattern or the program's exit a failure.
    async fn await_output(
        &mut self,
        sid: &str,
        p: &AwaitOutputParams,
        timeout: Option<f64>,
    ) -> Acted {
        let out = match self
            .engine
            .await_output(sid, p, timeout, &self.actor())
            .await
        {
            Ok(out) => out,
            Err(e) => return Acted::failed(e),
        };
        let status = match out.result.outcome {
            WaitOutcome::Matched => StepStatus::Success,
            WaitOutcome::Timeout => StepStatus::Timeout,
            WaitOutcome::Stopped | WaitOutcome::Exited => StepStatus::Failure,
        };
        if out.result.outcome == WaitOutcome::Matched && !p.captures.is_empty() {
            let captured = captures(&p.captures, &out.result);
            self.store_vars(sid, captured).await;
        }
        let observed = match &out.result.matched_line {
            Some(line) => format!("{}\n{line}", out.result.tail),
            None => out.result.tail.clone(),
        };
        Acted::ok(&out, observed).fell_short(status, || match out.result.outcome {
            WaitOutcome::Stopped => format!(
                "stop pattern {} matched",
                out.result.stop_pattern.as_deref().unwrap_or("?")
            ),
            WaitOutcome::Exited => "the session's program exited".into(),
            _ => format!("no match within {} s", out.timeout_seconds),
        })
    }

    /// `run_command`: a success is exit status 0; a timeout is its own condition.
    async fn run_command(
        &mut self,
        sid: &str,
        p: &RunCommandParams,
        timeout: Option<f64>,
    ) -> Acted {
        match self
            .engine
            .run_command(sid, p, timeout, &self.actor())
            .await
        {
            Ok(out) => {
                let status = match (out.result.outcome, out.result.exit_code) {
                    (CommandOutcome::Completed, Some(0)) => StepStatus::Success,
                    (CommandOutcome::Timeout, _) => StepStatus::Timeout,
                    _ => StepStatus::Failure,
                };
                let observed = out.result.output.clone();
                Acted::ok(&out, observed).fell_short(status, || match out.result.outcome {
                    CommandOutcome::Completed => {
                        format!("exit status {}", out.result.exit_code.unwrap_or(-1))
                    }
                    CommandOutcome::Timeout => {
                        format!("did not finish within {} s", out.timeout_seconds)
                    }
                    CommandOutcome::Exited => "the shell exited".into(),
                })
            }
            Err(e) => Acted::failed(e),
        }
    }

    /// `exit_terminal`: a session closed is no longer the run's.
    async fn exit_terminal(&mut self, sid: &str) -> Acted {
        match self.engine.exit_terminal(sid, &self.actor()).await {
            Ok(closed) => {
                self.run.disown(&closed.session_id);
                if self.session.as_deref() == Some(closed.session_id.as_str()) {
                    self.session = None;
                    self.engine.runs().set_session(self.run, None);
                }
                Acted::ok(closed, String::new())
            }
            Err(e) => Acted::failed(e),
        }
    }
}

/// The values an `await_output` step captures from its match, by group.
fn captures(
    wanted: &IndexMap<String, CaptureGroup>,
    result: &AwaitResult,
) -> Vec<(String, String)> {
    wanted
        .iter()
        .filter_map(|(var, group)| {
            let value = match group {
                CaptureGroup::Index(0) => result.matched_text.clone(),
                CaptureGroup::Index(i) => result.groups.get(*i as usize - 1).cloned().flatten(),
                CaptureGroup::Name(n) => result.named_groups.get(n).cloned(),
            };
            value.map(|v| (var.clone(), v))
        })
        .collect()
}

impl Exec<'_> {
    /// The keys to type with each `{var: NAME}` replaced by the variable's value now.
    fn with_values(&self, p: &SendInputParams) -> Result<SendInputParams, EngineError> {
        let Some(keys) = &p.keys else {
            return Ok(p.clone());
        };
        let keys = keys
            .iter()
            .map(|key| match key {
                Key::Var { var } => match self.vars.get(var) {
                    Some(value) => Ok(Key::Text {
                        text: value.clone(),
                    }),
                    None => Err(EngineError::InvalidParams(format!(
                        "variable {var} has no value at this step (an argument that was not given, or a capture that has not matched yet)"
                    ))),
                },
                other => Ok(other.clone()),
            })
            .collect::<Result<Vec<Key>, EngineError>>()?;
        Ok(SendInputParams {
            keys: Some(keys),
            ..p.clone()
        })
    }
}
