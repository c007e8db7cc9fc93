//! Authoring methods of the engine: read, validate, create, save, rename and delete manifests,
//! preview what a run would need and send, the step plan, and the guided `workflow_next`.
//! Writes go through the store (atomic, version-checked); nothing here runs a terminal.

use super::contract::{self, MASK};
use super::events::Actor;
use super::{Engine, EngineError, WrittenFinalState};
use crate::store::{SaveRequest, Saved, WorkflowStatus};
use crate::workflow::action::Action;
use crate::workflow::model::{Signature, Variable, Workflow};
use crate::workflow::names::display_safe;
use crate::workflow::plan::{Plan, plan};
use crate::workflow::rules::{self, RuleOutcome};
use crate::workflow::source::Format;
use crate::workflow::validate::{check_bytes, check_value};
use crate::workflow::violation::{Severity, Violation};
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};
use std::sync::Arc;

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

/// One argument as a caller must fill it.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct InputSpec {
    pub name: String,
    pub description: String,
    pub required: bool,
    #[serde(rename = "type")]
    pub kind: String,
    pub default: Option<String>,
    #[serde(rename = "enum")]
    pub choices: Option<Vec<String>>,
    pub pattern: Option<String>,
    pub secret: bool,
    /// The value the workflow's last run was given, to offer again; never for a secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_value: Option<String>,
}

/// The answer to `workflow_preview_inputs`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct InputPreview {
    pub workflow: String,
    pub inputs: Vec<InputSpec>,
    pub return_values: Vec<InputSpec>,
}

/// The answer to `workflow_resolve_inputs`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct InputResolution {
    pub workflow: String,
    /// All required inputs have a valid value.
    pub ready: bool,
    pub required_missing: Vec<String>,
    pub invalid: Vec<InvalidInput>,
    pub unknown: Vec<String>,
    /// The values a run would use (secrets masked) and where each came from.
    pub values: IndexMap<String, String>,
    pub sources: IndexMap<String, contract::Source>,
}

/// An input whose value does not fit.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct InvalidInput {
    pub name: String,
    pub reason: String,
}

/// One step of `workflow_preview_rendered`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RenderedStep {
    pub state: String,
    pub tool: String,
    /// What the step would type or run, `$NAME` and `${NAME}` replaced with the inputs given
    /// or defaulted (secrets masked); other variables stay as written.
    pub renders: Option<String>,
    pub params: Value,
}

/// The answer to `workflow_preview_rendered`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RenderedPreview {
    pub workflow: String,
    pub steps: Vec<RenderedStep>,
    /// Variables a step uses that no input provides (the shell may still have them).
    pub unresolved: Vec<String>,
}

/// One step as `workflow_next` describes it (workrail's shape).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NextStep {
    pub id: String,
    pub title: String,
    pub prompt: String,
    pub require_confirmation: bool,
    pub run_condition: Option<Value>,
}

/// Guidance for the next step.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Guidance {
    pub prompt: String,
    pub requires_confirmation: bool,
    pub validation_criteria: Vec<String>,
}

/// The answer to `workflow_next`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Next {
    pub step: Option<NextStep>,
    pub guidance: Option<Guidance>,
    pub is_complete: bool,
    /// When a live run was answered: its id and whether it accepted the answer.
    pub run_id: Option<String>,
    pub answered: bool,
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

    /// The inputs a run takes and the values it returns.
    pub fn workflow_preview_inputs(&self, name: &str) -> Result<InputPreview, EngineError> {
        let wf = self.runnable(name)?;
        let last = self.last_run_inputs(&wf.name);
        let spec = |(name, v): (&String, &Variable)| InputSpec {
            name: name.clone(),
            description: v.description.clone(),
            required: v.required,
            kind: v.kind().as_str().to_string(),
            default: v.default.as_ref().map(ToString::to_string),
            choices: v
                .choices
                .as_ref()
                .map(|c| c.iter().map(ToString::to_string).collect()),
            pattern: v.pattern.clone(),
            secret: v.secret,
            last_value: None,
        };
        Ok(InputPreview {
            workflow: wf.name.clone(),
            inputs: wf
                .arguments
                .iter()
                .map(|arg| InputSpec {
                    last_value: last.get(arg.0).filter(|_| !arg.1.secret).cloned(),
                    ..spec(arg)
                })
                .collect(),
            return_values: wf.return_values.iter().map(spec).collect(),
        })
    }

    /// The inputs the workflow's newest journaled run was started with (secrets are masked
    /// in journals, and left out by the caller anyway); empty without one.
    fn last_run_inputs(&self, workflow: &str) -> IndexMap<String, String> {
        let Some(run) = self.journal().list(Some(workflow), 1).into_iter().next() else {
            return IndexMap::new();
        };
        let first = self.journal().read(&run.run_id, 0, 1).unwrap_or_default();
        match first.into_iter().next().map(|e| e.body) {
            Some(crate::engine::journal::RunEvent::RunStarted { inputs, .. }) => inputs,
            _ => IndexMap::new(),
        }
    }

    /// Whether a run with these inputs (and, given a session, what is set there) could start.
    pub async fn workflow_resolve_inputs(
        &self,
        name: &str,
        inputs: &IndexMap<String, String>,
        session_id: Option<&str>,
        actor: &Actor,
    ) -> Result<InputResolution, EngineError> {
        let wf = self.runnable(name)?;
        let missing: Vec<&str> = wf
            .arguments
            .keys()
            .filter(|k| !inputs.contains_key(*k))
            .map(String::as_str)
            .collect();
        let session_values = match session_id {
            Some(id) if !missing.is_empty() => {
                self.read_env(id, &missing, None, actor).await?.values
            }
            _ => IndexMap::new(),
        };
        Ok(
            match contract::resolve_inputs(&wf, inputs, &session_values) {
                Ok(resolved) => InputResolution {
                    workflow: wf.name.clone(),
                    ready: true,
                    required_missing: Vec::new(),
                    invalid: Vec::new(),
                    unknown: Vec::new(),
                    values: contract::masked(&wf, &resolved.values),
                    sources: resolved.sources,
                },
                Err(problems) => InputResolution {
                    workflow: wf.name.clone(),
                    ready: false,
                    required_missing: problems.missing,
                    invalid: problems
                        .invalid
                        .into_iter()
                        .map(|(name, reason)| InvalidInput { name, reason })
                        .collect(),
                    unknown: problems.unknown,
                    values: IndexMap::new(),
                    sources: IndexMap::new(),
                },
            },
        )
    }

    /// What each step would type or run with these inputs; nothing is executed.
    pub fn workflow_preview_rendered(
        &self,
        name: &str,
        inputs: &IndexMap<String, String>,
    ) -> Result<RenderedPreview, EngineError> {
        let wf = self.runnable(name)?;
        let mut values: IndexMap<String, String> = wf
            .arguments
            .iter()
            .filter_map(|(k, v)| v.default.as_ref().map(|d| (k.clone(), d.to_string())))
            .collect();
        values.extend(inputs.iter().map(|(k, v)| (k.clone(), v.clone())));
        let values = contract::masked(&wf, &values);
        let mut unresolved = Vec::new();
        let steps = plan(&wf)
            .steps
            .iter()
            .filter_map(|step| wf.states.get(&step.state).map(|s| (step.state.clone(), s)))
            .map(|(state, s)| {
                let text = match &s.action {
                    Action::SendInput(p) => p.input_text.clone(),
                    Action::RunCommand(p) => Some(p.command.clone()),
                    _ => None,
                };
                let renders = text.map(|t| expand(&t, &values, &mut unresolved));
                RenderedStep {
                    state,
                    tool: s.action.tool().as_str().to_string(),
                    renders,
                    params: s.action.params(),
                }
            })
            .collect();
        unresolved.sort();
        unresolved.dedup();
        Ok(RenderedPreview {
            workflow: wf.name.clone(),
            steps,
            unresolved,
        })
    }

    /// workrail's `workflow_next`: the next step of a workflow given the steps completed and a
    /// context of variables. Given a `run_id` and an `answer`, it answers that run's paused
    /// `prompt` step instead, and then describes the run's step after it.
    pub fn workflow_next(
        &self,
        workflow: &str,
        completed: &[String],
        context: &Map<String, Value>,
        run_answer: Option<(&str, String)>,
        actor: &Actor,
    ) -> Result<Next, EngineError> {
        let mut answered = false;
        let mut run_id = None;
        let wf = self.runnable(workflow)?;
        if let Some((id, answer)) = run_answer {
            // An answer meant for one workflow's question must not answer another's.
            if let Some(status) = self.runs().status(id)
                && status.workflow_name != workflow
            {
                return Err(EngineError::InvalidParams(format!(
                    "run {id} is a run of {}, not of {}; give the workflow the run belongs to",
                    display_safe(&status.workflow_name),
                    display_safe(workflow)
                )));
            }
            self.answer_prompt(id, answer, actor)?;
            answered = true;
            run_id = Some(id.to_string());
        }
        let order = plan(&wf);
        let next = order.steps.iter().filter(|s| s.reachable).find(|step| {
            if completed.contains(&step.state) {
                return false;
            }
            match wf.states.get(&step.state).and_then(|s| s.when.as_ref()) {
                // A step whose condition does not hold for this context is skipped; one that
                // cannot be evaluated (a variable of the wrong type) is shown.
                Some(guard) => guard.evaluate(context).unwrap_or(true),
                None => true,
            }
        });
        let Some(step) = next else {
            return Ok(Next {
                step: None,
                guidance: None,
                is_complete: true,
                run_id,
                answered,
            });
        };
        let state = wf.states.get(&step.state);
        let (prompt, confirm, criteria) = match state.map(|s| &s.action) {
            Some(Action::Prompt(p)) => (
                p.prompt.clone(),
                p.require_confirmation,
                p.validation
                    .iter()
                    .flat_map(|r| r.messages())
                    .map(str::to_string)
                    .collect(),
            ),
            _ => (step.action.clone(), false, Vec::new()),
        };
        Ok(Next {
            step: Some(NextStep {
                id: step.state.clone(),
                title: step
                    .description
                    .clone()
                    .unwrap_or_else(|| step.state.clone()),
                prompt: prompt.clone(),
                require_confirmation: confirm,
                run_condition: state
                    .and_then(|s| s.when.as_ref())
                    .and_then(|g| serde_json::to_value(g).ok()),
            }),
            guidance: Some(Guidance {
                prompt,
                requires_confirmation: confirm,
                validation_criteria: criteria,
            }),
            is_complete: false,
            run_id,
            answered,
        })
    }
}

/// Replaces `$NAME` and `${NAME}` with known values; unknown names are noted and left as is.
fn expand(text: &str, values: &IndexMap<String, String>, unresolved: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        let (name, consumed) = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                Some(end) if is_name(&braced[..end]) => (&braced[..end], end + 2),
                _ => ("", 0),
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            if is_name(&after[..end]) {
                (&after[..end], end)
            } else {
                ("", 0)
            }
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
            continue;
        }
        match values.get(name) {
            Some(value) => out.push_str(if value == MASK { MASK } else { value }),
            None => {
                unresolved.push(name.to_string());
                out.push_str(&rest[pos..pos + 1 + consumed]);
            }
        }
        rest = &after[consumed..];
    }
    out.push_str(rest);
    out
}

fn is_name(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && s.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
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
    use super::*;

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
