//! What approval mode asks a person and how they answered (approval.rs does the asking): the
//! request, the decision, and the request kept on the waiting run with its way back. Apart
//! from the asking so that the run's registry can hold a pending request without depending on
//! how requests are made and decided.

use crate::engine::events::Actor;
use crate::store::approvals::Approved;
use schemars::JsonSchema;
use serde::Serialize;
use tokio::sync::oneshot;

/// A run waiting for a person's approval: what would run, and what was approved before.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, JsonSchema)]
pub struct ApprovalRequest {
    pub run_id: String,
    pub workflow: String,
    /// The content version that would run (SHA-256 of its bytes).
    pub version: String,
    /// The agent asking.
    pub agent: Actor,
    pub requested_at: String,
    /// The manifest was given whole, not read from the folder.
    pub inline: bool,
    /// The text that would run.
    pub content: String,
    /// The last content of this workflow a person approved, to compare with; `None` when
    /// none ever was.
    pub last_approved: Option<Approved>,
}

impl ApprovalRequest {
    /// What a person is shown of the request, as one value: an answer names it with the run
    /// id, and the engine decides only when its request still has it. A run id alone would
    /// let a key meant for one request answer another shown in its place (issue 36).
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut hash = Sha256::new();
        // Each part with its length: no two requests' parts run together into one hash.
        for part in [
            self.workflow.as_bytes(),
            if self.inline { b"inline" } else { b"file" },
            self.version.as_bytes(),
            self.content.as_bytes(),
        ] {
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part);
        }
        hex::encode(hash.finalize())
    }
}

/// How a person answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Approved { by: Actor },
    Denied { by: Actor, why: String },
}

/// A request and the way back to the run waiting on it (kept on the run itself, like a
/// paused prompt, so that cancelling or shutting down the run needs nothing more).
#[derive(Debug)]
pub struct PendingApproval {
    pub request: ApprovalRequest,
    pub answer: oneshot::Sender<Decision>,
}
