//! The arguments of each MCP tool: typed, described for an agent, and turned into JSON Schema
//! (every one an object). They convert into the engine's parameter types, which are the
//! manifest's, so a tool call and a workflow step are the same call.

use crate::workflow::action::{
    AwaitOutputParams, CaptureGroup, ContentMode, GetScreenContentParams, Key, OpenTerminalParams,
    QuietOn, RunCommandParams, SearchOrder, SearchOutputParams, SendInputParams, Since,
};
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

/// No arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// `open_terminal`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenTerminalArgs {
    /// Shell to start (default: the user's $SHELL, else /bin/bash). Not together with `command`.
    pub shell: Option<String>,
    /// A program and its arguments to run instead of a shell, e.g. ["python3", "-q"].
    pub command: Option<Vec<String>>,
    /// Working directory (on `host` when one is given).
    pub cwd: Option<String>,
    /// Extra environment variables (exported on `host` when one is given).
    #[serde(default)]
    pub env: IndexMap<String, String>,
    /// Width in columns (default 120; clamped to 2..1000).
    pub cols: Option<u16>,
    /// Height in rows (default 30; clamped to 2..500).
    pub rows: Option<u16>,
    /// A label for the session (letters, digits, `_`, `.`, `-`); usable instead of the id.
    pub name: Option<String>,
    /// Open the shell on this host through ssh: a name, user@host or an alias of the ssh
    /// config. Every terminal tool then works there as here (run_command's exit status,
    /// await_output, the screen). Not together with `shell` or `command`.
    pub host: Option<String>,
}

impl From<OpenTerminalArgs> for OpenTerminalParams {
    fn from(a: OpenTerminalArgs) -> Self {
        OpenTerminalParams {
            shell: a.shell,
            command: a.command,
            cwd: a.cwd,
            env: a.env,
            cols: a.cols,
            rows: a.rows,
            name: a.name,
            host: a.host,
        }
    }
}

/// Tools that act on one session.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionArgs {
    /// The session id (from open_terminal or list_terminal_sessions) or its name.
    pub session_id: String,
}

/// `send_input`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendInputArgs {
    /// The session id or name.
    pub session_id: String,
    /// Text to type, exactly as given: "\n" presses Enter, "\u0003" is Ctrl-C. Give this or
    /// `keys`.
    pub input_text: Option<String>,
    /// Keys to press in order: {"text": "..."}, {"key": "enter"|"tab"|"escape"|"up"|...|"f12"},
    /// {"ctrl": "c"}, {"alt": "x"}. Arrows follow the program's cursor-key mode.
    pub keys: Option<Vec<Key>>,
}

impl SendInputArgs {
    pub fn split(self) -> (String, SendInputParams) {
        (
            self.session_id,
            SendInputParams {
                session_id: None,
                input_text: self.input_text,
                keys: self.keys,
            },
        )
    }
}

/// `get_screen_content`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScreenArgs {
    /// The session id or name.
    pub session_id: String,
    /// `screen` (the visible screen, default), `history` (everything kept), `tail` (the last
    /// `lines` lines), `since_input` (output since the last input, past its echo).
    pub content_mode: Option<ContentMode>,
    /// Lines for `tail` (default 50).
    pub lines: Option<u32>,
}

impl ScreenArgs {
    pub fn split(self) -> (String, GetScreenContentParams) {
        (
            self.session_id,
            GetScreenContentParams {
                session_id: None,
                content_mode: self.content_mode,
                lines: self.lines,
            },
        )
    }
}

/// `await_output`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AwaitArgs {
    /// The session id or name.
    pub session_id: String,
    /// Regex to wait for (multi-line: `^` and `$` match at line ends). Optional with
    /// `quiet_ms`.
    pub pattern: Option<String>,
    /// Then (or, without `pattern`, only) wait until the program has been quiet this many
    /// milliseconds (1 to 60000): for full-screen programs whose text you cannot name.
    pub quiet_ms: Option<u64>,
    /// What `quiet_ms` watches: `output` (default: no output at all) or `screen` (the
    /// screen's text unchanged, for programs that keep redrawing).
    pub quiet_on: Option<QuietOn>,
    /// Seconds to wait (default 30, at most 300). A timeout is an outcome, not an error.
    pub timeout: Option<f64>,
    /// Regexes that end the wait at once with outcome `stopped` (error messages).
    #[serde(default)]
    pub stop_patterns: Vec<String>,
    /// Which output: `last_input` (default: after the last input, never its echo), `entry`
    /// (after this call), `screen` (the visible screen), `all` (all history).
    pub since: Option<Since>,
}

impl AwaitArgs {
    pub fn split(self) -> (String, AwaitOutputParams) {
        (
            self.session_id,
            AwaitOutputParams {
                session_id: None,
                pattern: self.pattern,
                quiet_ms: self.quiet_ms,
                quiet_on: self.quiet_on,
                timeout: self.timeout,
                stop_patterns: self.stop_patterns,
                since: self.since,
                captures: IndexMap::<String, CaptureGroup>::new(),
            },
        )
    }
}

/// `search_output`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchOutputArgs {
    /// The session id or name.
    pub session_id: String,
    /// Regex (Rust syntax) matched against each line as displayed, e.g. "error|failed"; a
    /// match never spans lines.
    pub pattern: String,
    /// Match letters of either case (as `(?i)` in the pattern does).
    #[serde(default)]
    pub ignore_case: bool,
    /// Lines to give before and after each hit (default 0; more than 20 is clamped to 20).
    pub context: Option<u32>,
    /// `newest_first` (default: the latest hit first) or `oldest_first`.
    pub order: Option<SearchOrder>,
    /// Hits in a page (default 20; clamped to 1..200).
    pub limit: Option<u32>,
    /// The previous answer's `next_cursor`, for the next page (give the same `order`).
    pub cursor: Option<String>,
}

impl SearchOutputArgs {
    pub fn split(self) -> (String, SearchOutputParams) {
        (
            self.session_id,
            SearchOutputParams {
                session_id: None,
                pattern: self.pattern,
                ignore_case: self.ignore_case,
                context: self.context,
                order: self.order,
                limit: self.limit,
                cursor: self.cursor,
            },
        )
    }
}

/// `run_command`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCommandArgs {
    /// The session id or name; it must be a POSIX shell at its prompt.
    pub session_id: String,
    /// The command line, as typed at a shell prompt (`cd` and `export` persist).
    pub command: String,
    /// Seconds to wait for it (default 30, at most 300).
    pub timeout: Option<f64>,
}

impl RunCommandArgs {
    pub fn split(self) -> (String, RunCommandParams) {
        (
            self.session_id,
            RunCommandParams {
                session_id: None,
                command: self.command,
                timeout: self.timeout,
            },
        )
    }
}

/// `resize_terminal`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResizeArgs {
    /// The session id or name.
    pub session_id: String,
    /// Columns, clamped to 2..1000 (any integer is accepted).
    #[serde(deserialize_with = "saturating_u16")]
    #[schemars(with = "i64")]
    pub cols: u16,
    /// Rows, clamped to 2..500 (any integer is accepted).
    #[serde(deserialize_with = "saturating_u16")]
    #[schemars(with = "i64")]
    pub rows: u16,
}

/// A size given as any JSON number, saturated into `u16` (the session clamps it further): an
/// out-of-range size is clamped, as documented, never a parse error.
fn saturating_u16<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u16, D::Error> {
    let number = serde_json::Number::deserialize(d)?;
    let value = number
        .as_f64()
        .filter(|v| !v.is_nan())
        .ok_or_else(|| serde::de::Error::custom("a size is a number"))?;
    Ok(value.round().clamp(0.0, f64::from(u16::MAX)) as u16)
}

/// Tools that name a workflow.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NameArgs {
    /// The workflow's name (see workflow_list).
    pub name: String,
}

/// `workflow_draft_from_session`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DraftArgs {
    /// The shell session the procedure was done in (see list_terminal_sessions).
    pub session_id: String,
    /// The draft workflow's name: lowercase letters, digits and _.
    pub name: String,
    /// What the procedure does, for the draft's description.
    #[serde(default)]
    pub description: String,
}

/// `create_workflow` (the terminal-control seed's request).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
    /// The complete manifest as a JSON object (see get_workflow_schema).
    pub workflow_definition: Map<String, Value>,
    /// Replace a workflow of the same name.
    #[serde(default)]
    pub overwrite_existing: bool,
}

/// `workflow_validate`: a manifest, or (workrail) a step's output.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidateArgs {
    /// A manifest's text (YAML or JSON) to check without saving it.
    pub content: Option<String>,
    /// With `stepId` and `output`: the workflow whose step output is checked.
    #[serde(rename = "workflowId")]
    pub workflow_id: Option<String>,
    /// The step (state) whose validation rules apply.
    #[serde(rename = "stepId")]
    pub step_id: Option<String>,
    /// The step's output to check.
    pub output: Option<String>,
    /// Variables for rule conditions.
    #[serde(default)]
    pub context: Map<String, Value>,
}

/// `workflow_save`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveArgs {
    /// The manifest's text, YAML or JSON; it is stored under the name it declares.
    pub content: String,
    /// The version you read (workflow_get's `version`); the save fails with a version
    /// conflict if the file changed since.
    pub expected_version: Option<String>,
    /// Replace an existing workflow without giving `expected_version`.
    #[serde(default)]
    pub overwrite: bool,
}

/// `workflow_rename`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameArgs {
    pub name: String,
    pub new_name: String,
    pub expected_version: Option<String>,
}

/// `workflow_delete`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteArgs {
    pub name: String,
    pub expected_version: Option<String>,
}

/// `workflow_resolve_inputs`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InputsArgs {
    pub name: String,
    /// Values for the workflow's arguments.
    #[serde(default)]
    pub inputs: IndexMap<String, Value>,
    /// A session whose environment may already hold some arguments.
    pub session_id: Option<String>,
}

/// `workflow_preview_rendered`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenderArgs {
    pub name: String,
    /// Values for the workflow's arguments (defaults fill the rest).
    #[serde(default)]
    pub inputs: IndexMap<String, Value>,
}

/// `run_workflow`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    /// The workflow's name. Give this or `content`.
    pub workflow_name: Option<String>,
    /// A manifest's text to run without saving it.
    pub content: Option<String>,
    /// Run in this session (prepared by you); default: a new session, closed at the end.
    pub session_id: Option<String>,
    /// Values for the workflow's arguments (strings, numbers or booleans).
    #[serde(default)]
    pub inputs: IndexMap<String, Value>,
    /// true (default): wait and return the full result, with progress notifications per
    /// state. false: return the run_id at once; follow with run_status or run_events.
    pub wait: Option<bool>,
    /// Keep the run's own session open at the end.
    #[serde(default)]
    pub keep_session: bool,
    /// Run on this host, through ssh: the run's terminal opens there and every step works
    /// as locally (a name, user@host or an alias of the ssh config). Default: the
    /// workflow's `host:`, else this machine. Not together with `session_id`. A list of
    /// hosts (or a group of the folder's hosts.conf) runs the workflow on each at once: a
    /// fleet, answered with one result per host.
    pub on: Option<OnHosts>,
    /// A fleet's runs at once, at most (default 8).
    #[schemars(range(min = 1, max = 256))]
    pub parallel: Option<usize>,
}

/// `on`: one host, or several.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OnHosts {
    One(String),
    Many(Vec<String>),
}

/// Tools that name a run.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunIdArgs {
    pub run_id: String,
}

/// `run_events`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunEventsArgs {
    pub run_id: String,
    /// Return events after this sequence number (0 = from the start); pass the previous
    /// answer's `next_cursor`.
    #[serde(default)]
    pub after: u64,
    /// Most events to return (default 100).
    pub limit: Option<usize>,
    /// Seconds to wait for a new event when there is none yet (default 10, at most 60).
    pub wait_seconds: Option<f64>,
}

/// `run_list`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunListArgs {
    /// Only this workflow's runs.
    pub workflow_name: Option<String>,
    /// Most runs to return (default 50).
    pub limit: Option<usize>,
}

/// `run_feedback` (FastWorkflow's feedback: a score, a text, or both).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedbackArgs {
    pub run_id: String,
    /// A score, e.g. 1 for good and 0 for bad, or any number.
    pub score: Option<f64>,
    /// Feedback in words.
    pub text: Option<String>,
}

/// `workflow_purge_history`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PurgeArgs {
    /// Only this workflow's runs (default: all). Runs in progress are kept.
    pub workflow_name: Option<String>,
}

/// `workflow_next` (workrail's request, plus answering a live run's prompt).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NextArgs {
    /// The workflow.
    #[serde(rename = "workflowId")]
    pub workflow_id: String,
    /// Steps (states) already done.
    #[serde(default, rename = "completedSteps")]
    pub completed_steps: Vec<String>,
    /// The step in progress, if any.
    #[serde(rename = "currentStep")]
    pub current_step: Option<String>,
    /// Variables for steps' `when` conditions.
    #[serde(default)]
    pub context: Map<String, Value>,
    /// A live run paused at a `prompt` step: with `answer`, answers it.
    pub run_id: Option<String>,
    /// The answer for the paused prompt of `run_id`.
    pub answer: Option<String>,
}

/// An input value as text: numbers and booleans are written the way the shell will see them.
pub fn input_text(value: &Value) -> Result<String, String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        other => Err(format!(
            "input values are strings, numbers or booleans, not {other}"
        )),
    }
}

/// All input values as text.
pub fn inputs_text(inputs: &IndexMap<String, Value>) -> Result<IndexMap<String, String>, String> {
    inputs
        .iter()
        .map(|(k, v)| {
            input_text(v)
                .map(|t| (k.clone(), t))
                .map_err(|e| format!("{k}: {e}"))
        })
        .collect()
}
