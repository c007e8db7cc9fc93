//! One problem found in a manifest: where it is, which rule it breaks, and what was expected.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// How bad a violation is. Errors make a manifest unusable; warnings are shown but do not block.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// A position in a file: 1-based line and 1-based column (in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// One violation of the manifest format, with everything a person or an agent needs to fix it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Violation {
    /// JSON pointer to the offending value, e.g. `/states/wait/transitions/0/pattern`.
    pub path: String,
    /// Line in the file (1-based), where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// Column in the file (1-based, characters), where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    /// Stable rule identifier, e.g. `unknown_next_state`.
    pub rule: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    pub severity: Severity,
}

impl Violation {
    pub fn error(rule: &str, path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, rule, path, message)
    }

    pub fn warning(rule: &str, path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, rule, path, message)
    }

    fn new(
        severity: Severity,
        rule: &str,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Violation {
            path: path.into(),
            line: None,
            column: None,
            rule: rule.to_string(),
            message: message.into(),
            expected: None,
            actual: None,
            severity,
        }
    }

    pub fn expected(mut self, expected: impl Into<String>) -> Self {
        self.expected = Some(expected.into());
        self
    }

    pub fn actual(mut self, actual: impl Into<String>) -> Self {
        self.actual = Some(actual.into());
        self
    }

    pub fn at(mut self, position: Option<Position>) -> Self {
        if let Some(p) = position {
            self.line = Some(p.line);
            self.column = Some(p.column);
        }
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The one-line form used by `flowdeck validate`: `file:line:col: rule: message (path)`.
    /// Warnings carry `warning: ` before the message so that they stand out in a list.
    pub fn to_line(&self, file: &str) -> String {
        let place = match (self.line, self.column) {
            (Some(l), Some(c)) => format!("{file}:{l}:{c}"),
            (Some(l), None) => format!("{file}:{l}"),
            _ => file.to_string(),
        };
        let severity = match self.severity {
            Severity::Error => "",
            Severity::Warning => "warning: ",
        };
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        format!(
            "{place}: {}: {severity}{} ({path})",
            self.rule, self.message
        )
    }
}

/// Orders violations by position, then by path, so that reports read top to bottom.
pub fn sort_violations(violations: &mut [Violation]) {
    violations.sort_by(|a, b| {
        (
            a.line.unwrap_or(usize::MAX),
            a.column.unwrap_or(0),
            &a.path,
            &a.rule,
        )
            .cmp(&(
                b.line.unwrap_or(usize::MAX),
                b.column.unwrap_or(0),
                &b.path,
                &b.rule,
            ))
    });
}
