//! Step actions: which tool a state calls and with what parameters.
//!
//! Parameters are typed per tool, so a misspelt or misplaced parameter is a validation error
//! with a "did you mean" hint rather than a value silently ignored at run time. In a manifest
//! an action is written `{tool: NAME, params: {...}}`, as in the seed.

//!
//! Here: the action itself, its form as written (`RawAction`) and its schema. The tools are
//! in tool.rs, their parameters in params.rs, `await_output`'s with the limits of a wait in
//! wait.rs, and `search_output`'s (a tool call, not an action) in search.rs.

mod params;
mod search;
mod tool;
mod wait;

pub use params::{
    ContentMode, GetScreenContentParams, Key, ListSessionsParams, NamedKey, OpenTerminalParams,
    PromptParams, RunCommandParams, SendInputParams, SessionParams, SetEnvParams,
};
pub use search::{SearchOrder, SearchOutputParams};
pub use tool::ToolName;
pub use wait::{
    AwaitOutputParams, CaptureGroup, DEFAULT_WAIT_SECONDS, MAX_QUIET_MS, MAX_WAIT_SECONDS, QuietOn,
    Since, clamp_wait,
};

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::borrow::Cow;

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
