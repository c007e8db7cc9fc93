//! A run's result, in the shape of the terminal-control seed plus `run_id`, `return_values` and
//! timings.

use crate::actor::Actor;
use crate::workflow::model::Signature;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FinalState {
    /// Every state that ran ended without a transition left to take, and the output contract
    /// holds.
    Completed,
    /// An input was missing or did not fit its argument; nothing ran.
    ValidationFailed,
    /// A required return value was not set when the run ended.
    ReturnValidationFailed,
    /// The run's `timeout_seconds` ran out.
    Timeout,
    /// Cancelled (by a person, an agent, or shutdown).
    Canceled,
    /// Something the workflow cannot branch on: no session, a guard that cannot be evaluated,
    /// `max_steps` reached.
    Error,
    WorkflowNotFound,
    /// The manifest has errors and was never valid.
    DefinitionInvalid,
    /// Approval mode: a person denied an agent's run, or nobody was left to approve it.
    NotApproved,
    /// The flowdeck process running it died (killed, crashed) before it ended; recorded by
    /// the next flowdeck that opened the folder.
    Interrupted,
}

impl FinalState {
    pub fn as_str(self) -> &'static str {
        match self {
            FinalState::Completed => "completed",
            FinalState::ValidationFailed => "validation_failed",
            FinalState::ReturnValidationFailed => "return_validation_failed",
            FinalState::Timeout => "timeout",
            FinalState::Canceled => "canceled",
            FinalState::Error => "error",
            FinalState::WorkflowNotFound => "workflow_not_found",
            FinalState::DefinitionInvalid => "definition_invalid",
            FinalState::NotApproved => "not_approved",
            FinalState::Interrupted => "interrupted",
        }
    }
}

impl std::str::FromStr for FinalState {
    type Err = ();

    /// The state `as_str` wrote (a journal's, an event's).
    fn from_str(text: &str) -> Result<Self, ()> {
        [
            FinalState::Completed,
            FinalState::ValidationFailed,
            FinalState::ReturnValidationFailed,
            FinalState::Timeout,
            FinalState::Canceled,
            FinalState::Error,
            FinalState::WorkflowNotFound,
            FinalState::DefinitionInvalid,
            FinalState::NotApproved,
            FinalState::Interrupted,
        ]
        .into_iter()
        .find(|state| state.as_str() == text)
        .ok_or(())
    }
}

impl std::fmt::Display for FinalState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A final state as it was written down (a journal's last line, a workflow's metadata, the run
/// history): one this flowdeck knows, or a word a newer flowdeck wrote, kept as it was written
/// so that reading and writing it back changes nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum WrittenFinalState {
    Known(FinalState),
    Unknown(String),
}

impl WrittenFinalState {
    /// The word as written.
    pub fn as_str(&self) -> &str {
        match self {
            WrittenFinalState::Known(state) => state.as_str(),
            WrittenFinalState::Unknown(word) => word,
        }
    }

    /// The final state when this flowdeck knows it.
    pub fn known(&self) -> Option<FinalState> {
        match self {
            WrittenFinalState::Known(state) => Some(*state),
            WrittenFinalState::Unknown(_) => None,
        }
    }
}

impl From<FinalState> for WrittenFinalState {
    fn from(state: FinalState) -> Self {
        WrittenFinalState::Known(state)
    }
}

impl PartialEq<FinalState> for WrittenFinalState {
    fn eq(&self, other: &FinalState) -> bool {
        self.known() == Some(*other)
    }
}

/// A word as written: what tests and tools compare against.
impl PartialEq<str> for WrittenFinalState {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for WrittenFinalState {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::fmt::Display for WrittenFinalState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The result of a run.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct RunResult {
    pub success: bool,
    pub workflow_name: String,
    pub session_id: Option<String>,
    pub final_state: FinalState,
    pub states_executed: u32,
    pub workflow_signature: Option<Signature>,
    /// The seed's log: `phase` (`pre_execution_validation`, `execution`, `transition`,
    /// `post_execution_validation`, `error`), and for executions `state`, `tool`, `params`,
    /// `result`, `tool_success`, `timestamp`.
    pub execution_log: Vec<Value>,
    pub error: Option<String>,
    pub run_id: String,
    /// The SHA-256 of the manifest version that ran.
    pub workflow_version: Option<String>,
    /// Return values read back at the end (secrets masked).
    pub return_values: IndexMap<String, String>,
    /// The state the run was in when it ended.
    pub last_state: Option<String>,
    pub started_at: String,
    pub finished_at: String,
    pub duration_ms: f64,
    /// Set when the run's journal could not be written (a full disk, a read-only folder): the
    /// run went on, but its history is missing or incomplete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journal_error: Option<String>,
    /// The run's terminal recordings (asciicast v3 files beside its journal, with a marker
    /// per state entered; `flowdeck replay RUN_ID` plays them): the session it began in first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recordings: Vec<String>,
}

/// Why a run that was in flight when its flowdeck died has no ending of its own.
pub const INTERRUPTED: &str = "the flowdeck process running it ended without finishing it (killed or crashed); its sessions' processes were ended by the watchdog";

/// Everything known about a run as it ends.
#[derive(Debug)]
pub(crate) struct Ending {
    pub run_id: String,
    pub workflow_name: String,
    pub version: Option<String>,
    pub signature: Option<Signature>,
    pub session_id: Option<String>,
    pub final_state: FinalState,
    pub states_executed: u32,
    pub error: Option<String>,
    pub return_values: IndexMap<String, String>,
    /// The seed's execution log; an ending with an error gets its `error` entry here.
    pub execution_log: Vec<Value>,
    pub last_state: Option<String>,
    pub started_at: String,
    pub duration_ms: f64,
    pub cancelled_by: Option<Actor>,
    /// The files of the run's terminal recordings.
    pub recordings: Vec<String>,
}

impl Ending {
    /// A run that ended before its first state: nothing ran, `error` says why.
    pub fn unstarted(
        run_id: &str,
        workflow_name: &str,
        version: Option<String>,
        session_id: Option<String>,
        final_state: FinalState,
        error: String,
        started_at: String,
    ) -> Ending {
        Ending {
            run_id: run_id.to_string(),
            workflow_name: workflow_name.to_string(),
            version,
            signature: None,
            session_id,
            final_state,
            states_executed: 0,
            error: Some(error),
            return_values: IndexMap::new(),
            execution_log: Vec::new(),
            last_state: None,
            started_at,
            duration_ms: 0.0,
            cancelled_by: None,
            recordings: Vec::new(),
        }
    }

    /// The result whoever follows the run gets, and whoever reads it back later.
    pub fn into_result(self, finished_at: String, journal_error: Option<String>) -> RunResult {
        RunResult {
            success: self.final_state == FinalState::Completed,
            workflow_name: self.workflow_name,
            session_id: self.session_id,
            final_state: self.final_state,
            states_executed: self.states_executed,
            workflow_signature: self.signature,
            execution_log: self.execution_log,
            error: self.error,
            run_id: self.run_id,
            workflow_version: self.version,
            return_values: self.return_values,
            last_state: self.last_state,
            started_at: self.started_at,
            finished_at,
            duration_ms: self.duration_ms,
            journal_error,
            recordings: self.recordings,
        }
    }
}
