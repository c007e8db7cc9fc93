//! The static tools: their names, toolsets, descriptions, honest annotations, argument and
//! output schemas, and the dispatch of each to one engine method. Each group's definitions
//! sit beside their handlers (`terminal.rs`, `authoring.rs`, `runs.rs`, `guided.rs`); the
//! schemas are made in `schema.rs`.

// A tool error is built at most once per failed call and returned straight to the client;
// boxing it would buy nothing but indirection.
#![allow(clippy::result_large_err)]

use super::errors::ToolError;
use crate::engine::{Actor, Engine};
use rmcp::model::JsonObject;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Groups of tools a user switches on and off (`--toolsets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Toolset {
    Terminal,
    Runs,
    Guided,
    Authoring,
    History,
    Dynamic,
}

impl Toolset {
    pub const ALL: [Toolset; 6] = [
        Toolset::Terminal,
        Toolset::Runs,
        Toolset::Guided,
        Toolset::Authoring,
        Toolset::History,
        Toolset::Dynamic,
    ];

    /// What an agent gets unless it asks for more: driving terminals, and running workflows
    /// (finding them, following a run, answering its prompts, cancelling it). Every model
    /// reads every offered tool's schema on every turn, so the rest (writing manifests, rating
    /// and purging history, a tool per workflow) waits until an agent's user asks for it.
    pub const DEFAULT: [Toolset; 3] = [Toolset::Terminal, Toolset::Runs, Toolset::Guided];

    pub fn parse(name: &str) -> Option<Toolset> {
        Toolset::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// The toolsets a `--toolsets` word names: one toolset, `default` or `all`.
    pub fn parse_word(word: &str) -> Option<Vec<Toolset>> {
        match word {
            "default" => Some(Toolset::DEFAULT.to_vec()),
            "all" => Some(Toolset::ALL.to_vec()),
            _ => Toolset::parse(word).map(|t| vec![t]),
        }
    }

    /// Every word `--toolsets` takes, for its help and its errors.
    pub const WORDS: &'static str =
        "terminal, runs, guided, authoring, history, dynamic, default (terminal,runs,guided), all";

    pub fn as_str(self) -> &'static str {
        match self {
            Toolset::Terminal => "terminal",
            Toolset::Runs => "runs",
            Toolset::Guided => "guided",
            Toolset::Authoring => "authoring",
            Toolset::History => "history",
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
/// Reads, and clears what the caller says it has seen: the same call twice changes nothing
/// more.
const ACK: Hints = Hints {
    read_only: false,
    destructive: false,
    idempotent: true,
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
    /// The group that defines and handles it.
    pub toolset: Toolset,
    /// Other toolsets that offer it too (`workflow_list` is as much the runner's as the
    /// author's).
    pub also: &'static [Toolset],
    pub title: &'static str,
    pub description: &'static str,
    pub hints: Hints,
    pub schema: fn() -> JsonObject,
    /// What a successful call returns as `structuredContent`; clients validate it.
    pub output_schema: fn() -> JsonObject,
}

macro_rules! tool {
    ($name:literal, $set:ident, $title:literal, $hints:expr, $args:ty => $out:ty, $desc:literal) => {
        ToolDef {
            name: $name,
            toolset: Toolset::$set,
            also: &[],
            title: $title,
            description: $desc,
            hints: $hints,
            schema: schema_of::<$args>,
            output_schema: output_schema_of::<$out>,
        }
    };
}

mod authoring;
pub mod ceiling;
mod compact;
mod guided;
mod runs;
mod schema;
mod terminal;

pub use authoring::Validation;
pub use runs::{RunOutcome, RunStarted, run, run_output_schema};
pub use schema::{StepTool, WorkflowSchema, output_schema_of, portable, schema_of, step_tools};

impl ToolDef {
    /// Whether any of these toolsets offers it.
    pub fn offered_in(&self, sets: &std::collections::HashSet<Toolset>) -> bool {
        sets.contains(&self.toolset) || self.also.iter().any(|t| sets.contains(t))
    }
}

/// Every static tool, in the order clients list them.
pub fn catalog() -> Vec<ToolDef> {
    [
        terminal::defs(),
        authoring::defs(),
        runs::defs(),
        guided::defs(),
    ]
    .concat()
}

/// Runs a static tool: the group that defines it handles it.
pub async fn call(
    engine: &Arc<Engine>,
    name: &str,
    args: Value,
    cx: &CallContext,
) -> Result<JsonObject, ToolError> {
    let group = catalog()
        .into_iter()
        .find(|tool| tool.name == name)
        .map(|tool| tool.toolset);
    match group {
        Some(Toolset::Terminal) => terminal::call(engine, name, args, cx).await,
        Some(Toolset::Authoring) => authoring::call(engine, name, args, cx).await,
        Some(Toolset::Runs) => runs::call(engine, name, args, cx).await,
        Some(Toolset::Guided) => guided::call(engine, name, args, cx).await,
        Some(Toolset::History) => runs::call(engine, name, args, cx).await,
        Some(Toolset::Dynamic) | None => Err(unknown_tool(name)),
    }
}

fn unknown_tool(name: &str) -> ToolError {
    ToolError::new(
        "UNKNOWN_TOOL",
        -32005,
        "not_found",
        format!("no tool `{name}`"),
    )
}

/// What a tool call may use besides its arguments.
pub struct CallContext {
    pub cancel: CancellationToken,
    /// Tells the client what the call is doing, when it asked for progress.
    pub progress: Option<Box<dyn Fn(String) + Send + Sync>>,
    /// The agent making the call.
    pub actor: Actor,
    /// The connection asked for approval mode (`--approve agent-runs`).
    pub require_approval: bool,
    /// The longest the call may wait before it answers (ceiling.rs); none for a task, which
    /// the client polls rather than waits on.
    pub max_wait: Option<std::time::Duration>,
}

impl CallContext {
    /// Tells the client what the call is doing, if it asked.
    pub fn tell(&self, message: String) {
        if let Some(progress) = &self.progress {
            progress(message);
        }
    }

    #[cfg(test)]
    pub fn for_tests() -> Self {
        CallContext {
            cancel: CancellationToken::new(),
            progress: None,
            actor: Actor::Cli,
            require_approval: false,
            max_wait: Some(ceiling::DEFAULT_MAX_WAIT),
        }
    }
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("cancelled", &self.cancel.is_cancelled())
            .field("progress", &self.progress.is_some())
            .field("actor", &self.actor)
            .field("max_wait", &self.max_wait)
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

/// [`off_runtime`] for a change to the folder (a save, a rename, a deletion, a creation):
/// on the engine's savers, whose priority is below the runtime's, so that a flood of saves
/// cannot take the cores every other agent's calls are answered on (engine/save_pool.rs).
async fn saving<T: Send + 'static>(
    engine: &Arc<Engine>,
    work: impl FnOnce(&Engine) -> T + Send + 'static,
) -> T {
    let engine = engine.clone();
    crate::engine::save_pool::run(move || work(&engine))
        .await
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

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
            let cx = CallContext::for_tests();
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
        let doc = include_str!("../../../docs/MCP.md");
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
