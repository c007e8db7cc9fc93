//! The engine's event stream: one broadcast that any number of observers follow (the TUI,
//! the MCP server's notifications, `flowdeck run`'s progress). A slow observer that falls
//! behind is told how many events it missed (`Lagged`) and re-reads the state it needs.

use serde::Serialize;

/// Something that changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EngineEvent {
    /// A manifest was added, changed or removed (on disk or through the engine).
    WorkflowChanged {
        name: String,
        file_name: String,
        kind: String,
        version: Option<String>,
    },
    SessionOpened {
        session_id: String,
    },
    SessionClosed {
        session_id: String,
    },
    RunStarted {
        run_id: String,
        workflow: String,
        session_id: Option<String>,
    },
    /// A state's action begins.
    RunStep {
        run_id: String,
        step: u32,
        state: String,
        tool: String,
    },
    /// A state's action ended.
    RunStepFinished {
        run_id: String,
        step: u32,
        state: String,
        status: String,
        elapsed_ms: f64,
    },
    RunTransition {
        run_id: String,
        from: String,
        to: Option<String>,
    },
    /// The run waits for an answer to a `prompt` step.
    RunWaiting {
        run_id: String,
        state: String,
        prompt: String,
    },
    RunFinished {
        run_id: String,
        workflow: String,
        final_state: String,
        success: bool,
    },
}

impl EngineEvent {
    /// The run the event is about, if any.
    pub fn run_id(&self) -> Option<&str> {
        match self {
            EngineEvent::RunStarted { run_id, .. }
            | EngineEvent::RunStep { run_id, .. }
            | EngineEvent::RunStepFinished { run_id, .. }
            | EngineEvent::RunTransition { run_id, .. }
            | EngineEvent::RunWaiting { run_id, .. }
            | EngineEvent::RunFinished { run_id, .. } => Some(run_id),
            _ => None,
        }
    }
}
