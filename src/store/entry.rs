//! One manifest file as the store knows it.

use crate::workflow::{Checked, Format, Violation, Workflow};
use schemars::JsonSchema;
use serde::Serialize;
use std::sync::Arc;

/// A manifest file: its bytes, version, validation, and its last valid version.
#[derive(Debug, Clone)]
pub struct Entry {
    /// File name inside the workflows folder, e.g. `build_project.yaml`.
    pub file_name: String,
    pub format: Format,
    /// SHA-256 of the current bytes.
    pub version: String,
    pub bytes: Arc<[u8]>,
    /// Validation of the current bytes, on their own.
    pub checked: Checked,
    /// Problems that come from the folder, not the file (a duplicate name, a file name that
    /// does not match).
    pub folder_violations: Vec<Violation>,
    /// The most recent valid version: what runs while the file is broken.
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

/// The state of a manifest in a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Valid,
    Warnings,
    Invalid,
}

impl Entry {
    /// The workflow's name: as written in the file, else its last good version's, else the
    /// file name itself. A file whose name cannot be read is not guessed to be its stem:
    /// that would take over the name of the valid workflow in `<stem>.json` beside a broken
    /// `<stem>.yaml`. A file name has a dot, which no workflow name has, so it is never
    /// mistaken for one.
    pub fn name(&self) -> &str {
        if let Some(name) = &self.checked.name {
            return name;
        }
        if let Some(good) = &self.last_good {
            return &good.workflow.name;
        }
        &self.file_name
    }

    /// All violations: the file's own and the folder's, in file order.
    pub fn violations(&self) -> Vec<Violation> {
        let mut all = self.checked.violations.clone();
        all.extend(self.folder_violations.iter().cloned());
        crate::workflow::violation::sort_violations(&mut all);
        all
    }

    pub fn error_count(&self) -> usize {
        self.checked.error_count()
            + self
                .folder_violations
                .iter()
                .filter(|v| v.is_error())
                .count()
    }

    pub fn warning_count(&self) -> usize {
        self.checked.warning_count()
            + self
                .folder_violations
                .iter()
                .filter(|v| !v.is_error())
                .count()
    }

    pub fn status(&self) -> Status {
        if self.error_count() > 0 {
            Status::Invalid
        } else if self.warning_count() > 0 {
            Status::Warnings
        } else {
            Status::Valid
        }
    }

    /// The current content's workflow, when the file and the folder have no errors.
    pub fn current(&self) -> Option<&Workflow> {
        if self.folder_violations.iter().any(Violation::is_error) {
            return None;
        }
        self.checked.workflow.as_ref()
    }

    /// The content as text, when it is UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }
}
