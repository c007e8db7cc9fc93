//! A run of a workflow that does not exist writes nothing (issue 37, F28): asked by an agent
//! over MCP, as by `flowdeck run`, it ends `workflow_not_found` and leaves no journal, no
//! history and no run count. Real binary, real server, a real agent over `flowdeck mcp`.

#![allow(clippy::unwrap_used)]

use crate::common;
use serde_json::json;

#[test]
fn an_agents_run_of_a_workflow_that_does_not_exist_leaves_no_journal() {
    let (dir, runtime) = common::tiny_folder();
    let _server = common::Killed(common::serve_with(dir.path(), runtime.path(), &[]));
    let mut agent = common::mcp_agent(dir.path(), runtime.path(), &[]);
    let ran = agent.call(2, "run_workflow", json!({"workflow_name": "git_helth"}));
    assert_eq!(ran["final_state"], "workflow_not_found", "{ran}");
    // A run that did happen is journaled, so the folder of journals is where it would be.
    let done = agent.call(3, "run_workflow", json!({"workflow_name": "tiny"}));
    assert_eq!(done["final_state"], "completed", "{done}");
    let runs = dir.path().join(".flowdeck/runs");
    let journals: Vec<String> = std::fs::read_dir(&runs)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    assert_eq!(journals.len(), 1, "only tiny's run: {journals:?}");
    let history = agent.call(4, "run_list", json!({}));
    let listed = history["runs"].as_array().unwrap();
    assert!(
        listed.iter().all(|r| r["workflow"] != "git_helth"),
        "{history:#}"
    );
}
