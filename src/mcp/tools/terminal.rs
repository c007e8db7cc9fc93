//! The terminal tools: open, type, read, search, wait, run a command, list, resize, close;
//! each a call of the engine's terminal methods, as a workflow's step makes it.

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
            "Open a terminal session on a real PTY: your shell by default, or `command` (e.g. [\"python3\",\"-q\"], [\"ssh\",\"-tt\",\"host\"]). Returns its session_id. For a shell, returns once its prompt is up. Close it with exit_terminal when done."
        ),
        tool!(
            "send_input",
            Terminal,
            "Type into a terminal",
            EXECUTE,
            SendInputArgs => SentInput,
            "Type text (input_text, \"\\n\" is Enter) or press keys into a session. Returns at once; use await_output to wait for what the program prints."
        ),
        tool!(
            "get_screen_content",
            Terminal,
            "Read a terminal",
            READ,
            ScreenArgs => ScreenContent,
            "Read a session as plain text: the visible screen (default), its history, the last N lines, or the output since the last input."
        ),
        tool!(
            "search_output",
            Terminal,
            "Search a terminal's output",
            READ,
            SearchOutputArgs => SearchResult,
            "Find the lines of a session's output that match a regex: its whole retained history (the last 10,000 lines), and the screen of a full-screen program (vim, less, top) while one is in front. The newest hit first by default, each with its line number (which stays the same as older history is dropped), column, matched text and optional context lines. Pass next_cursor back as cursor for the next page. Use it to find an error that scrolled away instead of reading the whole history."
        ),
        tool!(
            "await_output",
            Terminal,
            "Wait for output",
            WAIT,
            AwaitArgs => AwaitOutput,
            "Wait until a session's output matches a regex (or a stop pattern matches, or time runs out, or the program exits). By default only output after your last input counts, never its echo, and nothing that scrolled away is missed. Returns outcome matched|stopped|timeout|exited, the matched text and line, regex groups and the last lines."
        ),
        tool!(
            "list_terminal_sessions",
            Terminal,
            "List terminals",
            READ,
            NoArgs => SessionList,
            "List the open terminal sessions: id, name, command, size, whether it is running or its exit status."
        ),
        tool!(
            "exit_terminal",
            Terminal,
            "Close a terminal",
            REMOVE,
            SessionArgs => ClosedSession,
            "Close a session and end every process it started (SIGHUP/SIGTERM, then SIGKILL)."
        ),
        tool!(
            "run_command",
            Terminal,
            "Run a shell command",
            EXECUTE,
            RunCommandArgs => CommandOutput,
            "Run a command line in a session's shell and wait for it to finish: returns exit_code and output. The session must be a POSIX shell at its prompt; `cd` and `export` persist."
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
            "Resize a session (the program gets SIGWINCH). Sizes out of range are clamped."
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
            let (id, p) = parse::<AwaitArgs>(name, args)?.split();
            ok(e.await_output(&id, &p, None, &cx.actor).await?)
        }
        "list_terminal_sessions" => ok(e.list_terminal_sessions()),
        "exit_terminal" => {
            let a: SessionArgs = parse(name, args)?;
            ok(e.exit_terminal(&a.session_id, &cx.actor).await?)
        }
        "run_command" => {
            let (id, p) = parse::<RunCommandArgs>(name, args)?.split();
            ok(e.run_command(&id, &p, None, &cx.actor).await?)
        }
        "resize_terminal" => {
            let a: ResizeArgs = parse(name, args)?;
            ok(e.resize_terminal(&a.session_id, a.cols, a.rows, &cx.actor)?)
        }
        _ => Err(unknown_tool(name)),
    }
}
