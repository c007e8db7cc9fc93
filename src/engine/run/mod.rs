//! Runs: each job of a run in a file of its own. A run is registered and tracked while it
//! lives (`registry.rs`), asked for (`request.rs`), started (`start.rs`, held as `started.rs`'s
//! `StartedRun`), followed and read from its journal
//! (`follow.rs`), cancelled or answered (`control.rs`), ended, wherever it ends, through one
//! path that writes the same facts (`ending.rs`), and read back from its history
//! (`history.rs`); one workflow on several hosts at once is a fleet (`fleet.rs`). A run an agent starts in approval mode waits for a person's answer
//! (`approval.rs`), and its state loop is the executor's (`executor/`). The run's result and
//! its ending's facts are `engine::result`'s, read back from a journal by `engine::journal`.

pub mod approval;
mod approval_request;
mod control;
pub mod ending;
mod executor;
pub mod fleet;
mod follow;
mod history;
mod registry;
mod request;
mod start;
mod started;

pub use crate::engine::error::StartError;
pub use follow::{FollowedRun, Following, MAX_EVENTS_WAIT, RunEvents, RunNews};
pub use history::{FeedbackRecorded, MAX_PAGE, Purged, RunList};
pub use registry::{ActiveRun, PendingPrompt, Phase, RunStatus, Runs};
pub use request::{Resolved, RunRequest, WorkflowSource};
pub use started::StartedRun;
