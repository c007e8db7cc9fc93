//! The terminal tools: open, type, read, search, wait, run a command, list, resize, close;
//! each a call of the engine's terminal methods, as a workflow's step makes it.

use super::ceiling::{self, Waited};
use super::{
    CallContext, Hints, ToolDef, Toolset, ok, output_schema_of, parse, schema_of, unknown_tool,
};
use super::{EXECUTE, READ, REMOVE, WAIT, WRITE};
use crate::engine::Engine;
use crate::engine::{
    AwaitOutput, ClosedSession, CommandOutput, Resized, ScreenContent, SearchResult, SentInput,
    SessionInfo, SessionList,
};
use crate::mcp::args::*;
use crate::mcp::errors::ToolError;
use crate::workflow::action::DEFAULT_WAIT_SECONDS;
use rmcp::model::JsonObject;
use serde_json::Value;
use std::sync::Arc;

/// This group's tools, in the order clients list them.
pub(super) fn defs() -> Vec<ToolDef> {
    vec![
        tool!(
            "open_terminal",
            Terminal,
            "Open a terminal",
            EXECUTE,
            OpenTerminalArgs => SessionInfo,
            "Open a terminal on a real PTY: your shell, or `command`. Returns its session_id once a shell's prompt is up. Close it with exit_terminal."
        ),
        tool!(
            "send_input",
            Terminal,
            "Type into a terminal",
            EXECUTE,
            SendInputArgs => SentInput,
            "Type text or press keys into a session. Returns at once; await_output waits for the answer."
        ),
        tool!(
            "get_screen_content",
            Terminal,
            "Read a terminal",
            READ,
            ScreenArgs => ScreenContent,
            "Read a session as plain text: the screen, its history, its last lines, or the output since your last input."
        ),
        tool!(
            "search_output",
            Terminal,
            "Search a terminal's output",
            READ,
            SearchOutputArgs => SearchResult,
            "Find the lines of a session's output matching a regex (its last 10,000 lines, or a full-screen program's screen), newest first: for an error that scrolled away."
        ),
        tool!(
            "await_output",
            Terminal,
            "Wait for output",
            WAIT,
            AwaitArgs => Waited<AwaitOutput>,
            "Wait until a session's output after your last input matches `pattern` or goes quiet (or a stop pattern matches, or the program exits). A timeout is an outcome, not an error."
        ),
        tool!(
            "list_terminal_sessions",
            Terminal,
            "List terminals",
            READ,
            NoArgs => SessionList,
            "The open sessions: id, name, command, size, running or exit status."
        ),
        tool!(
            "exit_terminal",
            Terminal,
            "Close a terminal",
            REMOVE,
            SessionArgs => ClosedSession,
            "Close a session and end every process it started."
        ),
        tool!(
            "run_command",
            Terminal,
            "Run a shell command",
            EXECUTE,
            RunCommandArgs => Waited<CommandOutput>,
            "Run a command line in a shell session and wait for it to end: exit_code and output. `cd` and `export` persist."
        ),
        tool!(
            "resize_terminal",
            Terminal,
            "Resize a terminal",
            Hints {
                idempotent: true,
                ..WRITE
            },
            ResizeArgs => Resized,
            "Resize a session; its program gets SIGWINCH."
        ),
    ]
}

/// Cuts a step's wait to the call's ceiling, leaving what the engine bounds itself (its
/// default, NaN, negatives) as asked: the ceiling in seconds when it cut the wait.
fn within_ceiling(timeout: &mut Option<f64>, cx: &CallContext) -> Option<f64> {
    let (cut, effective) = ceiling::clamp_secs(*timeout, DEFAULT_WAIT_SECONDS, cx);
    if effective.is_some() {
        *timeout = Some(cut);
    }
    effective
}

/// Runs one of this group's tools.
pub(super) async fn call(
    e: &Arc<Engine>,
    name: &str,
    args: Value,
    cx: &CallContext,
) -> Result<JsonObject, ToolError> {
    match name {
        "open_terminal" => {
            let a: OpenTerminalArgs = parse(name, args)?;
            ok(e.open_terminal(&a.into(), &cx.actor).await?)
        }
        "send_input" => {
            let (id, p) = parse::<SendInputArgs>(name, args)?.split();
            ok(e.send_input(&id, &p, &cx.actor)?)
        }
        "get_screen_content" => {
            let (id, p) = parse::<ScreenArgs>(name, args)?.split();
            ok(e.get_screen_content(&id, &p, &cx.actor)?)
        }
        "search_output" => {
            let (id, p) = parse::<SearchOutputArgs>(name, args)?.split();
            ok(e.search_output(&id, &p)?)
        }
        "await_output" => {
            let (id, mut p) = parse::<AwaitArgs>(name, args)?.split();
            let effective_timeout = within_ceiling(&mut p.timeout, cx);
            let waiting = e.await_output(&id, &p, None, &cx.actor);
            ok(ceiling::waited(cx, "waiting for output", effective_timeout, waiting).await?)
        }
        "list_terminal_sessions" => ok(e.list_terminal_sessions()),
        "exit_terminal" => {
            let a: SessionArgs = parse(name, args)?;
            ok(e.exit_terminal(&a.session_id, &cx.actor).await?)
        }
        "run_command" => {
            let (id, mut p) = parse::<RunCommandArgs>(name, args)?.split();
            let effective_timeout = within_ceiling(&mut p.timeout, cx);
            let running = e.run_command(&id, &p, None, &cx.actor);
            ok(ceiling::waited(cx, "waiting for the command", effective_timeout, running).await?)
        }
        "resize_terminal" => {
            let a: ResizeArgs = parse(name, args)?;
            ok(e.resize_terminal(&a.session_id, a.cols, a.rows, &cx.actor)?)
        }
        _ => Err(unknown_tool(name)),
    }
}
