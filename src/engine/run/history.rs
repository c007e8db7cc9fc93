//! A run's history: its status (live, or read back from its journal), the list of runs,
//! feedback on a finished run, and purging the history.

use super::registry::{Phase, RunStatus};
use crate::engine::events::{Actor, Change};
use crate::engine::journal::result_from_journal;
use crate::engine::journal::{self, JournalEvent, RunEvent, RunSummary};
use crate::engine::{Engine, EngineError};
use schemars::JsonSchema;
use serde::Serialize;
use std::sync::Arc;

/// The most events or runs one call returns.
pub const MAX_PAGE: usize = 1000;

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
        let mut result = result_from_journal(&events, cut_off);
        if let Some(result) = result.as_mut() {
            result.recordings = self
                .journal()
                .recordings(run_id)
                .iter()
                .map(|p| p.display().to_string())
                .collect();
        }
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
