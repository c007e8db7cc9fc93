//! Following a run: its news as it goes and its result at the end (and cancelling it when a
//! follower that owns it goes away), and reading its journal from a cursor, waiting for lines
//! yet to come. A run's lines reach every front end as events through
//! [`Engine::publish_run_line`]; [`RunNews::of`] is the one reading of those events for one
//! run, whether they come from an engine here or from the folder's server.

use super::history::MAX_PAGE;
use super::registry::{Phase, RunStatus};
use super::request::RunRequest;
use super::started::StartedRun;
use crate::engine::events::{Actor, Change, EngineEvent, RunEvent};
use crate::engine::journal::JournalEvent;
use crate::engine::result::RunResult;
use crate::engine::{Engine, EngineError};
use schemars::JsonSchema;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::{self, error::RecvError};

/// The longest a `run_events` call waits for new events.
pub const MAX_EVENTS_WAIT: Duration = Duration::from_secs(60);

/// What one of the engine's events says about one run, for whoever follows it.
#[derive(Debug, Clone, PartialEq)]
pub enum RunNews {
    /// A line of its journal, as written (secrets masked).
    Line(RunEvent),
    /// It waits for a person to approve it (approval mode).
    AwaitingApproval { workflow: String },
}

impl RunNews {
    /// What `event` says about run `run_id`, if anything.
    pub fn of(run_id: &str, event: &EngineEvent) -> Option<RunNews> {
        match &event.change {
            Change::Run {
                run_id: id, line, ..
            } if id == run_id => Some(RunNews::Line(line.clone())),
            Change::ApprovalRequested {
                run_id: id,
                workflow,
                ..
            } if id == run_id => Some(RunNews::AwaitingApproval {
                workflow: workflow.clone(),
            }),
            _ => None,
        }
    }
}

/// The next thing a follower of a run hears.
#[derive(Debug)]
pub enum Following {
    News(Box<RunNews>),
    /// Events were missed (the follower fell behind): its status says where it stands.
    Missed,
    /// The run has ended; nothing follows.
    Ended(Box<RunResult>),
}

/// A run followed to its end by whoever started it: if they stop following before it ends
/// (an agent's call cancelled, a person closing the view, the future dropped for any reason),
/// the run is cancelled rather than left running unwatched.
#[derive(Debug)]
pub struct FollowedRun {
    started: StartedRun,
    /// Subscribed before the run started: none of its news is missed.
    events: broadcast::Receiver<EngineEvent>,
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

    /// Stops following the run without cancelling it: the follower hands it on (an agent's
    /// call answering by its wait ceiling, the run going on to be followed by its id). Its
    /// status as it is now.
    pub fn let_go(mut self) -> RunStatus {
        self.armed = false;
        self.started.status()
    }

    /// The run's next news, and at last its result (the run is no longer cancelled once it
    /// has one). News already sent comes before the result.
    pub async fn next(&mut self) -> Following {
        let run_id = self.started.run_id.clone();
        let (events, started) = (&mut self.events, &mut self.started);
        let ended = loop {
            tokio::select! {
                biased;
                event = events.recv() => match event {
                    Ok(event) => {
                        if let Some(news) = RunNews::of(&run_id, &event) {
                            return Following::News(Box::new(news));
                        }
                    }
                    Err(RecvError::Lagged(_)) => return Following::Missed,
                    // The engine is going away: only the result is left.
                    Err(RecvError::Closed) => break started.wait().await,
                },
                result = started.wait() => break result,
            }
        };
        self.armed = false;
        Following::Ended(Box::new(ended))
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
        let events = self.subscribe();
        Ok(FollowedRun {
            started: self.start_run(request).await?,
            events,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineConfig;
    use crate::engine::run::WorkflowSource;
    use indexmap::IndexMap;

    const DEADLINE: Duration = Duration::from_secs(30);

    fn request(name: &str) -> RunRequest {
        RunRequest {
            workflow: WorkflowSource::Name(name.into()),
            session_id: None,
            inputs: IndexMap::new(),
            keep_session: false,
            host: None,
            actor: Actor::Cli,
            require_approval: false,
        }
    }

    #[tokio::test]
    async fn a_follower_hears_its_runs_steps_in_order_then_its_result_and_nothing_else() {
        let dir = tempfile::tempdir().expect("a folder");
        std::fs::write(
            dir.path().join("two.yaml"),
            "name: two\ndescription: Two steps.\ninitial_state: first\nstates:\n  first: { action: { tool: list_terminal_sessions }, transitions: [{ next_state: second }] }\n  second: { action: { tool: list_terminal_sessions } }\n",
        )
        .expect("a manifest");
        let engine = Engine::open(
            dir.path(),
            EngineConfig {
                run_shell: Some(vec!["bash".into(), "--norc".into()]),
                watch: false,
                ..EngineConfig::default()
            },
        )
        .expect("an engine");
        // Another run of the same workflow at the same time: none of its news may arrive.
        let other = engine.start_run(request("two")).await.expect("started");
        let mut followed = engine.follow_run(request("two")).await.expect("started");
        let mine = followed.run_id().to_string();
        let mut heard = Vec::new();
        let result = tokio::time::timeout(DEADLINE, async {
            loop {
                match followed.next().await {
                    Following::News(news) => heard.push(*news),
                    Following::Missed => panic!("a follower of one small run fell behind"),
                    Following::Ended(result) => return result,
                }
            }
        })
        .await
        .expect("the run ended within the deadline");
        assert_eq!(result.run_id, mine);
        assert_eq!(result.final_state, crate::engine::FinalState::Completed);
        let steps: Vec<&str> = heard
            .iter()
            .filter_map(|news| match news {
                RunNews::Line(RunEvent::StepStarted { state, .. }) => Some(state.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(steps, ["first", "second"], "{heard:?}");
        match heard.first() {
            Some(RunNews::Line(RunEvent::RunStarted { run_id, .. })) => assert_eq!(*run_id, mine),
            first => panic!("the first news is not the run's start: {first:?}"),
        }
        drop(followed);
        let other = tokio::time::timeout(DEADLINE, other.finished())
            .await
            .expect("the other run ended");
        assert_ne!(other.run_id, mine);
        assert_eq!(other.final_state, crate::engine::FinalState::Completed);
        engine.shutdown().await;
    }
}
