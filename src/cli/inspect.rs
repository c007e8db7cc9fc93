//! The folder's reports, read without an engine: `flowdeck validate` (every violation, where
//! and why), `flowdeck list` (each workflow and whether it can run) and `flowdeck plan` (a
//! workflow's states and transitions in the order a run meets them).

use super::named::Refusal;
use super::open_store;
use crate::store::{Entry, FileRead, Store, WorkflowStatus};
use crate::workflow::names::sanitize;
use crate::workflow::plan::{Plan, PlanStep, plan};
use crate::workflow::{Checked, Format, Workflow};
use anyhow::{Result, bail};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, Serialize)]
struct FileReport {
    file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    valid: bool,
    errors: usize,
    warnings: usize,
    violations: Vec<crate::workflow::Violation>,
}

#[derive(Debug, Serialize)]
struct ValidateReport {
    valid: bool,
    files: usize,
    errors: usize,
    warnings: usize,
    reports: Vec<FileReport>,
}

/// `flowdeck schema`: the manifests' JSON Schema.
pub(super) fn schema(out: &mut impl Write) -> Result<ExitCode> {
    out.write_all(crate::workflow::schema::workflow_schema_text().as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

pub(super) fn validate(
    folder: &Path,
    paths: &[PathBuf],
    json: bool,
    out: &mut impl Write,
) -> Result<ExitCode> {
    let mut reports = Vec::new();
    let folder_only = [folder.to_path_buf()];
    let paths = if paths.is_empty() {
        &folder_only[..]
    } else {
        paths
    };
    for path in paths {
        if let Some(name) = workflow_name(path).filter(|_| path != folder) {
            match by_name(folder, name)? {
                Ok(mut named) => reports.append(&mut named),
                Err(refusal) => return refusal.tell(folder, json, out),
            }
        } else if path.is_dir() {
            let store = open_store(path)?;
            let catalog = store.catalog();
            for entry in catalog.entries() {
                reports.push(entry_report(&path.join(&entry.file_name), entry));
            }
        } else {
            // Read as the folder's files are: a named pipe or a device is reported as what it
            // is, without blocking, and never more than the size limit is read.
            let Some(read) = FileRead::at(path) else {
                bail!("cannot read {}: no such file", path.display());
            };
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            let format = Format::from_file_name(name).unwrap_or_else(|| {
                Format::sniff(&String::from_utf8_lossy(
                    &read.bytes[..read.bytes.len().min(64)],
                ))
            });
            reports.push(checked_report(path, &read.check(format)));
        }
    }
    let errors: usize = reports.iter().map(|r| r.errors).sum();
    let warnings: usize = reports.iter().map(|r| r.warnings).sum();
    let report = ValidateReport {
        valid: errors == 0,
        files: reports.len(),
        errors,
        warnings,
        reports,
    };
    if json {
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
    } else {
        for file in &report.reports {
            for v in &file.violations {
                writeln!(out, "{}", sanitize(&v.to_line(&file.file)))?;
            }
        }
        writeln!(
            out,
            "{} {} checked: {} {}, {} {}",
            report.files,
            plural(report.files, "manifest", "manifests"),
            errors,
            plural(errors, "error", "errors"),
            warnings,
            plural(warnings, "warning", "warnings"),
        )?;
    }
    Ok(if errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// `path` as a workflow's name: a word that names no file here, as a person types
/// `flowdeck validate git_health`.
fn workflow_name(path: &Path) -> Option<&str> {
    let name = path.to_str()?;
    let word = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    (word && !path.exists()).then_some(name)
}

/// The reports of the files that define workflow `name` in the folder (or would, when broken
/// past reading its name), or what to tell when none does.
fn by_name(folder: &Path, name: &str) -> Result<Result<Vec<FileReport>, Refusal>> {
    let store = open_store(folder)?;
    let catalog = store.catalog();
    let files = catalog.files_for(name);
    if files.is_empty() {
        return Ok(Err(Refusal::Unknown {
            name: name.to_string(),
            suggestion: super::named::suggestion(&store, name),
        }));
    }
    Ok(Ok(files
        .into_iter()
        .map(|entry| entry_report(&folder.join(&entry.file_name), entry))
        .collect()))
}

fn entry_report(path: &Path, entry: &Entry) -> FileReport {
    FileReport {
        file: path.display().to_string(),
        name: Some(entry.name().to_string()),
        valid: entry.error_count() == 0,
        errors: entry.error_count(),
        warnings: entry.warning_count(),
        violations: entry.violations(),
    }
}

fn checked_report(path: &Path, checked: &Checked) -> FileReport {
    FileReport {
        file: path.display().to_string(),
        name: checked.name.clone(),
        valid: checked.is_valid(),
        errors: checked.error_count(),
        warnings: checked.warning_count(),
        violations: checked.violations.clone(),
    }
}

/// The first `max` characters of `text`, with `…` when it was longer.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

// --- list ----------------------------------------------------------------------------------

#[derive(Debug, Serialize)]
struct ListItem {
    name: String,
    file: String,
    status: WorkflowStatus,
    errors: usize,
    warnings: usize,
    /// Whether a valid version (current or last good) can run.
    runnable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    category: Option<String>,
    states: usize,
    arguments: Vec<String>,
    return_values: Vec<String>,
    version: String,
}

fn list_items(store: &Store) -> Vec<ListItem> {
    let catalog = store.catalog();
    catalog
        .entries()
        .map(|e| {
            let workflow: Option<&Workflow> =
                e.current().or(e.last_good.as_ref().map(|g| &*g.workflow));
            ListItem {
                name: e.name().to_string(),
                file: e.file_name.clone(),
                status: e.status(),
                errors: e.error_count(),
                warnings: e.warning_count(),
                runnable: store.runnable(e.name()).is_ok(),
                description: workflow.map(|w| w.description.clone()),
                category: workflow.and_then(|w| w.category.clone()),
                states: workflow.map_or(0, |w| w.states.len()),
                arguments: workflow
                    .map(|w| w.arguments.keys().cloned().collect())
                    .unwrap_or_default(),
                return_values: workflow
                    .map(|w| w.return_values.keys().cloned().collect())
                    .unwrap_or_default(),
                version: e.version.clone(),
            }
        })
        .collect()
}

pub(super) fn list(folder: &Path, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let store = open_store(folder)?;
    let items = list_items(&store);
    if json {
        serde_json::to_writer_pretty(&mut *out, &serde_json::json!({ "workflows": items }))?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if items.is_empty() {
        writeln!(
            out,
            "No workflows in {}.",
            sanitize(&folder.display().to_string())
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let width = items
        .iter()
        .map(|i| i.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    writeln!(
        out,
        "{:width$}  {:<22}  {:>6}  DESCRIPTION",
        "NAME", "STATUS", "STATES"
    )?;
    for item in &items {
        let status = match item.status {
            WorkflowStatus::Valid => "valid".to_string(),
            WorkflowStatus::Warnings => format!(
                "valid, {} {}",
                item.warnings,
                plural(item.warnings, "warning", "warnings")
            ),
            WorkflowStatus::Invalid if item.runnable => {
                format!("INVALID ({}), runs last", item.errors)
            }
            WorkflowStatus::Invalid => format!(
                "INVALID ({} {})",
                item.errors,
                plural(item.errors, "error", "errors")
            ),
        };
        let description = shorten(item.description.as_deref().unwrap_or("-"), 72);
        writeln!(
            out,
            "{:width$}  {:<22}  {:>6}  {}",
            sanitize(&item.name),
            status,
            item.states,
            sanitize(&description)
        )?;
    }
    let invalid = items
        .iter()
        .filter(|i| i.status == WorkflowStatus::Invalid)
        .count();
    if invalid > 0 {
        writeln!(
            out,
            "\n{invalid} invalid: run `flowdeck validate` for details."
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

// --- plan ----------------------------------------------------------------------------------

/// The plan of workflow `name`; without a name, the workflows to choose from.
pub(super) fn show_plan(
    folder: &Path,
    name: Option<String>,
    json: bool,
    out: &mut impl Write,
) -> Result<ExitCode> {
    let Some(name) = name.as_deref() else {
        return super::named::choose(folder, "plan");
    };
    let store = open_store(folder)?;
    if let Err(refusal) = super::named::find(&store, folder, name) {
        return refusal.tell(folder, json, out);
    }
    let entry = store.entry(name)?;
    let (workflow, note) = match (entry.current(), &entry.last_good) {
        (Some(w), _) => (w.clone(), None),
        (None, Some(good)) => (
            (*good.workflow).clone(),
            Some(format!(
                "{} is currently invalid ({} errors); this is its last valid version",
                entry.file_name,
                entry.error_count()
            )),
        ),
        (None, None) => bail!(
            "workflow '{name}' ({}) is invalid: run `flowdeck validate {}` for the errors",
            entry.file_name,
            folder.join(&entry.file_name).display()
        ),
    };
    let plan = plan(&workflow);
    if json {
        serde_json::to_writer_pretty(&mut *out, &serde_json::json!({"note": note, "plan": plan}))?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(note) = note {
        writeln!(out, "note: {}", sanitize(&note))?;
    }
    write_plan(&workflow, &plan, out)?;
    Ok(ExitCode::SUCCESS)
}

fn write_plan(workflow: &Workflow, plan: &Plan, out: &mut impl Write) -> Result<()> {
    write_plan_heading(workflow, out)?;
    let width = plan.steps.iter().map(|s| s.state.len()).max().unwrap_or(0);
    let mut unreachable_header = false;
    for step in &plan.steps {
        if !step.reachable && !unreachable_header {
            writeln!(out, "\nunreachable (no run gets here):")?;
            unreachable_header = true;
        }
        write_step(step, width, out)?;
    }
    Ok(())
}

/// The workflow's name and description, what it takes and returns, and its limits.
fn write_plan_heading(workflow: &Workflow, out: &mut impl Write) -> Result<()> {
    writeln!(
        out,
        "{} — {}",
        sanitize(&workflow.name),
        sanitize(&workflow.description)
    )?;
    if !workflow.arguments.is_empty() {
        writeln!(
            out,
            "inputs:  {}",
            sanitize(&variables(&workflow.arguments))
        )?;
    }
    if !workflow.return_values.is_empty() {
        writeln!(
            out,
            "returns: {}",
            sanitize(&variables(&workflow.return_values))
        )?;
    }
    let mut limits = format!(
        "starts at '{}', at most {} steps",
        workflow.initial_state,
        workflow.max_steps()
    );
    if let Some(t) = workflow.timeout_seconds {
        limits.push_str(&format!(", {t} s in all"));
    }
    writeln!(out, "{limits}\n")?;
    Ok(())
}

/// Variables as a line: each name, `?` when it is optional, and `=` its default if it has one.
fn variables(vars: &indexmap::IndexMap<String, crate::workflow::Variable>) -> String {
    vars.iter()
        .map(|(k, v)| {
            let mut s = k.clone();
            if !v.required {
                s.push('?');
            }
            if let Some(d) = &v.default {
                s.push_str(&format!("={d}"));
            }
            s
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// One state of the plan: its action, then indented under it when it runs and where it goes.
fn write_step(step: &PlanStep, width: usize, out: &mut impl Write) -> Result<()> {
    writeln!(
        out,
        "{:>3}. {:width$}  {}",
        step.number,
        step.state,
        sanitize(&step.action)
    )?;
    let indent = " ".repeat(width + 7);
    if let Some(d) = &step.description {
        writeln!(out, "{indent}{}", sanitize(d))?;
    }
    if let Some(when) = &step.when {
        writeln!(out, "{indent}only when {}", sanitize(when))?;
    }
    for t in &step.transitions {
        let guard = t
            .when
            .as_ref()
            .map(|w| format!(" if {w}"))
            .unwrap_or_default();
        writeln!(
            out,
            "{indent}{}{} → {}",
            sanitize(&t.condition),
            sanitize(&guard),
            t.next_state
        )?;
    }
    if step.can_end {
        let how = if step.transitions.is_empty() {
            "then the run ends"
        } else {
            "otherwise the run ends"
        };
        writeln!(out, "{indent}{how}")?;
    }
    Ok(())
}
