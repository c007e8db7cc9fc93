//! An agent beside the person (issue 15): the studio hosts the folder, `flowdeck mcp` started
//! as an agent's client starts it relays to the studio's engine, and what the agent does shows
//! in the studio at once: the terminal it opens (marked with its client's name) and what it
//! types there, and the workflow it saves.

#![allow(clippy::unwrap_used)]

mod common;

use common::line_client::LineServer;
use common::studio::{expect, expect_gone, open, quit};
use flowdeck::term::{TermConfig, Terminals};
use serde_json::json;
use std::process::{Command, Stdio};

const TINY: &str = "name: tiny\ndescription: Lists sessions.\ninitial_state: look\nstates:\n  look:\n    action: { tool: list_terminal_sessions }\n";

#[tokio::test]
async fn what_an_agent_does_through_flowdeck_mcp_shows_in_the_studio() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("tiny.yaml"), TINY).unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let xdg = (
        "XDG_RUNTIME_DIR".to_string(),
        runtime.path().display().to_string(),
    );
    let terminals = Terminals::new(TermConfig::default());
    let studio = open(
        &terminals,
        vec![
            env!("CARGO_BIN_EXE_flowdeck").into(),
            "--workflows".into(),
            folder.path().display().to_string(),
        ],
        None,
        (110, 32),
        vec![xdg.clone()],
    );
    expect(&studio, "tiny").await;

    let mut command = Command::new(env!("CARGO_BIN_EXE_flowdeck"));
    command
        .arg("--workflows")
        .arg(folder.path())
        .arg("mcp")
        .env(&xdg.0, &xdg.1)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut agent = tokio::task::spawn_blocking(move || {
        let mut agent = LineServer::spawn(command);
        agent.initialize();
        agent
    })
    .await
    .unwrap();

    // The agent's terminal comes into the studio, marked as the agent's ("wire" is the
    // line client's name in `initialize`).
    let mut agent = tokio::task::spawn_blocking(move || {
        let opened = agent.call(
            2,
            "open_terminal",
            json!({"command": ["bash", "--norc", "--noprofile"], "env": {"PS1": "$ "}}),
        );
        let id = opened["session_id"].as_str().unwrap().to_string();
        agent.call(
            3,
            "send_input",
            json!({"session_id": id, "input_text": "echo typed-by-the-agent-$((6*7))\n"}),
        );
        agent
    })
    .await
    .unwrap();
    expect(&studio, r"\(agent: wire\)").await;
    expect(&studio, "typed-by-the-agent-42").await;

    // The person types into that terminal (focus mode): the agent's input is refused,
    // retryably, and the person sees that it tried; leaving focus mode gives it back.
    studio.send_text("i", "test").unwrap();
    expect(&studio, "FOCUS").await;
    let agent = tokio::task::spawn_blocking(move || {
        let sessions = agent.call(5, "list_terminal_sessions", json!({}));
        let id = sessions["sessions"][0]["session_id"]
            .as_str()
            .unwrap()
            .to_string();
        let refused = agent.request(
            6,
            "tools/call",
            json!({"name": "send_input", "arguments": {"session_id": id, "input_text": "echo nope\n"}}),
        );
        assert_eq!(refused["result"]["isError"], true, "{refused}");
        let text = refused.to_string();
        assert!(text.contains("SESSION_BUSY") && text.contains("typed into by you"), "{text}");
        (agent, id)
    })
    .await
    .unwrap();
    expect(&studio, "agent: wire tried to type").await;
    studio.send_text("\u{7}", "test").unwrap();
    expect_gone(&studio, "FOCUS").await;
    let mut agent = tokio::task::spawn_blocking(move || {
        let (mut agent, id) = agent;
        agent.call(
            7,
            "send_input",
            json!({"session_id": id, "input_text": "echo allowed-again-$((1+1))\n"}),
        );
        agent
    })
    .await
    .unwrap();
    expect(&studio, "allowed-again-2").await;

    // A workflow the agent saves is in the studio's list without a keypress.
    let mut agent = tokio::task::spawn_blocking(move || {
        agent.call(
            4,
            "workflow_save",
            json!({"content": TINY.replace("name: tiny", "name: from_agent")}),
        );
        agent
    })
    .await
    .unwrap();
    expect(&studio, "from_agent").await;

    // A run the agent starts advances the plan the person is looking at.
    // (The panes view is active since focus mode: Tab brings the list's keys back.)
    studio.send_text("\tj", "test").unwrap();
    expect(&studio, r"Plan · tiny").await;
    let mut agent = tokio::task::spawn_blocking(move || {
        let ran = agent.call(8, "run_workflow", json!({"workflow_name": "tiny"}));
        assert_eq!(ran["success"], true, "{ran}");
        agent
    })
    .await
    .unwrap();
    expect(&studio, r"Plan · tiny · run r").await;
    expect(&studio, r"1 ✓ look").await;

    // Who did what: the audit view lists the agent's calls with their outcomes, the refused
    // one included.
    studio.send_text("L", "test").unwrap();
    expect(&studio, r"Audit · \d+ tool calls").await;
    expect(&studio, r"agent: wire +workflow_save +ok").await;
    expect(&studio, r"agent: wire +send_input +SESSION_BUSY").await;
    studio.send_text("\u{1b}", "test").unwrap();
    expect_gone(&studio, "Audit · ").await;

    drop(agent.stdin.take());
    tokio::task::spawn_blocking(move || agent.exit_status())
        .await
        .unwrap();
    quit(&studio).await;
}
