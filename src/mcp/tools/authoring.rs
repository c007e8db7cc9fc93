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
            "The manifest JSON Schema and the list of step tools with their parameters: read this before writing a workflow."
        ),
        tool!(
            "create_workflow",
            Authoring,
            "Create a workflow",
            REPLACE,
            CreateArgs => Created,
            "Validate a workflow definition (a JSON object) and store it as <name>.json. Invalid definitions are not stored: fix the validation_errors (each with its path) and call again."
        ),
        tool!(
            "workflow_list",
            Authoring,
            "List workflows",
            READ,
            NoArgs => WorkflowList,
            "The workflows of the folder: name, file, valid/warnings/invalid, description, states, version, runs and last result."
        ),
        tool!(
            "workflow_get",
            Authoring,
            "Get a workflow",
            READ,
            NameArgs => WorkflowDocument,
            "A workflow's file: content, parsed JSON, format, path, version (SHA-256; pass it to workflow_save as expected_version) and violations."
        ),
        tool!(
            "workflow_validate",
            Authoring,
            "Validate",
            READ,
            ValidateArgs => Validation,
            "Validate a manifest's text (content) without saving it: every violation with rule, path, line and column. Or, with workflowId, stepId and output, check a step's output against that step's rules: {valid, issues, suggestions}."
        ),
        tool!(
            "workflow_save",
            Authoring,
            "Save a workflow",
            REPLACE,
            SaveArgs => Saved,
            "Save a manifest's text (YAML or JSON) under the name it declares, atomically. Give expected_version (from workflow_get) to fail with a version conflict if someone changed it meanwhile."
        ),
        tool!(
            "workflow_rename",
            Authoring,
            "Rename a workflow",
            REMOVE,
            RenameArgs => Saved,
            "Rename a workflow: its `name` and its file. Comments and layout are kept. Refused while it runs."
        ),
        tool!(
            "workflow_delete",
            Authoring,
            "Delete a workflow",
            REMOVE,
            DeleteArgs => Saved,
            "Delete a workflow's file. Refused while it runs; give expected_version to be sure you delete what you read."
        ),
        tool!(
            "workflow_preview_inputs",
            Authoring,
            "Workflow inputs",
            READ,
            NameArgs => InputPreview,
            "The inputs a workflow takes (type, required, default, choices, pattern, secret) and the values it returns."
        ),
        tool!(
            "workflow_resolve_inputs",
            Authoring,
            "Check inputs",
            READ,
            InputsArgs => InputResolution,
            "Check inputs for a run without running it: ready, required_missing, invalid, and the values a run would use (reading the session's environment when session_id is given)."
        ),
        tool!(
            "workflow_preview_rendered",
            Authoring,
            "Preview a run",
            READ,
            RenderArgs => RenderedPreview,
            "What each step would type or run, with $VARIABLES replaced by the inputs and defaults. Nothing is executed."
        ),
        tool!(
            "workflow_step_plan",
            Authoring,
            "Step plan",
            READ,
            NameArgs => Plan,
            "A workflow's states in run order with their actions and transitions, and which are reachable."
        ),
        tool!(
            "workflow_draft_from_session",
            Authoring,
            "Draft from a session",
            READ,
            DraftArgs => SessionDraft,
            "Draft a workflow from what was typed in a shell session since it opened (or since the mark a person set in the studio): each command a run_command step (a failure that happened by hand keeps its failure branch), an interactive program's answers send_input steps after await_output of the prompt that was seen, answers typed while the terminal hid them secret arguments. Returns the YAML, already valid; nothing is saved: tidy it, then workflow_save."
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
