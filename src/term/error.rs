//! Why a terminal operation failed.

use thiserror::Error;

/// An error from the terminal layer. Every message names the session and says what to do.
#[derive(Debug, Error)]
pub enum TermError {
    #[error("no terminal session `{0}` (the session list shows the open ones)")]
    NotFound(String),
    #[error("{open} terminal sessions are open, the limit is {max}; close one first")]
    TooManySessions { open: usize, max: usize },
    #[error("session name `{0}` is not allowed: use 1 to 64 letters, digits, `_`, `.` or `-`")]
    InvalidName(String),
    #[error("a terminal session named `{0}` is already open")]
    NameTaken(String),
    #[error(
        "environment variable name `{0}` is not allowed: use letters, digits and `_`, not starting with a digit"
    )]
    InvalidEnvName(String),
    #[error("could not start `{program}`: {reason}")]
    Spawn { program: String, reason: String },
    #[error("working directory `{0}` does not exist or is not a directory")]
    InvalidCwd(String),
    #[error("{what} is not allowed: {reason}")]
    InvalidArgument { what: String, reason: String },
    #[error(
        "the cursor continues a search of session `{cursor_session}`, not of `{session}`: use it with `{cursor_session}`, or search `{session}` again without a cursor"
    )]
    ForeignCursor {
        session: String,
        cursor_session: String,
    },
    #[error(
        "terminal session `{session}` has exited ({status}); its screen stays readable until it is closed"
    )]
    Exited { session: String, status: String },
    #[error(
        "terminal session `{session}` holds {queued} bytes of input its program has not read yet (the limit is {max}); retry once it has read them"
    )]
    InputQueueFull {
        session: String,
        queued: usize,
        max: usize,
    },
    #[error(
        "terminal session `{session}` failed: {reason}; its output can no longer be read, so close it and open another"
    )]
    Failed { session: String, reason: String },
    #[error(
        "terminal session `{session}` is not at a POSIX shell prompt: `{foreground}` is in the foreground"
    )]
    NotAShell { session: String, foreground: String },
    #[error("{what} is {size} bytes; the limit is {max}")]
    TooLarge {
        what: &'static str,
        size: usize,
        max: usize,
    },
    #[error("the shell in session `{session}` did not answer as expected: {detail}")]
    ShellProtocol { session: String, detail: String },
    #[error(
        "the shell in session `{session}` did not start the command within {seconds} s: it is busy, or its command line holds an unfinished command (an open quote or here-document); the line reads `{line}`. Check the screen, press Ctrl-C if the line is stuck, and retry"
    )]
    NotStarted {
        session: String,
        seconds: f64,
        line: String,
    },
    #[error("`{command}` did not finish within {seconds} s in session `{session}`")]
    CommandTimeout {
        session: String,
        command: String,
        seconds: f64,
    },
    #[error("cannot reach {host}: {reason}")]
    Unreachable { host: String, reason: String },
    #[error("terminal I/O failed in session `{session}`: {source}")]
    Io {
        session: String,
        #[source]
        source: std::io::Error,
    },
}

impl TermError {
    /// A short machine-readable code for front ends.
    pub fn code(&self) -> &'static str {
        match self {
            TermError::NotFound(_) => "session_not_found",
            TermError::TooManySessions { .. } => "session_limit",
            TermError::InvalidName(_) => "invalid_session_name",
            TermError::NameTaken(_) => "session_name_taken",
            TermError::InvalidEnvName(_) => "invalid_env_name",
            TermError::Spawn { .. } => "spawn_failed",
            TermError::InvalidCwd(_) => "invalid_cwd",
            TermError::InvalidArgument { .. } => "invalid_argument",
            TermError::ForeignCursor { .. } => "foreign_cursor",
            TermError::Exited { .. } => "session_exited",
            TermError::Failed { .. } => "session_failed",
            TermError::InputQueueFull { .. } => "input_queue_full",
            TermError::NotAShell { .. } => "not_a_shell",
            TermError::TooLarge { .. } => "too_large",
            TermError::ShellProtocol { .. } => "shell_protocol",
            TermError::NotStarted { .. } => "not_started",
            TermError::CommandTimeout { .. } => "timeout",
            TermError::Unreachable { .. } => "host_unreachable",
            TermError::Io { .. } => "terminal_io",
        }
    }
}
