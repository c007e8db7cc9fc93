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

pub(super) use keeper::Keeper;

use super::result::FinalState;
use super::{Actor, Change, Engine};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

/// How long a running terminal's output must be still before it counts as quiet, unless
/// configured.
pub const DEFAULT_QUIET_AFTER: Duration = Duration::from_secs(60);

/// What an item asks of a person, most pressing first (the order lists are sorted in).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum AttentionState {
    NeedsYou,
    Failed,
    Quiet,
    Done,
    Running,
}

impl AttentionState {
    /// The words a person reads: `needs you`, `failed`, ...
    pub fn words(self) -> &'static str {
        match self {
            AttentionState::NeedsYou => "needs you",
            AttentionState::Failed => "failed",
            AttentionState::Quiet => "quiet",
            AttentionState::Done => "done",
            AttentionState::Running => "running",
        }
    }

    /// The mark every front end shows it with (the studio's status line, list, tabs and
    /// inbox; `flowdeck ls`).
    pub fn mark(self) -> &'static str {
        match self {
            AttentionState::NeedsYou => "◉",
            AttentionState::Failed => "✗",
            AttentionState::Done => "✓",
            AttentionState::Quiet => "◌",
            AttentionState::Running => "●",
        }
    }
}

/// A run or a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    Run,
    Terminal,
}

/// One run or terminal and what it asks of a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AttentionItem {
    /// The run's id or the terminal's session id: what `ack` takes.
    pub id: String,
    pub kind: ItemKind,
    pub state: AttentionState,
    /// The run's workflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
    /// The terminal the item shows in: a run's session, or the terminal itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The terminal's name, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Why it is in its state: the prompt's question, how the run ended, the exit status.
    pub reason: String,
    /// When it entered its state (RFC 3339, UTC).
    pub since: String,
    /// Who started the run or opened the terminal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<Actor>,
}

impl AttentionItem {
    /// What a person calls it: the run's workflow, the terminal's name, else its id.
    pub fn title(&self) -> String {
        self.workflow
            .clone()
            .or_else(|| self.name.clone())
            .unwrap_or_else(|| self.id.clone())
    }
}

/// How many items are in each state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AttentionCounts {
    pub needs_you: usize,
    pub failed: usize,
    pub quiet: usize,
    pub done: usize,
    pub running: usize,
}

impl AttentionCounts {
    fn of(items: &[AttentionItem]) -> Self {
        let mut counts = AttentionCounts::default();
        for item in items {
            *counts.slot(item.state) += 1;
        }
        counts
    }

    fn slot(&mut self, state: AttentionState) -> &mut usize {
        match state {
            AttentionState::NeedsYou => &mut self.needs_you,
            AttentionState::Failed => &mut self.failed,
            AttentionState::Quiet => &mut self.quiet,
            AttentionState::Done => &mut self.done,
            AttentionState::Running => &mut self.running,
        }
    }

    /// What asks for a person, as a status line says it: `1 needs you · 2 failed · 1 done`
    /// (states with none left out, running ones too); empty when nothing does.
    pub fn summary(&self) -> String {
        let parts = [
            (self.needs_you, "needs you", "need you"),
            (self.failed, "failed", "failed"),
            (self.quiet, "quiet", "quiet"),
            (self.done, "done", "done"),
        ];
        parts
            .iter()
            .filter(|(n, ..)| *n > 0)
            .map(|&(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
            .collect::<Vec<_>>()
            .join(" · ")
    }
}

/// Every run and terminal with what it asks of a person, most pressing first (oldest first
/// within a state).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AttentionList {
    pub counts: AttentionCounts,
    pub items: Vec<AttentionItem>,
}

impl AttentionList {
    fn new(mut items: Vec<AttentionItem>) -> Self {
        items.sort_by(|a, b| (a.state, &a.since, &a.id).cmp(&(b.state, &b.since, &b.id)));
        AttentionList {
            counts: AttentionCounts::of(&items),
            items,
        }
    }

    /// The item of a run or terminal.
    pub fn get(&self, id: &str) -> Option<&AttentionItem> {
        self.items.iter().find(|i| i.id == id)
    }

    /// The attention state of a run or of a terminal shown as its own item or as a run's.
    pub fn state_of(&self, id: &str) -> Option<AttentionState> {
        self.items
            .iter()
            .find(|i| i.id == id || i.session_id.as_deref() == Some(id))
            .map(|i| i.state)
    }
}

/// What acknowledging did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Acknowledged {
    /// The ids whose `failed` or `done` item was cleared.
    pub cleared: Vec<String>,
    /// The ids that had nothing to clear: not failed or done (a `needs_you` item is cleared
    /// by answering it), or no run or terminal this server knows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
}

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
    pub(super) fn attention_run_ended(&self, ended: keeper::Ended) {
        self.attention.run_ended(ended);
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

/// A run's ending as an attention item tells it.
pub(super) fn ended(
    run_id: &str,
    workflow: &str,
    final_state: FinalState,
    error: Option<&str>,
    session_id: Option<&str>,
    by: Option<Actor>,
) -> keeper::Ended {
    keeper::Ended {
        run_id: run_id.to_string(),
        workflow: workflow.to_string(),
        final_state,
        error: error.map(str::to_string),
        session_id: session_id.map(str::to_string),
        by,
        at: chrono::Utc::now(),
    }
}
