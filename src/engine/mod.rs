//! The engine: the one kernel both front ends drive. Every action a person takes in the TUI
//! or an agent takes over MCP is a method here, and the engine holds no UI types.
//!
//! - [`terminal`]: terminal sessions, driven with the parameter types of the manifest's
//!   tools, so a workflow step and a tool call are the same call.

pub mod error;
pub mod terminal;

pub use error::EngineError;
pub use terminal::{
    AwaitOutput, ClosedSession, CommandOutput, EnvValues, Resized, ScreenContent, SentInput,
    SessionList, SetEnvResult,
};

use crate::term::{TermConfig, Terminals};

/// Settings of one engine.
#[derive(Debug, Clone, Default)]
pub struct EngineConfig {
    pub terminals: TermConfig,
}

/// The engine handle shared by the front ends.
#[derive(Debug)]
pub struct Engine {
    terminals: Terminals,
}

impl Engine {
    pub fn new(config: EngineConfig) -> Self {
        Engine {
            terminals: Terminals::new(config.terminals),
        }
    }

    /// The terminal sessions (for front ends that draw them).
    pub fn terminals(&self) -> &Terminals {
        &self.terminals
    }

    /// Ends everything the engine started.
    pub async fn shutdown(&self) {
        self.terminals.close_all().await;
    }
}
