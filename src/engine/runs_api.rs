//! The engine's run methods: start (by name or inline manifest), follow, cancel, answer a
//! paused prompt, and the history (list, events from a cursor, feedback, purge).

use super::approval::Decision;
use super::contract;
use super::ending::{self, Ending};
use super::events::{Actor, Change};
use super::executor::{self, RunPlan, SessionChoice};
use super::journal::{self, JournalEvent, RunEvent, RunSummary};
use super::result::{FinalState, RunResult};
use super::runs::ActiveRun;
use super::runs::{Phase, RunStatus};
use super::{Engine, EngineError};
use crate::store::StoreError;
use crate::workflow::action::OpenTerminalParams;
use crate::workflow::model::Workflow;
use crate::workflow::source::Format;
use crate::workflow::validate::check_bytes;
use crate::workflow::violation::Severity;
use chrono::Utc;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The most events or runs one call returns.
pub const MAX_PAGE: usize = 1000;

/// The longest `run_events` waits for new events.
pub const MAX_EVENTS_WAIT: Duration = Duration::from_secs(60);

/// Which workflow to run.
#[derive(Debug, Clone)]
pub enum WorkflowSource {
    /// A workflow of the folder, by name (its last good version if the file is broken now).
    Name(String),
    /// A manifest given whole (YAML or JSON), run without being saved.
    Inline(String),
}

/// A request to run a workflow.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub workflow: WorkflowSource,
    /// Run in this session (the agent prepared it); else a new one.
    pub session_id: Option<String>,
    /// Values for the workflow's arguments.
    pub inputs: IndexMap<String, String>,
    /// Keep the run's own session open at the end.
    pub keep_session: bool,
    /// Who asks: recorded in the journal and on every event of the run.
    pub actor: Actor,
    /// The agent's own connection asked for approval mode (`flowdeck mcp --approve
    /// agent-runs`), whatever the engine was started with.
    pub require_approval: bool,
}

/// A workflow found to run: the model, its content version and the bytes of that version.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub workflow: Arc<Workflow>,
    pub version: String,
    pub content: Arc<[u8]>,
}

/// A registered run and what it needs to start.
struct Launch {
    run: Arc<ActiveRun>,
    request: RunRequest,
    resolved: Resolved,
    started_at: String,
}

/// A run that has started (or ended before its first state).
#[derive(Debug)]
pub struct StartedRun {
    pub run_id: String,
    status: watch::Receiver<RunStatus>,
}

impl StartedRun {
    pub fn status(&self) -> RunStatus {
        self.status.borrow().clone()
    }

    /// Waits for the run's result.
    pub async fn finished(mut self) -> RunResult {
        self.wait().await
    }

    async fn wait(&mut self) -> RunResult {
        let ended = match self.status.wait_for(|s| s.result.is_some()).await {
            Ok(status) => status.result.clone(),
            Err(_) => None,
        };
        ended
            .or_else(|| self.status.borrow().result.clone())
            .unwrap_or_else(|| orphan_result(&self.run_id))
    }
}

/// A run followed to its end by whoever started it: if they stop following before it ends
/// (an agent's call cancelled, a person closing the view, the future dropped for any reason),
/// the run is cancelled rather than left running unwatched.
#[derive(Debug)]
pub struct FollowedRun {
    started: StartedRun,
    engine: Arc<Engine>,
    armed: bool,
    /// Who follows it: the one who cancels it by going away.
    follower: Actor,
}

impl FollowedRun {
    pub fn run_id(&self) -> &str {
        &self.started.run_id
    }

    /// Waits for the result; the run is no longer cancelled once it has one.
    pub async fn finished(mut self) -> RunResult {
        let result = self.started.wait().await;
        self.armed = false;
        result
    }
}

impl Drop for FollowedRun {
    fn drop(&mut self) {
        if self.armed
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let engine = self.engine.clone();
            let run_id = self.started.run_id.clone();
            let follower = self.follower.clone();
            runtime.spawn(async move {
                let _ = engine.cancel_run(&run_id, &follower).await;
            });
        }
    }
}

/// A result for a run whose executor vanished (it cannot, short of a bug): an honest error.
fn orphan_result(run_id: &str) -> RunResult {
    let at = journal::now();
    RunResult {
        success: false,
        workflow_name: String::new(),
        session_id: None,
        final_state: FinalState::Error,
        states_executed: 0,
        workflow_signature: None,
        execution_log: Vec::new(),
        error: Some("the run's executor stopped without a result".into()),
        run_id: run_id.to_string(),
        workflow_version: None,
        return_values: IndexMap::new(),
        last_state: None,
        started_at: at.clone(),
        finished_at: at,
        duration_ms: 0.0,
        journal_error: None,
    }
}

/// A page of a run's journal.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct RunEvents {
    pub run_id: String,
    pub events: Vec<JournalEvent>,
    /// Pass this as `after` to read on.
    pub next_cursor: u64,
    /// The run has ended: no more events will come (feedback aside).
    pub finished: bool,
}

/// The run history.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct RunList {
    /// Runs in progress.
    pub active: Vec<RunStatus>,
    /// Journaled runs, newest first.
    pub runs: Vec<RunSummary>,
}

/// The answer to `run_feedback`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FeedbackRecorded {
    pub run_id: String,
    pub seq: u64,
}

/// The answer to `workflow_purge_history`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Purged {
    pub removed: usize,
    /// Runs in progress are never purged.
    pub kept_active: usize,
}

impl Engine {
    /// Starts a run. A workflow that does not exist or was never valid ends at once with
    /// `workflow_not_found` / `definition_invalid`; a busy session or the run limit is an
    /// error.
    #[expect(clippy::too_many_lines, reason = "issue 23 splits it by its jobs")]
    pub async fn start_run(
        self: &Arc<Self>,
        request: RunRequest,
    ) -> Result<StartedRun, EngineError> {
        // Values no shell can hold are refused before anything starts, naming the input.
        for (name, value) in &request.inputs {
            if let Some(problem) = contract::env_value_problem(name, value) {
                return Err(EngineError::InvalidParams(problem));
            }
        }
        let started = Utc::now();
        // Reserved on disk: no other run, here or in another flowdeck, can have this id.
        let run_id = self.journal().reserve(started);
        let started_at = journal::now();
        let requested_name = match &request.workflow {
            WorkflowSource::Name(n) => n.clone(),
            WorkflowSource::Inline(_) => String::new(),
        };
        let resolved = match self.resolve(&request.workflow) {
            Ok(found) => found,
            Err((final_state, error)) => {
                return Ok(self
                    .ended_before_start(
                        &run_id,
                        &requested_name,
                        &request,
                        final_state,
                        error,
                        started_at,
                    )
                    .await);
            }
        };
        // An unknown session is the caller's mistake, reported before anything runs; a name
        // becomes the session's id, so that one run per session holds whichever was given.
        let mut request = request;
        if let Some(session) = &request.session_id {
            match self.terminals().get(session) {
                Ok(found) => request.session_id = Some(found.id().to_string()),
                Err(e) => {
                    self.journal().release(&run_id);
                    return Err(e.into());
                }
            }
        }
        let approval = match self.approval_needed(
            &run_id,
            &request.workflow,
            &resolved,
            &request.actor,
            request.require_approval,
        ) {
            Ok(approval) => approval,
            Err(e) => {
                self.journal().release(&run_id);
                return Err(e);
            }
        };
        let status = RunStatus {
            run_id: run_id.clone(),
            workflow_name: resolved.workflow.name.clone(),
            status: if approval.is_some() {
                Phase::AwaitingApproval
            } else {
                Phase::Running
            },
            session_id: request.session_id.clone(),
            current_state: None,
            states_executed: 0,
            started_at: started_at.clone(),
            started_by: Some(request.actor.clone()),
            prompt: None,
            last_event: 0,
            result: None,
        };
        let run = match self.runs().start(status) {
            Ok(run) => run,
            Err(e) => {
                self.journal().release(&run_id);
                return Err(e.into());
            }
        };
        // No wait from the run's registration to here: a caller that follows the run holds it
        // (cancel-on-drop) from the first instant.
        let receiver = run.status.subscribe();
        let launch = Launch {
            run,
            request,
            resolved,
            started_at,
        };
        match approval {
            None => self.launch(launch).await,
            Some(approval) => {
                // Pending from now: whoever reads the run's status can answer it at once.
                let decided = self.ask_approval(&launch.run, approval);
                let engine = self.clone();
                tokio::spawn(async move { engine.launch_once_approved(launch, decided).await });
            }
        }
        Ok(StartedRun {
            run_id,
            status: receiver,
        })
    }

    /// Waits for the person's answer, then starts the run or ends it unstarted, saying why.
    async fn launch_once_approved(
        self: Arc<Self>,
        launch: Launch,
        decided: tokio::sync::oneshot::Receiver<Decision>,
    ) {
        let decision = self.await_approval(&launch.run, decided).await;
        match decision {
            Some(Decision::Approved { .. }) => {
                launch.run.update(|s| s.status = Phase::Running);
                self.launch(launch).await;
            }
            Some(Decision::Denied { why, .. }) => {
                self.end_unlaunched(&launch, FinalState::NotApproved, why, None)
                    .await;
            }
            None => {
                let by = launch.run.canceller().unwrap_or(Actor::System);
                let why = format!("cancelled by {by} while it waited for approval");
                self.end_unlaunched(&launch, FinalState::Canceled, why, Some(by))
                    .await;
            }
        }
    }

    /// Opens the run's session (unless it was given one), starts its journal and its executor.
    #[expect(clippy::too_many_lines, reason = "issue 23 splits it by its jobs")]
    async fn launch(self: &Arc<Self>, launch: Launch) {
        let Launch {
            run,
            mut request,
            resolved,
            started_at,
        } = launch;
        let run_id = run.run_id.clone();
        // A run's own session is opened now, so that the run starts with it (its first event
        // names it) and owns it from the first instant.
        let session = match request.session_id.clone() {
            Some(id) => SessionChoice::Given(id),
            None => {
                let params = OpenTerminalParams {
                    command: self.config().run_shell.clone(),
                    ..OpenTerminalParams::default()
                };
                let actor = Actor::Run {
                    run_id: run_id.clone(),
                };
                match self.open_session(&params, &actor) {
                    Ok(opened) => {
                        let id = opened.id().to_string();
                        self.runs().set_session(&run, Some(id.clone()));
                        request.session_id = Some(id.clone());
                        SessionChoice::Opened {
                            id,
                            keep: request.keep_session,
                        }
                    }
                    Err(e) => {
                        let why = format!("cannot open a terminal for the run: {e}");
                        let launch = Launch {
                            run,
                            request,
                            resolved,
                            started_at,
                        };
                        self.end_unlaunched(&launch, FinalState::Error, why, None)
                            .await;
                        return;
                    }
                }
            }
        };
        let _ = self.store.meta_dir();
        let mut writer = self.journal().create(&run_id);
        let Resolved {
            workflow, version, ..
        } = resolved;
        let first = writer.append(RunEvent::RunStarted {
            run_id: run_id.clone(),
            workflow: workflow.name.clone(),
            version: Some(version.clone()),
            session_id: request.session_id.clone(),
            inputs: super::contract::masked(&workflow, &request.inputs),
            actor: Some(request.actor.clone()),
        });
        // Sessions the run opened are closed here if its executor dies (unless kept).
        let keep = request.keep_session;
        let plan = RunPlan {
            run_id: run_id.clone(),
            workflow,
            version: Some(version.clone()),
            inputs: request.inputs,
            session,
            started_at,
        };
        let engine = self.clone();
        let actor = request.actor;
        tokio::spawn(async move {
            // Announced once written, so that whoever hears of it can read it.
            writer.written().await;
            run.update(|s| s.last_event = first.seq);
            engine.publish_run_line(&actor, &run.run_id, first);
            // The executor runs in a task of its own: a panic in it ends the run as an error
            // (its slot and session freed) instead of leaving it running forever.
            let work = tokio::spawn(executor::execute(engine.clone(), run.clone(), plan, writer));
            let (result, last) = match work.await {
                Ok(done) => done,
                Err(e) => engine.panicked_run(&run, keep, Some(version), e).await,
            };
            engine.runs().finish(&run, result);
            if let Some(line) = last {
                engine.publish_run_line(&actor, &run.run_id, line);
            }
        });
    }

    /// Ends a registered run that never got going (not approved, cancelled while it waited,
    /// no terminal for it): journaled and finished like any other, so that whoever follows
    /// it gets its result.
    async fn end_unlaunched(
        &self,
        launch: &Launch,
        final_state: FinalState,
        error: String,
        cancelled_by: Option<Actor>,
    ) {
        let run = &launch.run;
        let (result, lines) = self
            .journal_unstarted(
                &run.run_id,
                &launch.resolved.workflow.name,
                Some(launch.resolved.version.clone()),
                &launch.request,
                final_state,
                error,
                cancelled_by,
                launch.started_at.clone(),
            )
            .await;
        run.update(|s| s.last_event = lines[1].seq);
        self.runs().finish(run, result);
        for line in lines {
            self.publish_run_line(&launch.request.actor, &run.run_id, line);
        }
    }

    /// Publishes a run's journal line as an event, once the run's status shows it.
    pub(super) fn publish_run_line(&self, actor: &Actor, run_id: &str, line: JournalEvent) {
        self.publish(
            actor.clone(),
            Change::Run {
                run_id: run_id.to_string(),
                journal_seq: line.seq,
                line: line.body,
            },
        );
    }

    /// The end of a run whose executor panicked: an error with the panic's message, its own
    /// session closed, its journal ended.
    async fn panicked_run(
        &self,
        run: &ActiveRun,
        keep: bool,
        version: Option<String>,
        e: tokio::task::JoinError,
    ) -> (RunResult, Option<JournalEvent>) {
        let message = match e.try_into_panic() {
            Ok(panic) => crate::panics::message(&*panic),
            Err(e) => e.to_string(),
        };
        let error = format!("flowdeck failed inside this run (a bug): {message}");
        tracing::error!("run {}: {error}", run.run_id);
        let status = run.snapshot();
        if !keep {
            let actor = Actor::Run {
                run_id: run.run_id.clone(),
            };
            for id in run.take_owned() {
                let _ = self.exit_terminal(&id, &actor).await;
            }
        }
        let mut writer = self.journal().reopen(&run.run_id);
        let mut ending = Ending::unstarted(
            &run.run_id,
            &status.workflow_name,
            version,
            status.session_id,
            FinalState::Error,
            error,
            status.started_at.clone(),
        );
        ending.states_executed = status.states_executed;
        ending.last_state = status.current_state;
        ending.duration_ms = ending::span_ms(&status.started_at, &journal::now());
        let (result, last) = self.end_run(&mut writer, ending).await;
        (result, Some(last))
    }

    /// Starts a run that the caller follows to its end: dropping it before the end cancels
    /// the run.
    pub async fn follow_run(
        self: &Arc<Self>,
        request: RunRequest,
    ) -> Result<FollowedRun, EngineError> {
        let follower = request.actor.clone();
        Ok(FollowedRun {
            started: self.start_run(request).await?,
            engine: self.clone(),
            armed: true,
            follower,
        })
    }

    /// Starts a run and waits for its result.
    pub async fn run(self: &Arc<Self>, request: RunRequest) -> Result<RunResult, EngineError> {
        Ok(self.start_run(request).await?.finished().await)
    }

    /// The names of a workflow's secret inputs (and secret return values), for whoever writes
    /// down requests about it; none when it cannot be found or read.
    pub fn secret_names(&self, source: &WorkflowSource) -> Vec<String> {
        let Ok(Resolved { workflow, .. }) = self.resolve(source) else {
            return Vec::new();
        };
        workflow
            .arguments
            .iter()
            .filter(|(_, a)| a.secret)
            .map(|(k, _)| k.clone())
            .chain(
                workflow
                    .return_values
                    .iter()
                    .filter(|(_, r)| r.secret)
                    .map(|(k, _)| k.clone()),
            )
            .collect()
    }

    /// Masks the secret values of every run in progress wherever they appear in `value`.
    pub fn redact_run_secrets(&self, value: &mut serde_json::Value) {
        for run in self.runs().all_active() {
            run.secrets().redact_value(value);
        }
    }

    fn resolve(&self, source: &WorkflowSource) -> Result<Resolved, (FinalState, String)> {
        match source {
            WorkflowSource::Name(name) => self
                .store
                .runnable_good(name)
                .map(|good| Resolved {
                    workflow: good.workflow,
                    version: good.version,
                    content: good.bytes,
                })
                .map_err(|e| match e {
                    StoreError::NotFound(_) => (
                        FinalState::WorkflowNotFound,
                        format!(
                            "workflow {} not found (list the workflows to see their names)",
                            crate::workflow::names::display_safe(name)
                        ),
                    ),
                    other => (FinalState::DefinitionInvalid, other.to_string()),
                }),
            WorkflowSource::Inline(content) => {
                let checked = check_bytes(content.as_bytes(), Format::sniff(content));
                let errors: Vec<String> = checked
                    .violations
                    .iter()
                    .filter(|v| v.severity == Severity::Error)
                    .map(|v| v.to_line("manifest"))
                    .collect();
                match (checked.workflow, errors.is_empty()) {
                    (Some(w), true) => Ok(Resolved {
                        workflow: Arc::new(w),
                        version: crate::store::files::content_version(content.as_bytes()),
                        content: Arc::from(content.as_bytes()),
                    }),
                    _ => Err((
                        FinalState::DefinitionInvalid,
                        format!("the manifest is invalid:\n{}", errors.join("\n")),
                    )),
                }
            }
        }
    }

    async fn ended_before_start(
        &self,
        run_id: &str,
        name: &str,
        request: &RunRequest,
        final_state: FinalState,
        error: String,
        started_at: String,
    ) -> StartedRun {
        let (result, lines) = self
            .journal_unstarted(
                run_id,
                name,
                None,
                request,
                final_state,
                error,
                None,
                started_at.clone(),
            )
            .await;
        let status = RunStatus {
            run_id: run_id.to_string(),
            workflow_name: name.to_string(),
            status: Phase::Finished,
            session_id: request.session_id.clone(),
            current_state: None,
            states_executed: 0,
            started_at,
            started_by: Some(request.actor.clone()),
            prompt: None,
            last_event: lines[1].seq,
            result: Some(result),
        };
        self.runs().record_finished(status.clone());
        for line in lines {
            self.publish_run_line(&request.actor, run_id, line);
        }
        let (_, receiver) = watch::channel(status);
        StartedRun {
            run_id: run_id.to_string(),
            status: receiver,
        }
    }

    /// The journal and result of a run that ended before its first state.
    #[allow(clippy::too_many_arguments)]
    async fn journal_unstarted(
        &self,
        run_id: &str,
        name: &str,
        version: Option<String>,
        request: &RunRequest,
        final_state: FinalState,
        error: String,
        cancelled_by: Option<Actor>,
        started_at: String,
    ) -> (RunResult, [JournalEvent; 2]) {
        let _ = self.store.meta_dir();
        let mut writer = self.journal().create(run_id);
        let first = writer.append(RunEvent::RunStarted {
            run_id: run_id.to_string(),
            workflow: name.to_string(),
            version: version.clone(),
            session_id: request.session_id.clone(),
            inputs: IndexMap::new(),
            actor: Some(request.actor.clone()),
        });
        let mut ending = Ending::unstarted(
            run_id,
            name,
            version,
            request.session_id.clone(),
            final_state,
            error,
            started_at,
        );
        ending.cancelled_by = cancelled_by;
        let (result, last) = self.end_run(&mut writer, ending).await;
        (result, [first, last])
    }

    /// A run's status (live, or as it ended).
    pub fn run_status(&self, run_id: &str) -> Result<RunStatus, EngineError> {
        if let Some(status) = self.runs().status(run_id) {
            return Ok(status);
        }
        // A run of an earlier flowdeck process: from its journal, its ending from its last
        // line (or `interrupted`, when it has none and nobody is writing it).
        let not_found = || EngineError::RunNotFound(crate::workflow::names::display_safe(run_id));
        let events = self
            .journal()
            .read(run_id, 0, usize::MAX)
            .map_err(|_| not_found())?;
        let cut_off = !self.journal().is_owned(run_id);
        let summary = journal::Journal::summarize(&events, cut_off).ok_or_else(not_found)?;
        let result = ending::result_from_journal(&events, cut_off);
        Ok(RunStatus {
            run_id: summary.run_id,
            workflow_name: summary.workflow,
            // Without an ending, another flowdeck process is running it.
            status: if result.is_some() {
                Phase::Finished
            } else {
                Phase::Running
            },
            session_id: summary.session_id,
            current_state: result.as_ref().and_then(|r| r.last_state.clone()),
            states_executed: summary.states_executed.unwrap_or(0),
            started_at: summary.started_at,
            started_by: events.iter().find_map(|e| match &e.body {
                RunEvent::RunStarted { actor, .. } => actor.clone(),
                _ => None,
            }),
            prompt: None,
            last_event: events.last().map_or(0, |e| e.seq),
            result,
        })
    }

    /// A run's journal events after `after`, waiting up to `wait` for new ones when there are
    /// none yet and the run is still going.
    pub async fn run_events(
        &self,
        run_id: &str,
        after: u64,
        limit: usize,
        wait: Duration,
    ) -> Result<RunEvents, EngineError> {
        // The bounds every caller gets: at most 1,000 events a page and a minute of waiting.
        let limit = limit.clamp(1, MAX_PAGE);
        let wait = wait.min(MAX_EVENTS_WAIT);
        let not_found = || EngineError::RunNotFound(crate::workflow::names::display_safe(run_id));
        // Whether the run has ended is decided before each read, so that `finished: true`
        // always comes with every event up to the end (within `limit`).
        let live = self.runs().get(run_id);
        // A run in progress exists even before its first line is written.
        if live.is_none() && !self.journal().exists(run_id) {
            return Err(not_found());
        }
        // A run another flowdeck process is writing is not finished either.
        let mut finished = live.is_none() && !self.journal().is_owned(run_id);
        let mut events = self
            .journal()
            .read(run_id, after, limit.max(1))
            .map_err(|_| not_found())?;
        if events.is_empty()
            && let Some(run) = &live
        {
            let mut status = run.status.subscribe();
            let _ = tokio::time::timeout(
                wait,
                status.wait_for(|s| s.last_event > after || s.status == Phase::Finished),
            )
            .await;
            finished = self.runs().get(run_id).is_none() && !self.journal().is_owned(run_id);
            events = self
                .journal()
                .read(run_id, after, limit.max(1))
                .map_err(|_| not_found())?;
        }
        // A page cut by `limit` is not the end.
        if events.len() >= limit.max(1) {
            finished = false;
        }
        let next_cursor = events.last().map_or(after, |e| e.seq);
        Ok(RunEvents {
            run_id: run_id.to_string(),
            events,
            next_cursor,
            finished,
        })
    }

    /// Runs in progress and the history, newest first.
    pub fn run_list(&self, workflow: Option<&str>, limit: usize) -> RunList {
        let limit = limit.clamp(1, MAX_PAGE);
        RunList {
            active: self
                .runs()
                .list_active()
                .into_iter()
                .filter(|r| workflow.is_none_or(|w| r.workflow_name == w))
                .collect(),
            runs: self.journal().list(workflow, limit),
        }
    }

    /// Cancels a run in progress: the step in progress is interrupted and its processes
    /// killed. Returns its status once it has ended.
    /// Cancels a run; its end names `actor` as who cancelled it.
    pub async fn cancel_run(&self, run_id: &str, actor: &Actor) -> Result<RunStatus, EngineError> {
        let run = self
            .runs()
            .get(run_id)
            .ok_or_else(|| match self.runs().status(run_id) {
                Some(_) => EngineError::RunFinished(run_id.to_string()),
                None => EngineError::RunNotFound(crate::workflow::names::display_safe(run_id)),
            })?;
        let mut status = run.status.subscribe();
        run.cancel_by(actor);
        let _ = tokio::time::timeout(
            Duration::from_secs(10),
            status.wait_for(|s| s.status == Phase::Finished),
        )
        .await;
        Ok(run.snapshot())
    }

    /// Answers a run's paused `prompt` step; the journal records who answered.
    pub fn answer_prompt(
        &self,
        run_id: &str,
        answer: String,
        actor: &Actor,
    ) -> Result<(), EngineError> {
        let run = self.runs().get(run_id).ok_or_else(|| {
            EngineError::RunNotFound(crate::workflow::names::display_safe(run_id))
        })?;
        let pending = run.pending_prompt().take();
        let Some(pending) = pending else {
            return Err(EngineError::NoPrompt(run_id.to_string()));
        };
        // The run is no longer waiting from this moment, not from when the executor wakes.
        run.update(|s| {
            s.status = Phase::Running;
            s.prompt = None;
        });
        pending
            .answer
            .send((answer, actor.clone()))
            .map_err(|_| EngineError::NoPrompt(run_id.to_string()))
    }

    /// Records feedback on a run: a score, a text, or both (not neither). The journal is
    /// read and appended off the async runtime.
    pub async fn run_feedback(
        self: &Arc<Self>,
        run_id: &str,
        score: Option<f64>,
        text: Option<String>,
        actor: &Actor,
    ) -> Result<FeedbackRecorded, EngineError> {
        let (engine, run_id, by) = (self.clone(), run_id.to_string(), actor.clone());
        let recorded = tokio::task::spawn_blocking(move || {
            engine
                .record_feedback(&run_id, score, text, &by)
                .map(|line| (run_id, line))
        })
        .await
        .map_err(|e| EngineError::InvalidParams(format!("cannot record feedback: {e}")))?;
        let (run_id, line) = recorded?;
        let seq = line.seq;
        self.publish_run_line(actor, &run_id, line);
        Ok(FeedbackRecorded { run_id, seq })
    }

    fn record_feedback(
        &self,
        run_id: &str,
        score: Option<f64>,
        text: Option<String>,
        actor: &Actor,
    ) -> Result<JournalEvent, EngineError> {
        let text = text.filter(|t| !t.trim().is_empty());
        if score.is_none() && text.is_none() {
            return Err(EngineError::InvalidParams(
                "feedback needs a score, a text, or both".into(),
            ));
        }
        if score.is_some_and(|s| !s.is_finite()) {
            return Err(EngineError::InvalidParams(
                "the score must be a finite number".into(),
            ));
        }
        if text.as_ref().is_some_and(|t| t.len() > 10_000) {
            return Err(EngineError::InvalidParams(
                "the feedback text is over 10,000 bytes".into(),
            ));
        }
        // Checked before the history: a run in progress exists before its first line is
        // written.
        if self.runs().get(run_id).is_some() || self.journal().is_owned(run_id) {
            // The run's own writer numbers its events (here or in another flowdeck process);
            // feedback waits for it to finish.
            return Err(EngineError::InvalidParams(
                "the run is still going; give feedback once it has finished".into(),
            ));
        }
        if !self.journal().exists(run_id) {
            return Err(EngineError::RunNotFound(
                crate::workflow::names::display_safe(run_id),
            ));
        }
        self.journal()
            .append_feedback(run_id, score, text, actor)
            .map_err(|e| EngineError::InvalidParams(format!("cannot record feedback: {e}")))
    }

    /// Deletes the history of one workflow's runs, or of all; runs in progress are kept.
    /// The files go off the async runtime.
    pub async fn purge_history(self: &Arc<Self>, workflow: Option<&str>, actor: &Actor) -> Purged {
        let (engine, name) = (self.clone(), workflow.map(str::to_string));
        let purged = tokio::task::spawn_blocking(move || engine.purge_files(name.as_deref())).await;
        let purged = purged.unwrap_or_else(|e| {
            tracing::warn!("purging the run history failed: {e}");
            Purged {
                removed: 0,
                kept_active: self.runs().active_ids().len(),
            }
        });
        self.publish(
            actor.clone(),
            Change::HistoryPurged {
                workflow: workflow.map(str::to_string),
                removed: purged.removed,
            },
        );
        purged
    }

    fn purge_files(&self, workflow: Option<&str>) -> Purged {
        let active = self.runs().active_ids();
        let removed = self.journal().purge(workflow, &active);
        self.metadata().forget(workflow);
        Purged {
            removed,
            kept_active: active.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineConfig;

    #[tokio::test]
    async fn a_panicking_run_ends_as_an_error_and_frees_its_slot_and_session() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        std::fs::write(
            dir.path().join("buggy.yaml"),
            "name: buggy\ndescription: Hits a bug.\ninitial_state: second\nstates:\n  second: { action: { tool: open_terminal, params: { command: [bash, --norc] } }, transitions: [{ next_state: panic_for_the_test }] }\n  panic_for_the_test: { action: { tool: list_terminal_sessions } }\n",
        )
        .expect("the manifest");
        let engine = Engine::open(
            dir.path(),
            EngineConfig {
                max_runs: 1,
                run_shell: Some(vec!["bash".into(), "--norc".into()]),
                watch: false,
                ..EngineConfig::default()
            },
        )
        .expect("the engine");
        let request = || RunRequest {
            workflow: WorkflowSource::Name("buggy".into()),
            session_id: None,
            inputs: IndexMap::new(),
            keep_session: false,
            actor: Actor::Cli,
            require_approval: false,
        };
        let mut events = engine.subscribe();
        let result = tokio::time::timeout(Duration::from_secs(30), engine.run(request()))
            .await
            .expect("the run ended")
            .expect("the run started");
        assert_eq!(result.final_state, FinalState::Error);
        let error = result.error.unwrap_or_default();
        assert!(error.contains("a bug, injected by a test"), "{error}");
        // Both sessions it opened (its own, and one a step opened) are closed, each with its
        // event, and its slot is free: the next run (limit 1) starts.
        assert!(engine.terminals().is_empty());
        let (mut opened, mut closed) = (Vec::new(), Vec::new());
        while let Ok(event) = events.try_recv() {
            match event.change {
                Change::SessionOpened { session } => opened.push(session.session_id),
                Change::SessionClosed { session_id } => closed.push(session_id),
                _ => {}
            }
        }
        assert_eq!(opened.len(), 2, "{opened:?}");
        closed.sort();
        opened.sort();
        assert_eq!(closed, opened);
        let again = engine.start_run(request()).await.expect("the slot is free");
        let events = engine
            .run_events(&result.run_id, 0, 100, Duration::ZERO)
            .await
            .expect("its journal");
        assert!(events.finished);
        let last = events.events.last().map(|e| e.body.clone());
        assert!(
            matches!(&last, Some(RunEvent::RunFinished { final_state, .. }) if final_state == "error"),
            "{last:?}"
        );
        again.finished().await;
    }
}
