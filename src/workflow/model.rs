//! The manifest format, version 1: the seed's format accepted as it is, plus additive
//! extensions. These types are the source of truth: `docs/workflow.schema.json` is generated
//! from them (see `schema.rs`), and a test keeps the published file in step.

use super::action::Action;
use super::guard::Guard;
pub use super::scalar::Scalar;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Default bound on the number of states a run may execute (a loop guard).
pub const DEFAULT_MAX_STEPS: u32 = 100;
/// Most states a workflow may have.
pub const MAX_STATES: usize = 50;
/// Most transitions one state may have.
pub const MAX_TRANSITIONS: usize = 5;
/// Most variables in `arguments` or in `return_values`.
pub const MAX_VARIABLES: usize = 20;

/// A workflow: a state machine whose steps drive terminal sessions, with a contract of
/// environment variables it needs (`arguments`) and must produce (`return_values`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "flowdeck workflow manifest (version 1)")]
pub struct Workflow {
    /// Editor hint: the JSON Schema this file follows. Ignored by flowdeck.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Unique workflow identifier: lowercase letters, digits and `_`. The file should be
    /// `<name>.yaml` or `<name>.json`.
    #[schemars(regex(pattern = r"^[a-z0-9_]+$"), length(min = 1, max = 64))]
    pub name: String,
    /// What the workflow does, for people and agents choosing one.
    #[schemars(length(min = 1, max = 500))]
    pub description: String,
    /// Version of this workflow, semver (`1.2.0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub version: Option<String>,
    /// Free-form grouping shown in lists (`development`, `ops`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub category: Option<String>,
    /// The input contract: environment variables the run needs, keyed by name.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    #[schemars(extend("propertyNames" = {"pattern": "^[A-Z][A-Z0-9_]*$", "maxLength": 64}, "maxProperties" = 20))]
    pub arguments: IndexMap<String, Variable>,
    /// The output contract: environment variables the run must set, keyed by name.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    #[schemars(extend("propertyNames" = {"pattern": "^[A-Z][A-Z0-9_]*$", "maxLength": 64}, "maxProperties" = 20))]
    pub return_values: IndexMap<String, Variable>,
    /// The state the run starts in.
    #[schemars(regex(pattern = r"^[a-z0-9_]+$"), length(min = 1, max = 64))]
    pub initial_state: String,
    /// Most states a run may execute before it is stopped (loop guard). Default 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 10000))]
    pub max_steps: Option<u32>,
    /// Time limit for the whole run, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.1, max = 86400.0))]
    pub timeout_seconds: Option<f64>,
    /// Where runs open their terminal, through ssh, unless a run is given a host (`--on`,
    /// `on`): a name, `user@host` or an alias of the ssh config. `$NAME` or `${NAME}` takes
    /// the value of an argument (`host: $TARGET`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 255))]
    pub host: Option<String>,
    /// The state machine: states keyed by name, in the order they are written.
    #[schemars(extend("propertyNames" = {"pattern": "^[a-z0-9_]+$", "maxLength": 64}, "minProperties" = 1, "maxProperties" = 50))]
    pub states: IndexMap<String, State>,
}

impl Workflow {
    pub fn max_steps(&self) -> u32 {
        self.max_steps.unwrap_or(DEFAULT_MAX_STEPS)
    }

    /// The contract an agent needs to call this workflow: its arguments and return values.
    pub fn signature(&self) -> Signature {
        Signature {
            description: self.description.clone(),
            arguments: self.arguments.clone(),
            return_values: self.return_values.clone(),
        }
    }
}

/// A workflow's contract, as the seed's `workflow_signature`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Signature {
    pub description: String,
    pub arguments: IndexMap<String, Variable>,
    pub return_values: IndexMap<String, Variable>,
}

/// One environment variable of a contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Variable {
    /// The variable's name again (the seed's format repeats it); must equal the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[A-Z][A-Z0-9_]*$"))]
    pub name: Option<String>,
    /// What the variable holds and in what form.
    #[schemars(length(min = 1, max = 200))]
    pub description: String,
    /// Whether the run fails without it. Default true.
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub required: bool,
    /// Value used when the run is given none and the session has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Scalar>,
    /// Type the value must have. Default `string`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<VarType>,
    /// The only values allowed.
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub choices: Option<Vec<Scalar>>,
    /// Regular expression the whole value must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1000))]
    pub pattern: Option<String>,
    /// Masked in logs, the TUI and run results.
    #[serde(default, skip_serializing_if = "is_false")]
    pub secret: bool,
}

impl Variable {
    pub fn kind(&self) -> VarType {
        self.kind.unwrap_or(VarType::String)
    }
}

fn default_true() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}
fn is_false(b: &bool) -> bool {
    !*b
}

/// The type of a contract variable. Environment variables are strings; the type says which
/// strings are acceptable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VarType {
    String,
    Integer,
    Number,
    Boolean,
    // A file system path (any non-empty string without NUL).
    Path,
}

impl VarType {
    pub fn as_str(self) -> &'static str {
        match self {
            VarType::String => "string",
            VarType::Integer => "integer",
            VarType::Number => "number",
            VarType::Boolean => "boolean",
            VarType::Path => "path",
        }
    }

    /// Whether `value` (as an environment variable's text) is of this type.
    pub fn accepts(self, value: &str) -> bool {
        match self {
            VarType::String => true,
            VarType::Integer => value.trim().parse::<i64>().is_ok(),
            VarType::Number => value.trim().parse::<f64>().is_ok_and(f64::is_finite),
            VarType::Boolean => matches!(value, "true" | "false"),
            VarType::Path => !value.is_empty() && !value.contains('\0'),
        }
    }
}

/// One state of the machine: an action, then the first transition that holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct State {
    /// What this step does, shown in the step plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 500))]
    pub description: Option<String>,
    /// The step's action: one tool and its parameters.
    pub action: Action,
    /// Time limit for this state's action, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.1, max = 300.0))]
    pub timeout_seconds: Option<f64>,
    /// Guard over run variables: when it does not hold, the action is skipped and the state
    /// counts as a success with no output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Guard>,
    /// Checked in order; the first that holds is taken. None holding ends the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 5))]
    pub transitions: Vec<Transition>,
}

/// A move to another state when its condition (and optional guard) holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Transition {
    /// When this transition holds. Default `always`.
    #[serde(default, skip_serializing_if = "Condition::is_always")]
    pub condition: Condition,
    /// Regex tested against the output the state observed (for `pattern_match` and
    /// `pattern_no_match`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1000))]
    pub pattern: Option<String>,
    /// Extra guard over run variables; the transition holds only if this holds too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Guard>,
    /// The state to go to.
    #[schemars(regex(pattern = r"^[a-z0-9_]+$"), length(min = 1, max = 64))]
    pub next_state: String,
}

/// A transition condition: one of the named outcomes, or (the seed's object form) a
/// description for a person or agent to judge, which holds like `always` in unattended runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Condition {
    Named(ConditionKind),
    Judged(JudgedCondition),
}

impl Default for Condition {
    fn default() -> Self {
        Condition::Named(ConditionKind::Always)
    }
}

impl Condition {
    pub fn is_always(&self) -> bool {
        matches!(self, Condition::Named(ConditionKind::Always))
    }

    /// The condition's kind; a judged condition acts as `always`.
    pub fn kind(&self) -> ConditionKind {
        match self {
            Condition::Named(kind) => *kind,
            Condition::Judged(_) => ConditionKind::Always,
        }
    }
}

/// The seed's object-form condition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JudgedCondition {
    /// The condition in words, e.g. "Check if build completed successfully".
    #[schemars(length(min = 1, max = 200))]
    pub description: String,
}

/// The named transition conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConditionKind {
    // The action succeeded.
    Success,
    // The action failed (an error, a stop pattern, the session exited, exit status not 0).
    Failure,
    // The action ran out of time.
    Timeout,
    // `pattern` matches the output the state observed.
    PatternMatch,
    // `pattern` does not match the output the state observed.
    PatternNoMatch,
    // Always holds.
    Always,
    // A `prompt` step's answer passed its validation rules.
    ValidationPassed,
    // A `prompt` step's answer failed its validation rules.
    ValidationFailed,
}

impl ConditionKind {
    pub const ALL: [ConditionKind; 8] = [
        ConditionKind::Success,
        ConditionKind::Failure,
        ConditionKind::Timeout,
        ConditionKind::PatternMatch,
        ConditionKind::PatternNoMatch,
        ConditionKind::Always,
        ConditionKind::ValidationPassed,
        ConditionKind::ValidationFailed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ConditionKind::Success => "success",
            ConditionKind::Failure => "failure",
            ConditionKind::Timeout => "timeout",
            ConditionKind::PatternMatch => "pattern_match",
            ConditionKind::PatternNoMatch => "pattern_no_match",
            ConditionKind::Always => "always",
            ConditionKind::ValidationPassed => "validation_passed",
            ConditionKind::ValidationFailed => "validation_failed",
        }
    }

    pub fn needs_pattern(self) -> bool {
        matches!(
            self,
            ConditionKind::PatternMatch | ConditionKind::PatternNoMatch
        )
    }
}

impl fmt::Display for ConditionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
