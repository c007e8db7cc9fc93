//! What a run is asked with and resolved to, before it starts: shared by starting it
//! (`start.rs`), following it (`follow.rs`) and ending it (`ending.rs`), so that none of those
//! needs another for its types.

use super::registry::ActiveRun;
use crate::engine::events::Actor;
use crate::workflow::model::Workflow;
use indexmap::IndexMap;
use std::sync::Arc;

/// Which workflow to run.
#[derive(Debug, Clone)]
pub enum WorkflowSource {
    /// A workflow of the folder, by name (its last good version if the file is broken now).
    Name(String),
    /// A manifest given whole (YAML or JSON), run without being saved.
    Inline(String),
}

/// A request to run a workflow.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub workflow: WorkflowSource,
    /// Run in this session (the agent prepared it); else a new one.
    pub session_id: Option<String>,
    /// Values for the workflow's arguments.
    pub inputs: IndexMap<String, String>,
    /// Keep the run's own session open at the end.
    pub keep_session: bool,
    /// Open the run's own session on this host, through ssh (`--on`, `on`); else the
    /// manifest's `host:`, else here. Not with `session_id`.
    pub host: Option<String>,
    /// Who asks: recorded in the journal and on every event of the run.
    pub actor: Actor,
    /// The agent's own connection asked for approval mode (`flowdeck mcp --approve
    /// agent-runs`), whatever the engine was started with.
    pub require_approval: bool,
}

/// A workflow found to run: the model, its content version and the bytes of that version.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub workflow: Arc<Workflow>,
    pub version: String,
    pub content: Arc<[u8]>,
}

/// A registered run and what it needs to start.
pub(super) struct Launch {
    pub run: Arc<ActiveRun>,
    pub request: RunRequest,
    pub resolved: Resolved,
    pub started_at: String,
}
