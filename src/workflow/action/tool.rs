//! The tools a step can call, by name: their names as written, their one-line summaries, and
//! which parameter schema each takes. Apart from `Action` because the catalog and the MCP
//! layer speak of tools without any parameters.

use super::{
    AwaitOutputParams, GetScreenContentParams, ListSessionsParams, OpenTerminalParams,
    PromptParams, RunCommandParams, SendInputParams, SessionParams, SetEnvParams,
};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The tools a step can call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolName {
    OpenTerminal,
    SendInput,
    AwaitOutput,
    GetScreenContent,
    RunCommand,
    SetEnv,
    ListTerminalSessions,
    ExitTerminal,
    Prompt,
}

impl ToolName {
    pub const ALL: [ToolName; 9] = [
        ToolName::OpenTerminal,
        ToolName::SendInput,
        ToolName::AwaitOutput,
        ToolName::GetScreenContent,
        ToolName::RunCommand,
        ToolName::SetEnv,
        ToolName::ListTerminalSessions,
        ToolName::ExitTerminal,
        ToolName::Prompt,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ToolName::OpenTerminal => "open_terminal",
            ToolName::SendInput => "send_input",
            ToolName::AwaitOutput => "await_output",
            ToolName::GetScreenContent => "get_screen_content",
            ToolName::RunCommand => "run_command",
            ToolName::SetEnv => "set_env",
            ToolName::ListTerminalSessions => "list_terminal_sessions",
            ToolName::ExitTerminal => "exit_terminal",
            ToolName::Prompt => "prompt",
        }
    }

    pub fn parse(name: &str) -> Option<ToolName> {
        ToolName::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// One line on what the tool does, for the step action catalog.
    pub fn summary(self) -> &'static str {
        match self {
            ToolName::OpenTerminal => "Open a new terminal session; the run continues in it",
            ToolName::SendInput => "Send text (with escape sequences) or typed keys to the session",
            ToolName::AwaitOutput => {
                "Wait until output matches a regex, a stop pattern matches, or time runs out"
            }
            ToolName::GetScreenContent => {
                "Read the screen, the history, the last lines, or the output since the last input"
            }
            ToolName::RunCommand => {
                "Run a shell command, wait for it to finish, and record its exit status and output"
            }
            ToolName::SetEnv => {
                "Export variables into the shell, quoted so that values are stored literally"
            }
            ToolName::ListTerminalSessions => "List the open terminal sessions",
            ToolName::ExitTerminal => "Close a terminal session and everything running in it",
            ToolName::Prompt => {
                "Pause the run until a person or an agent answers; the answer is checked by rules"
            }
        }
    }

    /// Whether a manifest must give `params` for this tool (it has required parameters).
    pub(super) fn params_required(self) -> bool {
        matches!(
            self,
            ToolName::SendInput
                | ToolName::AwaitOutput
                | ToolName::RunCommand
                | ToolName::SetEnv
                | ToolName::Prompt
        )
    }

    pub(super) fn params_schema(self, generator: &mut SchemaGenerator) -> Schema {
        match self {
            ToolName::OpenTerminal => generator.subschema_for::<OpenTerminalParams>(),
            ToolName::SendInput => generator.subschema_for::<SendInputParams>(),
            ToolName::AwaitOutput => generator.subschema_for::<AwaitOutputParams>(),
            ToolName::GetScreenContent => generator.subschema_for::<GetScreenContentParams>(),
            ToolName::RunCommand => generator.subschema_for::<RunCommandParams>(),
            ToolName::SetEnv => generator.subschema_for::<SetEnvParams>(),
            ToolName::ListTerminalSessions => generator.subschema_for::<ListSessionsParams>(),
            ToolName::ExitTerminal => generator.subschema_for::<SessionParams>(),
            ToolName::Prompt => generator.subschema_for::<PromptParams>(),
        }
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
