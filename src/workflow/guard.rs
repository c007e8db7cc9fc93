//! Conditions over run variables (`when:` guards, and the `condition` of output rules):
//! the workrail `runCondition`, with strict typing.
//!
//! Typing rules (documented in docs/WORKFLOWS.md):
//! - Variables hold JSON values; environment variables and captures are strings.
//! - `equals`/`not_equals`/`in` with a string operand compare text exactly.
//! - With a number operand, the variable must be a number or a string that parses as one;
//!   anything else is a type error, not `false`.
//! - With a boolean operand, the variable must be a boolean or the string `true`/`false`.
//! - `gt`/`gte`/`lt`/`lte` need numbers on both sides, by the same rule.
//! - `matches` tests a regex against the variable's text (strings, numbers and booleans).
//! - A variable that is not set makes every comparison false (`not_equals` true); `exists`
//!   tests for it explicitly.

use super::pattern::{PatternError, compile};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashMap;
use thiserror::Error;

/// A condition over run variables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged, deny_unknown_fields)]
pub enum Guard {
    /// All of these hold.
    And {
        #[schemars(length(min = 1, max = 50))]
        and: Vec<Guard>,
    },
    /// At least one of these holds.
    Or {
        #[schemars(length(min = 1, max = 50))]
        or: Vec<Guard>,
    },
    /// This does not hold.
    Not { not: Box<Guard> },
    /// A test of one variable.
    Compare(Box<Comparison>),
}

/// A test of one variable: `var` and exactly one operator.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("minProperties" = 2, "maxProperties" = 2))]
pub struct Comparison {
    /// The variable's name.
    #[schemars(length(min = 1, max = 128))]
    pub var: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "scalar_schema")]
    pub equals: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "scalar_schema")]
    pub not_equals: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gt: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gte: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lt: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lte: Option<f64>,
    /// The variable equals one of these.
    #[serde(rename = "in", default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "scalar_list_schema")]
    pub one_of: Option<Vec<Value>>,
    /// The variable's text matches this regex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1000))]
    pub matches: Option<String>,
    /// The variable is set (`true`) or not set (`false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exists: Option<bool>,
}

fn scalar_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": ["string", "number", "boolean"]})
}

fn scalar_list_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "minItems": 1,
        "maxItems": 100,
        "items": {"type": ["string", "number", "boolean"]}
    })
}

/// Why a guard could not be evaluated.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum GuardError {
    #[error("variable '{var}' is {actual}, which cannot be compared with {expected}")]
    TypeMismatch {
        var: String,
        expected: &'static str,
        actual: String,
    },
    #[error("comparison on '{0}' names no operator")]
    NoOperator(String),
    #[error("comparison on '{0}' names more than one operator")]
    ManyOperators(String),
    #[error("regex for '{var}': {source}")]
    Pattern { var: String, source: PatternError },
}

/// Where guards look variables up.
pub trait Variables {
    fn lookup(&self, name: &str) -> Option<Value>;
}

impl Variables for Map<String, Value> {
    fn lookup(&self, name: &str) -> Option<Value> {
        self.get(name).cloned()
    }
}

impl Variables for HashMap<String, String> {
    fn lookup(&self, name: &str) -> Option<Value> {
        self.get(name).map(|v| Value::String(v.clone()))
    }
}

impl Variables for indexmap::IndexMap<String, String> {
    fn lookup(&self, name: &str) -> Option<Value> {
        self.get(name).map(|v| Value::String(v.clone()))
    }
}

impl Guard {
    /// Evaluates the guard. Pure: no I/O, same answer for the same variables.
    pub fn evaluate(&self, vars: &dyn Variables) -> Result<bool, GuardError> {
        match self {
            Guard::And { and } => {
                for g in and {
                    if !g.evaluate(vars)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Guard::Or { or } => {
                for g in or {
                    if g.evaluate(vars)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Guard::Not { not } => Ok(!not.evaluate(vars)?),
            Guard::Compare(c) => c.evaluate(vars),
        }
    }

    /// Every variable the guard reads, for validation and previews.
    pub fn variables(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_variables(&mut out);
        out
    }

    fn collect_variables<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Guard::And { and: list } | Guard::Or { or: list } => {
                list.iter().for_each(|g| g.collect_variables(out))
            }
            Guard::Not { not } => not.collect_variables(out),
            Guard::Compare(c) => out.push(&c.var),
        }
    }

    /// Every regex the guard uses, with the JSON pointer (relative to the guard) where it is.
    pub fn patterns(&self) -> Vec<(String, &str)> {
        let mut out = Vec::new();
        self.collect_patterns(String::new(), &mut out);
        out
    }

    fn collect_patterns<'a>(&'a self, at: String, out: &mut Vec<(String, &'a str)>) {
        match self {
            Guard::And { and } => and
                .iter()
                .enumerate()
                .for_each(|(i, g)| g.collect_patterns(format!("{at}/and/{i}"), out)),
            Guard::Or { or } => or
                .iter()
                .enumerate()
                .for_each(|(i, g)| g.collect_patterns(format!("{at}/or/{i}"), out)),
            Guard::Not { not } => not.collect_patterns(format!("{at}/not"), out),
            Guard::Compare(c) => {
                if let Some(p) = &c.matches {
                    out.push((format!("{at}/matches"), p));
                }
            }
        }
    }
}

impl Comparison {
    fn operator_count(&self) -> usize {
        [
            self.equals.is_some(),
            self.not_equals.is_some(),
            self.gt.is_some(),
            self.gte.is_some(),
            self.lt.is_some(),
            self.lte.is_some(),
            self.one_of.is_some(),
            self.matches.is_some(),
            self.exists.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count()
    }

    fn evaluate(&self, vars: &dyn Variables) -> Result<bool, GuardError> {
        match self.operator_count() {
            0 => return Err(GuardError::NoOperator(self.var.clone())),
            1 => {}
            _ => return Err(GuardError::ManyOperators(self.var.clone())),
        }
        let value = vars.lookup(&self.var).filter(|v| !v.is_null());
        if let Some(should_exist) = self.exists {
            return Ok(value.is_some() == should_exist);
        }
        let Some(value) = value else {
            return Ok(self.not_equals.is_some());
        };
        let var = &self.var;
        if let Some(expected) = &self.equals {
            return equal(var, &value, expected);
        }
        if let Some(expected) = &self.not_equals {
            return equal(var, &value, expected).map(|eq| !eq);
        }
        if let Some(choices) = &self.one_of {
            for choice in choices {
                if equal(var, &value, choice)? {
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        if let Some(pattern) = &self.matches {
            let regex = compile(pattern).map_err(|source| GuardError::Pattern {
                var: var.clone(),
                source,
            })?;
            let text = text_of(&value).ok_or_else(|| mismatch(var, "a regex", &value))?;
            return Ok(regex.is_match(&text));
        }
        let n = number_of(&value).ok_or_else(|| mismatch(var, "a number", &value))?;
        Ok(match (self.gt, self.gte, self.lt, self.lte) {
            (Some(limit), ..) => n > limit,
            (_, Some(limit), ..) => n >= limit,
            (_, _, Some(limit), _) => n < limit,
            (.., Some(limit)) => n <= limit,
            _ => false,
        })
    }
}

fn equal(var: &str, value: &Value, expected: &Value) -> Result<bool, GuardError> {
    match expected {
        Value::String(s) => Ok(text_of(value).is_some_and(|t| t == *s)),
        Value::Number(n) => {
            let want = n.as_f64().unwrap_or(f64::NAN);
            let have = number_of(value).ok_or_else(|| mismatch(var, "a number", value))?;
            Ok(have == want)
        }
        Value::Bool(b) => {
            let have = bool_of(value).ok_or_else(|| mismatch(var, "a boolean", value))?;
            Ok(have == *b)
        }
        Value::Null => Ok(value.is_null()),
        _ => Ok(value == expected),
    }
}

fn mismatch(var: &str, expected: &'static str, value: &Value) -> GuardError {
    let actual = match value {
        Value::String(s) => format!("the text {}", super::names::display_safe(s)),
        Value::Number(n) => format!("the number {n}"),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Null => "null".into(),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    };
    GuardError::TypeMismatch {
        var: var.to_string(),
        expected,
        actual,
    }
}

fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn number_of(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        _ => None,
    }
}

fn bool_of(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) if s == "true" => Some(true),
        Value::String(s) if s == "false" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn guard(v: Value) -> Guard {
        serde_json::from_value(v).unwrap_or_else(|e| panic!("bad guard in test: {e}"))
    }

    fn vars() -> Map<String, Value> {
        let Value::Object(m) = json!({
            "SCOPE": "large", "COUNT": "12", "RATIO": 0.8, "FLAG": "true", "REAL": false, "EMPTY": ""
        }) else {
            unreachable!()
        };
        m
    }

    fn eval(v: Value) -> Result<bool, GuardError> {
        guard(v).evaluate(&vars())
    }

    #[test]
    fn comparisons() {
        let cases = [
            (json!({"var": "SCOPE", "equals": "large"}), true),
            (json!({"var": "SCOPE", "equals": "small"}), false),
            (json!({"var": "SCOPE", "not_equals": "small"}), true),
            (json!({"var": "COUNT", "equals": 12}), true),
            (json!({"var": "COUNT", "equals": "12"}), true),
            (json!({"var": "COUNT", "equals": "12.0"}), false),
            (json!({"var": "COUNT", "equals": 12.0}), true),
            (json!({"var": "COUNT", "gt": 11}), true),
            (json!({"var": "COUNT", "gt": 12}), false),
            (json!({"var": "COUNT", "gte": 12}), true),
            (json!({"var": "RATIO", "lt": 0.9}), true),
            (json!({"var": "RATIO", "lte": 0.7}), false),
            (json!({"var": "FLAG", "equals": true}), true),
            (json!({"var": "REAL", "equals": false}), true),
            (json!({"var": "SCOPE", "in": ["small", "large"]}), true),
            (json!({"var": "SCOPE", "in": ["small"]}), false),
            (json!({"var": "SCOPE", "matches": "^lar"}), true),
            (json!({"var": "COUNT", "matches": "^1[0-9]$"}), true),
            (json!({"var": "EMPTY", "equals": ""}), true),
            (json!({"var": "MISSING", "equals": "x"}), false),
            (json!({"var": "MISSING", "not_equals": "x"}), true),
            (json!({"var": "MISSING", "gt": 1}), false),
            (json!({"var": "MISSING", "exists": false}), true),
            (json!({"var": "SCOPE", "exists": true}), true),
        ];
        for (g, want) in cases {
            assert_eq!(eval(g.clone()), Ok(want), "{g}");
        }
    }

    #[test]
    fn logic() {
        let t = json!({"var": "SCOPE", "equals": "large"});
        let f = json!({"var": "SCOPE", "equals": "small"});
        assert_eq!(eval(json!({"and": [t, t]})), Ok(true));
        assert_eq!(eval(json!({"and": [t, f]})), Ok(false));
        assert_eq!(eval(json!({"or": [f, t]})), Ok(true));
        assert_eq!(eval(json!({"or": [f, f]})), Ok(false));
        assert_eq!(eval(json!({"not": f})), Ok(true));
        assert_eq!(
            eval(json!({"not": {"and": [t, {"or": [f, {"not": t}]}]}})),
            Ok(true)
        );
    }

    #[test]
    fn strict_types() {
        let err = eval(json!({"var": "SCOPE", "gt": 1}));
        assert!(
            matches!(
                err,
                Err(GuardError::TypeMismatch {
                    expected: "a number",
                    ..
                })
            ),
            "{err:?}"
        );
        let err = eval(json!({"var": "SCOPE", "equals": true}));
        assert!(matches!(
            err,
            Err(GuardError::TypeMismatch {
                expected: "a boolean",
                ..
            })
        ));
        let err = eval(json!({"var": "SCOPE", "equals": 3}));
        assert!(matches!(err, Err(GuardError::TypeMismatch { .. })));
        // Short-circuiting stops before a type error in a branch that is not needed.
        let ok =
            eval(json!({"or": [{"var": "SCOPE", "equals": "large"}, {"var": "SCOPE", "gt": 1}]}));
        assert_eq!(ok, Ok(true));
    }

    #[test]
    fn operator_count_is_checked() {
        let none = Guard::Compare(Box::new(Comparison {
            var: "A".into(),
            ..Comparison::default()
        }));
        assert!(matches!(
            none.evaluate(&vars()),
            Err(GuardError::NoOperator(_))
        ));
        let two = Guard::Compare(Box::new(Comparison {
            var: "A".into(),
            gt: Some(1.0),
            lt: Some(2.0),
            ..Comparison::default()
        }));
        assert!(matches!(
            two.evaluate(&vars()),
            Err(GuardError::ManyOperators(_))
        ));
    }

    #[test]
    fn env_style_variables() {
        let mut env = HashMap::new();
        env.insert("EXIT_CODE".to_string(), "0".to_string());
        assert_eq!(
            guard(json!({"var": "EXIT_CODE", "equals": 0})).evaluate(&env),
            Ok(true)
        );
    }

    #[test]
    fn lists_variables_and_patterns() {
        let g = guard(
            json!({"and": [{"var": "A", "matches": "x+"}, {"not": {"var": "B", "exists": true}}]}),
        );
        assert_eq!(g.variables(), vec!["A", "B"]);
        assert_eq!(g.patterns(), vec![("/and/0/matches".to_string(), "x+")]);
    }
}
