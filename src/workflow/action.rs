//! Step actions: which tool a state calls and with what parameters.
//!
//! Parameters are typed per tool, so a misspelt or misplaced parameter is a validation error
//! with a "did you mean" hint rather than a value silently ignored at run time. In a manifest
//! an action is written `{tool: NAME, params: {...}}`, as in the seed.

use super::model::Scalar;
use super::rules::Rule;
use indexmap::IndexMap;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::fmt;

/// Longest timeout any wait may ask for, in seconds; longer values are clamped to it.
pub const MAX_WAIT_SECONDS: f64 = 300.0;
/// Wait used by `await_output` when neither it nor its state gives one.
pub const DEFAULT_WAIT_SECONDS: f64 = 30.0;

/// The tools a step can call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolName {
    OpenTerminal,
    SendInput,
    AwaitOutput,
    GetScreenContent,
    RunCommand,
    SetEnv,
    ListTerminalSessions,
    ExitTerminal,
    Prompt,
}

impl ToolName {
    pub const ALL: [ToolName; 9] = [
        ToolName::OpenTerminal,
        ToolName::SendInput,
        ToolName::AwaitOutput,
        ToolName::GetScreenContent,
        ToolName::RunCommand,
        ToolName::SetEnv,
        ToolName::ListTerminalSessions,
        ToolName::ExitTerminal,
        ToolName::Prompt,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ToolName::OpenTerminal => "open_terminal",
            ToolName::SendInput => "send_input",
            ToolName::AwaitOutput => "await_output",
            ToolName::GetScreenContent => "get_screen_content",
            ToolName::RunCommand => "run_command",
            ToolName::SetEnv => "set_env",
            ToolName::ListTerminalSessions => "list_terminal_sessions",
            ToolName::ExitTerminal => "exit_terminal",
            ToolName::Prompt => "prompt",
        }
    }

    pub fn parse(name: &str) -> Option<ToolName> {
        ToolName::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// One line on what the tool does, for the step action catalog.
    pub fn summary(self) -> &'static str {
        match self {
            ToolName::OpenTerminal => "Open a new terminal session; the run continues in it",
            ToolName::SendInput => "Send text (with escape sequences) or typed keys to the session",
            ToolName::AwaitOutput => {
                "Wait until output matches a regex, a stop pattern matches, or time runs out"
            }
            ToolName::GetScreenContent => {
                "Read the screen, the history, the last lines, or the output since the last input"
            }
            ToolName::RunCommand => {
                "Run a shell command, wait for it to finish, and record its exit status and output"
            }
            ToolName::SetEnv => {
                "Export variables into the shell, quoted so that values are stored literally"
            }
            ToolName::ListTerminalSessions => "List the open terminal sessions",
            ToolName::ExitTerminal => "Close a terminal session and everything running in it",
            ToolName::Prompt => {
                "Pause the run until a person or an agent answers; the answer is checked by rules"
            }
        }
    }

    /// Whether a manifest must give `params` for this tool (it has required parameters).
    fn params_required(self) -> bool {
        matches!(
            self,
            ToolName::SendInput
                | ToolName::AwaitOutput
                | ToolName::RunCommand
                | ToolName::SetEnv
                | ToolName::Prompt
        )
    }

    fn params_schema(self, generator: &mut SchemaGenerator) -> Schema {
        match self {
            ToolName::OpenTerminal => generator.subschema_for::<OpenTerminalParams>(),
            ToolName::SendInput => generator.subschema_for::<SendInputParams>(),
            ToolName::AwaitOutput => generator.subschema_for::<AwaitOutputParams>(),
            ToolName::GetScreenContent => generator.subschema_for::<GetScreenContentParams>(),
            ToolName::RunCommand => generator.subschema_for::<RunCommandParams>(),
            ToolName::SetEnv => generator.subschema_for::<SetEnvParams>(),
            ToolName::ListTerminalSessions => generator.subschema_for::<ListSessionsParams>(),
            ToolName::ExitTerminal => generator.subschema_for::<SessionParams>(),
            ToolName::Prompt => generator.subschema_for::<PromptParams>(),
        }
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A step's action: a tool and its typed parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawAction", into = "RawAction")]
pub enum Action {
    OpenTerminal(OpenTerminalParams),
    SendInput(SendInputParams),
    AwaitOutput(AwaitOutputParams),
    GetScreenContent(GetScreenContentParams),
    RunCommand(RunCommandParams),
    SetEnv(SetEnvParams),
    ListTerminalSessions(ListSessionsParams),
    ExitTerminal(SessionParams),
    Prompt(PromptParams),
}

impl Action {
    pub fn tool(&self) -> ToolName {
        match self {
            Action::OpenTerminal(_) => ToolName::OpenTerminal,
            Action::SendInput(_) => ToolName::SendInput,
            Action::AwaitOutput(_) => ToolName::AwaitOutput,
            Action::GetScreenContent(_) => ToolName::GetScreenContent,
            Action::RunCommand(_) => ToolName::RunCommand,
            Action::SetEnv(_) => ToolName::SetEnv,
            Action::ListTerminalSessions(_) => ToolName::ListTerminalSessions,
            Action::ExitTerminal(_) => ToolName::ExitTerminal,
            Action::Prompt(_) => ToolName::Prompt,
        }
    }

    /// The parameters as written (for logs and the seed's `execution_log`).
    pub fn params(&self) -> Value {
        match RawAction::from(self.clone()).params {
            Some(params) => params,
            None => Value::Object(Map::new()),
        }
    }

    /// The session the action names explicitly, if any (else the run's session is used).
    pub fn session_id(&self) -> Option<&str> {
        match self {
            Action::SendInput(p) => p.session_id.as_deref(),
            Action::AwaitOutput(p) => p.session_id.as_deref(),
            Action::GetScreenContent(p) => p.session_id.as_deref(),
            Action::RunCommand(p) => p.session_id.as_deref(),
            Action::SetEnv(p) => p.session_id.as_deref(),
            Action::ExitTerminal(p) => p.session_id.as_deref(),
            Action::OpenTerminal(_) | Action::ListTerminalSessions(_) | Action::Prompt(_) => None,
        }
    }
}

/// The action as written: `{tool, params}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAction {
    pub tool: ToolName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

impl TryFrom<RawAction> for Action {
    type Error = String;

    fn try_from(raw: RawAction) -> Result<Self, Self::Error> {
        fn typed<T: serde::de::DeserializeOwned>(params: Option<Value>) -> Result<T, String> {
            let params = params.unwrap_or_else(|| Value::Object(Map::new()));
            serde_json::from_value(params).map_err(|e| format!("invalid params: {e}"))
        }
        let p = raw.params;
        Ok(match raw.tool {
            ToolName::OpenTerminal => Action::OpenTerminal(typed(p)?),
            ToolName::SendInput => Action::SendInput(typed(p)?),
            ToolName::AwaitOutput => Action::AwaitOutput(typed(p)?),
            ToolName::GetScreenContent => Action::GetScreenContent(typed(p)?),
            ToolName::RunCommand => Action::RunCommand(typed(p)?),
            ToolName::SetEnv => Action::SetEnv(typed(p)?),
            ToolName::ListTerminalSessions => Action::ListTerminalSessions(typed(p)?),
            ToolName::ExitTerminal => Action::ExitTerminal(typed(p)?),
            ToolName::Prompt => Action::Prompt(typed(p)?),
        })
    }
}

impl From<Action> for RawAction {
    fn from(action: Action) -> Self {
        fn value<T: Serialize>(params: T) -> Option<Value> {
            // Serializing plain data structs to a Value cannot fail.
            serde_json::to_value(params)
                .ok()
                .filter(|v| v.as_object().is_none_or(|o| !o.is_empty()))
        }
        let tool = action.tool();
        let params = match action {
            Action::OpenTerminal(p) => value(p),
            Action::SendInput(p) => value(p),
            Action::AwaitOutput(p) => value(p),
            Action::GetScreenContent(p) => value(p),
            Action::RunCommand(p) => value(p),
            Action::SetEnv(p) => value(p),
            Action::ListTerminalSessions(p) => value(p),
            Action::ExitTerminal(p) => value(p),
            Action::Prompt(p) => value(p),
        };
        RawAction { tool, params }
    }
}

impl JsonSchema for Action {
    fn schema_name() -> Cow<'static, str> {
        "Action".into()
    }

    /// `tool` picks the parameter schema through `if`/`then`, so that a wrong parameter is
    /// reported at its own path (`/states/x/action/params/timeout`) rather than as "matches no
    /// variant".
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = ToolName::ALL.iter().map(|t| t.as_str()).collect();
        let branches: Vec<Value> = ToolName::ALL
            .iter()
            .map(|tool| {
                let mut then = json!({"properties": {"params": tool.params_schema(generator)}});
                if tool.params_required() {
                    then["required"] = json!(["params"]);
                }
                json!({
                    "if": {"properties": {"tool": {"const": tool.as_str()}}, "required": ["tool"]},
                    "then": then,
                })
            })
            .collect();
        json_schema!({
            "description": "The tool this step calls and its parameters (`session_id` defaults to the run's session).",
            "type": "object",
            "required": ["tool"],
            "additionalProperties": false,
            "properties": {
                "tool": {"enum": names, "description": "The tool to call."},
                "params": {"type": "object", "description": "The tool's parameters."}
            },
            "allOf": branches,
        })
    }
}

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

/// One typed key: `{text: "..."}`, `{key: enter}`, `{ctrl: c}` or `{alt: x}`.
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
}

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

/// Which hits `search_output` gives first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchOrder {
    // The newest line first (default): the latest error is what is usually wanted.
    #[default]
    NewestFirst,
    // The oldest retained line first.
    OldestFirst,
}

/// `search_output`: the lines of a session's history, and of a full-screen program's screen,
/// that match a regex. A tool call, not a step action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchOutputParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub session_id: Option<String>,
    /// Regex matched against each line as displayed; a match never spans lines.
    #[schemars(length(min = 1, max = 1000))]
    pub pattern: String,
    /// Match letters of either case.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ignore_case: bool,
    /// Lines before and after each hit (default 0, at most 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 20))]
    pub context: Option<u32>,
    /// Which hits first (default `newest_first`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<SearchOrder>,
    /// Hits in a page (default 20, at most 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<u32>,
    /// The previous page's `next_cursor`, to go on from where it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 200))]
    pub cursor: Option<String>,
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
