//! `await_output`'s parameters and the limits every wait keeps to: what it waits for, how
//! long, and what it captures.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Longest timeout any wait may ask for, in seconds; longer values are clamped to it.
pub const MAX_WAIT_SECONDS: f64 = 300.0;
/// Wait used by `await_output` when neither it nor its state gives one.
pub const DEFAULT_WAIT_SECONDS: f64 = 30.0;

/// Which output `await_output` matches against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Since {
    // Output after the last input sent to the session, not counting its echo (default).
    #[default]
    LastInput,
    // Output after the wait began.
    Entry,
    // The visible screen (the seed's behaviour).
    Screen,
    // Everything in the session's history.
    All,
}

/// What `quiet_ms` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QuietOn {
    // No output at all for `quiet_ms` (default).
    #[default]
    Output,
    // The screen's text unchanged for `quiet_ms` (redraws of the same text, cursor moves and
    // blinks, titles do not count): for programs that keep redrawing.
    Screen,
}

/// The longest `quiet_ms`, in milliseconds.
pub const MAX_QUIET_MS: u64 = 60_000;

/// `await_output`: wait until output matches, or the program settles, or both in turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AwaitOutputParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub session_id: Option<String>,
    /// Regex to wait for. Optional with `quiet_ms`: then the wait is for quiet alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1000))]
    pub pattern: Option<String>,
    /// Then (or, without `pattern`, only) wait until the program has been quiet this many
    /// milliseconds: no output (`quiet_on: output`) or no change of the screen's text
    /// (`quiet_on: screen`), counted from the match (or the wait's start) or the last change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 60000))]
    pub quiet_ms: Option<u64>,
    /// What `quiet_ms` watches: `output` (default) or `screen`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet_on: Option<QuietOn>,
    /// Instead: wait until the session's shell is back at its prompt, reading its next
    /// command, as the shell tells it (never by the prompt's text). For after a program
    /// typed into (a REPL, an installer) ends.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shell_prompt: bool,
    /// Seconds to wait (default: the state's `timeout_seconds`, else 30; at most 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub timeout: Option<f64>,
    /// Regexes that end the wait early as a failure (an error message, a prompt you did not
    /// expect).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    pub stop_patterns: Vec<String>,
    /// Which output to match (default `last_input`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Since>,
    /// Regex groups to store as run variables (and export): `{VAR: 1}` or `{VAR: name}`.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    #[schemars(extend("propertyNames" = {"pattern": "^[A-Z][A-Z0-9_]*$", "maxLength": 64}, "maxProperties" = 20))]
    pub captures: IndexMap<String, CaptureGroup>,
}

/// A regex group, by number or by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum CaptureGroup {
    Index(u32),
    Name(String),
}

impl fmt::Display for CaptureGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaptureGroup::Index(i) => write!(f, "{i}"),
            CaptureGroup::Name(n) => f.write_str(n),
        }
    }
}

/// Clamps a requested wait to the allowed range. Returns the wait and whether it was clamped.
pub fn clamp_wait(seconds: f64) -> (f64, bool) {
    if !seconds.is_finite() || seconds > MAX_WAIT_SECONDS {
        (MAX_WAIT_SECONDS, true)
    } else if seconds < 0.0 {
        (0.0, true)
    } else {
        (seconds, false)
    }
}
