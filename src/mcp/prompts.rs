//! Prompts: messages that set an agent up for a task, embedding what it needs (the schema, a
//! manifest, its violations, a workflow's inputs).

use crate::engine::Engine;
use rmcp::model::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};
use serde_json::{Map, Value};

fn arg(name: &str, description: &str, required: bool) -> PromptArgument {
    PromptArgument::new(name)
        .with_description(description)
        .with_required(required)
}

pub fn list() -> Vec<Prompt> {
    vec![
        Prompt::new(
            "workflow_author",
            Some("Write a new workflow manifest for a goal"),
            Some(vec![arg(
                "goal",
                "What the workflow should do, in words",
                true,
            )]),
        ),
        Prompt::new(
            "workflow_extend",
            Some("Change an existing workflow"),
            Some(vec![
                arg("name", "The workflow to change", true),
                arg("change", "What to add or change", true),
            ]),
        ),
        Prompt::new(
            "workflow_fix_validation",
            Some("Fix a workflow's validation errors"),
            Some(vec![arg("name", "The workflow with errors", true)]),
        ),
        Prompt::new(
            "workflow_run_with_inputs",
            Some("Run a workflow, collecting its inputs first"),
            Some(vec![arg("name", "The workflow to run", true)]),
        ),
        Prompt::new(
            "format_command",
            Some("Turn a request in words into one tool call with exact arguments"),
            Some(vec![arg("request", "What the user wants done", true)]),
        ),
        Prompt::new(
            "clarify_params",
            Some("Ask for the inputs a workflow still needs"),
            Some(vec![
                arg("name", "The workflow", true),
                arg("inputs", "Inputs known so far, as JSON (optional)", false),
            ]),
        ),
    ]
}

fn get<'a>(args: &'a Map<String, Value>, key: &str) -> Result<&'a str, String> {
    args.get(key)
        .and_then(Value::as_str)
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| format!("the prompt needs the argument `{key}`"))
}

fn pretty(v: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// Builds a prompt's messages. Errors are for arguments that are missing or name nothing.
pub fn get_prompt(
    engine: &Engine,
    name: &str,
    args: &Map<String, Value>,
) -> Result<GetPromptResult, String> {
    let text = match name {
        "workflow_author" => author(args)?,
        "workflow_extend" => extend(engine, args)?,
        "workflow_fix_validation" => fix_validation(engine, args)?,
        "workflow_run_with_inputs" | "clarify_params" => collect_inputs(engine, name, args)?,
        "format_command" => format_command(engine, args)?,
        other => return Err(format!("no prompt `{other}`")),
    };
    Ok(GetPromptResult::new(vec![PromptMessage::new_text(
        Role::User,
        text,
    )]))
}

/// `workflow_author`: the goal, how a workflow is built, and the schema it must fit.
fn author(args: &Map<String, Value>) -> Result<String, String> {
    let schema = pretty(crate::workflow::schema::workflow_schema());
    Ok(format!(
        "Write a flowdeck workflow manifest (YAML) for this goal:\n\n{goal}\n\n\
         A workflow is a state machine: each state calls one step tool (send_input, await_output, run_command, \
         get_screen_content, set_env, prompt, open_terminal, exit_terminal, list_terminal_sessions) and moves on \
         by the first transition that holds (success, failure, timeout, pattern_match, pattern_no_match, always, \
         validation_passed, validation_failed). Declare the inputs it needs as `arguments` and the values it \
         leaves in the shell as `return_values`. Prefer run_command for shell commands (it returns the exit \
         status); use send_input with await_output for interactive programs, with stop_patterns for errors and \
         timeouts that lead somewhere. Check it with workflow_validate, fix every error, then save it with \
         workflow_save. The schema:\n\n```json\n{schema}\n```",
        goal = get(args, "goal")?
    ))
}

/// `workflow_extend`: the change asked for, and the manifest as it is, with its version.
fn extend(engine: &Engine, args: &Map<String, Value>) -> Result<String, String> {
    let doc = engine
        .workflow_get(get(args, "name")?)
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "Change the workflow `{}` ({}) as follows:\n\n{}\n\nIts current manifest (version {}):\n\n```\n{}\n```\n\n\
         Keep its comments and layout. Validate with workflow_validate, then save with workflow_save and \
         expected_version set to the version above, so that a concurrent edit is not overwritten.",
        doc.name,
        doc.file,
        get(args, "change")?,
        doc.version,
        doc.content
    ))
}

/// `workflow_fix_validation`: the file's violations, and its content with its version.
fn fix_validation(engine: &Engine, args: &Map<String, Value>) -> Result<String, String> {
    let doc = engine
        .workflow_get(get(args, "name")?)
        .map_err(|e| e.to_string())?;
    let lines: Vec<String> = doc
        .violations
        .iter()
        .map(|v| v.to_line(&doc.file))
        .collect();
    Ok(format!(
        "The workflow file {} has these problems:\n\n{}\n\nIts content (version {}):\n\n```\n{}\n```\n\n\
         Fix every error (warnings too where they point at a real mistake), check with workflow_validate, \
         and save with workflow_save and expected_version set to the version above.",
        doc.file,
        if lines.is_empty() {
            "(none: it is valid)".to_string()
        } else {
            lines.join("\n")
        },
        doc.version,
        doc.content
    ))
}

/// `workflow_run_with_inputs` and `clarify_params`: the inputs a workflow takes and those
/// known so far; they differ only in what is done once all are known.
fn collect_inputs(
    engine: &Engine,
    name: &str,
    args: &Map<String, Value>,
) -> Result<String, String> {
    let workflow = get(args, "name")?;
    let preview = engine
        .workflow_preview_inputs(workflow)
        .map_err(|e| e.to_string())?;
    let known = args.get("inputs").and_then(Value::as_str).unwrap_or("{}");
    let then = if name == "clarify_params" {
        "answer with the complete inputs as one JSON object.".to_string()
    } else {
        format!(
            "run it with run_workflow (workflow_name `{workflow}`) and report final_state and return_values."
        )
    };
    Ok(format!(
        "The workflow `{workflow}` takes these inputs:\n\n```json\n{}\n```\n\nKnown so far: {known}\n\n\
         Ask the user for each required input that is missing (say what it is for, and its choices or \
         pattern), check them with workflow_resolve_inputs until `ready` is true, then {then}",
        pretty(&preview.inputs),
    ))
}

/// `format_command`: the request, and the workflows that might serve it.
fn format_command(engine: &Engine, args: &Map<String, Value>) -> Result<String, String> {
    let list = engine.workflow_list();
    let names: Vec<String> = list
        .workflows
        .iter()
        .map(|w| {
            format!(
                "- {}: {}",
                w.name,
                w.description.clone().unwrap_or_default()
            )
        })
        .collect();
    Ok(format!(
        "Turn this request into exactly one flowdeck tool call, with every argument spelled out:\n\n{}\n\n\
         Prefer a workflow when one fits (run_workflow, with inputs checked by workflow_resolve_inputs); \
         otherwise the terminal tools (open_terminal, run_command, send_input + await_output). The workflows:\n\n{}",
        get(args, "request")?,
        if names.is_empty() {
            "(none)".to_string()
        } else {
            names.join("\n")
        }
    ))
}
