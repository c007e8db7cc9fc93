//! The state-machine executor: one run, from the input contract to the output contract.
//!
//! Each state's action runs once through the same engine methods a front end calls
//! (`actions.rs`); what it did is recorded by one call that logs it (the seed's
//! `execution_log`), journals it and publishes it (`record.rs`); which state comes next is
//! decided without a terminal (`walk.rs`, over [`super::transition::next_state`]). The
//! contract's inputs and return values cross into the session in `contract_io.rs`; a
//! `prompt` step's question waits for its answer in `prompt.rs`; `states.rs` is the loop.

mod actions;
mod bounded;
mod contract_io;
mod prompt;
mod record;
mod recordings;
mod states;
mod walk;

use super::ActiveRun;
use crate::engine::events::Actor;
use crate::engine::journal::{JournalEvent, JournalWriter};
use crate::engine::result::Ending;
use crate::engine::result::{FinalState, RunResult};
use crate::engine::secrets::Secrets;
use crate::engine::{Engine, EngineError};
use crate::workflow::model::Workflow;
use indexmap::IndexMap;
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a cancelled step's processes get between SIGINT and SIGKILL.
const CANCEL_GRACE: Duration = Duration::from_millis(500);

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
pub(super) struct Stop {
    final_state: FinalState,
    error: String,
    /// The return values that were set, when the output contract failed: a failed run
    /// still says what it found (`INSTALL_STATUS=FAILED`).
    return_values: IndexMap<String, String>,
}

impl Stop {
    pub(super) fn new(final_state: FinalState, error: impl Into<String>) -> Self {
        Stop {
            final_state,
            error: error.into(),
            return_values: IndexMap::new(),
        }
    }
}

pub(super) struct Exec<'a> {
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
    /// The sessions being recorded, by id (recordings.rs).
    recordings: Vec<(String, crate::term::recording::Recording)>,
    /// The sessions the run works in: told its secrets, which its steps may type, so that a
    /// draft made of what was typed there never holds them (term/deeds/).
    worked_in: Vec<String>,
    /// Values a step stored (captures, answers) not yet exported into their session's shell,
    /// by session: the program that printed them still had the terminal (contract_io.rs).
    held: IndexMap<String, IndexMap<String, String>>,
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
        recordings: Vec::new(),
        worked_in: Vec::new(),
        held: IndexMap::new(),
    };
    // A session opened for the run is the run's from the first instant: a cancel that comes
    // before the first state (even before the executor first runs) still closes it.
    if let SessionChoice::Opened { id, .. } = &plan.session {
        run.own(id);
        exec.session = Some(id.clone());
        // From its first output: connecting to a host, its greeting, its first prompt.
        exec.start_recording(id);
    }
    let keep = exec.keep;
    let ended = exec.run_all(&plan).await;
    exec.withdraw_question("the run ended").await;
    // The recordings end on a marker named after how the run ended.
    exec.mark_recordings(match &ended {
        Ok(_) => FinalState::Completed.as_str(),
        Err(stop) => stop.final_state.as_str(),
    });
    let recordings = exec.finish_recordings().await;
    let (final_state, error, return_values) = match ended {
        Ok(values) => (FinalState::Completed, None, values),
        Err(stop) => (stop.final_state, Some(stop.error), stop.return_values),
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
        recordings,
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
                self.start_recording(id);
            }
            SessionChoice::Opened { id, .. } => {
                // Already owned (see `execute`), so a cancel during the wait below closes it.
                let session = self
                    .engine
                    .terminals()
                    .get(id)
                    .map_err(|e| Stop::new(FinalState::Error, e.to_string()))?;
                Engine::wait_until_ready(&session, None, &self.actor().typist())
                    .await
                    .map_err(|e| Stop::new(FinalState::Error, e.to_string()))?;
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
}
