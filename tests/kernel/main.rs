//! The kernel's tests: terminal sessions, waiting, the engine's runs, events, secrets and search,
//! the folder and its saves, approvals, the request wire, the bundled fixtures and schema, and the
//! code's shape. One binary, so that the crate is linked once for all of them.

#[path = "../common/mod.rs"]
mod common;

mod approval;
mod captures;
mod drafts;
mod engine_terminal;
mod events;
mod fixtures;
mod hosts;
mod journals;
mod quiet;
mod recordings;
mod registry;
mod request;
mod runs;
mod schema;
mod search;
mod secrets;
mod shape;
mod sshd_fixture;
mod store;
mod store_processes;
mod term;
mod wait_sequences;
