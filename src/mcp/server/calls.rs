//! A tool call's outcome as the client gets it: a static tool's listing, a handler's panic
//! caught as an error result, and an error turned into a tool result the agent can read.

// A tool error is built at most once per failed call and returned straight to the client;
// boxing it would buy nothing but indirection.
#![allow(clippy::result_large_err)]

use crate::mcp::errors::ToolError;
use crate::mcp::tools::ToolDef;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use std::sync::Arc;

/// A static tool as `tools/list` shows it.
pub(super) fn static_tool(t: &ToolDef) -> Tool {
    Tool::new(t.name, t.description, Arc::new((t.schema)()))
        .with_title(t.title)
        .with_raw_output_schema(Arc::new((t.output_schema)()))
        .annotate(
            ToolAnnotations::with_title(t.title)
                .read_only(t.hints.read_only)
                .destructive(t.hints.destructive)
                .idempotent(t.hints.idempotent)
                .open_world(t.hints.open_world),
        )
}

/// Runs a tool's work in its own task, so that a panic in it becomes an error result for that
/// call (with the panic's message, as the engine reports a run a bug ended) and never takes
/// the server down.
pub(super) async fn caught<F>(tool: &str, work: F) -> Result<JsonObject, ToolError>
where
    F: std::future::Future<Output = Result<JsonObject, ToolError>> + Send + 'static,
{
    match tokio::spawn(work).await {
        Ok(outcome) => outcome,
        Err(e) => {
            let message = match e.try_into_panic() {
                Ok(panic) => crate::panics::message(&*panic),
                Err(e) => e.to_string(),
            };
            tracing::error!("tool {tool} panicked: {message}");
            Err(ToolError::internal(format!(
                "flowdeck failed inside {tool} (a bug): {message}"
            )))
        }
    }
}

/// A call's answer. A success is `structuredContent` (with the same JSON as text), which
/// matches the tool's output schema. An error carries its payload only as JSON text: clients
/// check `structuredContent` against the output schema even when `isError` is set (the
/// TypeScript SDK does), and the error payload is not the tool's output.
pub(super) fn to_result(outcome: Result<JsonObject, ToolError>) -> CallToolResult {
    match outcome {
        Ok(object) => CallToolResult::structured(Value::Object(object)),
        Err(error) => {
            let text = serde_json::to_string(&error).unwrap_or_else(|_| {
                json!({"error_code": error.error_code, "message": error.message}).to_string()
            });
            CallToolResult::error(vec![ContentBlock::text(text)])
        }
    }
}
