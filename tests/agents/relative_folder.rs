//! The folder as people name it: `workflows`, relative to where flowdeck runs (the README's
//! `cargo run --release`, an agent's client started in a project). The OS reports changes
//! by absolute paths; a change made on disk must still reach the engine.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::TINY;
use common::line_client::LineServer;
use serde_json::json;
use std::process::{Command, Stdio};

#[test]
fn a_change_on_disk_reaches_an_engine_on_the_default_relative_folder() {
    let project = tempfile::tempdir().unwrap();
    let runtime = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join("workflows")).unwrap();
    std::fs::write(project.path().join("workflows/tiny.yaml"), TINY).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_flowdeck"));
    command
        .args(["mcp", "--toolsets", "all"])
        .current_dir(project.path())
        .env_remove("FLOWDECK_WORKFLOWS")
        .env("XDG_RUNTIME_DIR", runtime.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut agent = LineServer::spawn(command);
    agent.initialize();
    let before = agent.call(2, "workflow_get", json!({"name": "tiny"}));
    assert_eq!(before["content"], TINY);

    let changed = TINY.replace("Lists sessions.", "Changed on disk.");
    std::fs::write(project.path().join("workflows/tiny.yaml"), &changed).unwrap();
    let mut id = 3;
    common::wait_until(common::LONG, "the change to reach the engine", || {
        id += 1;
        let now = agent.call(id, "workflow_get", json!({"name": "tiny"}));
        (now["content"] == changed.as_str()).then_some(())
    });
    drop(agent.stdin.take());
    assert_eq!(agent.exit_within(common::LONG), Some(0));
}
