//! The values a session takes and gives: what to start, how it ended, what it is, what a
//! wait found.

use crate::actor::Actor;
use crate::term::matcher::WaitOutcome;
use crate::term::screen::Size;
use schemars::JsonSchema;
use serde::Serialize;
use std::path::PathBuf;

/// What to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// A shell: the given path, else `$SHELL`, else `/bin/bash`.
    Shell(Option<String>),
    /// A program and its arguments.
    Command(Vec<String>),
    /// A POSIX shell on the far side of `connect` (`ssh -t -- HOST`, `docker exec -it C sh
    /// -c`), which takes a shell command as its last argument (see remote.rs). `place` names
    /// where that is, for people.
    /// `patience`: how long to wait for the far side to be reached (a person typing a
    /// password takes longer than a key).
    /// `person`: someone can answer the connect command's questions in the pane.
    Remote {
        connect: Vec<String>,
        place: String,
        patience: std::time::Duration,
        person: bool,
    },
}

/// Everything needed to open a session.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    pub program: Program,
    pub cwd: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    pub size: Size,
    pub name: Option<String>,
    /// Who opens it: recorded on the session for those who list it, never interpreted here.
    pub opened_by: Option<Actor>,
    /// Shown as it comes in a real terminal ([`Session::view`](super::Session::view)), which
    /// answers the program's queries (its attributes, the cursor's place) itself: the
    /// session's own screen then leaves them unanswered, or the program would get two answers.
    pub relayed: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            program: Program::Shell(None),
            cwd: None,
            env: Vec::new(),
            size: Size {
                cols: 120,
                rows: 30,
            },
            name: None,
            opened_by: None,
            relayed: false,
        }
    }
}

/// How a program ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
pub struct ExitInfo {
    /// The exit code, when it exited by itself.
    pub code: Option<u32>,
    /// The signal that ended it, if one did.
    pub signal: Option<String>,
}

impl ExitInfo {
    /// The exit status as a number, when the program exited by itself (a recording's `x`
    /// event); a signal's name is no number, so a program a signal ended has none.
    pub fn status(&self) -> Option<i32> {
        self.code
            .filter(|_| self.signal.is_none())
            .and_then(|c| i32::try_from(c).ok())
    }
}

impl std::fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.signal, self.code) {
            (Some(signal), _) => write!(f, "killed by {signal}"),
            (None, Some(code)) => write!(f, "exit code {code}"),
            (None, None) => f.write_str("ended"),
        }
    }
}

/// A change a front end can redraw on: bytes read so far and whether the program ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Activity {
    pub bytes: u64,
    pub exited: bool,
    /// The session can no longer read its output ([`Session::failure`] says why).
    pub failed: bool,
}

/// What a session is, for listings.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct SessionInfo {
    pub session_id: String,
    pub name: Option<String>,
    /// The program and arguments started.
    pub command: Vec<String>,
    pub pid: u32,
    pub cols: u16,
    pub rows: u16,
    /// Milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    pub running: bool,
    pub exit: Option<ExitInfo>,
    /// Why the session can no longer read its program's output, when it failed (a bug or
    /// an I/O error): it can only be closed.
    pub failed: Option<String>,
    /// Who opened it (a person, an agent, a run), when known.
    pub opened_by: Option<Actor>,
    pub output_bytes: u64,
    pub history_lines: u64,
    pub is_shell: bool,
    /// Where the session's shell runs, when not on this machine (`h1`, `docker:app`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    pub title: String,
}

/// What `get_screen_content` reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    Screen,
    History,
    Tail(usize),
    /// The output after the last input of this typist (of anyone for `None`), past its echo.
    SinceInput(Option<String>),
}

/// The result of a wait.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AwaitResult {
    pub outcome: WaitOutcome,
    /// The text the pattern (or stop pattern) matched.
    pub matched_text: Option<String>,
    /// The whole line the match is on, as displayed.
    pub matched_line: Option<String>,
    /// Numbered groups (1, 2, ...); `None` for a group that took no part.
    pub groups: Vec<Option<String>>,
    /// Named groups that matched.
    pub named_groups: indexmap::IndexMap<String, String>,
    /// The stop pattern that ended the wait, when one did.
    pub stop_pattern: Option<String>,
    pub elapsed_ms: f64,
    /// The last lines of output, bounded.
    pub tail: String,
    pub exit: Option<ExitInfo>,
    /// For a wait for quiet that ended so: how long the output (or screen) had been quiet.
    pub quiet_ms: Option<f64>,
}

/// Limits for one session's history.
#[derive(Debug, Clone, Copy)]
pub struct HistoryLimits {
    pub lines: usize,
    pub bytes: usize,
}
