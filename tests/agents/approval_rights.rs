//! Who may approve an agent's run (server/peer.rs): a person's studio at a terminal of its
//! own, never the agent, whichever path it takes to the folder's server: its MCP tools,
//! `flowdeck approve` or a studio typed into a terminal flowdeck gave it, or a process that
//! left that terminal by forking twice into a terminal of its own.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::LONG;
use common::line_client::LineServer;
use common::studio::{expect, open, quit};
use flowdeck::term::{TermConfig, Terminals};
use serde_json::{Value, json};
use std::path::Path;

const FLOWDECK: &str = env!("CARGO_BIN_EXE_flowdeck");

/// Runs `command` in the agent's terminal `session` and returns its output.
fn agent_runs(agent: &mut LineServer, id: u64, session: &str, command: &str) -> String {
    let done = agent.call(
        id,
        "run_command",
        json!({"session_id": session, "command": command, "timeout": 60}),
    );
    assert_eq!(done["outcome"], "completed", "{done}");
    done["output"].as_str().unwrap().to_string()
}

/// The agent's run waits for a person: its status says so.
fn still_waiting(agent: &mut LineServer, id: u64, run_id: &str) {
    let status = agent.call(id, "run_status", json!({"run_id": run_id}));
    assert!(
        status.to_string().contains("approval"),
        "the run no longer waits for approval: {status}"
    );
}

fn folder_arg(folder: &Path) -> String {
    folder.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_cannot_approve_its_own_run_through_any_path_and_the_persons_studio_can() {
    let (folder, runtime) = common::tiny_folder();
    let _server = common::Killed(common::serve_with(
        folder.path(),
        runtime.path(),
        &["--approve", "agent-runs"],
    ));
    let xdg = (
        "XDG_RUNTIME_DIR".to_string(),
        runtime.path().display().to_string(),
    );
    // The person: a studio in a terminal of the test's own, attached to the server.
    let terminals = Terminals::new(TermConfig::default());
    let program = vec![
        FLOWDECK.to_string(),
        "--workflows".into(),
        folder_arg(folder.path()),
    ];
    let studio = open(&terminals, program, None, (120, 32), vec![xdg.clone()]);
    expect(&studio, "approval mode: an agent's run").await;

    let (folder_path, runtime_path) = (folder.path().to_path_buf(), runtime.path().to_path_buf());
    let (agent, run_id, session) = tokio::task::spawn_blocking(move || {
        let mut agent = common::mcp_agent(&folder_path, &runtime_path, &[]);
        // No tool approves anything.
        let tools = agent.request(2, "tools/list", json!({}));
        let names: Vec<&str> = tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(
            !names.iter().any(|n| n.contains("approv")),
            "an agent's tool approves: {names:?}"
        );
        let started = agent.call(
            3,
            "run_workflow",
            json!({"workflow_name": "tiny", "wait": false}),
        );
        let run_id = started["run_id"].as_str().unwrap().to_string();
        let opened = agent.call(4, "open_terminal", json!({"cols": 200, "rows": 40}));
        let session = opened["session_id"].as_str().unwrap().to_string();
        (agent, run_id, session)
    })
    .await
    .unwrap();
    expect(&studio, r"Approve this run\?").await;

    let dir = folder_arg(folder.path());
    let (mut agent, session) = tokio::task::spawn_blocking({
        let run_id = run_id.clone();
        move || {
            let mut agent = agent;
            still_waiting(&mut agent, 5, &run_id);
            // `flowdeck approve` typed into the agent's terminal.
            let said = agent_runs(
                &mut agent,
                6,
                &session,
                &format!("{FLOWDECK} --workflows {dir} approve tiny; echo exit=$?"),
            );
            assert!(said.contains("may not approve"), "{said}");
            assert!(said.contains("flowdeck's own terminals"), "{said}");
            assert!(said.contains("exit=") && !said.contains("exit=0"), "{said}");
            still_waiting(&mut agent, 7, &run_id);

            // Out of the terminal: without the session's marker, forked twice into a
            // session and a terminal of its own (`script`). The server, the subreaper of
            // its sessions' processes, is still its ancestor.
            let out = format!("{dir}/escaped.txt");
            agent_runs(
                &mut agent,
                8,
                &session,
                &format!(
                    "env -u FLOWDECK_SESSION setsid -f script -qec '{FLOWDECK} --workflows {dir} approve tiny' {out}"
                ),
            );
            let escaped = common::wait_until(LONG, "the escaped approve's answer", || {
                std::fs::read_to_string(&out)
                    .ok()
                    .filter(|t| t.contains("may not approve"))
            });
            assert!(escaped.contains("started from one of flowdeck's own terminals"), "{escaped}");
            still_waiting(&mut agent, 9, &run_id);
            (agent, session)
        }
    })
    .await
    .unwrap();

    // A studio started in the agent's terminal attaches, but may not answer: it says so,
    // and its `y` is refused. The person's studio shows the agent's terminal and may have
    // narrowed it to its pane (118 columns) before this studio draws: the pattern fits there.
    agent.call(
        10,
        "send_input",
        json!({"session_id": session, "input_text": format!("{FLOWDECK} --workflows {}\n", folder_arg(folder.path()))}),
    );
    let (mut agent, seen) = tokio::task::spawn_blocking({
        let session = session.clone();
        move || {
            let seen = agent.call(
                11,
                "await_output",
                json!({"session_id": session, "pattern": "this studio cannot answer agents' requests \\(it runs in one of flowdeck's own", "since": "screen", "timeout": 20}),
            );
            let screen = agent.call(17, "get_screen_content", json!({"session_id": session}));
            assert_eq!(seen["outcome"], "matched", "{seen}\n{screen:#}");
            (agent, seen)
        }
    })
    .await
    .unwrap();
    assert_eq!(seen["outcome"], "matched", "{seen}");
    let (mut agent, refused) = tokio::task::spawn_blocking({
        let session = session.clone();
        move || {
            let asked = agent.call(
                12,
                "await_output",
                json!({"session_id": session, "pattern": "Approve this run\\?", "since": "screen", "timeout": 20}),
            );
            let screen = agent.call(16, "get_screen_content", json!({"session_id": session}));
            assert_eq!(asked["outcome"], "matched", "{screen:#}");
            agent.call(
                13,
                "send_input",
                json!({"session_id": session, "input_text": "y"}),
            );
            let refused = agent.call(
                14,
                "await_output",
                json!({"session_id": session, "pattern": "may not answer approval requests", "since": "screen", "timeout": 20}),
            );
            (agent, refused)
        }
    })
    .await
    .unwrap();
    assert_eq!(refused["outcome"], "matched", "{refused}");

    // The person approves from their own studio; the run goes.
    studio.send_text("y", "test").unwrap();
    let finished: Value = tokio::task::spawn_blocking(move || {
        let finished = common::wait_until(LONG, "the approved run to finish", || {
            let status = agent.call(15, "run_status", json!({"run_id": run_id}));
            let waits = ["running", "awaiting_approval"].contains(&status["status"].as_str()?);
            (!waits).then_some(status)
        });
        drop(agent);
        finished
    })
    .await
    .unwrap();
    assert!(
        finished.to_string().contains("completed"),
        "the approved run did not complete: {finished}"
    );
    quit(&studio).await;
}
