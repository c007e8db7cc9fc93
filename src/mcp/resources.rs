//! Resources: the manifest reference and schema, the workflows, runs, session screens, the
//! step action catalog and the attention list, as `flowdeck://` URIs.

use super::tools::step_tools;
use crate::engine::{Actor, Engine};
use crate::workflow::action::GetScreenContentParams;
use rmcp::model::{Resource, ResourceContents, ResourceTemplate};
use serde_json::json;
use std::time::Duration;

pub const SPEC: &str = "flowdeck://spec";
pub const SCHEMA: &str = "flowdeck://schema";
pub const WORKFLOWS: &str = "flowdeck://workflows";
pub const TOOLS: &str = "flowdeck://tools";
pub const ATTENTION: &str = "flowdeck://attention";
pub const WORKFLOW_PREFIX: &str = "flowdeck://workflows/";
const RUN_PREFIX: &str = "flowdeck://runs/";
const SESSION_PREFIX: &str = "flowdeck://sessions/";

/// The manifest reference, compiled in so the binary serves it from anywhere.
const REFERENCE: &str = include_str!("../../docs/WORKFLOWS.md");

pub fn list(engine: &Engine) -> Vec<Resource> {
    let mut resources = vec![
        Resource::new(SPEC, "spec")
            .with_description(
                "The manifest reference: every field with an example (docs/WORKFLOWS.md)",
            )
            .with_mime_type("text/markdown"),
        Resource::new(SCHEMA, "schema")
            .with_description("The manifest JSON Schema (draft 2020-12)")
            .with_mime_type("application/schema+json"),
        Resource::new(WORKFLOWS, "workflows")
            .with_description("The workflows of the folder with their state")
            .with_mime_type("application/json"),
        Resource::new(TOOLS, "tools")
            .with_description(
                "The step action catalog: the tools a state can call, with their parameters",
            )
            .with_mime_type("application/json"),
        Resource::new(ATTENTION, "attention")
            .with_description(
                "Every run and terminal by what it asks of a person (needs_you, failed, done, quiet, running); updated notifications on change",
            )
            .with_mime_type("application/json"),
    ];
    for w in engine.workflow_list().workflows {
        resources.push(
            Resource::new(format!("{WORKFLOW_PREFIX}{}", w.name), w.name.clone())
                .with_description(
                    w.description
                        .unwrap_or_else(|| format!("{} (invalid)", w.file)),
                )
                .with_mime_type("text/plain"),
        );
    }
    resources
}

pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new("flowdeck://workflows/{name}", "workflow")
            .with_description("A workflow's manifest as stored (updated notifications on change)"),
        ResourceTemplate::new("flowdeck://runs/{run_id}", "run")
            .with_description("A run's status and journal"),
        ResourceTemplate::new("flowdeck://sessions/{id}/screen", "screen")
            .with_description("A terminal session's visible screen as text"),
    ]
}

/// Reads a resource; `None` when the URI names nothing.
pub async fn read(engine: &Engine, uri: &str, actor: &Actor) -> Option<ResourceContents> {
    let text = |t: String| Some(ResourceContents::text(t, uri));
    let json = |v: serde_json::Value| {
        Some(
            ResourceContents::text(serde_json::to_string_pretty(&v).unwrap_or_default(), uri)
                .with_mime_type("application/json"),
        )
    };
    match uri {
        SPEC => return text(REFERENCE.to_string()).map(|c| c.with_mime_type("text/markdown")),
        SCHEMA => return json(crate::workflow::schema::workflow_schema().clone()),
        WORKFLOWS => return json(serde_json::to_value(engine.workflow_list()).ok()?),
        TOOLS => return json(json!({ "tools": step_tools() })),
        ATTENTION => return json(serde_json::to_value(engine.attention()).ok()?),
        _ => {}
    }
    if let Some(name) = uri.strip_prefix(WORKFLOW_PREFIX) {
        let doc = engine.workflow_get(name).ok()?;
        return text(doc.content);
    }
    if let Some(run_id) = uri.strip_prefix(RUN_PREFIX) {
        let status = engine.run_status(run_id).ok()?;
        let events = engine
            .run_events(run_id, 0, 10_000, Duration::ZERO)
            .await
            .ok();
        return json(json!({"status": status, "events": events.map(|e| e.events)}));
    }
    if let Some(rest) = uri.strip_prefix(SESSION_PREFIX)
        && let Some(id) = rest.strip_suffix("/screen")
    {
        let screen = engine
            .get_screen_content(id, &GetScreenContentParams::default(), actor)
            .ok()?;
        return text(screen.content);
    }
    None
}
