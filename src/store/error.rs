//! Errors of the workflows folder.

use crate::workflow::Violation;
use std::io;
use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("workflows folder {} does not exist or is not a folder", .0.display())]
    NoFolder(PathBuf),
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("workflow '{0}' not found")]
    NotFound(String),
    #[error(
        "workflow '{name}' already exists in {file} (version {version}); pass `overwrite` or `expected_version` to replace it"
    )]
    AlreadyExists {
        name: String,
        file: String,
        version: String,
    },
    #[error(
        "workflow '{name}' was changed by someone else: expected version {expected}, the file now has {}",
        actual.as_deref().unwrap_or("no version (it was deleted)")
    )]
    Conflict {
        name: String,
        expected: String,
        actual: Option<String>,
    },
    #[error("{0}")]
    InvalidName(String),
    #[error(
        "the manifest has no usable `name`, so it cannot be saved: {}",
        first_message(violations)
    )]
    Unnamed { violations: Vec<Violation> },
    #[error("workflow '{name}' is stored as {file}; save it in that file's format ({expected})")]
    FormatMismatch {
        name: String,
        file: String,
        expected: &'static str,
    },
    #[error("two or more files define workflow '{name}': {}; rename or delete all but one", files.join(", "))]
    DuplicateName { name: String, files: Vec<String> },
    #[error(
        "workflow '{name}' ({file}) is invalid and has no earlier valid version: {}",
        first_message(violations)
    )]
    Invalid {
        name: String,
        file: String,
        violations: Vec<Violation>,
    },
}

impl StoreError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        StoreError::Io {
            path: path.into(),
            source,
        }
    }
}

fn first_message(violations: &[Violation]) -> String {
    match violations.iter().find(|v| v.is_error()) {
        Some(v) => match v.line {
            Some(line) => format!("line {line}: {} ({})", v.message, v.rule),
            None => format!("{} ({})", v.message, v.rule),
        },
        None => "no details".to_string(),
    }
}
