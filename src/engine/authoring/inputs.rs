//! What a run of a workflow would need: its inputs previewed (defaults, the last run's
//! values, secrets masked) and resolved the way a run resolves them, the session's
//! environment included.

use super::super::contract::{self};
use super::super::events::Actor;
use super::super::{Engine, EngineError};
use crate::workflow::model::Variable;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Serialize;

/// One argument as a caller must fill it.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct InputSpec {
    pub name: String,
    pub description: String,
    pub required: bool,
    #[serde(rename = "type")]
    pub kind: String,
    pub default: Option<String>,
    #[serde(rename = "enum")]
    pub choices: Option<Vec<String>>,
    pub pattern: Option<String>,
    pub secret: bool,
    /// The value the workflow's last run was given, to offer again; never for a secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_value: Option<String>,
}

/// The answer to `workflow_preview_inputs`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct InputPreview {
    pub workflow: String,
    pub inputs: Vec<InputSpec>,
    pub return_values: Vec<InputSpec>,
}

/// The answer to `workflow_resolve_inputs`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct InputResolution {
    pub workflow: String,
    /// All required inputs have a valid value.
    pub ready: bool,
    pub required_missing: Vec<String>,
    pub invalid: Vec<InvalidInput>,
    pub unknown: Vec<String>,
    /// The values a run would use (secrets masked) and where each came from.
    pub values: IndexMap<String, String>,
    pub sources: IndexMap<String, contract::Source>,
}

/// An input whose value does not fit.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct InvalidInput {
    pub name: String,
    pub reason: String,
}

impl Engine {
    /// The inputs a run takes and the values it returns.
    pub fn workflow_preview_inputs(&self, name: &str) -> Result<InputPreview, EngineError> {
        let wf = self.runnable(name)?;
        let last = self.last_run_inputs(&wf.name);
        let spec = |(name, v): (&String, &Variable)| InputSpec {
            name: name.clone(),
            description: v.description.clone(),
            required: v.required,
            kind: v.kind().as_str().to_string(),
            default: v.default.as_ref().map(ToString::to_string),
            choices: v
                .choices
                .as_ref()
                .map(|c| c.iter().map(ToString::to_string).collect()),
            pattern: v.pattern.clone(),
            secret: v.secret,
            last_value: None,
        };
        Ok(InputPreview {
            workflow: wf.name.clone(),
            inputs: wf
                .arguments
                .iter()
                .map(|arg| InputSpec {
                    last_value: last.get(arg.0).filter(|_| !arg.1.secret).cloned(),
                    ..spec(arg)
                })
                .collect(),
            return_values: wf.return_values.iter().map(spec).collect(),
        })
    }

    /// The inputs the workflow's newest journaled run was started with (secrets are masked
    /// in journals, and left out by the caller anyway); empty without one.
    fn last_run_inputs(&self, workflow: &str) -> IndexMap<String, String> {
        let Some(run) = self.journal().list(Some(workflow), 1).into_iter().next() else {
            return IndexMap::new();
        };
        let first = self.journal().read(&run.run_id, 0, 1).unwrap_or_default();
        match first.into_iter().next().map(|e| e.body) {
            Some(crate::engine::journal::RunEvent::RunStarted { inputs, .. }) => inputs,
            _ => IndexMap::new(),
        }
    }

    /// Whether a run with these inputs (and, given a session, what is set there) could start.
    pub async fn workflow_resolve_inputs(
        &self,
        name: &str,
        inputs: &IndexMap<String, String>,
        session_id: Option<&str>,
        actor: &Actor,
    ) -> Result<InputResolution, EngineError> {
        let wf = self.runnable(name)?;
        let missing: Vec<&str> = wf
            .arguments
            .keys()
            .filter(|k| !inputs.contains_key(*k))
            .map(String::as_str)
            .collect();
        let session_values = match session_id {
            Some(id) if !missing.is_empty() => {
                self.read_env(id, &missing, None, actor).await?.values
            }
            _ => IndexMap::new(),
        };
        Ok(
            match contract::resolve_inputs(&wf, inputs, &session_values) {
                Ok(resolved) => InputResolution {
                    workflow: wf.name.clone(),
                    ready: true,
                    required_missing: Vec::new(),
                    invalid: Vec::new(),
                    unknown: Vec::new(),
                    values: contract::masked(&wf, &resolved.values),
                    sources: resolved.sources,
                },
                Err(problems) => InputResolution {
                    workflow: wf.name.clone(),
                    ready: false,
                    required_missing: problems.missing,
                    invalid: problems
                        .invalid
                        .into_iter()
                        .map(|(name, reason)| InvalidInput { name, reason })
                        .collect(),
                    unknown: problems.unknown,
                    values: IndexMap::new(),
                    sources: IndexMap::new(),
                },
            },
        )
    }
}
