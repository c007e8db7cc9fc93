//! A run that has started, as its starter holds it: its status as it goes and its result
//! at the end.

use super::registry::RunStatus;
use crate::engine::journal::now;
use crate::engine::result::{Ending, FinalState, RunResult};
use tokio::sync::watch;

/// A run that has started (or ended before its first state).
#[derive(Debug)]
pub struct StartedRun {
    pub run_id: String,
    pub(super) status: watch::Receiver<RunStatus>,
}

impl StartedRun {
    pub fn status(&self) -> RunStatus {
        self.status.borrow().clone()
    }

    /// Waits for the run's result.
    pub async fn finished(mut self) -> RunResult {
        self.wait().await
    }

    pub(super) async fn wait(&mut self) -> RunResult {
        let ended = match self.status.wait_for(|s| s.result.is_some()).await {
            Ok(status) => status.result.clone(),
            Err(_) => None,
        };
        ended
            .or_else(|| self.status.borrow().result.clone())
            .unwrap_or_else(|| orphan_result(&self.run_id))
    }
}

/// A result for a run whose executor vanished (it cannot, short of a bug): an honest error.
fn orphan_result(run_id: &str) -> RunResult {
    let at = now();
    Ending::unstarted(
        run_id,
        "",
        None,
        None,
        FinalState::Error,
        "the run's executor stopped without a result".into(),
        at.clone(),
    )
    .into_result(at, None)
}
