//! The state-machine executor: one run, from the input contract to the output contract.
//!
//! Each state's action runs once through the same engine methods a front end calls; what it
//! did is logged (the seed's `execution_log`), journaled, and published; then the first
//! transition that holds is taken ([`super::transition::next_state`], a pure function).

use super::contract::{self, MASK};
use super::ending::Ending;
use super::events::Actor;
use super::journal::{JournalEvent, JournalWriter, RunEvent, now};
use super::result::{FinalState, RunResult};
use super::runs::{ActiveRun, PendingPrompt, Phase};
use super::secrets::Secrets;
use super::transition::{self, Status, StepOutcome};
use super::{Engine, EngineError};
use crate::term::{CommandOutcome, Outcome};
use crate::workflow::action::{Action, CaptureGroup, ListSessionsParams, SetEnvParams};
use crate::workflow::model::{Scalar, State, Workflow};
use crate::workflow::rules;
use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// Longest text kept for one string in the execution log.
const LOG_TEXT: usize = 16 * 1024;
/// Output kept in a journal step line.
const JOURNAL_OUTPUT: usize = 500;
/// How long a cancelled step's processes get between SIGINT and SIGKILL.
const CANCEL_GRACE: Duration = Duration::from_millis(500);
/// Timeout for the contract's own shell commands (reading and exporting variables).
const CONTRACT_TIMEOUT: f64 = 30.0;

/// Which session a run uses.
#[derive(Debug, Clone)]
pub enum SessionChoice {
    /// An existing session (the seed's mode: an agent prepared it).
    Given(String),
    /// One opened for the run when it started, closed at the end unless `keep`.
    Opened { id: String, keep: bool },
}

/// Everything a run needs, decided before it starts.
#[derive(Debug)]
pub struct RunPlan {
    pub run_id: String,
    pub workflow: Arc<Workflow>,
    pub version: Option<String>,
    pub inputs: IndexMap<String, String>,
    pub session: SessionChoice,
    pub started_at: String,
}

/// How the states ended, when not by running out of transitions.
struct Stop {
    final_state: FinalState,
    error: String,
}

impl Stop {
    fn new(final_state: FinalState, error: impl Into<String>) -> Self {
        Stop {
            final_state,
            error: error.into(),
        }
    }
}

/// What one action did.
struct Acted {
    outcome: StepOutcome,
    result: Value,
    error: Option<String>,
}

impl Acted {
    fn ok(result: impl Serialize, observed: String) -> Self {
        Acted {
            outcome: StepOutcome {
                status: Status::Success,
                observed,
                validation: None,
            },
            result: to_log_value(&result),
            error: None,
        }
    }

    fn failed(error: impl std::fmt::Display) -> Self {
        let error = error.to_string();
        Acted {
            outcome: StepOutcome {
                status: Status::Failure,
                observed: error.clone(),
                validation: None,
            },
            result: json!({ "error": error }),
            error: Some(error),
        }
    }
}

struct Exec<'a> {
    engine: &'a Engine,
    run: &'a ActiveRun,
    wf: &'a Workflow,
    journal: JournalWriter,
    log: Vec<Value>,
    vars: IndexMap<String, String>,
    session: Option<String>,
    /// Sessions the run opened stay open at the end (`keep_session`).
    keep: bool,
    steps: u32,
    last_state: Option<String>,
    /// The run's secret values: masked in the journal, the log, errors and events.
    secrets: Secrets,
    /// The state whose question is waiting for an answer, if one is.
    asking: Option<String>,
}

/// Runs the plan to its end and returns the result; never panics on what the workflow or
/// the session does.
pub(super) async fn execute(
    engine: Arc<Engine>,
    run: Arc<ActiveRun>,
    plan: RunPlan,
    journal: JournalWriter,
) -> (RunResult, Option<JournalEvent>) {
    let clock = Instant::now();
    let wf = plan.workflow.clone();
    let mut exec = Exec {
        engine: &engine,
        run: &run,
        wf: &wf,
        journal,
        log: Vec::new(),
        vars: IndexMap::new(),
        session: None,
        keep: matches!(plan.session, SessionChoice::Opened { keep: true, .. }),
        steps: 0,
        last_state: None,
        secrets: Secrets::default(),
        asking: None,
    };
    // A session opened for the run is the run's from the first instant: a cancel that comes
    // before the first state (even before the executor first runs) still closes it.
    if let SessionChoice::Opened { id, .. } = &plan.session {
        run.own(id);
        exec.session = Some(id.clone());
    }
    let keep = exec.keep;
    let ended = exec.run_all(&plan).await;
    exec.withdraw_question("the run ended").await;
    let (final_state, error, return_values) = match ended {
        Ok(values) => (FinalState::Completed, None, values),
        Err(stop) => (stop.final_state, Some(stop.error), IndexMap::new()),
    };
    let error = exec.secrets.redact_opt(error);
    for entry in &mut exec.log {
        exec.secrets.redact_value(entry);
    }
    if !keep {
        for id in run.take_owned() {
            let _ = engine.exit_terminal(&id, &exec.actor()).await;
        }
    }
    let ending = Ending {
        run_id: plan.run_id,
        workflow_name: wf.name.clone(),
        version: plan.version,
        signature: Some(wf.signature()),
        session_id: exec.session.clone(),
        final_state,
        states_executed: exec.steps,
        error,
        return_values,
        execution_log: exec.log,
        last_state: exec.last_state,
        started_at: plan.started_at,
        duration_ms: clock.elapsed().as_secs_f64() * 1000.0,
        cancelled_by: (final_state == FinalState::Canceled)
            .then(|| run.canceller())
            .flatten(),
    };
    // Published by the caller once the run's status is final.
    let (result, last) = engine.end_run(&mut exec.journal, ending).await;
    (result, Some(last))
}

impl Exec<'_> {
    /// The run itself, as the actor of what its steps do.
    fn actor(&self) -> Actor {
        Actor::Run {
            run_id: self.run.run_id.clone(),
        }
    }

    async fn run_all(&mut self, plan: &RunPlan) -> Result<IndexMap<String, String>, Stop> {
        let cancel = self.run.cancel.clone();
        let limit = self.wf.timeout_seconds.map(Duration::from_secs_f64);
        let work = async {
            self.open_session(&plan.session).await?;
            self.check_inputs(&plan.inputs).await?;
            self.states().await?;
            self.check_returns().await
        };
        let bounded = async {
            match limit {
                Some(limit) => tokio::time::timeout(limit, work).await.unwrap_or_else(|_| {
                    Err(Stop::new(
                        FinalState::Timeout,
                        format!(
                            "the run did not end within its timeout_seconds ({} s)",
                            limit.as_secs_f64()
                        ),
                    ))
                }),
                None => work.await,
            }
        };
        let result = tokio::select! {
            biased;
            () = cancel.cancelled() => Err(Stop::new(
                FinalState::Canceled,
                match self.run.canceller() {
                    Some(by) => format!("the run was cancelled by {by}"),
                    None => "the run was cancelled".to_string(),
                },
            )),
            result = bounded => result,
        };
        if matches!(&result, Err(stop) if matches!(stop.final_state, FinalState::Canceled | FinalState::Timeout))
        {
            self.interrupt().await;
        }
        result
    }

    /// Kills what the interrupted step left running. A session the run opened and will close
    /// needs nothing more: closing it ends everything; any other session stays, so only its
    /// foreground job is ended.
    async fn interrupt(&mut self) {
        if let Some(id) = &self.session
            && (self.keep || !self.run.owns(id))
            && let Ok(session) = self.engine.terminals().get(id)
        {
            let by = self.actor().typist();
            let _ = tokio::task::spawn_blocking(move || {
                session.interrupt_foreground(CANCEL_GRACE, &by)
            })
            .await;
        }
    }

    async fn open_session(&mut self, choice: &SessionChoice) -> Result<(), Stop> {
        match choice {
            SessionChoice::Given(id) => {
                let session = self
                    .engine
                    .terminals()
                    .get(id)
                    .map_err(|e| Stop::new(FinalState::Error, e.to_string()))?;
                self.session = Some(session.id().to_string());
            }
            SessionChoice::Opened { id, .. } => {
                // Already owned (see `execute`), so a cancel during the wait below closes it.
                let session = self
                    .engine
                    .terminals()
                    .get(id)
                    .map_err(|e| Stop::new(FinalState::Error, e.to_string()))?;
                Engine::wait_until_ready(&session).await;
            }
        }
        self.engine
            .runs()
            .set_session(self.run, self.session.clone());
        Ok(())
    }

    fn session_id(&self, explicit: Option<&str>) -> Result<String, EngineError> {
        explicit
            .map(str::to_string)
            .or_else(|| self.session.clone())
            .ok_or_else(|| {
                EngineError::InvalidParams(
                    "the run has no terminal session (an open_terminal step opens one)".into(),
                )
            })
    }

    async fn check_inputs(&mut self, given: &IndexMap<String, String>) -> Result<(), Stop> {
        if self.wf.arguments.is_empty() && given.is_empty() {
            return Ok(());
        }
        let unknown_given: Vec<&str> = self
            .wf
            .arguments
            .keys()
            .filter(|k| !given.contains_key(*k))
            .map(String::as_str)
            .collect();
        // Arguments not given are looked up in the session.
        let session_values = if unknown_given.is_empty() {
            IndexMap::new()
        } else {
            self.session_env(&unknown_given, "arguments").await
        };
        // Known before anything about them is written down, even when they turn out invalid.
        let seen: IndexMap<String, String> = given
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .chain(
                session_values
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.clone()?))),
            )
            .collect();
        self.learn_secrets(&seen);
        let resolved = contract::resolve_inputs(self.wf, given, &session_values);
        let (valid, detail) = match &resolved {
            Ok(inputs) => (
                true,
                json!({"valid": true, "sources": inputs.sources, "missing_vars": [], "validation_type": "arguments"}),
            ),
            Err(problems) => (
                false,
                json!({"valid": false, "missing_vars": problems.missing, "invalid": problems.invalid, "unknown": problems.unknown, "validation_type": "arguments"}),
            ),
        };
        self.log.push(json!({"phase": "pre_execution_validation", "validation_result": detail, "timestamp": now()}));
        self.record(RunEvent::ContractChecked {
            phase: "arguments".into(),
            valid,
            detail,
        })
        .await;
        let inputs = resolved.map_err(|problems| {
            Stop::new(FinalState::ValidationFailed, problems.message(self.wf))
        })?;
        // Before anything types them into the session or writes them down.
        self.learn_secrets(&inputs.values);
        let exports = inputs.to_export();
        if !exports.is_empty() {
            let id = self
                .session_id(None)
                .map_err(|e| Stop::new(FinalState::Error, e.to_string()))?;
            let params = SetEnvParams {
                session_id: None,
                vars: exports
                    .into_iter()
                    .map(|(k, v)| (k, Scalar::String(v)))
                    .collect(),
            };
            self.engine
                .set_env(&id, &params, Some(CONTRACT_TIMEOUT), &self.actor())
                .await
                .map_err(|e| {
                    Stop::new(
                        FinalState::Error,
                        format!("cannot export the inputs into session {id}: {e}"),
                    )
                })?;
        }
        self.vars.extend(inputs.values);
        Ok(())
    }

    /// Learns the secret values among `values` (by the workflow's `secret: true` variables):
    /// from here on they are masked in everything the run writes or returns.
    fn learn_secrets(&mut self, values: &IndexMap<String, String>) {
        let secret = |name: &str| {
            self.wf.arguments.get(name).is_some_and(|a| a.secret)
                || self.wf.return_values.get(name).is_some_and(|r| r.secret)
        };
        let found = Secrets::new(
            values
                .iter()
                .filter(|(name, _)| secret(name))
                .map(|(_, value)| value.as_str()),
        );
        if found.is_empty() {
            return;
        }
        self.secrets.extend(&found);
        self.journal.set_secrets(self.secrets.clone());
        self.run.set_secrets(self.secrets.clone());
    }

    /// Variables read from the run's session; none when it has none or is not a shell at its
    /// prompt (then the contract falls back to defaults and run variables).
    async fn session_env(&self, names: &[&str], what: &str) -> IndexMap<String, Option<String>> {
        let Some(id) = &self.session else {
            return IndexMap::new();
        };
        match self
            .engine
            .read_env(id, names, Some(CONTRACT_TIMEOUT), &self.actor())
            .await
        {
            Ok(values) => values.values,
            Err(e) => {
                tracing::debug!("{what} not read from session {id}: {e}");
                IndexMap::new()
            }
        }
    }

    async fn check_returns(&mut self) -> Result<IndexMap<String, String>, Stop> {
        if self.wf.return_values.is_empty() {
            return Ok(IndexMap::new());
        }
        let names: Vec<&str> = self.wf.return_values.keys().map(String::as_str).collect();
        if let Some(id) = &self.session
            && let Ok(session) = self.engine.terminals().get(id)
        {
            // The last step may have typed a command that is still running (the seed's
            // build_project does): the values exist once the shell is back at its prompt.
            if session.is_shell() && session.exit().is_none() {
                session
                    .wait_for_prompt(Duration::from_secs_f64(CONTRACT_TIMEOUT))
                    .await;
            }
        }
        let session_values = self.session_env(&names, "return values").await;
        let read: IndexMap<String, String> = session_values
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.clone()?)))
            .chain(self.vars.iter().map(|(k, v)| (k.clone(), v.clone())))
            .collect();
        self.learn_secrets(&read);
        let checked = contract::check_returns(self.wf, &session_values, &self.vars);
        let detail = match &checked {
            Ok(values) => {
                json!({"valid": true, "missing_vars": [], "values": values, "validation_type": "return_values"})
            }
            Err(missing) => {
                json!({"valid": false, "missing_vars": missing, "validation_type": "return_values"})
            }
        };
        self.log.push(json!({"phase": "post_execution_validation", "validation_result": detail, "timestamp": now()}));
        self.record(RunEvent::ContractChecked {
            phase: "return_values".into(),
            valid: checked.is_ok(),
            detail,
        })
        .await;
        checked.map_err(|missing| {
            let expected: Vec<&str> = self.wf.return_values.keys().map(String::as_str).collect();
            Stop::new(
                FinalState::ReturnValidationFailed,
                format!(
                    "Workflow failed to set required return values: {}. Expected variables: {}",
                    missing.join(", "),
                    expected.join(", ")
                ),
            )
        })
    }

    #[expect(clippy::too_many_lines, reason = "issue 23 splits it by its jobs")]
    async fn states(&mut self) -> Result<(), Stop> {
        let mut current = self.wf.initial_state.clone();
        loop {
            if self.steps >= self.wf.max_steps() {
                return Err(Stop::new(
                    FinalState::Error,
                    format!(
                        "the run executed max_steps ({}) states without ending; the workflow loops (last state: {current})",
                        self.wf.max_steps()
                    ),
                ));
            }
            let Some(state) = self.wf.states.get(&current) else {
                return Err(Stop::new(
                    FinalState::Error,
                    format!("state `{current}` does not exist"),
                ));
            };
            // The unit tests' way into the one path nothing else reaches: a bug.
            #[cfg(test)]
            if current == "panic_for_the_test" {
                panic!("a bug, injected by a test");
            }
            self.steps += 1;
            let step = self.steps;
            self.last_state = Some(current.clone());
            let tool = state.action.tool().as_str();
            let params = masked_params(self.wf, state.action.params());
            self.run.update(|s| {
                s.current_state = Some(current.clone());
                s.states_executed = step;
            });
            self.record(RunEvent::StepStarted {
                step,
                state: current.clone(),
                tool: tool.into(),
                params: params.clone(),
            })
            .await;
            let clock = Instant::now();
            let skip = match &state.when {
                Some(guard) => !guard.evaluate(&self.vars).map_err(|e| {
                    Stop::new(FinalState::Error, format!("state `{current}`: `when`: {e}"))
                })?,
                None => false,
            };
            let acted = if skip {
                Acted::ok(
                    json!({"skipped": true, "reason": "its `when` guard does not hold"}),
                    String::new(),
                )
            } else {
                self.act(&current, state).await
            };
            let elapsed_ms = clock.elapsed().as_secs_f64() * 1000.0;
            let status = status_name(acted.outcome.status);
            self.log.push(json!({
                "phase": "execution",
                "state": current,
                "tool": tool,
                "params": params,
                "result": acted.result,
                "tool_success": acted.outcome.status == Status::Success,
                "status": status,
                "elapsed_ms": elapsed_ms,
                "timestamp": now(),
            }));
            self.record(RunEvent::StepFinished {
                step,
                state: current.clone(),
                tool: tool.into(),
                status: status.into(),
                elapsed_ms,
                output: shorten(&acted.outcome.observed, JOURNAL_OUTPUT),
                error: acted.error.clone(),
            })
            .await;
            let taken = transition::next_state(state, &acted.outcome, &self.vars)
                .map_err(|e| Stop::new(FinalState::Error, format!("state `{current}`: {e}")))?;
            let to = taken.as_ref().map(|t| t.next_state.clone());
            self.log.push(json!({
                "phase": "transition",
                "from_state": current,
                "to_state": to,
                "condition_met": taken.is_some(),
                "condition": taken.as_ref().map(|t| t.condition.clone()),
                "timestamp": now(),
            }));
            self.record(RunEvent::Transition {
                from: current.clone(),
                to: to.clone(),
                condition: taken.as_ref().map(|t| t.condition.clone()),
            })
            .await;
            match to {
                Some(next) => current = next,
                None => return Ok(()),
            }
        }
    }

    /// Runs one action, bounded by the state's `timeout_seconds`.
    async fn act(&mut self, state_name: &str, state: &State) -> Acted {
        let bound = state.timeout_seconds.map(Duration::from_secs_f64);
        let timeout = state.timeout_seconds;
        let action = self.action(state_name, &state.action, timeout);
        match bound {
            // A little slack so that a wait bounded by the same timeout reports its own outcome.
            Some(limit) => {
                let bounded =
                    tokio::time::timeout(limit + Duration::from_millis(250), action).await;
                match bounded {
                    Ok(acted) => acted,
                    Err(_) => {
                        self.withdraw_question("the state's timeout_seconds ran out")
                            .await;
                        Acted {
                            outcome: StepOutcome {
                                status: Status::Timeout,
                                observed: String::new(),
                                validation: None,
                            },
                            result: json!({"timeout": true, "timeout_seconds": limit.as_secs_f64()}),
                            error: Some(format!(
                                "the state did not finish within {} s",
                                limit.as_secs_f64()
                            )),
                        }
                    }
                }
            }
            None => action.await,
        }
    }

    #[expect(clippy::too_many_lines, reason = "issue 23 splits it by its jobs")]
    async fn action(&mut self, state_name: &str, action: &Action, timeout: Option<f64>) -> Acted {
        let engine = self.engine;
        let actor = self.actor();
        let session = match action {
            Action::OpenTerminal(_) | Action::ListTerminalSessions(_) | Action::Prompt(_) => None,
            other => match self.session_id(other.session_id()) {
                Ok(id) => Some(id),
                Err(e) => return Acted::failed(e),
            },
        };
        let sid = session.as_deref().unwrap_or_default();
        match action {
            Action::OpenTerminal(p) => match engine.open_session(p, &self.actor()) {
                Ok(session) => {
                    // The run continues in the new session and closes it at the end.
                    self.run.own(session.id());
                    self.session = Some(session.id().to_string());
                    engine.runs().set_session(self.run, self.session.clone());
                    Engine::wait_until_ready(&session).await;
                    let info = session.info();
                    let observed = info.session_id.clone();
                    Acted::ok(info, observed)
                }
                Err(e) => Acted::failed(e),
            },
            Action::SendInput(p) => match engine.send_input(sid, p, &actor) {
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
            Action::AwaitOutput(p) => match engine.await_output(sid, p, timeout, &actor).await {
                Ok(out) => {
                    let status = match out.result.outcome {
                        Outcome::Matched => Status::Success,
                        Outcome::Timeout => Status::Timeout,
                        Outcome::Stopped | Outcome::Exited => Status::Failure,
                    };
                    if out.result.outcome == Outcome::Matched && !p.captures.is_empty() {
                        let captured = captures(&p.captures, &out.result);
                        self.store_vars(sid, captured).await;
                    }
                    let observed = match &out.result.matched_line {
                        Some(line) => format!("{}\n{line}", out.result.tail),
                        None => out.result.tail.clone(),
                    };
                    let mut acted = Acted::ok(&out, observed);
                    acted.outcome.status = status;
                    if status != Status::Success {
                        acted.error = Some(match out.result.outcome {
                            Outcome::Stopped => format!(
                                "stop pattern {} matched",
                                out.result.stop_pattern.as_deref().unwrap_or("?")
                            ),
                            Outcome::Exited => "the session's program exited".into(),
                            _ => format!("no match within {} s", out.timeout_seconds),
                        });
                    }
                    acted
                }
                Err(e) => Acted::failed(e),
            },
            Action::RunCommand(p) => match engine.run_command(sid, p, timeout, &actor).await {
                Ok(out) => {
                    let status = match (out.result.outcome, out.result.exit_code) {
                        (CommandOutcome::Completed, Some(0)) => Status::Success,
                        (CommandOutcome::Timeout, _) => Status::Timeout,
                        _ => Status::Failure,
                    };
                    let observed = out.result.output.clone();
                    let mut acted = Acted::ok(&out, observed);
                    acted.outcome.status = status;
                    if status != Status::Success {
                        acted.error = Some(match out.result.outcome {
                            CommandOutcome::Completed => {
                                format!("exit status {}", out.result.exit_code.unwrap_or(-1))
                            }
                            CommandOutcome::Timeout => {
                                format!("did not finish within {} s", out.timeout_seconds)
                            }
                            CommandOutcome::Exited => "the shell exited".into(),
                        });
                    }
                    acted
                }
                Err(e) => Acted::failed(e),
            },
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
            Action::ExitTerminal(_) => match engine.exit_terminal(sid, &self.actor()).await {
                Ok(closed) => {
                    self.run.disown(&closed.session_id);
                    if self.session.as_deref() == Some(closed.session_id.as_str()) {
                        self.session = None;
                        engine.runs().set_session(self.run, None);
                    }
                    Acted::ok(closed, String::new())
                }
                Err(e) => Acted::failed(e),
            },
            Action::Prompt(p) => self.prompt(state_name, p).await,
        }
    }

    /// Pauses the run until an answer arrives through [`Engine::answer_prompt`].
    async fn ask(&mut self, state_name: &str, question: &str) -> Option<(String, Actor)> {
        let (tx, rx) = oneshot::channel();
        *self.run.pending_prompt() = Some(PendingPrompt {
            state: state_name.to_string(),
            prompt: question.to_string(),
            answer: tx,
        });
        self.asking = Some(state_name.to_string());
        // The status first: whoever hears of the question can answer it at once.
        self.run.update(|s| {
            s.status = Phase::WaitingForInput;
            s.prompt = Some(question.to_string());
        });
        self.record(RunEvent::WaitingForInput {
            state: state_name.to_string(),
            prompt: question.to_string(),
        })
        .await;
        // Whether the answer comes or the wait is dropped (the state's timeout, a cancel), the
        // run stops waiting: the guard withdraws the question either way.
        let _withdraw = Withdraw(self.run);
        let answer = rx.await.ok();
        if answer.is_none() {
            self.withdraw_question("the run stopped waiting").await;
        } else {
            self.asking = None;
        }
        answer
    }

    /// Records that a question which was waiting is not any more (its state timed out, the
    /// run was cancelled), so that whoever shows it takes it down.
    async fn withdraw_question(&mut self, reason: &str) {
        if let Some(state) = self.asking.take() {
            self.record(RunEvent::PromptWithdrawn {
                state,
                reason: reason.to_string(),
            })
            .await;
        }
    }

    /// Journals an event of the run and publishes the line as written (secrets masked), once
    /// it is on disk and the run's status shows it.
    async fn record(&mut self, body: RunEvent) -> u64 {
        let line = self.journal.append(body);
        let seq = line.seq;
        // Announced however this ends: a step cancelled while its line is being written
        // (its state's timeout) still leaves one event for the one line.
        let announce = Announce {
            engine: self.engine,
            run: self.run,
            actor: self.actor(),
            line: Some(line),
        };
        self.journal.written().await;
        drop(announce);
        seq
    }

    async fn prompt(
        &mut self,
        state_name: &str,
        p: &crate::workflow::action::PromptParams,
    ) -> Acted {
        let Some((answer, mut answered_by)) = self.ask(state_name, &p.prompt).await else {
            return Acted::failed("the prompt was withdrawn before an answer came");
        };
        let mut outcome = match rules::validate_output(&p.validation, &answer, &self.vars) {
            Ok(outcome) => outcome,
            Err(e) => return Acted::failed(format!("the prompt's rules cannot be evaluated: {e}")),
        };
        // A confirmation is a second question, asked only about an answer that passed.
        let mut confirmed = None;
        if outcome.valid && p.require_confirmation {
            let question = format!("Confirm this answer (yes or no): {}", shorten(&answer, 500));
            let reply = self.ask(state_name, &question).await;
            let yes = reply
                .as_ref()
                .is_some_and(|(text, _)| is_confirmation(text));
            if let Some((_, by)) = reply {
                answered_by = by;
            }
            confirmed = Some(yes);
            if !yes {
                outcome.valid = false;
                outcome.issues.push("the answer was not confirmed".into());
                outcome
                    .suggestions
                    .push("Answer again, then confirm with yes.".into());
            }
        }
        self.record(RunEvent::Answered {
            state: state_name.to_string(),
            valid: outcome.valid,
            issues: outcome.issues.clone(),
            actor: Some(answered_by),
        })
        .await;
        if outcome.valid
            && let Some(name) = &p.store_as
        {
            let sid = self.session.clone().unwrap_or_default();
            self.store_vars(&sid, vec![(name.clone(), answer.clone())])
                .await;
        }
        let valid = outcome.valid;
        let mut acted = Acted::ok(
            json!({"answer": answer, "validation": outcome, "confirmed": confirmed}),
            answer,
        );
        acted.outcome.validation = Some(valid);
        acted
    }

    /// Stores values as run variables and exports them into the shell when it is at its
    /// prompt (a program in the foreground, such as a server the run started, keeps them as
    /// run variables only).
    async fn store_vars(&mut self, session: &str, values: Vec<(String, String)>) {
        if values.is_empty() {
            return;
        }
        self.vars.extend(values.iter().cloned());
        let at_prompt = self
            .engine
            .terminals()
            .get(session)
            .is_ok_and(|s| s.require_shell_prompt().is_ok());
        if at_prompt {
            let params = SetEnvParams {
                session_id: None,
                vars: values
                    .into_iter()
                    .map(|(k, v)| (k, Scalar::String(v)))
                    .collect(),
            };
            if let Err(e) = self
                .engine
                .set_env(session, &params, Some(CONTRACT_TIMEOUT), &self.actor())
                .await
            {
                tracing::debug!("captured values not exported: {e}");
            }
        }
    }
}

/// Withdraws a run's pending question when dropped.
struct Withdraw<'a>(&'a ActiveRun);

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        self.0.pending_prompt().take();
        self.0.update(|s| {
            if s.status == Phase::WaitingForInput {
                s.status = Phase::Running;
            }
            s.prompt = None;
        });
    }
}

fn captures(
    wanted: &IndexMap<String, CaptureGroup>,
    result: &crate::term::AwaitResult,
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

fn is_confirmation(answer: &str) -> bool {
    matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "yes" | "y" | "confirm" | "confirmed"
    )
}

fn status_name(status: Status) -> &'static str {
    match status {
        Status::Success => "success",
        Status::Failure => "failure",
        Status::Timeout => "timeout",
    }
}

/// A step's params for the log and journal: `set_env` values of secret variables masked.
fn masked_params(wf: &Workflow, mut params: Value) -> Value {
    if let Some(vars) = params.get_mut("vars").and_then(Value::as_object_mut) {
        for (name, value) in vars.iter_mut() {
            let secret = wf.arguments.get(name).is_some_and(|a| a.secret)
                || wf.return_values.get(name).is_some_and(|r| r.secret);
            if secret {
                *value = Value::String(MASK.into());
            }
        }
    }
    params
}

/// A result for the log: long strings shortened so that one step cannot bloat it.
fn to_log_value(result: &impl Serialize) -> Value {
    fn bound(v: &mut Value) {
        match v {
            Value::String(s) if s.len() > LOG_TEXT => *s = shorten(s, LOG_TEXT),
            Value::Array(items) => items.iter_mut().for_each(bound),
            Value::Object(map) => map.values_mut().for_each(bound),
            _ => {}
        }
    }
    let mut value = serde_json::to_value(result).unwrap_or(Value::Null);
    bound(&mut value);
    value
}

/// The end of a text, at most `max` bytes, with a marker when cut.
fn shorten(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[...{} bytes cut...]{}", start, &text[start..])
}

/// Publishes a run's journal line when dropped: once it is written, or when the step that
/// wrote it is cancelled (the writing thread writes it all the same).
struct Announce<'a> {
    engine: &'a Engine,
    run: &'a ActiveRun,
    actor: Actor,
    line: Option<JournalEvent>,
}

impl Drop for Announce<'_> {
    fn drop(&mut self) {
        if let Some(line) = self.line.take() {
            self.run.update(|s| s.last_event = line.seq);
            self.engine
                .publish_run_line(&self.actor, &self.run.run_id, line);
        }
    }
}
