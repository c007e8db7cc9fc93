//! Runs in progress: their live status, the one-run-per-session rule, the global limit,
//! cancellation, and the answers to paused `prompt` steps.

use crate::engine::error::StartError;
use crate::engine::events::Actor;
use crate::engine::result::RunResult;
use crate::engine::secrets::Secrets;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// An agent's run waits for a person to approve its manifest (approval mode).
    AwaitingApproval,
    Running,
    WaitingForInput,
    Finished,
}

/// A run's live status.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct RunStatus {
    pub run_id: String,
    pub workflow_name: String,
    pub status: Phase,
    pub session_id: Option<String>,
    pub current_state: Option<String>,
    pub states_executed: u32,
    pub started_at: String,
    /// Who started it: a person, an agent (by client name), the CLI.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_by: Option<Actor>,
    /// The question of a paused `prompt` step.
    pub prompt: Option<String>,
    /// The journal's newest event (read on with `run_events` from here).
    pub last_event: u64,
    /// Set once the run has finished.
    pub result: Option<RunResult>,
}

/// A paused `prompt` step waiting for its answer.
#[derive(Debug)]
pub struct PendingPrompt {
    pub state: String,
    pub prompt: String,
    /// The answer, and who gave it.
    pub answer: oneshot::Sender<(String, Actor)>,
}

/// One run in progress.
#[derive(Debug)]
pub struct ActiveRun {
    pub run_id: String,
    pub cancel: CancellationToken,
    pub status: watch::Sender<RunStatus>,
    pub prompt: Mutex<Option<PendingPrompt>>,
    /// The approval the run waits for before it starts (approval mode).
    pub approval: Mutex<Option<super::approval_request::PendingApproval>>,
    /// The run's secret values, once its inputs are known: for whoever writes down what is
    /// done to the run from outside (the audit log).
    pub secrets: Mutex<Secrets>,
    /// Who cancelled the run, once someone has: its end says so.
    pub cancelled_by: Mutex<Option<Actor>>,
    /// Sessions the run opened and closes at its end: here rather than in the executor, so
    /// that a run whose executor died still closes them.
    owned: Mutex<Vec<String>>,
}

impl ActiveRun {
    /// Cancels the run, remembering who asked first.
    pub fn cancel_by(&self, actor: &Actor) {
        self.cancelled_by
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(|| actor.clone());
        self.cancel.cancel();
    }

    /// The run opened this session and closes it at its end.
    pub fn own(&self, session_id: &str) {
        self.owned_sessions().push(session_id.to_string());
    }

    /// The session was closed before the run's end.
    pub fn disown(&self, session_id: &str) {
        self.owned_sessions().retain(|s| s != session_id);
    }

    pub fn owns(&self, session_id: &str) -> bool {
        self.owned_sessions().iter().any(|s| s == session_id)
    }

    /// The sessions to close at the run's end (taken: closed once).
    pub fn take_owned(&self) -> Vec<String> {
        std::mem::take(&mut *self.owned_sessions())
    }

    fn owned_sessions(&self) -> MutexGuard<'_, Vec<String>> {
        self.owned.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Who cancelled the run, if someone did.
    pub fn canceller(&self) -> Option<Actor> {
        self.cancelled_by
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn set_secrets(&self, secrets: Secrets) {
        *self.secrets.lock().unwrap_or_else(|p| p.into_inner()) = secrets;
    }

    pub fn secrets(&self) -> Secrets {
        self.secrets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn update(&self, f: impl FnOnce(&mut RunStatus)) {
        self.status.send_modify(f);
    }

    pub fn snapshot(&self) -> RunStatus {
        self.status.borrow().clone()
    }

    pub fn pending_prompt(&self) -> MutexGuard<'_, Option<PendingPrompt>> {
        self.prompt.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn pending_approval(
        &self,
    ) -> MutexGuard<'_, Option<super::approval_request::PendingApproval>> {
        self.approval.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The runs in progress.
#[derive(Debug)]
pub struct Runs {
    limit: usize,
    active: Mutex<HashMap<String, Arc<ActiveRun>>>,
    /// Finished runs' last status, for `run_status` after the end (bounded).
    finished: Mutex<Vec<RunStatus>>,
}

const KEEP_FINISHED: usize = 256;

impl Runs {
    pub fn new(limit: usize) -> Self {
        Runs {
            limit: limit.max(1),
            active: Mutex::new(HashMap::new()),
            finished: Mutex::new(Vec::new()),
        }
    }

    fn active(&self) -> MutexGuard<'_, HashMap<String, Arc<ActiveRun>>> {
        self.active.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a run, enforcing the limit and one run per session (when it names one).
    pub fn start(&self, status: RunStatus) -> Result<Arc<ActiveRun>, StartError> {
        let mut active = self.active();
        if let Some(session) = &status.session_id
            && let Some(busy) = active
                .values()
                .find(|r| r.status.borrow().session_id.as_deref() == Some(session))
        {
            let busy = busy.snapshot();
            return Err(StartError::SessionBusy {
                session_id: session.clone(),
                run_id: busy.run_id,
                workflow: busy.workflow_name,
            });
        }
        if active.len() >= self.limit {
            return Err(StartError::TooManyRuns {
                running: active.len(),
                limit: self.limit,
            });
        }
        let (status_tx, _) = watch::channel(status.clone());
        let run = Arc::new(ActiveRun {
            run_id: status.run_id.clone(),
            cancel: CancellationToken::new(),
            status: status_tx,
            prompt: Mutex::new(None),
            approval: Mutex::new(None),
            secrets: Mutex::new(Secrets::default()),
            cancelled_by: Mutex::new(None),
            owned: Mutex::new(Vec::new()),
        });
        active.insert(status.run_id, run.clone());
        Ok(run)
    }

    /// Claims a session for a run that opened it itself (no other run can know its id yet).
    pub fn set_session(&self, run: &ActiveRun, session_id: Option<String>) {
        let _guard = self.active();
        run.update(|s| s.session_id = session_id);
    }

    /// Forgets a run that never got going (its session could not be opened); it is recorded
    /// as finished by whoever ends it.
    pub fn discard(&self, run_id: &str) {
        self.active().remove(run_id);
    }

    pub fn get(&self, run_id: &str) -> Option<Arc<ActiveRun>> {
        self.active().get(run_id).cloned()
    }

    /// A run's status: live, or the last one kept after it finished.
    pub fn status(&self, run_id: &str) -> Option<RunStatus> {
        if let Some(run) = self.get(run_id) {
            return Some(run.snapshot());
        }
        let finished = self.finished.lock().unwrap_or_else(|p| p.into_inner());
        finished.iter().rev().find(|s| s.run_id == run_id).cloned()
    }

    pub fn list_active(&self) -> Vec<RunStatus> {
        let mut runs: Vec<RunStatus> = self.active().values().map(|r| r.snapshot()).collect();
        runs.sort_by(|a, b| a.run_id.cmp(&b.run_id));
        runs
    }

    pub fn active_ids(&self) -> Vec<String> {
        self.active().keys().cloned().collect()
    }

    pub fn running_in_session(&self, session_id: &str) -> Option<RunStatus> {
        self.active()
            .values()
            .map(|r| r.snapshot())
            .find(|s| s.session_id.as_deref() == Some(session_id))
    }

    /// Marks a run finished and forgets it as active, in that order under the lock, so that
    /// whoever sees the result can start the next run in the same session at once.
    pub fn finish(&self, run: &ActiveRun, result: RunResult) {
        let mut active = self.active();
        active.remove(&run.run_id);
        run.update(|s| {
            s.status = Phase::Finished;
            s.prompt = None;
            s.result = Some(result);
        });
        drop(active);
        self.record_finished(run.snapshot());
    }

    /// Keeps the status of a run that ended before it started (no workflow, invalid manifest).
    pub fn record_finished(&self, status: RunStatus) {
        let mut finished = self.finished.lock().unwrap_or_else(|p| p.into_inner());
        finished.push(status);
        if finished.len() > KEEP_FINISHED {
            let excess = finished.len() - KEEP_FINISHED;
            finished.drain(..excess);
        }
    }

    /// The runs in progress.
    pub fn all_active(&self) -> Vec<Arc<ActiveRun>> {
        self.active().values().cloned().collect()
    }

    /// Cancels every run (on shutdown).
    pub fn cancel_all(&self) {
        for run in self.active().values() {
            run.cancel_by(&Actor::System);
        }
    }
}
