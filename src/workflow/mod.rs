//! The manifest model and its validation. Pure: no files, no terminals, no clocks.
//!
//! - [`source`] turns bytes into a JSON value plus the position of every node;
//! - [`model`] and [`action`] are the typed manifest, from which [`schema`] is generated;
//! - [`validate`] runs the schema and the semantic checks and reports every [`Violation`];
//! - [`guard`] and [`rules`] evaluate `when:` conditions and output validation rules;
//! - [`host`] works out where a run's terminal opens (`host: $TARGET`);
//! - [`plan`] orders the states into the step plan that the CLI, TUI and MCP show.

pub mod action;
pub mod completion;
pub mod credentials;
pub mod draft;
pub mod guard;
pub mod host;
pub mod model;
pub mod names;
pub mod pattern;
pub mod rules;
pub mod scalar;
pub mod schema;
pub mod source;
pub mod violation;

pub use action::{Action, ToolName};
pub use model::{Condition, ConditionKind, State, Transition, Variable, Workflow};
pub use source::Format;
pub use violation::{Position, Severity, Violation};
pub mod plan;
mod schema_errors;
mod semantic;
pub mod suggest;
pub mod validate;
mod variables;

pub use validate::{Checked, check_bytes, check_value};

/// A test's manifest, which must be valid: its workflow.
#[cfg(test)]
pub(crate) fn test_manifest(yaml: &str) -> model::Workflow {
    let checked = check_bytes(yaml.as_bytes(), Format::Yaml);
    checked
        .workflow
        .unwrap_or_else(|| panic!("invalid test manifest: {:?}", checked.violations))
}
