//! What callers do to a run in progress: cancel it, answer its paused `prompt` step.

use crate::engine::events::Actor;
use crate::engine::run::Phase;
use crate::engine::run::RunStatus;
use crate::engine::{Engine, EngineError};
use std::time::Duration;

impl Engine {
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
}
