//! Tool failures as SPEC §4.3 shapes them: a result with `isError: true` and a payload an
//! agent can act on (stable `error_code`, workrail `code`, category, context, `retryable`,
//! `suggested_action`, `correlation_id`, violations), sent as the JSON text of the result's
//! content (see `server::to_result` for why not as `structuredContent`).

// A tool error is built at most once per failed call and returned straight to the client;
// boxing it would buy nothing but indirection.
#![allow(clippy::result_large_err)]

use crate::engine::EngineError;
use crate::engine::LockError;
use crate::engine::run::StartError;
use crate::engine::{StoreError, TermError};
use crate::workflow::Violation;
use serde::Serialize;
use serde_json::{Map, Value};

/// What went wrong, for the agent.
#[derive(Debug, Clone, Serialize)]
pub struct ToolError {
    pub error_code: &'static str,
    /// workrail's numbers: -32001 workflow not found, -32002 invalid workflow, -32003 step not
    /// found, -32004 validation error, -32005 state error, -32006 storage error, -32007
    /// security error.
    pub code: i32,
    pub category: &'static str,
    pub message: String,
    pub context: Map<String, Value>,
    pub retryable: bool,
    pub suggested_action: String,
    pub correlation_id: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<Violation>,
}

impl ToolError {
    pub fn new(
        error_code: &'static str,
        code: i32,
        category: &'static str,
        message: impl Into<String>,
    ) -> Self {
        ToolError {
            error_code,
            code,
            category,
            message: message.into(),
            context: Map::new(),
            retryable: false,
            suggested_action: String::new(),
            correlation_id: String::new(),
            violations: Vec::new(),
        }
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.context.insert(key.to_string(), value.into());
        self
    }

    pub fn suggest(mut self, action: impl Into<String>) -> Self {
        self.suggested_action = action.into();
        self
    }

    pub fn retryable(mut self) -> Self {
        self.retryable = true;
        self
    }

    /// Arguments that do not fit the tool's schema.
    pub fn invalid_arguments(tool: &str, detail: impl std::fmt::Display) -> Self {
        ToolError::new(
            "INVALID_ARGUMENTS",
            -32004,
            "validation",
            format!("invalid arguments for {tool}: {detail}"),
        )
        .with("tool", tool)
        .suggest("Fix the arguments to match the tool's input schema and call it again.")
    }

    pub fn internal(message: impl Into<String>) -> Self {
        ToolError::new("INTERNAL_ERROR", -32005, "internal", message)
            .suggest("This is a flowdeck bug; the server keeps running. Retry, and report it if it persists.")
            .retryable()
    }

    pub fn cancelled(tool: &str) -> Self {
        ToolError::new(
            "CANCELLED",
            -32005,
            "execution",
            format!("{tool} was cancelled"),
        )
        .with("tool", tool)
    }
}

impl ToolError {
    /// An agent's run that approval mode stopped: denied by a person, or nobody there to
    /// approve it. A security error, not one to retry unchanged.
    pub fn not_approved(workflow: &str, run_id: Option<&str>, message: String) -> ToolError {
        let error = ToolError::new("RUN_NOT_APPROVED", -32007, "security", message)
            .with("workflow", workflow)
            .suggest("Approval mode is on: a person approves each new content of a workflow before an agent runs it. Ask them to approve it in the studio (or with `flowdeck approve NAME`), or to run it themselves.");
        match run_id {
            Some(run) => error.with("run_id", run),
            None => error,
        }
    }
}

impl From<EngineError> for ToolError {
    fn from(e: EngineError) -> Self {
        let message = e.to_string();
        match e {
            EngineError::Term(t) => term_error(t, message),
            EngineError::Store(s) => store_error(s, message),
            EngineError::Pattern { pattern, .. } => ToolError::new("INVALID_PATTERN", -32004, "validation", message)
                .with("pattern", pattern)
                .suggest("Fix the regular expression (Rust regex syntax, at most 1000 characters)."),
            EngineError::InvalidParams(_) => ToolError::new("INVALID_ARGUMENTS", -32004, "validation", message)
                .suggest("Fix the arguments and call again."),
            EngineError::RunStart(StartError::SessionBusy { session_id, run_id, .. }) => {
                ToolError::new("SESSION_BUSY", -32005, "conflict", message)
                    .with("session_id", session_id)
                    .with("run_id", run_id)
                    .retryable()
                    .suggest("Wait for the running run (run_status) or cancel it (workflow_cancel), or run in another session.")
            }
            EngineError::RunStart(StartError::TooManyRuns { limit, .. }) => {
                ToolError::new("RUN_LIMIT", -32005, "conflict", message)
                    .with("limit", limit)
                    .retryable()
                    .suggest("Wait for a run to finish (run_list shows them) or cancel one, then retry.")
            }
            EngineError::RunNotFound(run) => ToolError::new("RUN_NOT_FOUND", -32005, "not_found", message)
                .with("run_id", run)
                .suggest("Use run_list to see the runs."),
            EngineError::RunFinished(run) => ToolError::new("RUN_FINISHED", -32005, "conflict", message)
                .with("run_id", run)
                .suggest("The run has ended; read its result with run_status."),
            EngineError::NoPrompt(run) => ToolError::new("RUN_NOT_WAITING", -32005, "conflict", message)
                .with("run_id", run)
                .retryable()
                .suggest("Check run_status: answer only when its status is waiting_for_input."),
            EngineError::StepNotFound { workflow, step } => ToolError::new("STEP_NOT_FOUND", -32003, "not_found", message)
                .with("workflow", workflow)
                .with("step", step)
                .suggest("Use workflow_step_plan to see the workflow's steps."),
            EngineError::InputOwned { session_id, run_id, .. } => ToolError::new("SESSION_BUSY", -32005, "conflict", message)
                .with("session_id", session_id)
                .with("run_id", run_id)
                .retryable()
                .suggest("Wait for the run to finish (run_status, or run_events with the cursor), or cancel it with workflow_cancel, then send the input again."),
            EngineError::InputHeld { session_id, holder } => ToolError::new("SESSION_BUSY", -32005, "conflict", message)
                .with("session_id", session_id)
                .with("holder", holder)
                .retryable()
                .suggest("A person is typing in this terminal; wait and send again, or open a terminal of your own with open_terminal."),
            EngineError::NotApproved { workflow, .. } => ToolError::not_approved(&workflow, None, message),
            EngineError::NotAwaitingApproval(run) => ToolError::new("RUN_NOT_WAITING", -32005, "conflict", message)
                .with("run_id", run),
            EngineError::ApprovalNotShown(run) => ToolError::new("RUN_NOT_WAITING", -32005, "conflict", message)
                .with("run_id", run),
            EngineError::WorkflowRunning { workflow, run_id, .. } => ToolError::new("WORKFLOW_RUNNING", -32005, "conflict", message)
                .with("workflow", workflow)
                .with("run_id", run_id)
                .retryable()
                .suggest("Wait for the run to finish or cancel it with workflow_cancel."),
        }
    }
}

fn term_error(e: TermError, message: String) -> ToolError {
    let code = e.code();
    match e {
        TermError::NotFound(id) => ToolError::new("SESSION_NOT_FOUND", -32005, "not_found", message)
            .with("session_id", id)
            .suggest("Use list_terminal_sessions, or open one with open_terminal."),
        TermError::TooManySessions { max, .. } => ToolError::new("SESSION_LIMIT", -32005, "conflict", message)
            .with("limit", max)
            .retryable()
            .suggest("Close a session with exit_terminal and retry."),
        TermError::NotAShell { session, foreground } => ToolError::new("NOT_A_SHELL", -32005, "execution", message)
            .with("session_id", session)
            .with("foreground", foreground)
            .retryable()
            .suggest("Wait for the foreground program to finish (or stop it with send_input keys [{\"ctrl\": \"c\"}]), or use send_input and await_output instead."),
        TermError::Exited { session, .. } => ToolError::new("SESSION_EXITED", -32005, "execution", message)
            .with("session_id", session)
            .suggest("Read its last screen with get_screen_content, then close it with exit_terminal."),
        TermError::InputQueueFull { session, max, .. } => ToolError::new("SESSION_BUSY", -32005, "conflict", message)
            .with("session_id", session)
            .with("limit", max)
            .retryable()
            .suggest("The program is not reading its input: check its screen with get_screen_content, then retry."),
        TermError::Failed { session, .. } => ToolError::new("SESSION_FAILED", -32005, "execution", message)
            .with("session_id", session)
            .suggest("Close it with exit_terminal and open a new session."),
        TermError::CommandTimeout { session, .. } => ToolError::new("RUN_TIMEOUT", -32005, "execution", message)
            .with("session_id", session)
            .retryable()
            .suggest("Retry with a longer timeout, or check the session's screen."),
        TermError::InvalidName(_) | TermError::InvalidEnvName(_) | TermError::InvalidCwd(_) | TermError::InvalidArgument { .. } | TermError::TooLarge { .. } => {
            ToolError::new("INVALID_ARGUMENTS", -32004, "validation", message).with("reason", code).suggest("Fix the argument and retry.")
        }
        TermError::ForeignCursor { session, cursor_session } => ToolError::new("INVALID_ARGUMENTS", -32004, "validation", message)
            .with("reason", code)
            .with("session_id", session)
            .with("cursor_session_id", cursor_session)
            .suggest("Call search_output with the session_id whose page gave the cursor, or without a cursor to search this session from the start."),
        TermError::NameTaken(name) => ToolError::new("SESSION_NAME_TAKEN", -32005, "conflict", message)
            .with("name", name)
            .suggest("Pick another name, or use the open session."),
        TermError::Unreachable { host, .. } => ToolError::new("HOST_UNREACHABLE", -32005, "execution", message)
            .with("host", host)
            .retryable()
            .suggest("Check that `ssh HOST` works from this machine without asking anything (a key in ssh-agent or in the ssh config; the host's key in known_hosts), or set FLOWDECK_SSH_COMMAND to the ssh command and options that do."),
        TermError::Spawn { program, .. } => ToolError::new("SPAWN_FAILED", -32005, "execution", message)
            .with("program", program)
            .suggest("Check that the program exists and is executable."),
        TermError::NotStarted { session, .. } => ToolError::new("TERMINAL_ERROR", -32005, "execution", message)
            .with("session_id", session)
            .retryable()
            .suggest("Read the screen with get_screen_content; if the command line is stuck, press Ctrl-C with send_input keys [{\"ctrl\": \"c\"}], then retry."),
        TermError::ShellProtocol { session, .. } | TermError::Io { session, .. } => {
            ToolError::new("TERMINAL_ERROR", -32005, "execution", message).with("session_id", session).retryable()
        }
    }
}

fn store_error(e: StoreError, message: String) -> ToolError {
    match e {
        StoreError::NotFound(name) => ToolError::new("WORKFLOW_NOT_FOUND", -32001, "not_found", message)
            .with("workflow", name)
            .suggest("Use workflow_list to see the workflows, or create one with create_workflow."),
        StoreError::Conflict { name, expected, actual } => ToolError::new("WORKFLOW_VERSION_CONFLICT", -32006, "conflict", message)
            .with("workflow", name)
            .with("expected_version", expected)
            .with("actual_version", actual.map_or(Value::Null, Value::String))
            .retryable()
            .suggest("Read the workflow again with workflow_get, merge your change into its content, and save with its new version."),
        StoreError::AlreadyExists { name, file, version } => ToolError::new("WORKFLOW_EXISTS", -32006, "conflict", message)
            .with("workflow", name)
            .with("file", file)
            .with("version", version)
            .suggest("Pass overwrite (or expected_version with the current version) to replace it, or choose another name."),
        StoreError::Invalid { name, file, violations } => ToolError::new("WORKFLOW_VALIDATION_FAILED", -32002, "validation", message)
            .with("workflow", name)
            .with("file", file)
            .with_violations(violations)
            .suggest("Fix the violations (workflow_validate shows them with line and column) and save again."),
        StoreError::Unnamed { violations } => ToolError::new("WORKFLOW_VALIDATION_FAILED", -32002, "validation", message)
            .with_violations(violations)
            .suggest("Give the manifest a valid `name` (lowercase letters, digits, `_`)."),
        StoreError::TooLarge { size, limit } => ToolError::new("WORKFLOW_VALIDATION_FAILED", -32002, "validation", message)
            .with("size", size)
            .with("limit", limit)
            .suggest("Make the manifest smaller than the limit."),
        StoreError::NotRegularFile { file, kind } => ToolError::new("STORAGE_ERROR", -32006, "internal", message)
            .with("file", file)
            .with("kind", kind.to_string())
            .suggest("Move what is in the way out of the workflows folder, then try again."),
        StoreError::InvalidName(_) => ToolError::new("INVALID_NAME", -32007, "validation", message)
            .suggest("Workflow names are identifiers: lowercase letters, digits and `_`, never paths."),
        StoreError::DuplicateName { name, files } => ToolError::new("WORKFLOW_DUPLICATE_NAME", -32002, "validation", message)
            .with("workflow", name)
            .with("files", files)
            .suggest("Rename or delete all but one of the files."),
        StoreError::FormatMismatch { name, file, .. } => ToolError::new("WORKFLOW_FORMAT_MISMATCH", -32006, "validation", message)
            .with("workflow", name)
            .with("file", file)
            .suggest("Save the content in the format of the existing file."),
        StoreError::NoFolder(_) | StoreError::Io { .. } => ToolError::new("STORAGE_ERROR", -32006, "internal", message).retryable(),
        StoreError::Busy(held) => {
            let holder = match &held {
                LockError::Held { holder: Some(holder), .. } => Value::from(holder.pid),
                _ => Value::Null,
            };
            ToolError::new("STORAGE_BUSY", -32006, "conflict", message)
                .with("holder_pid", holder)
                .retryable()
                .suggest("Another process holds the folder's lock (a stopped flowdeck, for example): retry later, or ask the person to resume or end that process.")
        }
    }
}

impl ToolError {
    fn with_violations(mut self, violations: Vec<Violation>) -> Self {
        self.violations = violations;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::LockHolder as Holder;

    #[test]
    fn a_lock_held_too_long_is_a_retryable_busy_error_naming_its_holder() {
        let held = LockError::Held {
            path: "/w/.flowdeck/write.lock".into(),
            holder: Some(Holder {
                pid: 4242,
                program: Some("'flowdeck'".into()),
                stopped: true,
            }),
            waited: std::time::Duration::from_secs(10),
        };
        let error = ToolError::from(EngineError::Store(StoreError::Busy(held)));
        assert_eq!(error.error_code, "STORAGE_BUSY");
        assert_eq!(error.category, "conflict");
        assert!(error.retryable);
        assert_eq!(error.context["holder_pid"], 4242);
        assert!(
            error
                .message
                .contains("held by process 4242 ('flowdeck', stopped)"),
            "{}",
            error.message
        );
    }
}
