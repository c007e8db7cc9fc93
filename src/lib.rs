//! flowdeck: a terminal workflow studio. Workflows are YAML/JSON manifests describing state
//! machines whose steps drive real terminal sessions.
//!
//! Layers (see docs/ARCHITECTURE.md): [`workflow`] is the pure manifest model; [`store`] is the
//! workflows folder on disk.

pub mod actor;
pub mod cli;
pub mod engine;
pub mod logfile;
pub mod mcp;
pub mod panics;
pub mod server;
pub mod signals;
pub mod store;
pub mod term;
pub mod tui;
pub mod workflow;
