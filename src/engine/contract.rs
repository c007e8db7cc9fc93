//! The workflow's contract: the inputs it needs before the first state, and the values it must
//! leave behind after the last. Pure: the executor reads the session and passes values in.

use crate::workflow::model::{Variable, Workflow};
use crate::workflow::names::{display_safe, is_valid_env_name};
use crate::workflow::pattern;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which side of the contract a check is about: what a run's `contract_checked` line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ContractPhase {
    /// The inputs, before the first state.
    Arguments,
    /// The return values, after the last state.
    ReturnValues,
}

impl ContractPhase {
    /// The word the journal writes.
    pub fn as_str(self) -> &'static str {
        match self {
            ContractPhase::Arguments => "arguments",
            ContractPhase::ReturnValues => "return_values",
        }
    }
}

/// What a secret value shows as in results, logs and the journal.
pub const MASK: &str = "********";

/// Where an input's value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Given with the run.
    Given,
    /// Already set in the session's environment.
    Session,
    /// The argument's default.
    Default,
}

/// Inputs that passed the contract.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inputs {
    pub values: IndexMap<String, String>,
    pub sources: IndexMap<String, Source>,
}

impl Inputs {
    /// The values to export into the session: everything not already there.
    pub fn to_export(&self) -> Vec<(String, String)> {
        self.values
            .iter()
            .filter(|(k, _)| self.sources.get(*k) != Some(&Source::Session))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

/// Why the inputs do not satisfy the contract.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct InputProblems {
    /// Required arguments with no value.
    pub missing: Vec<String>,
    /// Values that do not fit their argument: (name, why).
    pub invalid: Vec<(String, String)>,
    /// Inputs the workflow does not declare, or whose names are not allowed.
    pub unknown: Vec<String>,
}

impl InputProblems {
    pub fn is_empty(&self) -> bool {
        self.missing.is_empty() && self.invalid.is_empty() && self.unknown.is_empty()
    }

    /// The message of SPEC §3.4: each variable named, and how to set it.
    pub fn message(&self, workflow: &Workflow) -> String {
        let mut parts = Vec::new();
        if !self.missing.is_empty() {
            let exports: Vec<String> = self
                .missing
                .iter()
                .map(|n| format!("export {n}=value"))
                .collect();
            parts.push(format!(
                "Missing required environment variables: {}. Set them with: {} (or pass them as inputs)",
                self.missing.join(", "),
                exports.join(", ")
            ));
        }
        for (name, why) in &self.invalid {
            parts.push(format!("{name}: {why}"));
        }
        if !self.unknown.is_empty() {
            let declared: Vec<&str> = workflow.arguments.keys().map(String::as_str).collect();
            parts.push(format!(
                "Unknown inputs: {} (the workflow's arguments are: {})",
                self.unknown
                    .iter()
                    .map(|u| display_safe(u))
                    .collect::<Vec<_>>()
                    .join(", "),
                if declared.is_empty() {
                    "none".to_string()
                } else {
                    declared.join(", ")
                }
            ));
        }
        parts.join(". ")
    }
}

/// Why `value` does not fit the variable's type, choices or pattern, if it does not.
/// The largest `NAME=value` an environment variable can be: Linux refuses to start a program
/// whose environment holds a longer string (`MAX_ARG_STRLEN`, 128 KiB with the final NUL), and
/// a shell that exported one could run nothing any more.
pub const MAX_ENV_ENTRY: usize = 128 * 1024 - 1;

/// Why a value cannot be an environment variable at all, if it cannot: a NUL byte ends the
/// string (the rest would be silently lost), and the kernel bounds each entry.
pub fn env_value_problem(name: &str, value: &str) -> Option<String> {
    if value.contains('\0') {
        return Some(format!(
            "input {} contains a NUL character, which no environment variable can hold",
            display_safe(name)
        ));
    }
    let entry = name.len() + 1 + value.len();
    if entry > MAX_ENV_ENTRY {
        return Some(format!(
            "input {} is {} bytes; an environment variable holds at most {} bytes with its name (the kernel's limit); pass a file path instead",
            display_safe(name),
            value.len(),
            MAX_ENV_ENTRY - name.len() - 1
        ));
    }
    None
}

pub fn value_problem(var: &Variable, value: &str) -> Option<String> {
    // A secret's value is never repeated back, not even to say it is wrong.
    let shown = if var.secret {
        "the value".to_string()
    } else {
        display_safe(value)
    };
    let kind = var.kind();
    if !kind.accepts(value) {
        return Some(format!("{shown} is not a valid {}", kind.as_str()));
    }
    if let Some(choices) = &var.choices
        && !choices.iter().any(|c| c.to_string() == value)
    {
        let choices: Vec<String> = choices.iter().map(ToString::to_string).collect();
        return Some(format!("{shown} is not one of {}", choices.join(", ")));
    }
    if let Some(p) = &var.pattern {
        match pattern::compile(&format!("^(?:{p})$")) {
            Ok(regex) if !regex.is_match(value) => {
                return Some(format!("{shown} does not match the pattern {p}"));
            }
            Ok(_) => {}
            Err(e) => return Some(format!("the pattern cannot be used: {e}")),
        }
    }
    None
}

/// Checks the inputs: a value given with the run, else one already in the session
/// (`session`: what reading the arguments' names from the session found), else the default.
pub fn resolve_inputs(
    workflow: &Workflow,
    given: &IndexMap<String, String>,
    session: &IndexMap<String, Option<String>>,
) -> Result<Inputs, InputProblems> {
    let mut problems = InputProblems::default();
    for name in given.keys() {
        if !workflow.arguments.contains_key(name) || !is_valid_env_name(name) {
            problems.unknown.push(name.clone());
        }
    }
    let mut inputs = Inputs::default();
    for (name, var) in &workflow.arguments {
        let found = match (given.get(name), session.get(name).cloned().flatten()) {
            (Some(v), _) => Some((v.clone(), Source::Given)),
            (None, Some(v)) => Some((v, Source::Session)),
            (None, None) => var
                .default
                .as_ref()
                .map(|d| (d.to_string(), Source::Default)),
        };
        match found {
            Some((value, source)) => {
                if let Some(why) =
                    env_value_problem(name, &value).or_else(|| value_problem(var, &value))
                {
                    problems.invalid.push((name.clone(), why));
                } else {
                    inputs.values.insert(name.clone(), value);
                    inputs.sources.insert(name.clone(), source);
                }
            }
            None if var.required => problems.missing.push(name.clone()),
            None => {}
        }
    }
    if problems.is_empty() {
        Ok(inputs)
    } else {
        Err(problems)
    }
}

/// The required return values that were not set, and the values that were.
pub type Missing = (Vec<String>, IndexMap<String, String>);

/// The return values: read from the session (`session`), else from run variables (a capture
/// into a return value's name). Returns the values (secrets masked), or the missing names
/// and the values that were there (a failed run still says what it set: `STATUS=FAILED`).
pub fn check_returns(
    workflow: &Workflow,
    session: &IndexMap<String, Option<String>>,
    run_vars: &IndexMap<String, String>,
) -> Result<IndexMap<String, String>, Missing> {
    let mut values = IndexMap::new();
    let mut missing = Vec::new();
    for (name, var) in &workflow.return_values {
        let value = session
            .get(name)
            .cloned()
            .flatten()
            .or_else(|| run_vars.get(name).cloned());
        match value {
            Some(v) => {
                values.insert(name.clone(), if var.secret { MASK.to_string() } else { v });
            }
            None if var.required => missing.push(name.clone()),
            None => {}
        }
    }
    if missing.is_empty() {
        Ok(values)
    } else {
        Err((missing, values))
    }
}

/// Inputs as the journal and log show them: secrets masked.
pub fn masked(workflow: &Workflow, values: &IndexMap<String, String>) -> IndexMap<String, String> {
    values
        .iter()
        .map(|(k, v)| {
            let secret = workflow.arguments.get(k).is_some_and(|a| a.secret)
                || workflow.return_values.get(k).is_some_and(|r| r.secret);
            (k.clone(), if secret { MASK.to_string() } else { v.clone() })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn workflow() -> Workflow {
        serde_json::from_value(json!({
            "name": "demo", "description": "d", "initial_state": "a",
            "arguments": {
                "TARGET": {"description": "t", "enum": ["build", "test"]},
                "JOBS": {"description": "j", "type": "integer", "default": 2},
                "TOKEN": {"description": "k", "secret": true, "required": false},
                "DIR": {"description": "d", "pattern": "/[a-z/]+"}
            },
            "return_values": {
                "STATUS": {"description": "s"},
                "KEY": {"description": "k", "secret": true},
                "NOTE": {"description": "n", "required": false}
            },
            "states": {"a": {"action": {"tool": "list_terminal_sessions"}}}
        }))
        .unwrap()
    }

    fn map(pairs: &[(&str, &str)]) -> IndexMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn given_then_session_then_default() {
        let w = workflow();
        let session: IndexMap<String, Option<String>> = [
            ("DIR".to_string(), Some("/srv/app".to_string())),
            ("JOBS".to_string(), None),
        ]
        .into();
        let inputs = resolve_inputs(&w, &map(&[("TARGET", "test")]), &session).unwrap();
        assert_eq!(
            inputs.values,
            map(&[("TARGET", "test"), ("JOBS", "2"), ("DIR", "/srv/app")])
        );
        assert_eq!(inputs.sources["DIR"], Source::Session);
        assert_eq!(inputs.sources["JOBS"], Source::Default);
        // What the session has already is not exported again.
        assert_eq!(
            inputs.to_export(),
            vec![
                ("TARGET".into(), "test".into()),
                ("JOBS".into(), "2".into())
            ]
        );
    }

    #[test]
    fn missing_invalid_and_unknown_are_all_reported() {
        let w = workflow();
        let problems = resolve_inputs(
            &w,
            &map(&[
                ("TARGET", "deploy"),
                ("JOBS", "many"),
                ("EXTRA", "1"),
                ("bad-name", "x"),
            ]),
            &IndexMap::new(),
        )
        .unwrap_err();
        assert_eq!(problems.missing, ["DIR"]);
        assert_eq!(problems.invalid.len(), 2);
        assert_eq!(problems.unknown, ["EXTRA", "bad-name"]);
        let message = problems.message(&w);
        assert!(
            message.contains(
                "Missing required environment variables: DIR. Set them with: export DIR=value"
            ),
            "{message}"
        );
        assert!(
            message.contains("TARGET: 'deploy' is not one of build, test"),
            "{message}"
        );
        assert!(
            message.contains("JOBS: 'many' is not a valid integer"),
            "{message}"
        );
        assert!(
            message.contains("Unknown inputs: 'EXTRA', 'bad-name'"),
            "{message}"
        );
        // The pattern is anchored.
        let p = resolve_inputs(
            &w,
            &map(&[("TARGET", "build"), ("DIR", "/srv/app1")]),
            &IndexMap::new(),
        )
        .unwrap_err();
        assert!(p.invalid[0].1.contains("does not match the pattern"));
    }

    #[test]
    fn returns_come_from_the_session_or_captures_and_secrets_are_masked() {
        let w = workflow();
        let session: IndexMap<String, Option<String>> = [
            ("STATUS".to_string(), Some("ok".to_string())),
            ("KEY".to_string(), Some("s3cret".to_string())),
        ]
        .into();
        let values = check_returns(&w, &session, &IndexMap::new()).unwrap();
        assert_eq!(values, map(&[("STATUS", "ok"), ("KEY", MASK)]));
        let values = check_returns(
            &w,
            &IndexMap::new(),
            &map(&[("STATUS", "captured"), ("KEY", "k")]),
        )
        .unwrap();
        assert_eq!(values["STATUS"], "captured");
        let (missing, found) = check_returns(&w, &IndexMap::new(), &IndexMap::new()).unwrap_err();
        assert_eq!(missing, ["STATUS", "KEY"]);
        assert!(found.is_empty());
        let (missing, found) =
            check_returns(&w, &IndexMap::new(), &map(&[("KEY", "k")])).unwrap_err();
        assert_eq!(missing, ["STATUS"]);
        assert_eq!(
            found,
            map(&[("KEY", MASK)]),
            "what was set is said, secrets masked"
        );
        assert_eq!(
            masked(&w, &map(&[("TOKEN", "t"), ("TARGET", "build")]))["TOKEN"],
            MASK
        );
    }
}
