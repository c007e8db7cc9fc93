//! Why an engine call failed.

use crate::term::TermError;
use crate::workflow::pattern::PatternError;
use thiserror::Error;

/// An error from an engine method; front ends turn it into their own error shape.
#[derive(Debug, Error)]
pub enum EngineError {
    #[error(transparent)]
    Term(#[from] TermError),
    #[error("invalid pattern `{pattern}`: {source}")]
    Pattern {
        pattern: String,
        #[source]
        source: PatternError,
    },
    #[error("invalid parameters: {0}")]
    InvalidParams(String),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    RunStart(#[from] StartError),
    #[error("no run {0} (the run history lists the runs)")]
    RunNotFound(String),
    #[error("run {0} has already finished")]
    RunFinished(String),
    #[error("run {0} is not waiting for an answer")]
    NoPrompt(String),
    #[error("workflow `{workflow}` has no step {step}")]
    StepNotFound { workflow: String, step: String },
    #[error(
        "session {session_id} is in use by run {run_id} ({workflow}): its input belongs to the run until the run ends; wait for it to finish, or cancel it"
    )]
    InputOwned {
        session_id: String,
        run_id: String,
        workflow: String,
    },
    #[error(
        "session {session_id} is being typed into by {holder} (focus mode in the studio): its input is theirs until they leave it; try again later"
    )]
    InputHeld { session_id: String, holder: String },
    #[error("run of `{workflow}` not approved (approval mode is on): {why}")]
    NotApproved { workflow: String, why: String },
    #[error("run {0} is not waiting for approval")]
    NotAwaitingApproval(String),
    #[error(
        "the approval request of run {0} is not the one answered: nothing was decided; look at it again"
    )]
    ApprovalNotShown(String),
    #[error(
        "workflow `{workflow}` cannot be {what} while run {run_id} is using it; wait for it or cancel it"
    )]
    WorkflowRunning {
        workflow: String,
        run_id: String,
        what: &'static str,
    },
}

impl EngineError {
    /// A short machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            EngineError::Term(e) => e.code(),
            EngineError::Pattern { source, .. } => source.rule(),
            EngineError::InvalidParams(_) => "invalid_params",
            EngineError::Store(e) => e.code(),
            EngineError::RunStart(StartError::SessionBusy { .. }) => "conflict",
            EngineError::RunStart(StartError::TooManyRuns { .. }) => "run_limit",
            EngineError::RunNotFound(_) => "run_not_found",
            EngineError::RunFinished(_) => "run_finished",
            EngineError::NoPrompt(_) => "no_prompt",
            EngineError::StepNotFound { .. } => "step_not_found",
            EngineError::WorkflowRunning { .. } => "workflow_running",
            EngineError::NotApproved { .. } => "not_approved",
            EngineError::NotAwaitingApproval(_) => "not_awaiting_approval",
            EngineError::ApprovalNotShown(_) => "approval_not_shown",
            EngineError::InputOwned { .. } | EngineError::InputHeld { .. } => "session_busy",
        }
    }
}

/// Why a run cannot start.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StartError {
    #[error(
        "session `{session_id}` is already running run {run_id} ({workflow}); wait for it to finish, or cancel it"
    )]
    SessionBusy {
        session_id: String,
        run_id: String,
        workflow: String,
    },
    #[error(
        "{running} runs are in progress, the limit is {limit}; wait for one to finish or cancel one"
    )]
    TooManyRuns { running: usize, limit: usize },
}
