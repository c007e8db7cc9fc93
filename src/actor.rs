//! Who asks: a person in the studio, an agent over MCP, the command line, a run, or flowdeck
//! itself. Every change the engine makes is attributed to one. It lives apart from the engine
//! because the layers below record it too (a session remembers who opened it) without
//! interpreting it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Who asked for a change.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Actor {
    /// A person in the studio. `at` tells several people apart: the terminal their studio
    /// runs in, as the folder's server saw it (`pts/3`); empty for the person at a studio
    /// that hosts the engine itself (there is only one).
    Person {
        #[serde(default, skip_serializing_if = "String::is_empty")]
        at: String,
    },
    /// An agent over MCP: its client's name (from `initialize`) and its connection.
    Agent { client: String, connection: String },
    /// The command line (`flowdeck run`).
    Cli,
    /// A run's own steps.
    Run { run_id: String },
    /// flowdeck itself: the folder watcher, shutdown, recovery after a crash.
    System,
}

impl Actor {
    /// The person at a studio that hosts the engine itself.
    pub fn person() -> Actor {
        Actor::Person { at: String::new() }
    }

    /// Whether this is a person (at any studio).
    pub fn is_person(&self) -> bool {
        matches!(self, Actor::Person { .. })
    }

    /// A short name for people: `you` (or `the person at pts/3` when several may be attached),
    /// `agent: claude-code`, `cli`, `run r17…`, `flowdeck`.
    pub fn label(&self) -> String {
        match self {
            Actor::Person { at } if at.is_empty() => "you".into(),
            Actor::Person { at } => format!("the person at {at}"),
            Actor::Agent { client, .. } => format!("agent: {client}"),
            Actor::Cli => "cli".into(),
            Actor::Run { run_id } => format!("run {run_id}"),
            Actor::System => "flowdeck".into(),
        }
    }

    /// Who this is as a session's typist: each keeps its own "since the last input"
    /// (term/inputs.rs). Agents are told apart by connection, not by client name, so two
    /// instances of one client do not move each other's waits.
    pub fn typist(&self) -> String {
        match self {
            Actor::Person { at } if at.is_empty() => "person".into(),
            Actor::Person { at } => format!("person:{at}"),
            Actor::Agent { connection, .. } => format!("agent:{connection}"),
            Actor::Cli => "cli".into(),
            Actor::Run { run_id } => format!("run:{run_id}"),
            Actor::System => "system".into(),
        }
    }
}

impl std::fmt::Display for Actor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}
