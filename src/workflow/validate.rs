//! The validation pipeline: bytes → document → schema → semantic checks → typed workflow.

use super::model::Workflow;
use super::schema::validator;
use super::schema_errors::schema_violations;
use super::semantic::semantic_violations;
use super::source::{self, Document, Format, Limits, Positions, SpanMap};
use super::violation::{Severity, Violation, sort_violations};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A manifest after validation.
#[derive(Debug, Clone)]
pub struct Checked {
    pub format: Format,
    /// The `name` field as written, when it is a string (even if the manifest is invalid), so
    /// that a broken file can still be listed under its name.
    pub name: Option<String>,
    /// The typed workflow; `Some` exactly when there are no errors.
    pub workflow: Option<Workflow>,
    /// Every violation, errors and warnings, in file order.
    pub violations: Vec<Violation>,
    /// Where each value was written (empty when the file did not parse). For a manifest
    /// without violations, only where its `name` was: nothing else needs a position then.
    pub spans: SpanMap,
}

impl Checked {
    /// A file that could not be read as a manifest at all: the one violation that says why.
    pub fn unreadable(format: Format, violation: Violation) -> Checked {
        Checked {
            format,
            name: None,
            workflow: None,
            violations: vec![violation],
            spans: SpanMap::default(),
        }
    }

    pub fn is_valid(&self) -> bool {
        self.workflow.is_some()
    }

    pub fn error_count(&self) -> usize {
        self.violations
            .iter()
            .filter(|v| v.severity == Severity::Error)
            .count()
    }

    pub fn warning_count(&self) -> usize {
        self.violations
            .iter()
            .filter(|v| v.severity == Severity::Warning)
            .count()
    }

    /// Adds a violation found outside the file itself (a duplicate name in the folder, a file
    /// name that does not match). An error makes the manifest unusable.
    pub fn add(&mut self, violation: Violation) {
        if violation.is_error() {
            self.workflow = None;
        }
        let at = self.spans.value_position(&violation.path);
        let violation = if violation.line.is_none() {
            violation.at(at)
        } else {
            violation
        };
        self.violations.push(violation);
        sort_violations(&mut self.violations);
    }
}

/// A summary fit for JSON output and MCP results.
#[derive(Debug, Clone, Serialize)]
pub struct Report<'a> {
    pub valid: bool,
    pub errors: usize,
    pub warnings: usize,
    pub violations: &'a [Violation],
}

impl Checked {
    pub fn report(&self) -> Report<'_> {
        Report {
            valid: self.is_valid(),
            errors: self.error_count(),
            warnings: self.warning_count(),
            violations: &self.violations,
        }
    }
}

/// Validates manifest bytes in the given format.
///
/// A manifest is first checked without the positions of its nodes: most have no violation,
/// and then only the `name`'s position is needed. One that has some is parsed and checked
/// again with every position, so that each violation says where it is.
pub fn check_bytes(bytes: &[u8], format: Format) -> Checked {
    let limits = Limits::default();
    match source::parse_with(bytes, format, &limits, Positions::NameOnly) {
        Ok(document) => {
            let checked = check_document(document);
            if checked.violations.is_empty() {
                return checked;
            }
        }
        Err(violation) => return Checked::unreadable(format, violation),
    }
    match source::parse(bytes, format, &limits) {
        Ok(document) => check_document(document),
        Err(violation) => Checked::unreadable(format, violation),
    }
}

/// Validates a manifest given as a value (an agent's `workflow_definition`): no positions.
pub fn check_value(value: Value, format: Format) -> Checked {
    check_document(Document {
        format,
        value,
        spans: SpanMap::default(),
        problems: Vec::new(),
    })
}

fn check_document(document: Document) -> Checked {
    let Document {
        format,
        value,
        spans,
        problems,
    } = document;
    let name = value
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut violations = problems;
    match validator() {
        Ok(v) => violations.extend(schema_violations(v, &value, &spans)),
        Err(bug) => violations.push(Violation::error(
            "internal",
            "",
            format!("flowdeck's own schema failed to compile (a bug): {bug}"),
        )),
    }
    violations.extend(semantic_violations(&value, &spans));
    dedupe(&mut violations);
    let has_errors = violations.iter().any(Violation::is_error);
    let workflow = if has_errors {
        None
    } else {
        // Plain serde first: tracking the path costs a tenth of a load, and only a failure,
        // which the schema makes rare, needs it.
        match Workflow::deserialize(&value)
            .or_else(|_| serde_path_to_error::deserialize::<_, Workflow>(&value))
        {
            Ok(w) => Some(w),
            Err(e) => {
                let path = format!("/{}", e.path().to_string().replace('.', "/"));
                let at = spans.value_position(&path);
                violations.push(Violation::error("schema", path, e.inner().to_string()).at(at));
                None
            }
        }
    };
    sort_violations(&mut violations);
    Checked {
        format,
        name,
        workflow,
        violations,
        spans,
    }
}

/// Two checks can flag the same thing; keep the one that says most. A length problem says more
/// than the pattern an empty or overlong name fails, and a regex's own limit more than the
/// schema's length limit.
fn dedupe(violations: &mut Vec<Violation>) {
    const SUPERSEDED: [(&str, &str); 3] = [
        ("pattern", "min_length"),
        ("pattern", "max_length"),
        ("max_length", "regex_too_large"),
    ];
    let rules_at: std::collections::HashSet<(String, String)> = violations
        .iter()
        .map(|v| (v.path.clone(), v.rule.clone()))
        .collect();
    violations.retain(|v| {
        !SUPERSEDED.iter().any(|(weaker, stronger)| {
            v.rule == *weaker && rules_at.contains(&(v.path.clone(), stronger.to_string()))
        })
    });
    let mut seen = std::collections::HashSet::new();
    violations.retain(|v| seen.insert((v.path.clone(), v.rule.clone(), v.message.clone())));
}
