//! The authoring tools: the manifest schema, creating, reading, validating, saving, renaming
//! and deleting workflows, and previewing their inputs, rendered steps and step plan.

use super::{
    CallContext, ToolDef, Toolset, WorkflowSchema, ok, output_schema_of, parse, saving, schema_of,
    step_tools, unknown_tool,
};
use super::{READ, REMOVE, REPLACE};
use crate::engine::Engine;
use crate::engine::Saved;
use crate::engine::authoring::{
    Created, InputPreview, InputResolution, ManifestValidation, RenderedPreview, SessionDraft,
    WorkflowDocument, WorkflowList,
};
use crate::mcp::args::*;
use crate::mcp::errors::ToolError;
use crate::workflow::plan::Plan;
use crate::workflow::rules::RuleOutcome;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;

/// The answer to `workflow_validate`: a manifest's violations, or (with `workflowId`, `stepId`
/// and `output`) workrail's verdict on a step's output.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
// MCP wants an object at the root of an output schema; both shapes are objects.
#[schemars(extend("type" = "object"))]
pub enum Validation {
    Manifest(ManifestValidation),
    StepOutput(RuleOutcome),
}

/// This group's tools, in the order clients list them.
#[allow(
    clippy::too_many_lines,
    reason = "a declarative table: one entry per tool"
)]
pub(super) fn defs() -> Vec<ToolDef> {
    vec![
        tool!(
            "get_workflow_schema",
            Authoring,
            "Workflow schema",
            READ,
            NoArgs => WorkflowSchema,
            "The manifest JSON Schema and the step tools with their parameters: read it before writing a workflow."
        ),
        tool!(
            "create_workflow",
            Authoring,
            "Create a workflow",
            REPLACE,
            CreateArgs => Created,
            "Validate a workflow definition (a JSON object) and store it as <name>.json. An invalid one is not stored: fix its validation_errors and call again."
        ),
        // A runner needs it as much as an author does.
        ToolDef {
            also: &[Toolset::Runs],
            ..tool!(
                "workflow_list",
                Authoring,
                "List workflows",
                READ,
                NoArgs => WorkflowList,
                "The folder's workflows: name, description, valid or not, runs and last result."
            )
        },
        tool!(
            "workflow_get",
            Authoring,
            "Get a workflow",
            READ,
            NameArgs => WorkflowDocument,
            "A workflow's file: content, format, version (pass it to workflow_save as expected_version) and violations."
        ),
        tool!(
            "workflow_validate",
            Authoring,
            "Validate",
            READ,
            ValidateArgs => Validation,
            "Check a manifest's text without saving it: every violation with its line. Or, with workflowId, stepId and output, check a step's output against that step's rules."
        ),
        tool!(
            "workflow_save",
            Authoring,
            "Save a workflow",
            REPLACE,
            SaveArgs => Saved,
            "Save a manifest's text (YAML or JSON) under the name it declares. With expected_version, fails if the file changed since you read it."
        ),
        tool!(
            "workflow_rename",
            Authoring,
            "Rename a workflow",
            REMOVE,
            RenameArgs => Saved,
            "Rename a workflow and its file, comments kept. Refused while it runs."
        ),
        tool!(
            "workflow_delete",
            Authoring,
            "Delete a workflow",
            REMOVE,
            DeleteArgs => Saved,
            "Delete a workflow's file. Refused while it runs."
        ),
        // A runner needs it as much as an author does.
        ToolDef {
            also: &[Toolset::Runs],
            ..tool!(
                "workflow_preview_inputs",
                Authoring,
                "Workflow inputs",
                READ,
                NameArgs => InputPreview,
                "The inputs a workflow takes (type, default, choices, secret) and the values it returns."
            )
        },
        tool!(
            "workflow_resolve_inputs",
            Authoring,
            "Check inputs",
            READ,
            InputsArgs => InputResolution,
            "Check inputs for a run without running it: ready, missing, invalid, and the values a run would use."
        ),
        tool!(
            "workflow_preview_rendered",
            Authoring,
            "Preview a run",
            READ,
            RenderArgs => RenderedPreview,
            "What each step would type or run with these inputs. Nothing runs."
        ),
        tool!(
            "workflow_step_plan",
            Authoring,
            "Step plan",
            READ,
            NameArgs => Plan,
            "A workflow's states in run order with their actions and transitions."
        ),
        tool!(
            "workflow_draft_from_session",
            Authoring,
            "Draft from a session",
            READ,
            DraftArgs => SessionDraft,
            "Draft a workflow from what was typed in a shell session: commands, answers to prompts, secrets as arguments. Returns valid YAML; nothing is saved (tidy it, then workflow_save)."
        ),
    ]
}

/// Runs one of this group's tools.
pub(super) async fn call(
    e: &Arc<Engine>,
    name: &str,
    args: Value,
    cx: &CallContext,
) -> Result<JsonObject, ToolError> {
    match name {
        "get_workflow_schema" => ok(WorkflowSchema {
            schema: crate::workflow::schema::workflow_schema().clone(),
            tools: step_tools(),
            reference: "flowdeck://spec (the manifest reference, with examples)",
        }),
        "create_workflow" => {
            let a: CreateArgs = parse(name, args)?;
            let actor = cx.actor.clone();
            ok(saving(e, move |e| {
                e.create_workflow(
                    Value::Object(a.workflow_definition),
                    a.overwrite_existing,
                    &actor,
                )
            })
            .await?)
        }
        "workflow_list" => ok(e.workflow_list()),
        "workflow_get" => ok(e.workflow_get(&parse::<NameArgs>(name, args)?.name)?),
        "workflow_validate" => validate(e, name, args),
        "workflow_save" => {
            let a: SaveArgs = parse(name, args)?;
            let actor = cx.actor.clone();
            ok(saving(e, move |e| {
                e.workflow_save(
                    &a.content,
                    a.expected_version.as_deref(),
                    a.overwrite,
                    &actor,
                )
            })
            .await?)
        }
        "workflow_rename" => {
            let a: RenameArgs = parse(name, args)?;
            let actor = cx.actor.clone();
            ok(saving(e, move |e| {
                e.workflow_rename(&a.name, &a.new_name, a.expected_version.as_deref(), &actor)
            })
            .await?)
        }
        "workflow_delete" => {
            let a: DeleteArgs = parse(name, args)?;
            let actor = cx.actor.clone();
            ok(saving(e, move |e| {
                e.workflow_delete(&a.name, a.expected_version.as_deref(), &actor)
            })
            .await?)
        }
        "workflow_preview_inputs" => {
            ok(e.workflow_preview_inputs(&parse::<NameArgs>(name, args)?.name)?)
        }
        "workflow_resolve_inputs" => {
            let a: InputsArgs = parse(name, args)?;
            let inputs =
                inputs_text(&a.inputs).map_err(|m| ToolError::invalid_arguments(name, m))?;
            ok(
                e.workflow_resolve_inputs(&a.name, &inputs, a.session_id.as_deref(), &cx.actor)
                    .await?,
            )
        }
        "workflow_preview_rendered" => {
            let a: RenderArgs = parse(name, args)?;
            let inputs =
                inputs_text(&a.inputs).map_err(|m| ToolError::invalid_arguments(name, m))?;
            ok(e.workflow_preview_rendered(&a.name, &inputs)?)
        }
        "workflow_step_plan" => ok(e.workflow_step_plan(&parse::<NameArgs>(name, args)?.name)?),
        "workflow_draft_from_session" => {
            let a: DraftArgs = parse(name, args)?;
            ok(e.workflow_draft_from_session(&a.session_id, &a.name, &a.description)?)
        }
        _ => Err(unknown_tool(name)),
    }
}

/// `workflow_validate`: a manifest's violations, or a step's output against its rules.
fn validate(e: &Engine, name: &str, args: Value) -> Result<JsonObject, ToolError> {
    let a: ValidateArgs = parse(name, args)?;
    match (a.content, a.workflow_id, a.step_id, a.output) {
        (Some(content), None, None, None) => {
            ok(Validation::Manifest(e.validate_manifest(&content)))
        }
        (None, Some(w), Some(step), Some(output)) => ok(Validation::StepOutput(
            e.validate_step_output(&w, &step, &output, &a.context)?,
        )),
        _ => Err(ToolError::invalid_arguments(
            name,
            "give `content`, or `workflowId`, `stepId` and `output`",
        )),
    }
}
