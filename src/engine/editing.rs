//! What an editor of manifests needs from the engine, beyond saving (authoring.rs): a draft
//! checked as it is typed (violations and the step plan of the text as it stands), recovery
//! copies of unsaved text, and new workflows from templates or from another workflow.

use super::authoring::ManifestValidation;
use super::error::EngineError;
use super::{Actor, Engine};
use crate::store::recovery::Recovered;
use crate::store::{SaveRequest, Saved, rewrite_name};
use crate::workflow::Format;
use crate::workflow::plan::{Plan, plan};
use crate::workflow::validate::check_bytes;

/// A manifest's text checked as it stands: what the editor shows beside it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Draft {
    pub validation: ManifestValidation,
    /// The step plan, when the text is a valid workflow.
    pub plan: Option<Plan>,
}

/// A starting point for a new workflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Template {
    pub id: &'static str,
    pub title: &'static str,
    /// A valid manifest whose name is `NAME`.
    pub text: &'static str,
}

/// The templates a new workflow starts from: the common shapes.
pub const TEMPLATES: &[Template] = &[
    Template {
        id: "command",
        title: "a command with a contract (inputs, return values)",
        text: include_str!("../workflow/templates/command.yaml"),
    },
    Template {
        id: "service",
        title: "start a service, wait until it is ready, check it, stop it",
        text: include_str!("../workflow/templates/service.yaml"),
    },
    Template {
        id: "guided",
        title: "guided prompt steps with checked answers and a confirmation",
        text: include_str!("../workflow/templates/guided.yaml"),
    },
];

impl Engine {
    /// Checks a manifest's text (YAML or JSON) as the store would, without saving it.
    pub fn workflow_draft(&self, content: &str) -> Draft {
        let format = Format::sniff(content);
        let checked = check_bytes(content.as_bytes(), format);
        let plan = checked.workflow.as_ref().map(plan);
        Draft {
            validation: ManifestValidation::from_checked(&checked),
            plan,
        }
    }

    /// Saves an editor's text back into the file it came from, with the version it was based
    /// on: text that is broken beyond naming anything is kept too (the file is listed as
    /// broken and its last good version keeps running).
    pub fn workflow_save_file(
        &self,
        file: &str,
        content: &str,
        expected_version: Option<&str>,
        actor: &Actor,
    ) -> Result<Saved, EngineError> {
        self.save_tagged(
            SaveRequest {
                content,
                expected_version,
                file_name: Some(file),
                ..SaveRequest::default()
            },
            actor,
        )
    }

    /// Where a workflow's file is on disk, for an editor of the person's own.
    pub fn workflow_file_path(&self, name: &str) -> Result<std::path::PathBuf, EngineError> {
        let entry = self.store().entry(name)?;
        Ok(self.store().root().join(&entry.file_name))
    }

    /// Keeps unsaved text of manifest `file`, typed over version `base_version` of it
    /// (`None`: not known), where a crash cannot take it.
    pub fn recovery_save(
        &self,
        file: &str,
        text: &str,
        base_version: Option<&str>,
    ) -> Result<(), EngineError> {
        Ok(self.store().recovery_save(file, text, base_version)?)
    }

    /// Drops the recovery copy of `file` (it was saved, or its changes thrown away).
    pub fn recovery_discard(&self, file: &str) -> Result<(), EngineError> {
        Ok(self.store().recovery_discard(file)?)
    }

    /// Unsaved text left by an editor that did not close (a crash, a kill).
    pub fn recovery_list(&self) -> Vec<Recovered> {
        self.store().recovery_list()
    }

    /// A new workflow `name` from template `template`, saved (never over an existing one).
    pub fn workflow_from_template(
        &self,
        template: &str,
        name: &str,
        actor: &Actor,
    ) -> Result<Saved, EngineError> {
        let template = TEMPLATES.iter().find(|t| t.id == template).ok_or_else(|| {
            EngineError::InvalidParams(format!(
                "no template {}: {}",
                crate::workflow::names::display_safe(template),
                TEMPLATES
                    .iter()
                    .map(|t| t.id)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        self.save_new(template.text, Format::Yaml, name, actor)
    }

    /// A copy of workflow `name` as `new_name` (its text, comments kept, under the new name).
    pub fn workflow_duplicate(
        &self,
        name: &str,
        new_name: &str,
        actor: &Actor,
    ) -> Result<Saved, EngineError> {
        let document = self.workflow_get(name)?;
        let format = Format::from_file_name(&document.file).unwrap_or(Format::Yaml);
        self.save_new(&document.content, format, new_name, actor)
    }

    pub(super) fn save_new(
        &self,
        text: &str,
        format: Format,
        name: &str,
        actor: &Actor,
    ) -> Result<Saved, EngineError> {
        if !crate::workflow::names::is_valid_name(name) {
            return Err(EngineError::InvalidParams(format!(
                "{} is not a workflow name: lowercase letters, digits and _ only",
                crate::workflow::names::display_safe(name)
            )));
        }
        let content = rewrite_name(text.as_bytes(), format, name)?;
        // A first workflow in a folder that does not exist yet (a binary installed and
        // started where there is no `workflows/`): asking for a new workflow is asking for
        // its folder too. Only a missing one: a file or an unreadable folder there is the
        // person's to settle, and saving says why it fails.
        let root = self.store().root().to_path_buf();
        if std::fs::symlink_metadata(&root).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
        {
            std::fs::create_dir_all(&root).map_err(|source| crate::store::StoreError::Io {
                path: root.clone(),
                source,
            })?;
            tracing::info!("created the workflows folder {}", root.display());
        }
        self.save_tagged(
            SaveRequest {
                content: &content,
                format: Some(format),
                ..SaveRequest::default()
            },
            actor,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_is_a_valid_workflow_once_named() {
        for t in TEMPLATES {
            let text = t.text.replace("name: NAME", "name: from_template");
            let checked = check_bytes(text.as_bytes(), Format::Yaml);
            assert!(
                checked.violations.is_empty(),
                "{}: {:?}",
                t.id,
                checked.violations
            );
        }
    }
}
