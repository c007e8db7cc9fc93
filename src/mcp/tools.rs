//! The static tools: their names, toolsets, descriptions, honest annotations, argument and
//! output schemas, and the dispatch of each to one engine method.

// A tool error is built at most once per failed call and returned straight to the client;
// boxing it would buy nothing but indirection.
#![allow(clippy::result_large_err)]

use super::args::*;
use super::errors::ToolError;
use crate::engine::authoring::{
    Created, InputPreview, InputResolution, ManifestValidation, Next, RenderedPreview,
    WorkflowDocument, WorkflowList,
};
use crate::engine::run::{FeedbackRecorded, Purged, RunEvents, RunList, WorkflowSource};
use crate::engine::{
    Actor, AwaitOutput, Change, ClosedSession, CommandOutput, Engine, EngineEvent, Resized,
    RunEvent, RunRequest, RunResult, RunStatus, Saved, ScreenContent, SearchResult, SentInput,
    SessionInfo, SessionList,
};
use crate::workflow::action::ToolName;
use crate::workflow::plan::Plan;
use crate::workflow::rules::RuleOutcome;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Groups of tools a user switches on and off (`--toolsets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Toolset {
    Terminal,
    Authoring,
    Runs,
    Guided,
    Dynamic,
}

impl Toolset {
    pub const ALL: [Toolset; 5] = [
        Toolset::Terminal,
        Toolset::Authoring,
        Toolset::Runs,
        Toolset::Guided,
        Toolset::Dynamic,
    ];

    pub fn parse(name: &str) -> Option<Toolset> {
        Toolset::ALL.into_iter().find(|t| t.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Toolset::Terminal => "terminal",
            Toolset::Authoring => "authoring",
            Toolset::Runs => "runs",
            Toolset::Guided => "guided",
            Toolset::Dynamic => "dynamic",
        }
    }
}

/// How a tool behaves, for clients deciding what to allow.
#[derive(Debug, Clone, Copy)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

const READ: Hints = Hints {
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
};
const WAIT: Hints = Hints {
    read_only: true,
    destructive: false,
    idempotent: false,
    open_world: false,
};
const WRITE: Hints = Hints {
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
};
const REPLACE: Hints = Hints {
    read_only: false,
    destructive: true,
    idempotent: true,
    open_world: false,
};
const REMOVE: Hints = Hints {
    read_only: false,
    destructive: true,
    idempotent: false,
    open_world: false,
};
const EXECUTE: Hints = Hints {
    read_only: false,
    destructive: true,
    idempotent: false,
    open_world: true,
};

/// A static tool.
#[derive(Debug, Clone)]
pub struct ToolDef {
    pub name: &'static str,
    pub toolset: Toolset,
    pub title: &'static str,
    pub description: &'static str,
    pub hints: Hints,
    pub schema: fn() -> JsonObject,
    /// What a successful call returns as `structuredContent`; clients validate it.
    pub output_schema: fn() -> JsonObject,
}

/// The JSON Schema of an argument type, as an object schema.
pub fn schema_of<T: JsonSchema>() -> JsonObject {
    let schema = schemars::schema_for!(T);
    let mut value = serde_json::to_value(&schema).unwrap_or_else(|_| json!({"type": "object"}));
    portable(&mut value);
    if let Some(object) = value.as_object_mut() {
        object.remove("$schema");
        object.entry("type").or_insert_with(|| json!("object"));
        if !object.contains_key("properties") {
            object.insert("properties".into(), json!({}));
        }
    }
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

/// The JSON Schema of a result type, for the serialize contract: it describes the JSON the
/// type writes (an `Option` without `skip_serializing_if` is always there, as a value or
/// null), which is what a client checks `structuredContent` against.
pub fn output_schema_of<T: JsonSchema>() -> JsonObject {
    let generator = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    let mut value = generator.into_root_schema_for::<T>().to_value();
    portable(&mut value);
    match value {
        Value::Object(mut object) => {
            object.remove("$schema");
            object
        }
        // Only a type that accepts anything has a boolean schema; no result type does, and
        // the catalog test would catch an empty schema.
        _ => JsonObject::new(),
    }
}

/// Makes a generated schema read the same by every client's validator: schemars' integer
/// formats (`uint32`, ...) are no JSON Schema formats, and Ajv (the TypeScript SDK's
/// validator) logs a warning for each on every call; a bare `true` subschema is refused by
/// strict checkers such as the Inspector's `--strict`, where `{}` means the same.
pub fn portable(schema: &mut Value) {
    const SUBSCHEMA: [&str; 8] = [
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "unevaluatedProperties",
    ];
    const SUBSCHEMA_LISTS: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];
    const SUBSCHEMA_MAPS: [&str; 4] = ["properties", "$defs", "definitions", "patternProperties"];
    let Value::Object(object) = schema else {
        return;
    };
    if object
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| {
            matches!(
                f,
                "uint"
                    | "uint8"
                    | "uint16"
                    | "uint32"
                    | "uint64"
                    | "uint128"
                    | "int8"
                    | "int16"
                    | "int128"
            )
        })
    {
        object.remove("format");
    }
    let mut fix = |sub: &mut Value| {
        if *sub == Value::Bool(true) {
            *sub = json!({});
        }
        portable(sub);
    };
    for key in SUBSCHEMA {
        if let Some(sub) = object.get_mut(key) {
            fix(sub);
        }
    }
    for key in SUBSCHEMA_LISTS {
        if let Some(Value::Array(list)) = object.get_mut(key) {
            list.iter_mut().for_each(&mut fix);
        }
    }
    for key in SUBSCHEMA_MAPS {
        if let Some(Value::Object(map)) = object.get_mut(key) {
            map.values_mut().for_each(&mut fix);
        }
    }
}

/// The output schema of `run_workflow` and of every `wf_<name>` tool, generated once: the
/// dynamic tools are listed again whenever the folder changes.
pub fn run_output_schema() -> Arc<JsonObject> {
    static SCHEMA: std::sync::LazyLock<Arc<JsonObject>> =
        std::sync::LazyLock::new(|| Arc::new(output_schema_of::<RunOutcome>()));
    SCHEMA.clone()
}

macro_rules! tool {
    ($name:literal, $set:ident, $title:literal, $hints:expr, $args:ty => $out:ty, $desc:literal) => {
        ToolDef {
            name: $name,
            toolset: Toolset::$set,
            title: $title,
            description: $desc,
            hints: $hints,
            schema: schema_of::<$args>,
            output_schema: output_schema_of::<$out>,
        }
    };
}

/// The answer to `get_workflow_schema`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WorkflowSchema {
    /// The manifest JSON Schema (draft 2020-12).
    pub schema: Value,
    /// The step tools a manifest's states can call.
    pub tools: Vec<StepTool>,
    /// Where the full manifest reference is.
    pub reference: &'static str,
}

/// A step tool a manifest can use, with the schema of its `params`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StepTool {
    pub tool: ToolName,
    pub summary: &'static str,
    pub params_schema: Value,
}

/// The answer to `workflow_validate`: a manifest's violations, or (with `workflowId`, `stepId`
/// and `output`) workrail's verdict on a step's output.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
// MCP wants an object at the root of an output schema; both shapes are objects.
#[schemars(extend("type" = "object"))]
pub enum Validation {
    Manifest(ManifestValidation),
    StepOutput(RuleOutcome),
}

/// The answer to `run_workflow` and `wf_<name>`: the run's result when the call waited for it
/// (`wait: true`, the default), else the run as it started.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
// MCP wants an object at the root of an output schema; both shapes are objects.
#[schemars(extend("type" = "object"))]
pub enum RunOutcome {
    Finished(Box<RunResult>),
    Started(Box<RunStarted>),
}

/// The answer to a call with `wait: false`: the run's id and status at once; follow it with
/// `run_events` or `run_status`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RunStarted {
    pub run_id: String,
    /// Its status when the call returned.
    pub status: RunStatus,
}

/// Every static tool.
#[expect(clippy::too_many_lines, reason = "issue 23 splits it by its jobs")]
pub fn catalog() -> Vec<ToolDef> {
    vec![
        tool!(
            "open_terminal",
            Terminal,
            "Open a terminal",
            EXECUTE,
            OpenTerminalArgs => SessionInfo,
            "Open a terminal session on a real PTY: your shell by default, or `command` (e.g. [\"python3\",\"-q\"], [\"ssh\",\"-tt\",\"host\"]). Returns its session_id. For a shell, returns once its prompt is up. Close it with exit_terminal when done."
        ),
        tool!(
            "send_input",
            Terminal,
            "Type into a terminal",
            EXECUTE,
            SendInputArgs => SentInput,
            "Type text (input_text, \"\\n\" is Enter) or press keys into a session. Returns at once; use await_output to wait for what the program prints."
        ),
        tool!(
            "get_screen_content",
            Terminal,
            "Read a terminal",
            READ,
            ScreenArgs => ScreenContent,
            "Read a session as plain text: the visible screen (default), its history, the last N lines, or the output since the last input."
        ),
        tool!(
            "search_output",
            Terminal,
            "Search a terminal's output",
            READ,
            SearchOutputArgs => SearchResult,
            "Find the lines of a session's output that match a regex: its whole retained history (the last 10,000 lines), and the screen of a full-screen program (vim, less, top) while one is in front. The newest hit first by default, each with its line number (which stays the same as older history is dropped), column, matched text and optional context lines. Pass next_cursor back as cursor for the next page. Use it to find an error that scrolled away instead of reading the whole history."
        ),
        tool!(
            "await_output",
            Terminal,
            "Wait for output",
            WAIT,
            AwaitArgs => AwaitOutput,
            "Wait until a session's output matches a regex (or a stop pattern matches, or time runs out, or the program exits). By default only output after your last input counts, never its echo, and nothing that scrolled away is missed. Returns outcome matched|stopped|timeout|exited, the matched text and line, regex groups and the last lines."
        ),
        tool!(
            "list_terminal_sessions",
            Terminal,
            "List terminals",
            READ,
            NoArgs => SessionList,
            "List the open terminal sessions: id, name, command, size, whether it is running or its exit status."
        ),
        tool!(
            "exit_terminal",
            Terminal,
            "Close a terminal",
            REMOVE,
            SessionArgs => ClosedSession,
            "Close a session and end every process it started (SIGHUP/SIGTERM, then SIGKILL)."
        ),
        tool!(
            "run_command",
            Terminal,
            "Run a shell command",
            EXECUTE,
            RunCommandArgs => CommandOutput,
            "Run a command line in a session's shell and wait for it to finish: returns exit_code and output. The session must be a POSIX shell at its prompt; `cd` and `export` persist."
        ),
        tool!(
            "resize_terminal",
            Terminal,
            "Resize a terminal",
            Hints {
                idempotent: true,
                ..WRITE
            },
            ResizeArgs => Resized,
            "Resize a session (the program gets SIGWINCH). Sizes out of range are clamped."
        ),
        tool!(
            "get_workflow_schema",
            Authoring,
            "Workflow schema",
            READ,
            NoArgs => WorkflowSchema,
            "The manifest JSON Schema and the list of step tools with their parameters: read this before writing a workflow."
        ),
        tool!(
            "create_workflow",
            Authoring,
            "Create a workflow",
            REPLACE,
            CreateArgs => Created,
            "Validate a workflow definition (a JSON object) and store it as <name>.json. Invalid definitions are not stored: fix the validation_errors (each with its path) and call again."
        ),
        tool!(
            "workflow_list",
            Authoring,
            "List workflows",
            READ,
            NoArgs => WorkflowList,
            "The workflows of the folder: name, file, valid/warnings/invalid, description, states, version, runs and last result."
        ),
        tool!(
            "workflow_get",
            Authoring,
            "Get a workflow",
            READ,
            NameArgs => WorkflowDocument,
            "A workflow's file: content, parsed JSON, format, path, version (SHA-256; pass it to workflow_save as expected_version) and violations."
        ),
        tool!(
            "workflow_validate",
            Authoring,
            "Validate",
            READ,
            ValidateArgs => Validation,
            "Validate a manifest's text (content) without saving it: every violation with rule, path, line and column. Or, with workflowId, stepId and output, check a step's output against that step's rules: {valid, issues, suggestions}."
        ),
        tool!(
            "workflow_save",
            Authoring,
            "Save a workflow",
            REPLACE,
            SaveArgs => Saved,
            "Save a manifest's text (YAML or JSON) under the name it declares, atomically. Give expected_version (from workflow_get) to fail with a version conflict if someone changed it meanwhile."
        ),
        tool!(
            "workflow_rename",
            Authoring,
            "Rename a workflow",
            REMOVE,
            RenameArgs => Saved,
            "Rename a workflow: its `name` and its file. Comments and layout are kept. Refused while it runs."
        ),
        tool!(
            "workflow_delete",
            Authoring,
            "Delete a workflow",
            REMOVE,
            DeleteArgs => Saved,
            "Delete a workflow's file. Refused while it runs; give expected_version to be sure you delete what you read."
        ),
        tool!(
            "workflow_preview_inputs",
            Authoring,
            "Workflow inputs",
            READ,
            NameArgs => InputPreview,
            "The inputs a workflow takes (type, required, default, choices, pattern, secret) and the values it returns."
        ),
        tool!(
            "workflow_resolve_inputs",
            Authoring,
            "Check inputs",
            READ,
            InputsArgs => InputResolution,
            "Check inputs for a run without running it: ready, required_missing, invalid, and the values a run would use (reading the session's environment when session_id is given)."
        ),
        tool!(
            "workflow_preview_rendered",
            Authoring,
            "Preview a run",
            READ,
            RenderArgs => RenderedPreview,
            "What each step would type or run, with $VARIABLES replaced by the inputs and defaults. Nothing is executed."
        ),
        tool!(
            "workflow_step_plan",
            Authoring,
            "Step plan",
            READ,
            NameArgs => Plan,
            "A workflow's states in run order with their actions and transitions, and which are reachable."
        ),
        tool!(
            "run_workflow",
            Runs,
            "Run a workflow",
            EXECUTE,
            RunArgs => RunOutcome,
            "Run a workflow (by workflow_name, or a manifest's content) with inputs, in a new session (closed at the end) or in session_id. wait=true (default) returns the full result (final_state, return_values, execution_log) and sends progress per state; wait=false returns the run_id at once."
        ),
        tool!(
            "run_status",
            Runs,
            "Run status",
            READ,
            RunIdArgs => RunStatus,
            "A run's status: running, waiting_for_input (with the question), or finished (with the result)."
        ),
        tool!(
            "run_events",
            Runs,
            "Run events",
            WAIT,
            RunEventsArgs => RunEvents,
            "A run's journal from a cursor, waiting up to wait_seconds for new events: the way to follow a long run. Pass next_cursor as `after` next time."
        ),
        tool!(
            "run_list",
            Runs,
            "Run history",
            READ,
            RunListArgs => RunList,
            "Runs in progress and the history, newest first, of one workflow or all."
        ),
        tool!(
            "workflow_cancel",
            Runs,
            "Cancel a run",
            REMOVE,
            RunIdArgs => RunStatus,
            "Cancel a run: the step in progress is interrupted and its processes killed. Returns its final status."
        ),
        tool!(
            "run_feedback",
            Runs,
            "Rate a run",
            WRITE,
            FeedbackArgs => FeedbackRecorded,
            "Attach feedback to a run: a score, a text, or both."
        ),
        tool!(
            "workflow_purge_history",
            Runs,
            "Purge run history",
            REMOVE,
            PurgeArgs => Purged,
            "Delete the run history of one workflow or all. Runs in progress are kept."
        ),
        tool!(
            "workflow_next",
            Guided,
            "Next step",
            WRITE,
            NextArgs => Next,
            "Guided workflows: the next step given the completed steps and a context, with its prompt and validation criteria. With run_id and answer, answers that run's paused prompt step (check with run_status first)."
        ),
    ]
}

/// What a tool call may use besides its arguments.
pub struct CallContext {
    pub cancel: CancellationToken,
    /// Reports progress (done, message) when the client asked for it.
    pub progress: Option<Box<dyn Fn(f64, String) + Send + Sync>>,
    /// The agent making the call.
    pub actor: Actor,
    /// The connection asked for approval mode (`--approve agent-runs`).
    pub require_approval: bool,
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("cancelled", &self.cancel.is_cancelled())
            .field("progress", &self.progress.is_some())
            .field("actor", &self.actor)
            .finish()
    }
}

fn parse<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        ToolError::invalid_arguments(tool, e.into_inner()).with("path", path)
    })
}

/// A result as `structuredContent`, which MCP wants to be an object. Every result type is a
/// struct; anything else is a flowdeck bug, reported as one rather than sent against the
/// tool's output schema.
fn ok<T: Serialize>(value: T) -> Result<JsonObject, ToolError> {
    match serde_json::to_value(value) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(other) => Err(ToolError::internal(format!(
            "a tool result is not a JSON object: {other}"
        ))),
        Err(e) => Err(ToolError::internal(e.to_string())),
    }
}

/// Runs engine work that may wait for the disk (an fsync, the folder's lock file, a journal
/// read) on tokio's blocking pool. The runtime has two workers, which every agent's calls
/// share: on them, twenty saves to a slow disk would stall everyone's `list_terminal_sessions`.
/// A panic in `work` goes on unwinding, into the call's own task (server.rs `caught`).
async fn off_runtime<T: Send + 'static>(
    engine: &Arc<Engine>,
    work: impl FnOnce(&Engine) -> T + Send + 'static,
) -> T {
    let engine = engine.clone();
    match tokio::task::spawn_blocking(move || work(&engine)).await {
        Ok(done) => done,
        Err(e) => match e.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            // The runtime is shutting down; nothing is left to answer.
            Err(e) => std::panic::panic_any(format!("the blocking pool ended: {e}")),
        },
    }
}

/// Runs a static tool.
#[expect(clippy::too_many_lines, reason = "issue 23 splits it by its jobs")]
pub async fn call(
    engine: &Arc<Engine>,
    name: &str,
    args: Value,
    cx: &CallContext,
) -> Result<JsonObject, ToolError> {
    let e = engine;
    match name {
        "open_terminal" => {
            let a: OpenTerminalArgs = parse(name, args)?;
            ok(e.open_terminal(&a.into(), &cx.actor).await?)
        }
        "send_input" => {
            let (id, p) = parse::<SendInputArgs>(name, args)?.split();
            ok(e.send_input(&id, &p, &cx.actor)?)
        }
        "get_screen_content" => {
            let (id, p) = parse::<ScreenArgs>(name, args)?.split();
            ok(e.get_screen_content(&id, &p, &cx.actor)?)
        }
        "search_output" => {
            let (id, p) = parse::<SearchOutputArgs>(name, args)?.split();
            ok(e.search_output(&id, &p)?)
        }
        "await_output" => {
            let (id, p) = parse::<AwaitArgs>(name, args)?.split();
            ok(e.await_output(&id, &p, None, &cx.actor).await?)
        }
        "list_terminal_sessions" => ok(e.list_terminal_sessions()),
        "exit_terminal" => {
            let a: SessionArgs = parse(name, args)?;
            ok(e.exit_terminal(&a.session_id, &cx.actor).await?)
        }
        "run_command" => {
            let (id, p) = parse::<RunCommandArgs>(name, args)?.split();
            ok(e.run_command(&id, &p, None, &cx.actor).await?)
        }
        "resize_terminal" => {
            let a: ResizeArgs = parse(name, args)?;
            ok(e.resize_terminal(&a.session_id, a.cols, a.rows, &cx.actor)?)
        }
        "get_workflow_schema" => ok(WorkflowSchema {
            schema: crate::workflow::schema::workflow_schema().clone(),
            tools: step_tools(),
            reference: "flowdeck://spec (the manifest reference, with examples)",
        }),
        "create_workflow" => {
            let a: CreateArgs = parse(name, args)?;
            let actor = cx.actor.clone();
            ok(off_runtime(e, move |e| {
                e.create_workflow(
                    Value::Object(a.workflow_definition),
                    a.overwrite_existing,
                    &actor,
                )
            })
            .await?)
        }
        "workflow_list" => ok(e.workflow_list()),
        "workflow_get" => ok(e.workflow_get(&parse::<NameArgs>(name, args)?.name)?),
        "workflow_validate" => {
            let a: ValidateArgs = parse(name, args)?;
            match (a.content, a.workflow_id, a.step_id, a.output) {
                (Some(content), None, None, None) => {
                    ok(Validation::Manifest(e.validate_manifest(&content)))
                }
                (None, Some(w), Some(step), Some(output)) => ok(Validation::StepOutput(
                    e.validate_step_output(&w, &step, &output, &a.context)?,
                )),
                _ => Err(ToolError::invalid_arguments(
                    name,
                    "give `content`, or `workflowId`, `stepId` and `output`",
                )),
            }
        }
        "workflow_save" => {
            let a: SaveArgs = parse(name, args)?;
            let actor = cx.actor.clone();
            ok(off_runtime(e, move |e| {
                e.workflow_save(
                    &a.content,
                    a.expected_version.as_deref(),
                    a.overwrite,
                    &actor,
                )
            })
            .await?)
        }
        "workflow_rename" => {
            let a: RenameArgs = parse(name, args)?;
            let actor = cx.actor.clone();
            ok(off_runtime(e, move |e| {
                e.workflow_rename(&a.name, &a.new_name, a.expected_version.as_deref(), &actor)
            })
            .await?)
        }
        "workflow_delete" => {
            let a: DeleteArgs = parse(name, args)?;
            let actor = cx.actor.clone();
            ok(off_runtime(e, move |e| {
                e.workflow_delete(&a.name, a.expected_version.as_deref(), &actor)
            })
            .await?)
        }
        "workflow_preview_inputs" => {
            ok(e.workflow_preview_inputs(&parse::<NameArgs>(name, args)?.name)?)
        }
        "workflow_resolve_inputs" => {
            let a: InputsArgs = parse(name, args)?;
            let inputs =
                inputs_text(&a.inputs).map_err(|m| ToolError::invalid_arguments(name, m))?;
            ok(
                e.workflow_resolve_inputs(&a.name, &inputs, a.session_id.as_deref(), &cx.actor)
                    .await?,
            )
        }
        "workflow_preview_rendered" => {
            let a: RenderArgs = parse(name, args)?;
            let inputs =
                inputs_text(&a.inputs).map_err(|m| ToolError::invalid_arguments(name, m))?;
            ok(e.workflow_preview_rendered(&a.name, &inputs)?)
        }
        "workflow_step_plan" => ok(e.workflow_step_plan(&parse::<NameArgs>(name, args)?.name)?),
        "run_workflow" => {
            let a: RunArgs = parse(name, args)?;
            let source = match (a.workflow_name, a.content) {
                (Some(n), None) => WorkflowSource::Name(n),
                (None, Some(c)) => WorkflowSource::Inline(c),
                _ => {
                    return Err(ToolError::invalid_arguments(
                        name,
                        "give `workflow_name` or `content`",
                    ));
                }
            };
            let inputs =
                inputs_text(&a.inputs).map_err(|m| ToolError::invalid_arguments(name, m))?;
            let request = RunRequest {
                workflow: source,
                session_id: a.session_id,
                inputs,
                keep_session: a.keep_session,
                actor: cx.actor.clone(),
                require_approval: cx.require_approval,
            };
            run(e, request, a.wait.unwrap_or(true), cx).await
        }
        "run_status" => {
            let a: RunIdArgs = parse(name, args)?;
            ok(off_runtime(e, move |e| e.run_status(&a.run_id)).await?)
        }
        "run_events" => {
            let a: RunEventsArgs = parse(name, args)?;
            // Out-of-range values are the engine's to bound; only NaN and negatives are cut here,
            // as no Duration can hold them.
            let wait = a.wait_seconds.unwrap_or(10.0);
            let wait = Duration::from_secs_f64(if wait.is_finite() {
                wait.clamp(0.0, 3600.0)
            } else {
                0.0
            });
            ok(
                e.run_events(&a.run_id, a.after, a.limit.unwrap_or(100), wait)
                    .await?,
            )
        }
        "run_list" => {
            let a: RunListArgs = parse(name, args)?;
            ok(off_runtime(e, move |e| {
                e.run_list(a.workflow_name.as_deref(), a.limit.unwrap_or(50))
            })
            .await)
        }
        "workflow_cancel" => ok(e
            .cancel_run(&parse::<RunIdArgs>(name, args)?.run_id, &cx.actor)
            .await?),
        "run_feedback" => {
            let a: FeedbackArgs = parse(name, args)?;
            ok(e.run_feedback(&a.run_id, a.score, a.text, &cx.actor)
                .await?)
        }
        "workflow_purge_history" => ok(e
            .purge_history(
                parse::<PurgeArgs>(name, args)?.workflow_name.as_deref(),
                &cx.actor,
            )
            .await),
        "workflow_next" => {
            let a: NextArgs = parse(name, args)?;
            let answer = match (a.run_id.as_deref(), a.answer) {
                (Some(run), Some(answer)) => Some((run, answer)),
                (None, None) => None,
                _ => {
                    return Err(ToolError::invalid_arguments(
                        name,
                        "give `run_id` and `answer` together",
                    ));
                }
            };
            ok(e.workflow_next(
                &a.workflow_id,
                &a.completed_steps,
                &a.context,
                answer,
                &cx.actor,
            )?)
        }
        _ => Err(ToolError::new(
            "UNKNOWN_TOOL",
            -32005,
            "not_found",
            format!("no tool `{name}`"),
        )),
    }
}

/// The step tools a manifest can use, with their parameter schemas.
pub fn step_tools() -> Vec<StepTool> {
    let schema = crate::workflow::schema::workflow_schema();
    ToolName::ALL
        .iter()
        .map(|t| StepTool {
            tool: *t,
            summary: t.summary(),
            params_schema: params_schema(schema, *t),
        })
        .collect()
}

/// The parameter schema of one step tool, taken from the published manifest schema.
fn params_schema(schema: &Value, tool: ToolName) -> Value {
    schema
        .pointer("/$defs/Action/allOf")
        .and_then(Value::as_array)
        .and_then(|branches| {
            branches
                .iter()
                .find(|b| b.pointer("/if/properties/tool/const") == Some(&json!(tool.as_str())))
        })
        .and_then(|b| b.pointer("/then/properties/params"))
        .cloned()
        .unwrap_or(Value::Null)
}

/// Runs a workflow for a tool call: waits (with progress) or returns the run id at once. A
/// cancelled call cancels the run it started.
pub async fn run(
    engine: &Arc<Engine>,
    request: RunRequest,
    wait: bool,
    cx: &CallContext,
) -> Result<JsonObject, ToolError> {
    if !wait {
        let started = engine.start_run(request).await?;
        return ok(RunOutcome::Started(Box::new(RunStarted {
            status: started.status(),
            run_id: started.run_id,
        })));
    }
    let mut events = engine.subscribe();
    // Followed: if this call goes away before the end, the run is cancelled.
    let followed = engine.follow_run(request).await?;
    let run_id = followed.run_id().to_string();
    let finished = followed.finished();
    tokio::pin!(finished);
    let mut step = 0.0;
    loop {
        tokio::select! {
            result = &mut finished => {
                // Approval mode stopped it: a security error, not a run that failed.
                if result.final_state == crate::engine::FinalState::NotApproved {
                    return Err(ToolError::not_approved(
                        &result.workflow_name,
                        Some(&result.run_id),
                        result.error.clone().unwrap_or_default(),
                    ));
                }
                return ok(RunOutcome::Finished(Box::new(result)));
            }
            () = cx.cancel.cancelled() => {
                let _ = engine.cancel_run(&run_id, &cx.actor).await;
                return Err(ToolError::cancelled("run_workflow").with("run_id", run_id));
            }
            event = events.recv() => {
                if let (Ok(EngineEvent { change: Change::Run { run_id: id, line: RunEvent::StepStarted { state, tool, .. }, .. }, .. }), Some(progress)) = (&event, &cx.progress)
                    && *id == run_id
                {
                    step += 1.0;
                    progress(step, format!("{state} ({tool})"));
                }
                if let (Ok(EngineEvent { change: Change::ApprovalRequested { run_id: id, workflow, .. }, .. }), Some(progress)) = (&event, &cx.progress)
                    && *id == run_id
                {
                    progress(step, format!("waiting for a person to approve the run of {workflow} in the studio (approval mode)"));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value of the type a property's schema asks for.
    fn sample(schema: &Value) -> Value {
        let kind = schema
            .get("type")
            .and_then(|t| t.as_str().or_else(|| t.as_array()?.first()?.as_str()));
        match kind {
            Some("string") => json!("zz_sample"),
            Some("integer") | Some("number") => json!(1),
            Some("boolean") => json!(true),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ => json!("zz_sample"),
        }
    }

    #[tokio::test]
    async fn every_listed_tool_is_dispatched_and_takes_every_argument_it_lists() {
        let dir = tempfile::tempdir().expect("a folder");
        let engine = Engine::open(
            dir.path(),
            crate::engine::EngineConfig {
                watch: false,
                ..crate::engine::EngineConfig::default()
            },
        )
        .expect("an engine");
        for tool in catalog() {
            let schema = Value::Object((tool.schema)());
            let args: serde_json::Map<String, Value> = schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|props| props.iter().map(|(k, v)| (k.clone(), sample(v))).collect())
                .unwrap_or_default();
            let cx = CallContext {
                cancel: CancellationToken::new(),
                progress: None,
                actor: Actor::Cli,
                require_approval: false,
            };
            let outcome = tokio::time::timeout(
                Duration::from_secs(30),
                call(&engine, tool.name, Value::Object(args.clone()), &cx),
            )
            .await
            .unwrap_or_else(|_| panic!("{} did not answer", tool.name));
            if let Err(e) = outcome {
                assert_ne!(
                    e.error_code, "UNKNOWN_TOOL",
                    "{} is listed but not dispatched",
                    tool.name
                );
                for name in args.keys() {
                    assert!(
                        !e.message.contains(&format!("unknown field `{name}`")),
                        "{} lists `{name}` but does not take it: {}",
                        tool.name,
                        e.message
                    );
                }
            }
        }
        engine.shutdown().await;
    }

    /// Walks every subschema position of a schema, as `portable` does, with its JSON pointer.
    fn walk(schema: &Value, at: &str, seen: &mut dyn FnMut(&str, &Value)) {
        seen(at, schema);
        let Value::Object(object) = schema else {
            return;
        };
        for (key, value) in object {
            match (key.as_str(), value) {
                (
                    "properties" | "$defs" | "definitions" | "patternProperties",
                    Value::Object(map),
                ) => {
                    for (name, sub) in map {
                        walk(sub, &format!("{at}/{key}/{name}"), seen);
                    }
                }
                ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(list)) => {
                    for (i, sub) in list.iter().enumerate() {
                        walk(sub, &format!("{at}/{key}/{i}"), seen);
                    }
                }
                (
                    "items" | "additionalProperties" | "not" | "if" | "then" | "else" | "contains",
                    sub,
                ) => {
                    walk(sub, &format!("{at}/{key}"), seen);
                }
                _ => {}
            }
        }
    }

    #[test]
    fn schemas_have_no_bare_true_subschema_and_no_integer_formats_clients_do_not_know() {
        for tool in catalog() {
            for (kind, schema) in [
                ("input", (tool.schema)()),
                ("output", (tool.output_schema)()),
            ] {
                walk(&Value::Object(schema), "", &mut |at, sub| {
                    assert_ne!(
                        sub,
                        &Value::Bool(true),
                        "{} {kind} schema at {at}",
                        tool.name
                    );
                    if let Some(format) = sub.get("format").and_then(Value::as_str) {
                        assert!(
                            !format.starts_with("uint") && !matches!(format, "int8" | "int16"),
                            "{} {kind} schema at {at}: format {format}",
                            tool.name
                        );
                    }
                });
            }
        }
    }

    #[test]
    fn every_tool_is_documented_and_has_an_object_schema() {
        let doc = include_str!("../../docs/MCP.md");
        for tool in catalog() {
            assert!(
                doc.contains(&format!("| `{}` |", tool.name)),
                "{} is not in docs/MCP.md",
                tool.name
            );
            let schema = (tool.schema)();
            assert_eq!(schema.get("type"), Some(&json!("object")), "{}", tool.name);
        }
    }

    /// Keywords a draft-07 validator reads as draft 2020-12 does (`$defs` only holds what
    /// `$ref` points at by JSON pointer): the TypeScript SDK checks results with Ajv's default
    /// draft-07 dialect, so an output schema uses no others.
    const PORTABLE_KEYWORDS: [&str; 21] = [
        "$defs",
        "$ref",
        "additionalProperties",
        "anyOf",
        "const",
        "description",
        "enum",
        "format",
        "items",
        "maxItems",
        "maxLength",
        "maximum",
        "minItems",
        "minLength",
        "minimum",
        "oneOf",
        "pattern",
        "properties",
        "required",
        "title",
        "type",
    ];

    /// Every keyword used in a schema (not the names under `properties` or `$defs`).
    fn keywords(schema: &Value, into: &mut Vec<String>) {
        match schema {
            Value::Object(object) => {
                for (key, value) in object {
                    into.push(key.clone());
                    match (key.as_str(), value) {
                        ("properties" | "$defs", Value::Object(named)) => {
                            named.values().for_each(|v| keywords(v, into));
                        }
                        _ => keywords(value, into),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| keywords(v, into)),
            _ => {}
        }
    }

    #[test]
    fn every_tool_has_an_object_output_schema_that_compiles() {
        let outputs = catalog()
            .into_iter()
            .map(|t| (t.name, (t.output_schema)()))
            .chain([("wf_<name>", run_output_schema().as_ref().clone())]);
        for (name, schema) in outputs {
            assert_eq!(schema.get("type"), Some(&json!("object")), "{name}");
            let schema = Value::Object(schema);
            if let Err(e) = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .build(&schema)
            {
                panic!("{name}: the output schema does not compile: {e}");
            }
            let mut used = Vec::new();
            keywords(&schema, &mut used);
            for keyword in used {
                assert!(
                    PORTABLE_KEYWORDS.contains(&keyword.as_str()),
                    "{name}: `{keyword}` is read differently by draft-07 validators"
                );
            }
        }
    }

    #[test]
    fn a_result_that_is_not_an_object_is_an_internal_error() {
        assert_eq!(ok(json!({"a": 1})).unwrap()["a"], 1);
        let error = ok(json!([1, 2])).unwrap_err();
        assert_eq!(error.error_code, "INTERNAL_ERROR");
    }

    #[test]
    fn toolsets_parse() {
        for set in Toolset::ALL {
            assert_eq!(Toolset::parse(set.as_str()), Some(set));
        }
        assert_eq!(Toolset::parse("everything"), None);
    }
}
