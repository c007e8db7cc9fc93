//! The typed parameters of the step actions that open, type into, read and run in a
//! session, and of `prompt`: one struct per tool, so that a misspelt or misplaced parameter
//! is a validation error. (`await_output`'s are in wait.rs, with the limits of a wait.)

use crate::workflow::rules::Rule;
use crate::workflow::scalar::Scalar;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `open_terminal`: a new session; the run continues in it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenTerminalParams {
    /// Shell to start (default `$SHELL`, else `/bin/bash`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 4096))]
    pub shell: Option<String>,
    /// Program and arguments to run instead of a shell, e.g. `[python3, -q]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub command: Option<Vec<String>>,
    /// Working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 4096))]
    pub cwd: Option<String>,
    /// Extra environment variables.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    #[schemars(extend("propertyNames" = {"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}))]
    pub env: IndexMap<String, String>,
    /// Width in columns (default 120).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 2, max = 1000))]
    pub cols: Option<u16>,
    /// Height in rows (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 2, max = 500))]
    pub rows: Option<u16>,
    /// A label for the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[A-Za-z0-9_.-]+$"), length(min = 1, max = 64))]
    pub name: Option<String>,
    /// Open the shell on this host, through ssh (`host`, `user@host`, an alias of the ssh
    /// config; `FLOWDECK_SSH_COMMAND` gives the ssh command and its options). `cwd` and
    /// `env` then apply there; `shell` and `command` cannot be given with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        regex(pattern = r"^[A-Za-z0-9_@\[][A-Za-z0-9_.@:%\[\]-]*$"),
        length(min = 1, max = 255)
    )]
    pub host: Option<String>,
}

/// Parameters of tools that act on one session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionParams {
    /// The session (default: the run's session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub session_id: Option<String>,
}

/// `list_terminal_sessions` takes no parameters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListSessionsParams {}

/// `send_input`: text or keys (exactly one of the two).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendInputParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub session_id: Option<String>,
    /// Text to type; may hold escape sequences (`\n` is Enter, `\u0003` is Ctrl-C).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1_000_000))]
    pub input_text: Option<String>,
    /// Typed keys, sent in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1000))]
    pub keys: Option<Vec<Key>>,
}

/// One typed key: `{text: "..."}`, `{key: enter}`, `{ctrl: c}`, `{alt: x}`, or `{var: NAME}`
/// in a workflow's step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged, deny_unknown_fields)]
pub enum Key {
    Text {
        /// Literal text, typed as is.
        text: String,
    },
    Named {
        /// A named key.
        key: NamedKey,
    },
    Ctrl {
        /// A letter (or one of `@[\]^_`) pressed with Ctrl.
        #[schemars(regex(pattern = r"^[A-Za-z@\[\\\]^_ ]$"))]
        ctrl: String,
    },
    Alt {
        /// A character pressed with Alt.
        #[schemars(length(min = 1, max = 1))]
        alt: String,
    },
    Var {
        /// The value of the run's variable NAME (an argument, or a value captured earlier),
        /// typed as text: how a step types a password without writing it down. Only a
        /// workflow's steps have variables.
        #[schemars(regex(pattern = r"^[A-Z][A-Z0-9_]*$"), length(max = 64))]
        var: String,
    },
}

// As a manifest (or an agent) writes them. The terminal layer encodes keys of its own
// (`term::keys::Named`): the engine maps these to those (engine/terminal/vocabulary.rs), so
// that neither layer knows the other. (Not in the doc comment: that is the schema's text.)
/// Keys that have names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum NamedKey {
    Enter,
    Tab,
    Escape,
    Backspace,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
    Insert,
    Delete,
    F1,
    F2,
    F3,
    F4,
    F5,
    F6,
    F7,
    F8,
    F9,
    F10,
    F11,
    F12,
}

/// What `get_screen_content` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ContentMode {
    // The visible screen (default).
    #[default]
    Screen,
    // The scrollback history and the screen.
    History,
    // The last `lines` lines.
    Tail,
    // Output since the last input.
    SinceInput,
}

/// `get_screen_content`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetScreenContentParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub session_id: Option<String>,
    /// What to read (default `screen`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_mode: Option<ContentMode>,
    /// Lines for `tail` (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100000))]
    pub lines: Option<u32>,
}

/// `run_command`: run a shell command and wait for its exit status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCommandParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub session_id: Option<String>,
    /// The command line, as typed at a shell prompt.
    #[schemars(length(min = 1, max = 100_000))]
    pub command: String,
    /// Seconds to wait for it (default: the state's `timeout_seconds`, else 30; at most 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub timeout: Option<f64>,
}

/// `set_env`: export variables into the shell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetEnvParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub session_id: Option<String>,
    /// Variables to export; values are quoted so that they are stored literally.
    #[schemars(extend("propertyNames" = {"pattern": "^[A-Z][A-Z0-9_]*$", "maxLength": 64}, "minProperties" = 1, "maxProperties" = 50))]
    pub vars: IndexMap<String, Scalar>,
}

/// `prompt`: pause until a person (TUI) or an agent (`workflow_next`) answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptParams {
    /// The question or instruction shown to whoever answers.
    #[schemars(length(min = 1, max = 2000))]
    pub prompt: String,
    /// Rules the answer must pass (all of them); see output validation rules.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    pub validation: Vec<Rule>,
    /// Ask for an explicit confirmation before the run goes on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub require_confirmation: bool,
    /// Store the answer in this run variable (and export it into the shell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[A-Z][A-Z0-9_]*$"), length(max = 64))]
    pub store_as: Option<String>,
}
