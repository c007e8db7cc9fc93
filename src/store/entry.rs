//! One manifest file as the store knows it.

use super::read::FileRead;
use crate::workflow::{Checked, Format, Position, Severity, Violation, Workflow};
use schemars::JsonSchema;
use serde::Serialize;
use std::sync::Arc;

/// A manifest file: its bytes, version, validation, and its last valid version.
///
/// What validation needed and nothing else does (the parsed value, the position of every
/// node) is not kept: in a folder of a thousand manifests the positions alone would be 34 MB.
/// The positions are in the violations, and the one a folder-level problem needs, the
/// `name`'s, is kept on its own.
#[derive(Debug, Clone)]
pub struct Entry {
    /// File name inside the workflows folder, e.g. `build_project.yaml`.
    pub file_name: String,
    pub format: Format,
    /// SHA-256 of the current bytes (empty for a name that is not a regular file).
    pub version: String,
    pub bytes: Arc<[u8]>,
    /// The `name` field as written, when it is a string (even if the manifest is invalid).
    pub declared_name: Option<String>,
    /// The violations of the current bytes, on their own, in file order.
    pub file_violations: Vec<Violation>,
    /// Where the `name` value was written.
    pub name_position: Option<Position>,
    /// Problems that come from the folder, not the file (a duplicate name, a file name that
    /// does not match).
    pub folder_violations: Vec<Violation>,
    /// The most recent valid version: what runs while the file is broken. When the current
    /// bytes are valid, it is them.
    pub last_good: Option<LastGood>,
}

/// A valid version of a workflow, kept so that a file caught broken (mid-save, or by a typo)
/// keeps working until it is fixed.
#[derive(Debug, Clone)]
pub struct LastGood {
    pub workflow: Arc<Workflow>,
    pub version: String,
    pub bytes: Arc<[u8]>,
}

/// Whether a manifest in the folder is valid, valid with warnings, or invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
// Named as before in the tools' output schemas.
#[schemars(rename = "Status")]
pub enum WorkflowStatus {
    Valid,
    Warnings,
    Invalid,
}

/// A file as read and validated, reduced to what an [`Entry`] keeps. Made where the file was
/// checked, so that the parsed value and its positions are freed there and then.
#[derive(Debug)]
pub struct Validated {
    pub version: String,
    pub bytes: Arc<[u8]>,
    pub declared_name: Option<String>,
    pub violations: Vec<Violation>,
    pub name_position: Option<Position>,
    pub workflow: Option<Arc<Workflow>>,
}

impl Validated {
    pub fn new(read: FileRead, checked: Checked) -> Validated {
        Validated {
            name_position: checked.spans.value_position("/name"),
            version: read.version,
            bytes: read.bytes,
            declared_name: checked.name,
            violations: checked.violations,
            workflow: checked.workflow.map(Arc::new),
        }
    }
}

impl Entry {
    /// The workflow's name: as written in the file, else its last good version's, else the
    /// file name itself. A file whose name cannot be read is not guessed to be its stem:
    /// that would take over the name of the valid workflow in `<stem>.json` beside a broken
    /// `<stem>.yaml`. A file name has a dot, which no workflow name has, so it is never
    /// mistaken for one.
    pub fn name(&self) -> &str {
        if let Some(name) = &self.declared_name {
            return name;
        }
        if let Some(good) = &self.last_good {
            return &good.workflow.name;
        }
        &self.file_name
    }

    /// All violations: the file's own and the folder's, in file order.
    pub fn violations(&self) -> Vec<Violation> {
        let mut all = self.file_violations.clone();
        all.extend(self.folder_violations.iter().cloned());
        crate::workflow::violation::sort_violations(&mut all);
        all
    }

    fn count(&self, severity: Severity) -> usize {
        self.file_violations
            .iter()
            .chain(&self.folder_violations)
            .filter(|v| v.severity == severity)
            .count()
    }

    pub fn error_count(&self) -> usize {
        self.count(Severity::Error)
    }

    pub fn warning_count(&self) -> usize {
        self.count(Severity::Warning)
    }

    pub fn status(&self) -> WorkflowStatus {
        if self.error_count() > 0 {
            WorkflowStatus::Invalid
        } else if self.warning_count() > 0 {
            WorkflowStatus::Warnings
        } else {
            WorkflowStatus::Valid
        }
    }

    /// The current content's workflow, when the file and the folder have no errors.
    pub fn current(&self) -> Option<&Workflow> {
        if self.error_count() > 0 {
            return None;
        }
        self.last_good
            .as_ref()
            .filter(|good| good.version == self.version)
            .map(|good| &*good.workflow)
    }

    /// The content as text, when it is UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }
}
