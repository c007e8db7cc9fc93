//! Authoring methods of the engine: read, validate, create, save, rename and delete manifests,
//! preview what a run would need and send, the step plan, and the guided `workflow_next`.
//! Writes go through the store (atomic, version-checked); nothing here runs a terminal. Here:
//! the workflows read and written; inputs in `inputs.rs`, rendered steps in `rendered.rs`,
//! `workflow_next` in `guided.rs`.

use super::events::Actor;
use super::{Engine, EngineError, WrittenFinalState};
use crate::store::{SaveRequest, Saved, WorkflowStatus};
use crate::workflow::action::Action;
use crate::workflow::model::{Signature, Workflow};
use crate::workflow::plan::{Plan, plan};
use crate::workflow::rules::{self, RuleOutcome};
use crate::workflow::source::Format;
use crate::workflow::validate::{check_bytes, check_value};
use crate::workflow::violation::{Severity, Violation};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};
use std::sync::Arc;

mod drafts;
mod guided;
mod inputs;
mod rendered;

pub use drafts::{NoDraft, SessionDraft, draft_of};
pub use guided::{Guidance, Next, NextStep};
pub use inputs::{InputPreview, InputResolution, InputSpec, InvalidInput};
pub use rendered::{RenderedPreview, RenderedStep};

/// One workflow in a list.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct WorkflowSummary {
    pub name: String,
    pub file: String,
    pub status: WorkflowStatus,
    pub description: Option<String>,
    pub states: Option<usize>,
    pub version: String,
    pub errors: usize,
    pub warnings: usize,
    /// Runs recorded in the history, and how the last one ended.
    pub runs: u64,
    pub last_result: Option<WrittenFinalState>,
    /// When the last run ended (RFC 3339), with `last_result`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run_at: Option<String>,
    /// The file's first error in `flowdeck validate`'s form (`file:line:col: rule: message
    /// (path)`), when it has errors: what a list can show without reading the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
}

/// The answer to `workflow_list`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct WorkflowList {
    pub workflows: Vec<WorkflowSummary>,
}

/// The answer to `workflow_get`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct WorkflowDocument {
    pub name: String,
    pub file: String,
    /// The file's path relative to the workflows folder (the file name).
    pub path: String,
    pub format: Format,
    pub content: String,
    /// The manifest as JSON, when it parses.
    pub parsed: Option<Value>,
    /// SHA-256 of the content: pass it as `expected_version` when saving.
    pub version: String,
    pub status: WorkflowStatus,
    pub violations: Vec<Violation>,
    /// The version that runs while the file is broken, if it differs.
    pub last_good_version: Option<String>,
}

/// The answer to validating a manifest.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct ManifestValidation {
    pub valid: bool,
    pub name: Option<String>,
    pub errors: usize,
    pub warnings: usize,
    pub violations: Vec<Violation>,
    pub workflow_signature: Option<Signature>,
}

impl ManifestValidation {
    pub(super) fn from_checked(checked: &crate::workflow::validate::Checked) -> Self {
        ManifestValidation {
            valid: checked.is_valid(),
            name: checked.name.clone(),
            errors: checked.error_count(),
            warnings: checked.warning_count(),
            workflow_signature: checked.workflow.as_ref().map(Workflow::signature),
            violations: checked.violations.clone(),
        }
    }
}

/// The answer to `create_workflow`, in the seed's shape.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Created {
    pub success: bool,
    pub workflow_name: String,
    pub stored_file: String,
    pub workflow_signature: Option<Signature>,
    pub validation_errors: Vec<String>,
    pub error: Option<String>,
    pub version: Option<String>,
}

impl Engine {
    /// The workflows of the folder with their state and run history.
    pub fn workflow_list(&self) -> WorkflowList {
        self.workflow_list_with(&self.metadata().all())
    }

    /// The list, with run counts and last results from `meta` (read beforehand, off any lock
    /// that a disk read must not hold).
    pub(super) fn workflow_list_with(
        &self,
        meta: &std::collections::BTreeMap<String, super::meta::WorkflowMeta>,
    ) -> WorkflowList {
        let catalog = self.store().catalog();
        let mut workflows: Vec<WorkflowSummary> = catalog
            .entries()
            .map(|e| {
                let current = e.current();
                let name = e.name().to_string();
                let m = meta.get(&name).cloned().unwrap_or_default();
                WorkflowSummary {
                    file: e.file_name.clone(),
                    status: e.status(),
                    description: current.map(|w| w.description.clone()),
                    states: current.map(|w| w.states.len()),
                    version: e.version.clone(),
                    errors: e.error_count(),
                    warnings: e.warning_count(),
                    runs: m.runs,
                    last_result: m.last_final_state,
                    last_run_at: m.last_finished_at,
                    first_error: e
                        .violations()
                        .iter()
                        .find(|v| v.is_error())
                        .map(|v| v.to_line(&e.file_name)),
                    name,
                }
            })
            .collect();
        workflows.sort_by(|a, b| a.name.cmp(&b.name).then(a.file.cmp(&b.file)));
        WorkflowList { workflows }
    }

    /// One workflow's file: content, parsed form, version, violations.
    pub fn workflow_get(&self, name: &str) -> Result<WorkflowDocument, EngineError> {
        let entry = self.store().entry(name)?;
        let content = String::from_utf8_lossy(&entry.bytes).into_owned();
        let parsed =
            crate::workflow::source::parse(&entry.bytes, entry.format, &Default::default())
                .ok()
                .map(|d| d.value);
        Ok(WorkflowDocument {
            name: entry.name().to_string(),
            path: entry.file_name.clone(),
            file: entry.file_name.clone(),
            format: entry.format,
            status: entry.status(),
            violations: entry.violations(),
            last_good_version: entry
                .last_good
                .as_ref()
                .map(|g| g.version.clone())
                .filter(|v| *v != entry.version),
            version: entry.version.clone(),
            content,
            parsed,
        })
    }

    /// Validates a manifest given as text (YAML or JSON), without saving it.
    pub fn validate_manifest(&self, content: &str) -> ManifestValidation {
        let checked = check_bytes(content.as_bytes(), Format::sniff(content));
        ManifestValidation::from_checked(&checked)
    }

    /// Validates a step's output with the step's rules (a `prompt` step's `validation`), as
    /// workrail's `workflow_validate` does. `context` holds variables for rule conditions.
    pub fn validate_step_output(
        &self,
        workflow: &str,
        step: &str,
        output: &str,
        context: &Map<String, Value>,
    ) -> Result<RuleOutcome, EngineError> {
        let (wf, _) = self.store().runnable(workflow)?;
        let state = wf
            .states
            .get(step)
            .ok_or_else(|| EngineError::StepNotFound {
                workflow: workflow.to_string(),
                step: crate::workflow::names::display_safe(step),
            })?;
        let rules = match &state.action {
            Action::Prompt(p) => p.validation.as_slice(),
            _ => &[],
        };
        rules::validate_output(rules, output, context)
            .map_err(|e| EngineError::InvalidParams(e.to_string()))
    }

    /// The seed's `create_workflow`: a definition (JSON object) validated, then stored as
    /// `<name>.json`. Invalid definitions are not stored; their violations are returned.
    pub fn create_workflow(
        &self,
        definition: Value,
        overwrite: bool,
        actor: &Actor,
    ) -> Result<Created, EngineError> {
        let checked = check_value(definition.clone(), Format::Json);
        let name = checked
            .name
            .clone()
            .or_else(|| {
                definition
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .unwrap_or_default();
        let errors: Vec<String> = checked
            .violations
            .iter()
            .filter(|v| v.severity == Severity::Error)
            .map(|v| v.to_line("workflow_definition"))
            .collect();
        if !errors.is_empty() {
            return Ok(Created {
                success: false,
                workflow_name: name,
                stored_file: String::new(),
                workflow_signature: None,
                validation_errors: errors,
                error: Some("the definition is invalid; nothing was stored".into()),
                version: None,
            });
        }
        let content = serde_json::to_string_pretty(&definition)
            .map_err(|e| EngineError::InvalidParams(e.to_string()))?
            + "\n";
        let saved = self.save_tagged(
            SaveRequest {
                content: &content,
                format: Some(Format::Json),
                overwrite,
                ..SaveRequest::default()
            },
            actor,
        )?;
        Ok(Created {
            success: true,
            workflow_name: saved.name.clone(),
            stored_file: saved.file_name.clone(),
            workflow_signature: checked.workflow.as_ref().map(Workflow::signature),
            validation_errors: Vec::new(),
            error: None,
            version: saved.version,
        })
    }

    /// Saves a manifest's text (YAML or JSON, as given) under the name it declares.
    pub fn workflow_save(
        &self,
        content: &str,
        expected_version: Option<&str>,
        overwrite: bool,
        actor: &Actor,
    ) -> Result<Saved, EngineError> {
        self.save_tagged(
            SaveRequest {
                content,
                expected_version,
                overwrite,
                ..SaveRequest::default()
            },
            actor,
        )
    }

    /// Saves through the store with the changes it causes tagged as `actor`'s, so that the
    /// events they make name who saved.
    pub(super) fn save_tagged(
        &self,
        request: SaveRequest<'_>,
        actor: &Actor,
    ) -> Result<Saved, EngineError> {
        let author = author_tag(actor);
        Ok(self.store().save(SaveRequest {
            author: Some(&author),
            ..request
        })?)
    }

    /// Renames a workflow (its `name` and its file). Refused while it runs.
    pub fn workflow_rename(
        &self,
        name: &str,
        new_name: &str,
        expected_version: Option<&str>,
        actor: &Actor,
    ) -> Result<Saved, EngineError> {
        self.refuse_if_running(name, "renamed")?;
        let author = author_tag(actor);
        Ok(self
            .store()
            .rename(name, new_name, expected_version, Some(&author))?)
    }

    /// Deletes a workflow's file. Refused while it runs.
    pub fn workflow_delete(
        &self,
        name: &str,
        expected_version: Option<&str>,
        actor: &Actor,
    ) -> Result<Saved, EngineError> {
        self.refuse_if_running(name, "deleted")?;
        let author = author_tag(actor);
        Ok(self.store().delete(name, expected_version, Some(&author))?)
    }

    fn refuse_if_running(&self, name: &str, what: &'static str) -> Result<(), EngineError> {
        match self
            .runs()
            .list_active()
            .into_iter()
            .find(|r| r.workflow_name == name)
        {
            Some(run) => Err(EngineError::WorkflowRunning {
                workflow: name.to_string(),
                run_id: run.run_id,
                what,
            }),
            None => Ok(()),
        }
    }

    /// A workflow that can run now: valid, or broken with a last good version (which runs).
    pub fn runnable(&self, name: &str) -> Result<Arc<Workflow>, EngineError> {
        Ok(self.store().runnable(name)?.0)
    }

    /// The step plan: states in run order, transitions, reachability.
    pub fn workflow_step_plan(&self, name: &str) -> Result<Plan, EngineError> {
        Ok(plan(&*self.runnable(name)?))
    }
}

/// The tag a write through the engine gives the store, so that the change it causes is
/// published with who made it (see `Engine::forward_store_changes`).
pub(super) fn author_tag(actor: &Actor) -> String {
    serde_json::to_string(actor).unwrap_or_default()
}

/// Who made a change of the folder: the actor its writer tagged it with, or flowdeck itself
/// (the watcher) for a change found on disk.
pub(super) fn author_of(tag: Option<&str>) -> Actor {
    tag.and_then(|tag| serde_json::from_str(tag).ok())
        .unwrap_or(Actor::System)
}

#[cfg(test)]
mod tests {
    use super::rendered::expand;
    use indexmap::IndexMap;

    #[test]
    fn expansion_replaces_known_names_only() {
        let values: IndexMap<String, String> = [("ROOT".to_string(), "/src".to_string())].into();
        let mut unresolved = Vec::new();
        let text = expand(
            "cd $ROOT && make ${ROOT}/x $JOBS $1 $ 'a$'",
            &values,
            &mut unresolved,
        );
        assert_eq!(text, "cd /src && make /src/x $JOBS $1 $ 'a$'");
        assert_eq!(unresolved, ["JOBS"]);
    }
}
