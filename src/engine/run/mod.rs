//! Runs: each job of a run in a file of its own. A run is registered and tracked while it
//! lives (`registry.rs`), started (`start.rs`), followed and read from its journal
//! (`follow.rs`), cancelled or answered (`control.rs`), ended, wherever it ends, through one
//! path that writes the same facts (`ending.rs`), and read back from its history
//! (`history.rs`). The state loop itself is the executor's (`engine/executor/`).

mod control;
pub mod ending;
mod follow;
mod history;
mod registry;
mod start;

pub use ending::{INTERRUPTED, result_from_journal, span_ms};
pub use follow::{FollowedRun, Following, MAX_EVENTS_WAIT, RunEvents, RunNews, StartedRun};
pub use history::{FeedbackRecorded, MAX_PAGE, Purged, RunList};
pub use registry::{ActiveRun, PendingPrompt, Phase, RunStatus, Runs, StartError};
pub use start::{Resolved, RunRequest, WorkflowSource};
