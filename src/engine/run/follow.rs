//! Following a run: waiting for its result (and cancelling it when a follower that owns it
//! goes away), and reading its journal from a cursor, waiting for lines yet to come. A run's
//! lines reach every front end as events through [`Engine::publish_run_line`].

use super::ending::orphan_result;
use super::history::MAX_PAGE;
use super::registry::{Phase, RunStatus};
use super::start::RunRequest;
use crate::engine::events::{Actor, Change};
use crate::engine::journal::JournalEvent;
use crate::engine::result::RunResult;
use crate::engine::{Engine, EngineError};
use schemars::JsonSchema;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The longest a `run_events` call waits for new events.
pub const MAX_EVENTS_WAIT: Duration = Duration::from_secs(60);

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

impl Engine {
    /// Publishes a run's journal line as an event, once the run's status shows it.
    pub(crate) fn publish_run_line(&self, actor: &Actor, run_id: &str, line: JournalEvent) {
        self.publish(
            actor.clone(),
            Change::Run {
                run_id: run_id.to_string(),
                journal_seq: line.seq,
                line: line.body,
            },
        );
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
}
