//! What needs a person: every run and terminal has an attention state, kept here so that
//! the studio, agents (the `attention` tool and resource) and `flowdeck ls` read one list.
//!
//! - `needs_you`: a prompt step waits for its answer, or an agent's run waits for a person's
//!   approval;
//! - `failed`: a run ended other than completed, or a terminal's program exited non-zero (or
//!   its output can no longer be read);
//! - `done`: a run completed, or a terminal's program exited with 0;
//! - `quiet`: running, but no output for [`super::EngineConfig::quiet_after`] (60 s unless
//!   configured): a program waiting for something nobody gives it looks like this;
//! - `running`: the rest.
//!
//! `failed` and `done` stay until someone has seen them: a studio showing the terminal, a
//! person opening the run, anyone acknowledging them ([`Engine::acknowledge`]). Everything
//! else is read from the engine's state when it is asked for (derive.rs), so it can never
//! disagree with the runs and terminals; only what was seen, and since when each item is in
//! its state, are remembered (keeper.rs). Each change of the list is told once as
//! [`Change::AttentionChanged`], from a watcher that wakes on the events that can change it
//! and when the next terminal is due to turn quiet.

mod derive;
mod keeper;

pub use super::attention_list::{
    Acknowledged, AttentionCounts, AttentionItem, AttentionList, AttentionState, ItemKind,
};
pub(super) use keeper::Keeper;

use super::result::FinalState;
use super::{Actor, Change, Engine};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

/// How long a running terminal's output must be still before it counts as quiet, unless
/// configured.
pub const DEFAULT_QUIET_AFTER: Duration = Duration::from_secs(60);

impl Engine {
    /// Every run and terminal with what it asks of a person, as it is now.
    pub fn attention(&self) -> AttentionList {
        self.refresh_attention().0
    }

    /// `who` has seen these runs and terminals: their `failed` or `done` items are cleared.
    pub fn acknowledge(&self, ids: &[String], who: &Actor) -> Acknowledged {
        let sessions = self.terminals.list();
        let acknowledged = self.attention.acknowledge(ids, &sessions);
        if !acknowledged.cleared.is_empty() {
            tracing::debug!("{} saw {}", who.label(), acknowledged.cleared.join(", "));
            self.refresh_attention();
        }
        acknowledged
    }

    /// The list as last told ([`Change::AttentionChanged`]), for snapshots: events after
    /// the snapshot's number apply on top of it.
    pub(super) fn attention_told(&self) -> AttentionList {
        self.attention.told()
    }

    /// A run ended: it stays `failed` or `done` until someone sees it.
    pub(super) fn attention_run_ended(
        &self,
        run_id: &str,
        workflow: &str,
        final_state: FinalState,
        error: Option<&str>,
        session_id: Option<&str>,
    ) {
        let by = self.runs.status(run_id).and_then(|s| s.started_by);
        self.attention.run_ended(derive::Ended {
            run_id: run_id.to_string(),
            workflow: workflow.to_string(),
            final_state,
            error: error.map(str::to_string),
            session_id: session_id.map(str::to_string),
            by,
            at: chrono::Utc::now(),
        });
    }

    /// Reads the list now, tells it if it changed, and returns it with how long until a
    /// terminal turns quiet if nothing else happens.
    fn refresh_attention(&self) -> (AttentionList, Option<Duration>) {
        let runs = self.runs.list_active();
        let sessions = self.terminals.list_quiet();
        let shown = |id: &str| self.presence.shown(id);
        let _telling = self.attention.telling();
        let (list, changed, next) =
            self.attention
                .refresh(&runs, &sessions, self.config.quiet_after, &shown);
        if changed {
            self.publish(
                Actor::System,
                Change::AttentionChanged {
                    attention: list.clone(),
                },
            );
        }
        (list, next)
    }

    /// Tells each change of the list as it happens, for as long as the engine lives: the
    /// folder's server starts it.
    pub fn watch_attention(self: &Arc<Self>) {
        let engine: Weak<Engine> = Arc::downgrade(self);
        let mut events = self.subscribe();
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            let mut due: Option<tokio::time::Instant> = None;
            loop {
                let wake = tokio::select! {
                    event = events.recv() => match event {
                        Ok(event) => match engine.upgrade() {
                            Some(engine) => engine.attention.concerns(&event.change),
                            None => return,
                        },
                        Err(RecvError::Lagged(_)) => true,
                        Err(RecvError::Closed) => return,
                    },
                    () = sleep_until(due), if due.is_some() => true,
                };
                if !wake {
                    continue;
                }
                let Some(engine) = engine.upgrade() else {
                    return;
                };
                let (_, next) = engine.refresh_attention();
                due = next.map(|after| tokio::time::Instant::now() + after);
            }
        });
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    if let Some(at) = at {
        tokio::time::sleep_until(at).await;
    }
}
