//! The MCP server: every tool, resource and prompt a thin adapter over an engine method,
//! served over stdio (`flowdeck mcp`).
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

use rmcp::ServiceExt;
use std::collections::HashSet;

/// What the server offers.
#[derive(Debug, Clone)]
pub struct McpOptions {
    pub toolsets: HashSet<Toolset>,
    /// Only tools that change nothing.
    pub read_only: bool,
    /// Only workflows whose names match one of these globs get a `wf_` tool (empty: all).
    pub dynamic_filters: Vec<String>,
    /// Approval mode for this server's runs: each needs a person's approval of its content.
    pub approve_agent_runs: bool,
}

impl Default for McpOptions {
    fn default() -> Self {
        McpOptions {
            toolsets: Toolset::ALL.into_iter().collect(),
            read_only: false,
            dynamic_filters: Vec::new(),
            approve_agent_runs: false,
        }
    }
}

/// Serves MCP on stdin/stdout until the client closes stdin or the process gets a
/// termination signal (SIGHUP, SIGTERM, SIGINT, SIGQUIT). The engine is opened by `opener` alongside the handshake, so a client is answered
/// before the folder has loaded. Runs and sessions started over this connection end with it
/// (documented in docs/MCP.md).
pub async fn serve_stdio(opener: server::Opener, options: McpOptions) -> anyhow::Result<()> {
    // Installed before anything else, so a SIGTERM at any moment ends the server cleanly.
    let mut termination = crate::signals::Termination::register()?;
    let server = FlowdeckServer::new(opener, options);
    server.start_loading();
    let (input, output) = stdio::stdio_streams()?;
    let transport = wire::WireTransport::new(input, output, "the client on the standard streams");
    let served = tokio::select! {
        served = server.clone().serve(transport) => served,
        signal = termination.recv() => {
            tracing::info!("{signal} before the handshake: ending");
            shutdown(&server).await;
            return Ok(());
        }
    };
    let running = match served {
        Ok(running) => running,
        Err(e) => {
            // A client that leaves before the handshake is not an error worth a failure exit.
            tracing::info!("MCP connection ended before it began: {e}");
            shutdown(&server).await;
            return Ok(());
        }
    };
    let stop = running.cancellation_token();
    tokio::spawn(async move {
        let mut termination = termination;
        let signal = termination.recv().await;
        tracing::info!("{signal}: ending the MCP connection");
        stop.cancel();
    });
    let reason = running.waiting().await;
    tracing::info!("MCP connection ended: {reason:?}");
    shutdown(&server).await;
    Ok(())
}

async fn shutdown(server: &FlowdeckServer) {
    if let Some(engine) = server.engine_if_loaded() {
        engine.shutdown().await;
    }
}
