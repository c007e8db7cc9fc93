//! The in-memory index of the workflows folder: every manifest file, its validation, and its
//! last good version. Pure bookkeeping: the caller reads files and hands the bytes in.

use super::entry::{Entry, LastGood, Validated};
use crate::workflow::names::is_valid_name;
use crate::workflow::{Format, Violation};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// What happened to a manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Changed,
    Removed,
    /// The folder itself became listable or stopped being (`file_name` and `name` are
    /// empty): read [`super::Store::folder_problem`].
    Folder,
}

/// A change to the folder, as published to observers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub kind: ChangeKind,
    pub file_name: String,
    /// The workflow's name (before removal, for a removed file).
    pub name: String,
    /// The new content version (`None` when removed).
    pub version: Option<String>,
    /// Who made the change, as the writer tagged its save, rename or delete (a tag the
    /// store passes on without reading it); `None` for changes found on disk (an editor).
    pub author: Option<String>,
}

/// Every manifest of the folder, by file name.
#[derive(Debug, Default)]
pub struct Catalog {
    entries: BTreeMap<String, Entry>,
}

impl Catalog {
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get_file(&self, file_name: &str) -> Option<&Entry> {
        self.entries.get(file_name)
    }

    /// The files that define workflow `name` (more than one is an error on each).
    pub fn files_named(&self, name: &str) -> Vec<&Entry> {
        self.entries.values().filter(|e| e.name() == name).collect()
    }

    /// The files that define workflow `name`; when none does, the files that would but whose
    /// name cannot be read (`name.yaml`, `.yml` or `.json` that does not parse), so that a
    /// person who broke broken.yaml and runs `broken` is told the file is broken, not that
    /// no workflow has that name. A file that declares the name always wins over a stem.
    pub fn files_for(&self, name: &str) -> Vec<&Entry> {
        let named = self.files_named(name);
        if !named.is_empty() {
            return named;
        }
        self.entries
            .values()
            .filter(|e| {
                e.name() == e.file_name
                    && e.file_name
                        .rsplit_once('.')
                        .is_some_and(|(stem, _)| stem == name)
            })
            .collect()
    }

    /// Whether the catalog holds this version of the file already, so that reading it again
    /// needs no new check. A file without content (not a regular file) is always checked.
    pub fn holds(&self, file_name: &str, version: &str) -> bool {
        !version.is_empty()
            && self
                .entries
                .get(file_name)
                .is_some_and(|e| e.version == version)
    }

    /// Records a file as read and validated. Returns the change, or `None` when nothing
    /// changed. Folder-level checks are not updated: call [`Catalog::recheck_folder`].
    pub fn upsert(&mut self, file_name: &str, validated: Validated) -> Option<Change> {
        let format = Format::from_file_name(file_name)?;
        let previous = self.entries.get(file_name);
        // Two names that are not regular files have no version to tell them apart.
        if previous.is_some_and(|e| {
            e.version == validated.version && e.file_violations == validated.violations
        }) {
            return None;
        }
        let kind = if previous.is_some() {
            ChangeKind::Changed
        } else {
            ChangeKind::Added
        };
        let last_good = match validated.workflow {
            Some(workflow) => Some(LastGood {
                workflow,
                version: validated.version.clone(),
                bytes: validated.bytes.clone(),
            }),
            None => previous.and_then(|e| e.last_good.clone()),
        };
        let version = validated.version;
        let entry = Entry {
            file_name: file_name.to_string(),
            format,
            version: version.clone(),
            bytes: validated.bytes,
            declared_name: validated.declared_name,
            file_violations: validated.violations,
            name_position: validated.name_position,
            folder_violations: Vec::new(),
            last_good,
        };
        let name = entry.name().to_string();
        self.entries.insert(file_name.to_string(), entry);
        Some(Change {
            kind,
            file_name: file_name.to_string(),
            name,
            version: Some(version),
            author: None,
        })
    }

    /// Forgets a file that is gone.
    pub fn remove(&mut self, file_name: &str) -> Option<Change> {
        self.entries.remove(file_name).map(|e| Change {
            kind: ChangeKind::Removed,
            file_name: file_name.to_string(),
            name: e.name().to_string(),
            version: None,
            author: None,
        })
    }

    /// Recomputes the checks that span files: two files with one name (an error on both), a
    /// file whose name does not match its workflow (a warning). Returns the files whose
    /// folder-level violations changed.
    pub fn recheck_folder(&mut self) -> Vec<String> {
        let mut by_name: HashMap<String, Vec<String>> = HashMap::new();
        for e in self.entries.values() {
            by_name
                .entry(e.name().to_string())
                .or_default()
                .push(e.file_name.clone());
        }
        let mut changed = Vec::new();
        for entry in self.entries.values_mut() {
            let name = entry.name().to_string();
            let mut found = Vec::new();
            if let Some(files) = by_name.get(&name).filter(|f| f.len() > 1) {
                let others: Vec<&str> = files
                    .iter()
                    .map(String::as_str)
                    .filter(|f| *f != entry.file_name)
                    .collect();
                found.push(
                    Violation::error(
                        "duplicate_name",
                        "/name",
                        format!("workflow '{name}' is also defined in {}; names must be unique in the folder", others.join(", ")),
                    )
                    .actual(name.clone()),
                );
            }
            let expected_stem = format!("{name}.");
            if entry.declared_name.as_deref().is_some_and(is_valid_name)
                && !entry.file_name.starts_with(&expected_stem)
            {
                found.push(
                    Violation::warning(
                        "file_name_mismatch",
                        "/name",
                        format!(
                            "workflow '{name}' is in {}; name the file {name}.{}",
                            entry.file_name,
                            entry.format.extension()
                        ),
                    )
                    .expected(format!("{name}.{}", entry.format.extension()))
                    .actual(entry.file_name.clone()),
                );
            }
            // Both are about the `name`, so they point at it.
            let found: Vec<Violation> = found
                .into_iter()
                .map(|v| v.at(entry.name_position))
                .collect();
            if found != entry.folder_violations {
                entry.folder_violations = found;
                changed.push(entry.file_name.clone());
            }
        }
        changed
    }
}
