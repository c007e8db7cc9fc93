//! The guided tool: `workflow_next`, the next step of a workflow given the steps completed,
//! and the answer to a run's paused prompt.

use super::WRITE;
use super::{CallContext, ToolDef, Toolset, ok, output_schema_of, parse, schema_of, unknown_tool};
use crate::engine::Engine;
use crate::engine::authoring::Next;
use crate::mcp::args::*;
use crate::mcp::errors::ToolError;
use rmcp::model::JsonObject;
use serde_json::Value;
use std::sync::Arc;

/// This group's tools, in the order clients list them.
pub(super) fn defs() -> Vec<ToolDef> {
    vec![tool!(
        "workflow_next",
        Guided,
        "Next step",
        WRITE,
        NextArgs => Next,
        "Answer a run's prompt step (run_id and answer; run_status shows the question). Or, for a guided workflow, the next step given the completed ones and a context."
    )]
}

/// Runs one of this group's tools.
pub(super) async fn call(
    e: &Arc<Engine>,
    name: &str,
    args: Value,
    cx: &CallContext,
) -> Result<JsonObject, ToolError> {
    match name {
        "workflow_next" => {
            let a: NextArgs = parse(name, args)?;
            let answer = match (a.run_id.as_deref(), a.answer) {
                (Some(run), Some(answer)) => Some((run, answer)),
                (None, None) => None,
                _ => {
                    return Err(ToolError::invalid_arguments(
                        name,
                        "give `run_id` and `answer` together",
                    ));
                }
            };
            ok(e.workflow_next(
                &a.workflow_id,
                &a.completed_steps,
                &a.context,
                answer,
                &cx.actor,
            )?)
        }
        _ => Err(unknown_tool(name)),
    }
}
