//! The front ends agents and scripts use, as they use them: `flowdeck mcp` over its wire and
//! through real MCP clients, the folder's server and its lifetime, and the CLI. One binary, so
//! that the crate is linked once for all of them.

#[path = "../common/mod.rs"]
mod common;

mod approval_rights;
mod attention;
mod budget;
mod bundled;
mod cli;
mod cli_answers;
mod cli_run;
mod ghost_runs;
mod host;
mod hosts;
mod http;
mod lifecycle;
mod mcp;
mod mcp_at_a_terminal;
mod mcp_wire;
mod open_server;
mod real_clients;
mod record;
mod relative_folder;
mod replay;
mod replay_navigate;
mod server_limits;
mod trust;
mod unwatched;
