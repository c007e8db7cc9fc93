//! The attention list as every front end reads it: each run and terminal with what it asks
//! of a person, and the counts. Apart from the engine's keeping of it (attention/), because
//! the event stream and snapshots carry it.

use crate::actor::Actor;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    pub(super) fn new(mut items: Vec<AttentionItem>) -> Self {
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
