//! Output validation rules (workrail's ValidationEngine): checks on a piece of text, such as
//! the answer to a `prompt` step or a guided step's output.
//!
//! Leaf rules: `contains`, `regex` (with `flags`), `length` (`min`, `max`), `schema` (JSON
//! Schema against the output parsed as JSON); each may carry a `condition` (a guard over the
//! context: the rule applies only when it holds) and a `message`. Rules compose with `and`,
//! `or` and `not`. Evaluation is pure.

use super::guard::{Guard, GuardError, Variables};
use super::pattern::{PatternError, check_with_flags, compile_with_flags};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

/// The generic advice workrail gives with every failed validation.
pub const GENERIC_SUGGESTION: &str = "Review validation criteria and adjust output accordingly.";

/// One output validation rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged, deny_unknown_fields)]
pub enum Rule {
    /// Every rule holds.
    And {
        #[schemars(length(min = 1, max = 50))]
        and: Vec<Rule>,
    },
    /// At least one rule holds.
    Or {
        #[schemars(length(min = 1, max = 50))]
        or: Vec<Rule>,
    },
    /// The rule does not hold.
    Not {
        not: Box<Rule>,
        /// The issue reported when the inner rule holds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// A leaf check.
    Check(Box<Check>),
}

impl Rule {
    /// The messages written on this rule and the rules inside it: the criteria a person or an
    /// agent is told about.
    pub fn messages(&self) -> Vec<&str> {
        match self {
            Rule::And { and: rules } | Rule::Or { or: rules } => {
                rules.iter().flat_map(Rule::messages).collect()
            }
            Rule::Not { not, message } => match message {
                Some(m) => vec![m.as_str()],
                None => not.messages(),
            },
            Rule::Check(check) => check.message().into_iter().collect(),
        }
    }
}

/// A leaf check, selected by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    /// The output contains `value`.
    Contains {
        #[schemars(length(min = 1, max = 10000))]
        value: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        condition: Option<Guard>,
    },
    /// The output matches `pattern`.
    Regex {
        #[schemars(length(min = 1, max = 1000))]
        pattern: String,
        /// `i` ignore case, `m` multi-line, `s` dot matches newline, `x` verbose.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(regex(pattern = r"^[imsxug]*$"))]
        flags: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        condition: Option<Guard>,
    },
    /// The output's length in characters is within `min` and `max`.
    Length {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        condition: Option<Guard>,
    },
    /// The output, parsed as JSON, follows `schema`.
    Schema {
        schema: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        condition: Option<Guard>,
    },
}

/// The result of validating an output: workrail's `{valid, issues, suggestions}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuleOutcome {
    pub valid: bool,
    pub issues: Vec<String>,
    pub suggestions: Vec<String>,
}

/// A rule that cannot be evaluated (workrail's -32004).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum RuleError {
    #[error("rule at {at}: {source}")]
    Pattern { at: String, source: PatternError },
    #[error("rule at {at}: invalid JSON Schema: {message}")]
    Schema { at: String, message: String },
    #[error("rule at {at}: min {min} is greater than max {max}")]
    Range { at: String, min: u64, max: u64 },
    #[error("rule at {at}: condition: {source}")]
    Condition { at: String, source: GuardError },
}

impl RuleError {
    /// The pointer (relative to the rule list) of the rule at fault.
    pub fn at(&self) -> &str {
        match self {
            RuleError::Pattern { at, .. }
            | RuleError::Schema { at, .. }
            | RuleError::Range { at, .. }
            | RuleError::Condition { at, .. } => at,
        }
    }

    /// The validation rule name this error breaks in a manifest.
    pub fn rule(&self) -> &'static str {
        match self {
            RuleError::Pattern { source, .. } => source.rule(),
            RuleError::Schema { .. } => "invalid_schema",
            RuleError::Range { .. } => "invalid_range",
            RuleError::Condition { .. } => "invalid_condition",
        }
    }
}

/// Validates `output` against every rule (all must hold).
pub fn validate_output(
    rules: &[Rule],
    output: &str,
    context: &dyn Variables,
) -> Result<RuleOutcome, RuleError> {
    let mut outcome = RuleOutcome {
        valid: true,
        ..RuleOutcome::default()
    };
    for (i, rule) in rules.iter().enumerate() {
        let failures = rule.failures(output, context, &format!("/{i}"))?;
        for failure in failures {
            outcome.valid = false;
            outcome.issues.push(failure.issue);
            if let Some(s) = failure.suggestion {
                outcome.suggestions.push(s);
            }
        }
    }
    if !outcome.valid {
        outcome.suggestions.push(GENERIC_SUGGESTION.to_string());
    }
    Ok(outcome)
}

/// Checks that every rule can be evaluated: regexes and flags compile, schemas are valid,
/// ranges make sense. Returns every problem with its pointer relative to the list.
pub fn check_definitions(rules: &[Rule]) -> Vec<RuleError> {
    let mut errors = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        rule.check_definition(&format!("/{i}"), &mut errors);
    }
    errors
}

struct Failure {
    issue: String,
    suggestion: Option<String>,
}

impl Rule {
    fn failures(
        &self,
        output: &str,
        ctx: &dyn Variables,
        at: &str,
    ) -> Result<Vec<Failure>, RuleError> {
        match self {
            Rule::And { and } => {
                let mut all = Vec::new();
                for (i, rule) in and.iter().enumerate() {
                    all.extend(rule.failures(output, ctx, &format!("{at}/and/{i}"))?);
                }
                Ok(all)
            }
            Rule::Or { or } => {
                let mut all = Vec::new();
                for (i, rule) in or.iter().enumerate() {
                    let failures = rule.failures(output, ctx, &format!("{at}/or/{i}"))?;
                    if failures.is_empty() {
                        return Ok(Vec::new());
                    }
                    all.extend(failures);
                }
                let issue = all
                    .iter()
                    .map(|f| f.issue.as_str())
                    .collect::<Vec<_>>()
                    .join("; or ");
                let suggestion = Some(format!(
                    "Satisfy at least one of: {}",
                    all.iter()
                        .filter_map(|f| f.suggestion.as_deref())
                        .collect::<Vec<_>>()
                        .join(" / ")
                ));
                Ok(vec![Failure {
                    issue: format!("none of the alternatives holds: {issue}"),
                    suggestion,
                }])
            }
            Rule::Not { not, message } => {
                if not.failures(output, ctx, &format!("{at}/not"))?.is_empty() {
                    let issue = message
                        .clone()
                        .unwrap_or_else(|| format!("output must not satisfy: {}", not.describe()));
                    Ok(vec![Failure {
                        issue,
                        suggestion: Some(format!("Avoid: {}", not.describe())),
                    }])
                } else {
                    Ok(Vec::new())
                }
            }
            Rule::Check(check) => check
                .failure(output, ctx, at)
                .map(|f| f.into_iter().collect()),
        }
    }

    /// A short description, for messages about `not` and `or`.
    fn describe(&self) -> String {
        match self {
            Rule::And { and } => and
                .iter()
                .map(Rule::describe)
                .collect::<Vec<_>>()
                .join(" and "),
            Rule::Or { or } => or
                .iter()
                .map(Rule::describe)
                .collect::<Vec<_>>()
                .join(" or "),
            Rule::Not { not, .. } => format!("not ({})", not.describe()),
            Rule::Check(check) => match check.as_ref() {
                Check::Contains { value, .. } => format!("contains {value:?}"),
                Check::Regex { pattern, .. } => format!("matches /{pattern}/"),
                Check::Length { min, max, .. } => length_bounds(*min, *max),
                Check::Schema { .. } => "follows the JSON schema".to_string(),
            },
        }
    }

    fn check_definition(&self, at: &str, errors: &mut Vec<RuleError>) {
        match self {
            Rule::And { and } => and
                .iter()
                .enumerate()
                .for_each(|(i, r)| r.check_definition(&format!("{at}/and/{i}"), errors)),
            Rule::Or { or } => or
                .iter()
                .enumerate()
                .for_each(|(i, r)| r.check_definition(&format!("{at}/or/{i}"), errors)),
            Rule::Not { not, .. } => not.check_definition(&format!("{at}/not"), errors),
            Rule::Check(check) => {
                if let Some(guard) = check.condition() {
                    for (p, pattern) in guard.patterns() {
                        if let Err(source) = super::pattern::check(pattern) {
                            errors.push(RuleError::Pattern {
                                at: format!("{at}/condition{p}"),
                                source,
                            });
                        }
                    }
                }
                match check.as_ref() {
                    Check::Regex { pattern, flags, .. } => {
                        if let Err(source) =
                            check_with_flags(pattern, flags.as_deref().unwrap_or(""))
                        {
                            let at = format!(
                                "{at}/{}",
                                if source.rule() == "invalid_regex"
                                    && flags.is_some()
                                    && check_with_flags(pattern, "").is_ok()
                                {
                                    "flags"
                                } else {
                                    "pattern"
                                }
                            );
                            errors.push(RuleError::Pattern { at, source });
                        }
                    }
                    Check::Schema { schema, .. } => {
                        if let Err(message) = compile_schema(schema) {
                            errors.push(RuleError::Schema {
                                at: format!("{at}/schema"),
                                message,
                            });
                        }
                    }
                    Check::Length {
                        min: Some(min),
                        max: Some(max),
                        ..
                    } if min > max => {
                        errors.push(RuleError::Range {
                            at: at.to_string(),
                            min: *min,
                            max: *max,
                        });
                    }
                    _ => {}
                }
            }
        }
    }
}

impl Check {
    fn condition(&self) -> Option<&Guard> {
        match self {
            Check::Contains { condition, .. }
            | Check::Regex { condition, .. }
            | Check::Length { condition, .. }
            | Check::Schema { condition, .. } => condition.as_ref(),
        }
    }

    pub fn message(&self) -> Option<&str> {
        match self {
            Check::Contains { message, .. }
            | Check::Regex { message, .. }
            | Check::Length { message, .. }
            | Check::Schema { message, .. } => message.as_deref(),
        }
    }

    fn failure(
        &self,
        output: &str,
        ctx: &dyn Variables,
        at: &str,
    ) -> Result<Option<Failure>, RuleError> {
        if let Some(guard) = self.condition() {
            let applies = guard.evaluate(ctx).map_err(|source| RuleError::Condition {
                at: format!("{at}/condition"),
                source,
            })?;
            if !applies {
                return Ok(None);
            }
        }
        let (failed, default_issue, suggestion) = match self {
            Check::Contains { value, .. } => (
                !output.contains(value.as_str()),
                format!("output does not contain {value:?}"),
                format!("Include {value:?} in the output."),
            ),
            Check::Regex { pattern, flags, .. } => {
                let flags = flags.as_deref().unwrap_or("");
                let regex =
                    compile_with_flags(pattern, flags).map_err(|source| RuleError::Pattern {
                        at: format!("{at}/pattern"),
                        source,
                    })?;
                (
                    !regex.is_match(output),
                    format!("output does not match /{pattern}/{flags}"),
                    format!("Make the output match /{pattern}/{flags}."),
                )
            }
            Check::Length { min, max, .. } => {
                let len = output.chars().count() as u64;
                let failed = min.is_some_and(|m| len < m) || max.is_some_and(|m| len > m);
                (
                    failed,
                    format!(
                        "output is {len} characters; it must be {}",
                        length_bounds(*min, *max)
                    ),
                    format!("Make the output {}.", length_bounds(*min, *max)),
                )
            }
            Check::Schema { schema, .. } => match schema_problem(schema, output, at)? {
                None => (false, String::new(), String::new()),
                Some(problem) => (
                    true,
                    format!("output does not follow the schema: {problem}"),
                    format!("Return JSON that follows the schema ({problem})."),
                ),
            },
        };
        Ok(failed.then(|| Failure {
            issue: self.message().map(str::to_string).unwrap_or(default_issue),
            suggestion: Some(suggestion),
        }))
    }
}

fn length_bounds(min: Option<u64>, max: Option<u64>) -> String {
    match (min, max) {
        (Some(a), Some(b)) => format!("between {a} and {b} characters"),
        (Some(a), None) => format!("at least {a} characters"),
        (None, Some(b)) => format!("at most {b} characters"),
        (None, None) => "any length".to_string(),
    }
}

/// Compiles a rule's JSON Schema (draft 2020-12 unless it says otherwise; remote `$ref`s are
/// never fetched).
fn compile_schema(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::validator_for(schema).map_err(|e| e.to_string())
}

/// Why `output` does not follow `schema`, or `None` when it does.
fn schema_problem(schema: &Value, output: &str, at: &str) -> Result<Option<String>, RuleError> {
    let validator = compile_schema(schema).map_err(|message| RuleError::Schema {
        at: format!("{at}/schema"),
        message,
    })?;
    let parsed: Value = match serde_json::from_str(output.trim()) {
        Ok(v) => v,
        Err(e) => return Ok(Some(format!("output is not JSON ({e})"))),
    };
    Ok(validator.iter_errors(&parsed).next().map(|e| {
        let path = e.instance_path().to_string();
        if path.is_empty() {
            e.to_string()
        } else {
            format!("{path}: {e}")
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, json};

    fn rules(v: Value) -> Vec<Rule> {
        serde_json::from_value(v).unwrap()
    }

    fn ctx(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn check(r: Value, output: &str) -> RuleOutcome {
        validate_output(&rules(r), output, &ctx(json!({}))).unwrap()
    }

    #[test]
    fn contains_regex_length() {
        assert!(check(json!([{"type": "contains", "value": "jwt"}]), "uses jwt").valid);
        let out = check(
            json!([{"type": "contains", "value": "jwt", "message": "Should use JWT"}]),
            "uses cookies",
        );
        assert!(!out.valid);
        assert_eq!(out.issues, vec!["Should use JWT"]);
        assert_eq!(
            out.suggestions.last().map(String::as_str),
            Some(GENERIC_SUGGESTION)
        );
        assert!(
            check(
                json!([{"type": "regex", "pattern": "^ok$", "flags": "i"}]),
                "OK"
            )
            .valid
        );
        assert!(!check(json!([{"type": "regex", "pattern": "^ok$"}]), "OK").valid);
        assert!(check(json!([{"type": "length", "min": 2, "max": 4}]), "abc").valid);
        assert!(!check(json!([{"type": "length", "min": 4}]), "abc").valid);
        assert!(!check(json!([{"type": "length", "max": 2}]), "abc").valid);
        assert!(
            check(json!([{"type": "length", "max": 3}]), "äöü").valid,
            "counts characters, not bytes"
        );
    }

    #[test]
    fn schema_rule() {
        let r = json!([{"type": "schema", "schema": {
            "type": "object",
            "properties": {"method": {"enum": ["GET", "POST"]}},
            "required": ["method"]
        }}]);
        assert!(check(r.clone(), r#"{"method": "GET"}"#).valid);
        let out = check(r.clone(), r#"{"method": "PATCH"}"#);
        assert!(!out.valid);
        assert!(out.issues[0].contains("/method"), "{:?}", out.issues);
        let out = check(r, "not json");
        assert!(out.issues[0].contains("not JSON"), "{:?}", out.issues);
    }

    #[test]
    fn composition() {
        let r = json!([{"and": [
            {"type": "contains", "value": "authentication", "message": "Must include authentication"},
            {"or": [
                {"type": "contains", "value": "jwt", "message": "Should use JWT"},
                {"type": "contains", "value": "session", "message": "Should use sessions"}
            ]}
        ]}]);
        assert!(check(r.clone(), "authentication with jwt").valid);
        assert!(check(r.clone(), "authentication with session").valid);
        let out = check(r.clone(), "authentication with basic");
        assert_eq!(out.issues.len(), 1);
        assert!(
            out.issues[0].contains("Should use JWT")
                && out.issues[0].contains("Should use sessions")
        );
        let out = check(r, "nothing");
        assert_eq!(out.issues.len(), 2);
        let not =
            json!([{"not": {"type": "contains", "value": "TODO"}, "message": "No TODOs left"}]);
        assert!(check(not.clone(), "done").valid);
        assert_eq!(check(not, "TODO: x").issues, vec!["No TODOs left"]);
    }

    #[test]
    fn conditions_select_rules() {
        let r = rules(json!([{
            "type": "contains", "value": "comprehensive tests",
            "condition": {"var": "taskScope", "equals": "large"},
            "message": "Large tasks require comprehensive testing"
        }]));
        let large = ctx(json!({"taskScope": "large"}));
        let small = ctx(json!({"taskScope": "small"}));
        assert!(!validate_output(&r, "basic", &large).unwrap().valid);
        assert!(validate_output(&r, "basic", &small).unwrap().valid);
        let gt = rules(
            json!([{"type": "length", "min": 100, "condition": {"var": "complexity", "gt": 0.5}}]),
        );
        assert!(
            !validate_output(&gt, "short", &ctx(json!({"complexity": 0.8})))
                .unwrap()
                .valid
        );
        assert!(
            validate_output(&gt, "short", &ctx(json!({"complexity": 0.2})))
                .unwrap()
                .valid
        );
    }

    #[test]
    fn broken_definitions_are_reported_with_paths() {
        let r = rules(json!([
            {"type": "regex", "pattern": "(x"},
            {"and": [{"type": "schema", "schema": {"type": "nonsense"}}]},
            {"type": "length", "min": 5, "max": 1},
            {"type": "regex", "pattern": "x", "flags": "q"}
        ]));
        let errs = check_definitions(&r);
        let at: Vec<&str> = errs.iter().map(RuleError::at).collect();
        assert_eq!(at, vec!["/0/pattern", "/1/and/0/schema", "/2", "/3/flags"]);
        assert!(validate_output(&r[..1], "x", &ctx(json!({}))).is_err());
    }

    #[test]
    fn unknown_keys_are_refused() {
        let bad: Result<Vec<Rule>, _> =
            serde_json::from_value(json!([{"type": "contains", "valeu": "x"}]));
        assert!(bad.is_err());
    }
}
