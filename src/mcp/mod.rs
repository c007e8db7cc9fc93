//! The MCP server: every tool, resource and prompt a thin adapter over an engine method,
//! served on the folder's socket to each agent that `flowdeck mcp` relays (src/server/).
//!
//! - [`server`]: the rmcp handler (tools, resources, prompts, notifications, panics caught);
//! - [`tools`], [`args`]: the static tools, their schemas, annotations and dispatch;
//! - [`dynamic`]: one `wf_<name>` tool per runnable workflow, following the folder;
//! - [`resources`], [`prompts`]: `flowdeck://` resources and the authoring prompts;
//! - [`errors`]: tool failures as structured, actionable payloads; [`audit`]: the audit log;
//! - [`stdio`], [`wire`]: the standard streams, whatever they are, and JSON-RPC lines over
//!   them, with every malformed or oversized message answered;
//! - [`options`]: an agent's own options, told to the folder's server (src/server/) and
//!   merged with the server's, the stricter winning.

pub mod args;
pub mod audit;
pub mod dynamic;
pub mod errors;
pub mod options;
pub mod prompts;
pub mod resources;
pub mod server;
pub mod stdio;
pub mod tools;
pub mod wire;

pub use server::FlowdeckServer;
pub use tools::Toolset;

use std::collections::HashSet;

/// What the server offers.
#[derive(Debug, Clone)]
pub struct McpOptions {
    pub toolsets: HashSet<Toolset>,
    /// Only tools that change nothing.
    pub read_only: bool,
    /// Which workflows get a `wf_` tool.
    pub dynamic_filters: dynamic::DynamicFilter,
    /// Approval mode for this server's runs: each needs a person's approval of its content.
    pub approve_agent_runs: bool,
    /// The longest a tool call waits before it answers (tools/ceiling.rs).
    pub max_wait: std::time::Duration,
}

impl Default for McpOptions {
    fn default() -> Self {
        McpOptions {
            toolsets: Toolset::ALL.into_iter().collect(),
            read_only: false,
            dynamic_filters: dynamic::DynamicFilter::default(),
            approve_agent_runs: false,
            max_wait: tools::ceiling::DEFAULT_MAX_WAIT,
        }
    }
}
