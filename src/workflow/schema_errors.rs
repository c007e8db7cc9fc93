//! Turns JSON Schema errors into violations that read well: the rule broken, the exact path,
//! the position in the file, what was expected and found, and a "did you mean" where a key,
//! tool or condition looks misspelt.

use super::names::{display_safe, name_problem, pointer_join};
use super::schema::workflow_schema;
use super::source::SpanMap;
use super::suggest::hint;
use super::violation::{Position, Violation};
use jsonschema::ValidationError;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

/// Every schema violation of `value`, mapped to positions through `spans`.
pub fn schema_violations(
    validator: &jsonschema::Validator,
    value: &Value,
    spans: &SpanMap,
) -> Vec<Violation> {
    let mut out = Vec::new();
    for error in validator.iter_errors(value) {
        map_error(&error, spans, &mut out);
    }
    out
}

/// Adds the violations one schema error stands for (one, or one per unknown key, or those
/// of the branch of an `anyOf` the author most likely meant).
fn map_error(error: &ValidationError<'_>, spans: &SpanMap, out: &mut Vec<Violation>) {
    let path = error.instance_path().to_string();
    let schema_path = error.schema_path().to_string();
    let instance = error.instance();
    let at = spans.value_position(&path);
    match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            unknown_keys(unexpected, &path, &schema_path, spans, out);
        }
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            out.push(
                Violation::error(
                    "required",
                    pointer_join(&path, name),
                    format!("missing required key '{name}'"),
                )
                .expected(format!("key '{name}'"))
                .at(spans.key_position(&path)),
            );
        }
        ValidationErrorKind::PropertyNames { error } => {
            out.push(invalid_name(error, &path, spans));
        }
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            match best_branch(context, &path) {
                Some(branch) => branch.iter().for_each(|e| map_error(e, spans, out)),
                None => out.push(
                    Violation::error(
                        "type",
                        path,
                        format!("{} is not a valid value here", describe(instance)),
                    )
                    .actual(describe(instance))
                    .at(at),
                ),
            }
        }
        _ => out.push(value_violation(error, path, &schema_path, at)),
    }
}

/// One violation per key an object does not allow, with the keys it does.
fn unknown_keys(
    unexpected: &[String],
    path: &str,
    schema_path: &str,
    spans: &SpanMap,
    out: &mut Vec<Violation>,
) {
    let allowed = allowed_keys(schema_path);
    for key in unexpected {
        let key_path = pointer_join(path, key);
        let mut message = format!(
            "unknown key {}{}",
            display_safe(key),
            hint(key, allowed.iter().map(String::as_str))
        );
        if key == "<<" {
            message.push_str("; YAML merge keys are not supported (YAML 1.2 has none)");
        }
        out.push(
            Violation::error("unknown_key", key_path.clone(), message)
                .expected(format!("one of: {}", allowed.join(", ")))
                .actual(key.clone())
                .at(spans.key_position(&key_path)),
        );
    }
}

/// A key of a mapping whose names are checked (states, variables, environment variables)
/// that is not a valid name.
fn invalid_name(error: &ValidationError<'_>, path: &str, spans: &SpanMap) -> Violation {
    let name = error.instance().as_str().unwrap_or_default().to_string();
    let key_path = pointer_join(path, &name);
    let what = match path {
        "/states" => "state name",
        p if p.ends_with("/env") => "environment variable name",
        _ => "variable name",
    };
    let expected = match error.kind() {
        ValidationErrorKind::Pattern { pattern } => pattern.clone(),
        ValidationErrorKind::MaxLength { limit } => format!("at most {limit} characters"),
        _ => error.to_string(),
    };
    Violation::error(
        "invalid_name",
        key_path.clone(),
        format!(
            "{} is not a valid {what} (expected {expected})",
            display_safe(&name)
        ),
    )
    .expected(expected)
    .actual(name)
    .at(spans.key_position(&key_path))
}

/// The violation of a value of the wrong type, or not one of those allowed: a type, a
/// choice, a constant, a pattern; the bounds of a value are [`bound_violation`]'s.
fn value_violation(
    error: &ValidationError<'_>,
    path: String,
    schema_path: &str,
    at: Option<Position>,
) -> Violation {
    let instance = error.instance();
    match error.kind() {
        ValidationErrorKind::Type { kind } => {
            let expected = type_names(kind);
            let mut message = format!("expected {expected}, found {}", describe(instance));
            if expected.contains("string") && (instance.is_number() || instance.is_boolean()) {
                message.push_str(" (in YAML, put it in quotes to keep it as text)");
            }
            Violation::error("type", path, message)
                .expected(expected)
                .actual(describe(instance))
                .at(at)
        }
        ValidationErrorKind::Enum { options } => unknown_choice(options, instance, path, at),
        ValidationErrorKind::Pattern { pattern } => {
            let text = instance.as_str().unwrap_or_default();
            let message = if path == "/name" {
                name_problem(text)
                    .unwrap_or_else(|| format!("{} does not match {pattern}", display_safe(text)))
            } else {
                format!("{} does not match {pattern}", display_safe(text))
            };
            Violation::error("pattern", path, message)
                .expected(pattern.clone())
                .actual(text)
                .at(at)
        }
        ValidationErrorKind::Constant { expected_value } => {
            let expected = expected_value
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| expected_value.to_string());
            let found = instance
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| instance.to_string());
            Violation::error(
                "enum",
                path,
                format!(
                    "unknown value {}{}",
                    display_safe(&found),
                    hint(&found, [expected.as_str()])
                ),
            )
            .expected(expected)
            .actual(found)
            .at(at)
        }
        _ => bound_violation(error, path, schema_path, at),
    }
}

/// A value that is not one of the choices: an unknown tool, condition or other word, with
/// the choices and the one it most likely meant.
fn unknown_choice(
    options: &Value,
    instance: &Value,
    path: String,
    at: Option<Position>,
) -> Violation {
    let choices: Vec<&str> = options
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let found = instance
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| instance.to_string());
    let (rule, what) = if path.ends_with("/action/tool") {
        ("unknown_tool", "tool")
    } else if path.ends_with("/condition") {
        ("unknown_condition", "condition")
    } else {
        ("enum", "value")
    };
    Violation::error(
        rule,
        path,
        format!(
            "unknown {what} {}{}",
            display_safe(&found),
            hint(&found, choices.iter().copied())
        ),
    )
    .expected(format!("one of: {}", choices.join(", ")))
    .actual(found)
    .at(at)
}

/// The violation of a value out of its bounds: how many entries, how long a text, how large
/// a number; and any other schema error, as the schema says it.
fn bound_violation(
    error: &ValidationError<'_>,
    path: String,
    schema_path: &str,
    at: Option<Position>,
) -> Violation {
    let instance = error.instance();
    match error.kind() {
        ValidationErrorKind::MinProperties { .. } | ValidationErrorKind::MaxProperties { .. }
            if schema_path.contains("/Comparison/") =>
        {
            Violation::error(
                "invalid_condition",
                path,
                "a comparison needs 'var' and exactly one operator: equals, not_equals, gt, gte, lt, lte, in, matches or exists",
            )
            .at(at)
        }
        ValidationErrorKind::MaxProperties { limit } | ValidationErrorKind::MaxItems { limit } => {
            let (rule, what) = match path.as_str() {
                "/states" => ("too_many_states", "states"),
                "/arguments" | "/return_values" => ("too_many_variables", "variables"),
                p if p.ends_with("/transitions") => ("too_many_transitions", "transitions"),
                _ => ("too_many_items", "entries"),
            };
            let count = instance
                .as_object()
                .map(|o| o.len())
                .or(instance.as_array().map(Vec::len))
                .unwrap_or(0);
            Violation::error(
                rule,
                path,
                format!("{count} {what}; at most {limit} are allowed"),
            )
            .expected(format!("<= {limit}"))
            .actual(count.to_string())
            .at(at)
        }
        ValidationErrorKind::MinProperties { limit } | ValidationErrorKind::MinItems { limit } => {
            Violation::error(
                "too_few_items",
                path,
                format!("needs at least {limit} entries"),
            )
            .expected(format!(">= {limit}"))
            .at(at)
        }
        ValidationErrorKind::MinLength { limit } => length(
            path,
            "min_length",
            format!("at least {limit}"),
            instance,
            at,
        ),
        ValidationErrorKind::MaxLength { limit } => length(
            path,
            "max_length",
            format!("at most {limit}"),
            instance,
            at,
        ),
        ValidationErrorKind::Minimum { limit }
        | ValidationErrorKind::ExclusiveMinimum { limit } => {
            Violation::error(
                "minimum",
                path,
                format!("{instance} is below the minimum {limit}"),
            )
            .expected(format!(">= {limit}"))
            .actual(instance.to_string())
            .at(at)
        }
        ValidationErrorKind::Maximum { limit }
        | ValidationErrorKind::ExclusiveMaximum { limit } => {
            Violation::error(
                "maximum",
                path,
                format!("{instance} is above the maximum {limit}"),
            )
            .expected(format!("<= {limit}"))
            .actual(instance.to_string())
            .at(at)
        }
        _ => Violation::error("schema", path, error.to_string()).at(at),
    }
}

fn length(
    path: String,
    rule: &str,
    bound: String,
    instance: &Value,
    at: Option<super::Position>,
) -> Violation {
    let n = instance.as_str().map(|s| s.chars().count()).unwrap_or(0);
    Violation::error(
        rule,
        path,
        format!("text is {n} characters; it must be {bound} characters"),
    )
    .expected(format!("{bound} characters"))
    .actual(format!("{n} characters"))
    .at(at)
}

/// Of the branches of an `anyOf`/`oneOf`, the one the author most likely meant: one whose
/// errors are not about the value's basic type at the value's own path, then the one with the
/// fewest errors.
fn best_branch<'e>(
    context: &'e [Vec<ValidationError<'static>>],
    path: &str,
) -> Option<&'e Vec<ValidationError<'static>>> {
    context
        .iter()
        .filter(|branch| !branch.is_empty())
        .filter(|branch| {
            !branch.iter().any(|e| {
                e.instance_path().to_string() == path
                    && matches!(e.kind(), ValidationErrorKind::Type { .. })
            })
        })
        .min_by_key(|branch| branch.len())
}

/// The keys an object schema allows, found from the location of its `additionalProperties`.
fn allowed_keys(schema_path: &str) -> Vec<String> {
    let object_path = schema_path
        .strip_suffix("/additionalProperties")
        .unwrap_or(schema_path);
    workflow_schema()
        .pointer(object_path)
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

fn type_names(kind: &TypeKind) -> String {
    let mut names: Vec<String> = match kind {
        TypeKind::Single(t) => vec![t.to_string()],
        TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect(),
    };
    names.retain(|n| n != "null");
    if names.is_empty() {
        "null".to_string()
    } else {
        names.join(" or ")
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null (an empty value)".to_string(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => format!("string {}", display_safe(s)),
        Value::Array(_) => "a list".to_string(),
        Value::Object(_) => "a mapping".to_string(),
    }
}
