//! flowdeck: a terminal workflow studio. Workflows are YAML/JSON manifests describing state
//! machines whose steps drive real terminal sessions.
//!
//! Layers (see docs/ARCHITECTURE.md): [`workflow`] is the pure manifest model; [`store`] is the
//! workflows folder on disk.

// A function past 80 lines (clippy.toml) does more than one job. Held for the library only:
// a test that tells one scenario from start to end may be longer.
#![warn(clippy::too_many_lines)]

pub mod actor;
pub mod cli;
pub mod conn;
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
