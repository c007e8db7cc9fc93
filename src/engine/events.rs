//! The engine's event stream: the front ends' contract. One typed event per change, each with
//! a global sequence number, the time, and who caused it, published after the state it
//! announces is visible through the engine's methods. A run's events are the very lines of its
//! journal ([`RunEvent`]), so the journal and the stream tell one story in one vocabulary.
//!
//! Following the engine without a race: subscribe, then take [`super::Engine::snapshot`], then
//! apply every event whose `seq` is above the snapshot's. Events carry the new state of what
//! they announce, so one that the snapshot already reflects changes nothing when applied. An
//! observer that falls behind gets `Lagged` and starts again from a new snapshot.

use crate::term::{ExitInfo, SessionInfo};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::{Mutex, MutexGuard};
use tokio::sync::broadcast;

pub use super::journal::RunEvent;
pub use crate::actor::Actor;

/// One change, as every observer sees it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EngineEvent {
    /// 1, 2, 3, ... across the whole engine, in the order the changes were published.
    pub seq: u64,
    /// RFC 3339, UTC, milliseconds.
    pub at: String,
    pub actor: Actor,
    #[serde(flatten)]
    pub change: Change,
}

/// What changed.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Change {
    /// A manifest appeared in the folder (on disk or through the engine).
    WorkflowAdded {
        name: String,
        file_name: String,
        version: Option<String>,
    },
    /// A manifest's content changed.
    WorkflowChanged {
        name: String,
        file_name: String,
        version: Option<String>,
    },
    WorkflowRemoved {
        name: String,
        file_name: String,
    },
    /// Workflow changes came faster than they could be told one by one and `missed` of
    /// them were not: read the workflow list again (a snapshot) rather than trust a view
    /// built from events.
    WorkflowsResync {
        missed: u64,
    },
    /// The workflows folder itself became listable (`problem` is `None`) or stopped being
    /// (it went missing, became a file or unreadable): the workflows it held are removed
    /// (`workflow_removed`) or added (`workflow_added`) by events of their own.
    WorkflowFolder {
        problem: Option<crate::store::FolderProblem>,
    },
    /// A terminal session was opened: what runs in it, its size, who opened it.
    SessionOpened {
        session: SessionInfo,
    },
    SessionResized {
        session_id: String,
        cols: u16,
        rows: u16,
    },
    /// Output arrived (coalesced: at most one per session per 8 ms frame, and one more for
    /// each key typed, whose echo is not held for the frame): redraw it.
    SessionActivity {
        session_id: String,
        bytes: u64,
    },
    /// Input was refused because someone else owns the session's input.
    SessionInputRejected {
        session_id: String,
        /// Who owns it, and how to proceed.
        reason: String,
    },
    /// The session's program ended; the session keeps its screen until it is closed.
    SessionExited {
        session_id: String,
        exit: ExitInfo,
    },
    /// The session can no longer read its program's output (a bug or an I/O error): its
    /// waits ended with the reason, input is refused, and it can only be closed.
    SessionFailed {
        session_id: String,
        reason: String,
    },
    /// The session was closed and every process it started ended.
    SessionClosed {
        session_id: String,
    },
    /// The session is about to be closed because nobody watches it: its agent (by its
    /// client's name) has gone and nobody looked at it for `unwatched_ms` (abandoned.rs).
    /// `session_closed` follows.
    SessionAbandoned {
        session_id: String,
        name: Option<String>,
        agent: String,
        unwatched_ms: u64,
    },
    /// A front end attached: the event's actor is who (a person's studio, an agent's
    /// connection by its client's name).
    Attached {},
    /// The event's actor detached; `terminals` it opened stay open.
    Detached {
        terminals: usize,
    },
    /// The run history of one workflow (or of all, for `None`) was deleted; runs in
    /// progress were kept.
    HistoryPurged {
        workflow: Option<String>,
        removed: usize,
    },
    /// An agent's run waits for a person to approve its manifest (approval mode): the
    /// studio shows the request ([`super::Engine::approvals_pending`] has its text).
    ApprovalRequested {
        run_id: String,
        workflow: String,
        /// The content version asking for approval.
        version: String,
    },
    /// The request was answered (the event's actor answered it), or withdrawn: the run was
    /// cancelled or nobody was left to answer.
    ApprovalSettled {
        run_id: String,
        workflow: String,
        approved: bool,
    },
    /// The attention list changed (a run or terminal started or stopped needing a person,
    /// failed, finished, went quiet, or was seen): the whole list, as it is now.
    AttentionChanged {
        attention: super::attention_list::AttentionList,
    },
    /// A run's journal line, as written.
    Run {
        run_id: String,
        /// The line's `seq` in the run's journal (the `run_events` cursor).
        journal_seq: u64,
        /// The line itself, whole (a field of its own: its `actor` and `run_id` are the
        /// line's, which flattened would collide with the event's).
        line: RunEvent,
    },
}

impl EngineEvent {
    /// The run the event is about, if any.
    pub fn run_id(&self) -> Option<&str> {
        match &self.change {
            Change::Run { run_id, .. }
            | Change::ApprovalRequested { run_id, .. }
            | Change::ApprovalSettled { run_id, .. } => Some(run_id),
            _ => None,
        }
    }

    /// The session the event is about, if any.
    pub fn session_id(&self) -> Option<&str> {
        match &self.change {
            Change::SessionOpened { session } => Some(&session.session_id),
            Change::SessionResized { session_id, .. }
            | Change::SessionActivity { session_id, .. }
            | Change::SessionInputRejected { session_id, .. }
            | Change::SessionExited { session_id, .. }
            | Change::SessionFailed { session_id, .. }
            | Change::SessionClosed { session_id }
            | Change::SessionAbandoned { session_id, .. } => Some(session_id),
            _ => None,
        }
    }

    /// The workflow the event is about, if it is a change of the folder.
    pub fn workflow(&self) -> Option<&str> {
        match &self.change {
            Change::WorkflowAdded { name, .. }
            | Change::WorkflowChanged { name, .. }
            | Change::WorkflowRemoved { name, .. } => Some(name),
            _ => None,
        }
    }
}

/// Events kept for observers that fall behind; past that they get `Lagged`.
const EVENT_BUFFER: usize = 4096;

/// Numbers and publishes events. Its lock is held while a number is given and the event sent,
/// and while a snapshot reads the number it holds at, so that numbers follow publication order
/// and a snapshot's number is exact.
#[derive(Debug)]
pub struct EventHub {
    sender: broadcast::Sender<EngineEvent>,
    last: Mutex<u64>,
}

impl Default for EventHub {
    fn default() -> Self {
        EventHub {
            sender: broadcast::channel(EVENT_BUFFER).0,
            last: Mutex::new(0),
        }
    }
}

impl EventHub {
    pub fn publish(&self, actor: Actor, change: Change) -> u64 {
        let mut last = self.lock();
        *last += 1;
        // No receiver is fine: nobody is watching yet.
        let _ = self.sender.send(EngineEvent {
            seq: *last,
            at: super::journal::now(),
            actor,
            change,
        });
        *last
    }

    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.sender.subscribe()
    }

    /// Holds publication while `read` runs, and gives it the number of the last event
    /// published: what a snapshot holds at.
    pub fn at_rest<R>(&self, read: impl FnOnce(u64) -> R) -> R {
        let last = self.lock();
        read(*last)
    }

    fn lock(&self) -> MutexGuard<'_, u64> {
        self.last.lock().unwrap_or_else(|p| p.into_inner())
    }
}
