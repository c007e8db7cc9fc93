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
    /// Default: your $SHELL.
    pub shell: Option<String>,
    /// A program to run instead of a shell, e.g. ["python3", "-q"].
    pub command: Option<Vec<String>>,
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: IndexMap<String, String>,
    /// Default 120.
    pub cols: Option<u16>,
    /// Default 30.
    pub rows: Option<u16>,
    /// A label usable instead of the id.
    pub name: Option<String>,
    /// Open the shell on this ssh host (name, user@host or ssh config alias); every tool
    /// works there as here.
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
    /// The session id or name.
    pub session_id: String,
}

/// `send_input`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendInputArgs {
    /// The session id or name.
    pub session_id: String,
    /// Text to type: "\n" is Enter, "\u0003" Ctrl-C.
    pub input_text: Option<String>,
    /// Or keys to press in order.
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
    /// Default `screen`; `tail` gives the last `lines`, `since_input` the output since your
    /// last input.
    pub content_mode: Option<ContentMode>,
    /// Default 50.
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
    /// Regex (multi-line).
    pub pattern: Option<String>,
    /// Then (or instead) wait until output has been quiet this long: for full-screen programs.
    pub quiet_ms: Option<u64>,
    /// `screen`: quiet means the screen's text is unchanged (for programs that redraw).
    pub quiet_on: Option<QuietOn>,
    /// Seconds (default 30; the server's wait ceiling at most).
    pub timeout: Option<f64>,
    /// Regexes that end the wait with outcome `stopped`.
    #[serde(default)]
    pub stop_patterns: Vec<String>,
    /// Default `last_input` (output after your last input, not its echo).
    pub since: Option<Since>,
    /// Instead: until the shell is back at its prompt (after a program you typed into ends).
    #[serde(default)]
    pub shell_prompt: bool,
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
                shell_prompt: self.shell_prompt,
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
    /// Regex matched against each line, e.g. "error|failed".
    pub pattern: String,
    #[serde(default)]
    pub ignore_case: bool,
    /// Lines around each hit (default 0).
    pub context: Option<u32>,
    pub order: Option<SearchOrder>,
    /// Hits in a page (default 20).
    pub limit: Option<u32>,
    /// The previous answer's `next_cursor`.
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
    /// A POSIX shell session at its prompt.
    pub session_id: String,
    pub command: String,
    /// Seconds (default 30; the server's wait ceiling at most).
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
    #[serde(deserialize_with = "saturating_u16")]
    #[schemars(with = "i64")]
    pub cols: u16,
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
    /// See workflow_list.
    pub name: String,
}

/// `workflow_draft_from_session`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DraftArgs {
    /// The shell session the procedure was done in.
    pub session_id: String,
    /// Lowercase letters, digits and _.
    pub name: String,
    #[serde(default)]
    pub description: String,
}

/// `create_workflow` (the terminal-control seed's request).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
    /// The manifest (see get_workflow_schema).
    pub workflow_definition: Map<String, Value>,
    #[serde(default)]
    pub overwrite_existing: bool,
}

/// `workflow_validate`: a manifest, or (workrail) a step's output.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidateArgs {
    /// A manifest's text (YAML or JSON).
    pub content: Option<String>,
    /// With `stepId` and `output`: check a step's output.
    #[serde(rename = "workflowId")]
    pub workflow_id: Option<String>,
    #[serde(rename = "stepId")]
    pub step_id: Option<String>,
    pub output: Option<String>,
    #[serde(default)]
    pub context: Map<String, Value>,
}

/// `workflow_save`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveArgs {
    /// YAML or JSON; stored under the name it declares.
    pub content: String,
    /// workflow_get's `version`: fail if the file changed since.
    pub expected_version: Option<String>,
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
    #[serde(default)]
    pub inputs: IndexMap<String, Value>,
    /// A session whose environment may hold some arguments.
    pub session_id: Option<String>,
}

/// `workflow_preview_rendered`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenderArgs {
    pub name: String,
    #[serde(default)]
    pub inputs: IndexMap<String, Value>,
}

/// `run_workflow`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    /// Or `content`, a manifest's text.
    pub workflow_name: Option<String>,
    pub content: Option<String>,
    /// Run in this session (default: a new one, closed at the end).
    pub session_id: Option<String>,
    /// The workflow's arguments (strings, numbers or booleans).
    #[serde(default)]
    pub inputs: IndexMap<String, Value>,
    /// false: return the run_id at once.
    pub wait: Option<bool>,
    #[serde(default)]
    pub keep_session: bool,
    /// An ssh host to run on; a list or a hosts.conf group runs on each (a fleet).
    pub on: Option<OnHosts>,
    /// A fleet's runs at once (default 8).
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
    /// The previous answer's `next_cursor` (0: from the start).
    #[serde(default)]
    pub after: u64,
    /// Default 100.
    pub limit: Option<usize>,
    /// Seconds to wait for a new event (default 10; the server's wait ceiling at most).
    pub wait_seconds: Option<f64>,
}

/// `run_list`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunListArgs {
    pub workflow_name: Option<String>,
    /// Default 50.
    pub limit: Option<usize>,
}

/// `attention`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttentionArgs {
    /// Ids of `failed` or `done` items you have seen: cleared for everyone.
    #[serde(default)]
    pub ack: Vec<String>,
}

/// `run_feedback` (FastWorkflow's feedback: a score, a text, or both).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedbackArgs {
    pub run_id: String,
    /// E.g. 1 good, 0 bad.
    pub score: Option<f64>,
    pub text: Option<String>,
}

/// `workflow_purge_history`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PurgeArgs {
    /// Default: all workflows.
    pub workflow_name: Option<String>,
}

/// `workflow_next` (workrail's request, plus answering a live run's prompt).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NextArgs {
    #[serde(rename = "workflowId")]
    pub workflow_id: String,
    /// Guided: the steps done.
    #[serde(default, rename = "completedSteps")]
    pub completed_steps: Vec<String>,
    #[serde(rename = "currentStep")]
    pub current_step: Option<String>,
    /// Guided: variables for `when` conditions.
    #[serde(default)]
    pub context: Map<String, Value>,
    /// A run waiting at a prompt step.
    pub run_id: Option<String>,
    /// The answer to its prompt.
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
