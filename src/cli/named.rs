//! A workflow of the folder by the name a person typed, looked up by `run`, `plan` and
//! `validate` before anything starts, and the same way whether the folder's server is up or
//! not: found, or refused with what to tell (a "did you mean" for a name no file defines, the
//! file's violations with line and column for a file that is broken). Nothing is run or
//! journaled for a refused name. And what `run` and `plan` print when given no name: the
//! workflows there are.

use crate::store::{Store, StoreError};
use crate::workflow::names::{display_safe, sanitize};
use crate::workflow::suggest::closest;
use crate::workflow::{Violation, Workflow};
use anyhow::Result;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Why a name typed cannot be run (or planned).
#[derive(Debug)]
pub(super) enum Refusal {
    /// No file defines it; the closest name there is, when one is close.
    Unknown {
        name: String,
        suggestion: Option<String>,
    },
    /// Its file is invalid (it may not even parse) and has no valid version to run.
    Invalid {
        name: String,
        file: PathBuf,
        violations: Vec<Violation>,
    },
    /// Anything else the folder refuses: two files with the name.
    Other(StoreError),
}

/// The workflow `name` of the folder, as a run of it would get it.
pub(super) fn find(store: &Store, folder: &Path, name: &str) -> Result<Arc<Workflow>, Refusal> {
    match store.runnable(name) {
        Ok((workflow, _)) => Ok(workflow),
        Err(StoreError::NotFound(_)) => Err(Refusal::Unknown {
            name: name.to_string(),
            suggestion: suggestion(store, name),
        }),
        Err(StoreError::Invalid {
            name,
            file,
            violations,
        }) => Err(Refusal::Invalid {
            name,
            file: folder.join(file),
            violations,
        }),
        Err(other) => Err(Refusal::Other(other)),
    }
}

/// The name of the folder closest to `name`, if one is close enough to be a likely typo.
pub(super) fn suggestion(store: &Store, name: &str) -> Option<String> {
    let catalog = store.catalog();
    // A file whose name cannot be read goes by its file name, which no one types.
    let names: Vec<&str> = catalog
        .entries()
        .map(|e| e.name())
        .filter(|n| !n.contains('.'))
        .collect();
    closest(name, names).map(str::to_string)
}

impl Refusal {
    /// As `validate` for a broken file (1: what was checked has errors); 2 for a run that
    /// could not even be asked for.
    fn exit_code(&self) -> ExitCode {
        match self {
            Refusal::Invalid { .. } => ExitCode::FAILURE,
            Refusal::Unknown { .. } | Refusal::Other(_) => ExitCode::from(2),
        }
    }

    fn final_state(&self) -> &'static str {
        match self {
            Refusal::Unknown { .. } => "workflow_not_found",
            Refusal::Invalid { .. } | Refusal::Other(_) => "definition_invalid",
        }
    }

    fn name(&self) -> &str {
        match self {
            Refusal::Unknown { name, .. } | Refusal::Invalid { name, .. } => name,
            Refusal::Other(StoreError::DuplicateName { name, .. }) => name,
            Refusal::Other(_) => "",
        }
    }

    /// One line: what is wrong and what to do.
    fn message(&self, folder: &Path) -> String {
        let shown = || sanitize(&folder.display().to_string());
        match self {
            Refusal::Unknown {
                name,
                suggestion: Some(close),
            } => format!(
                "workflow {} not found in {} (did you mean '{close}'?)",
                display_safe(name),
                shown()
            ),
            Refusal::Unknown { name, .. } => format!(
                "workflow {} not found in {} (`flowdeck list` shows the workflows there)",
                display_safe(name),
                shown()
            ),
            Refusal::Invalid {
                name,
                file,
                violations,
            } => {
                let errors = violations.iter().filter(|v| v.is_error()).count();
                let file = sanitize(&file.display().to_string());
                format!(
                    "workflow {} ({file}) is invalid: {errors} error{} (`flowdeck validate {file}` checks it again once fixed)",
                    display_safe(name),
                    if errors == 1 { "" } else { "s" },
                )
            }
            Refusal::Other(e) => sanitize(&e.to_string()),
        }
    }

    /// Tells the refusal: the file's violations as `validate` writes them, then the message,
    /// on stderr; with `json`, the same as a result object on stdout (`success: false`).
    pub(super) fn tell(&self, folder: &Path, json: bool, out: &mut impl Write) -> Result<ExitCode> {
        let message = self.message(folder);
        if json {
            let mut told = json!({
                "success": false,
                "workflow_name": self.name(),
                "final_state": self.final_state(),
                "error": message,
            });
            match self {
                Refusal::Unknown {
                    suggestion: Some(close),
                    ..
                } => told["did_you_mean"] = json!(close),
                Refusal::Invalid {
                    file, violations, ..
                } => {
                    told["file"] = json!(file.display().to_string());
                    told["violations"] = json!(violations);
                }
                _ => {}
            }
            serde_json::to_writer_pretty(&mut *out, &told)?;
            writeln!(out)?;
        }
        if let Refusal::Invalid {
            file, violations, ..
        } = self
        {
            let file = file.display().to_string();
            for v in violations {
                eprintln!("{}", sanitize(&v.to_line(&file)));
            }
        }
        eprintln!("flowdeck: {message}");
        Ok(self.exit_code())
    }
}

/// `run` or `plan` given no name: the workflows of the folder, each with what it does, on
/// stderr, and exit 2, as for any command line that does not say enough.
pub(super) fn choose(folder: &Path, command: &str) -> Result<ExitCode> {
    let store = super::open_store(folder)?;
    let catalog = store.catalog();
    let mut rows: Vec<(String, String)> = catalog
        .entries()
        .map(|e| {
            let about = match e.current().or(e.last_good.as_ref().map(|g| &*g.workflow)) {
                Some(w) => w.description.clone(),
                None => format!(
                    "INVALID: `flowdeck validate {}`",
                    folder.join(&e.file_name).display()
                ),
            };
            (e.name().to_string(), about)
        })
        .collect();
    rows.sort();
    let shown = sanitize(&folder.display().to_string());
    if rows.is_empty() {
        eprintln!(
            "flowdeck {command}: no workflows in {shown} yet (`flowdeck` opens the studio, where A creates one; --workflows DIR names another folder)"
        );
        return Ok(ExitCode::from(2));
    }
    let usage = match command {
        "run" => "flowdeck run NAME [-i KEY=VALUE]...",
        _ => "flowdeck plan NAME",
    };
    eprintln!("flowdeck {command}: which workflow? {usage}\n\nworkflows in {shown}:");
    let width = rows
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(0);
    for (name, about) in &rows {
        eprintln!(
            "  {:width$}  {}",
            sanitize(name),
            sanitize(&one_line(about, 72))
        );
    }
    Ok(ExitCode::from(2))
}

/// The first `max` characters of `text` on one line, with `…` when there was more.
fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let mut cut: String = flat.chars().take(max - 1).collect();
    cut.push('…');
    cut
}
