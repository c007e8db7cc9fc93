//! Errors of the workflows folder.

use super::lock::LockError;
use super::read::FileKind;
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
    #[error("{}", unnamed_message(violations))]
    Unnamed { violations: Vec<Violation> },
    #[error("the manifest is {size} bytes; manifests may be at most {limit} bytes")]
    TooLarge { size: usize, limit: usize },
    #[error(
        "{file} is {kind}, not a regular file; flowdeck reads and writes only regular files (move it out of the workflows folder)"
    )]
    NotRegularFile { file: String, kind: FileKind },
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
    /// Another process holds the folder's lock past the bounded wait (lock.rs); retryable.
    #[error("{0}")]
    Busy(LockError),
}

impl StoreError {
    /// A short machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::NoFolder(_) => "no_folder",
            StoreError::Io { .. } => "io",
            StoreError::NotFound(_) => "workflow_not_found",
            StoreError::AlreadyExists { .. } => "already_exists",
            StoreError::Conflict { .. } => "version_conflict",
            StoreError::InvalidName(_) => "invalid_name",
            StoreError::Unnamed { .. } => "unnamed",
            StoreError::TooLarge { .. } => "too_large",
            StoreError::NotRegularFile { .. } => "not_a_regular_file",
            StoreError::FormatMismatch { .. } => "format_mismatch",
            StoreError::DuplicateName { .. } => "duplicate_name",
            StoreError::Invalid { .. } => "invalid_manifest",
            StoreError::Busy(_) => "storage_busy",
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        StoreError::Io {
            path: path.into(),
            source,
        }
    }

    /// A lock that could not be taken: busy when held too long, an I/O error otherwise.
    pub(crate) fn lock(e: LockError) -> Self {
        match e {
            LockError::Io { path, source } => StoreError::Io { path, source },
            held @ LockError::Held { .. } => StoreError::Busy(held),
        }
    }
}

/// Why a manifest that cannot be saved under a name has none: its `name` itself, or, when
/// the text did not even parse, the reason it did not.
fn unnamed_message(violations: &[Violation]) -> String {
    match violations
        .iter()
        .find(|v| v.is_error() && v.path == "/name")
    {
        Some(v) => format!(
            "the manifest has no usable `name`, so it cannot be saved: {}",
            describe(v)
        ),
        None => format!(
            "the manifest cannot be read, so it has no name to be saved under: {}",
            first_message(violations)
        ),
    }
}

fn describe(v: &Violation) -> String {
    match v.line {
        Some(line) => format!("line {line}: {} ({})", v.message, v.rule),
        None => format!("{} ({})", v.message, v.rule),
    }
}

fn first_message(violations: &[Violation]) -> String {
    match violations.iter().find(|v| v.is_error()) {
        Some(v) => describe(v),
        None => "no details".to_string(),
    }
}
