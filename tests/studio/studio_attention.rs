//! Supervising many runs (issue 39): what an agent's run asks of the person shows in the
//! studio's status line and inbox, in `flowdeck ls` and in the agent's `attention` tool, all
//! read from the one list the engine keeps; answered, it stops needing anyone; a run that
//! failed stays on show until someone sees it.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::line_client::LineServer;
use common::studio::{ASKER, expect, expect_gone, relayed_agent, studio_sized_on};
use flowdeck::term::{TermConfig, Terminals};
use serde_json::{Value, json};

/// A workflow that promises a version it never sets: it ends `return_validation_failed`.
const PROMISER: &str = r#"
name: promiser
description: Promises a version it never sets.
return_values:
  VERSION:
    description: The version built
initial_state: build
states:
  build:
    action: { tool: run_command, params: { command: 'echo built' } }
"#;

/// Calls `tool` on the agent off the runtime (its client blocks).
async fn call(agent: LineServer, id: u64, tool: &'static str, args: Value) -> (LineServer, Value) {
    tokio::task::spawn_blocking(move || {
        let mut agent = agent;
        let answer = agent.call(id, tool, args);
        (agent, answer)
    })
    .await
    .unwrap()
}

/// The agent's attention list, asked until `ok` holds for the item of `id`.
async fn attention_until(
    agent: LineServer,
    id: &str,
    what: &'static str,
    ok: impl Fn(Option<&Value>) -> bool + Send + 'static,
) -> (LineServer, Value) {
    let id = id.to_string();
    tokio::task::spawn_blocking(move || {
        let mut agent = agent;
        let list = agent.attention_until(&mut 100, &id, what, ok);
        (agent, list)
    })
    .await
    .unwrap()
}

fn state(item: Option<&Value>) -> Option<&str> {
    item.and_then(|i| i["state"].as_str())
}

#[tokio::test]
async fn an_agents_question_needs_the_person_everywhere_until_it_is_answered() {
    let (folder, runtime) = common::tiny_folder();
    std::fs::write(folder.path().join("asker.yaml"), ASKER).unwrap();
    std::fs::write(folder.path().join("promiser.yaml"), PROMISER).unwrap();
    let terminals = Terminals::new(TermConfig::default());
    // The size people run it at.
    let (studio, xdg) = studio_sized_on(&terminals, folder.path(), runtime.path(), &[], (80, 24));
    expect(&studio, "promiser").await;

    // An agent with the default tools starts a run that asks, and does not wait for it.
    let agent = relayed_agent(folder.path(), &xdg, &[]).await;
    let (agent, started) = call(
        agent,
        2,
        "run_workflow",
        json!({"workflow_name": "asker", "wait": false}),
    )
    .await;
    let run_id = started["run_id"].as_str().unwrap().to_string();
    let (agent, list) = attention_until(agent, &run_id, "the run needs someone", |i| {
        state(i) == Some("needs_you")
    })
    .await;
    let item = list["items"][0].clone();
    assert_eq!(item["id"], run_id.as_str(), "most pressing first: {list:#}");
    assert_eq!(item["kind"], "run");
    assert_eq!(item["workflow"], "asker");
    assert_eq!(item["reason"], "asks: Which environment?");
    assert_eq!(item["by"]["kind"], "agent", "{item}");

    // The studio: its status line counts it, the inbox lists it.
    // The status line counts it: in words, or short beside a long message (`◉1`).
    expect(&studio, "◉ ?1( needs you)?").await;
    let ls = std::process::Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(folder.path())
        .arg("ls")
        .env(&xdg.0, &xdg.1)
        .output()
        .unwrap();
    let ls = String::from_utf8_lossy(&ls.stdout).into_owned();
    assert!(ls.contains("attention: ◉ 1 needs you"), "{ls}");
    studio.send_text("!", "test").unwrap();
    expect(&studio, "Inbox · 1 needs you").await;
    expect(&studio, "needs you +asker +run +asks: Which environment").await;
    // Enter goes to it: its question, to answer here.
    studio.send_text("\r", "test").unwrap();
    expect(&studio, "Which environment\\?").await;
    studio.send_text("\x1b", "test").unwrap();
    expect_gone(&studio, "Inbox").await;

    // The agent answers instead: nobody is needed any more, and the run completed.
    let (agent, _) = call(
        agent,
        3,
        "workflow_next",
        json!({"workflowId": "asker", "run_id": run_id, "answer": "staging"}),
    )
    .await;
    let (agent, _) =
        attention_until(agent, &run_id, "the run done", |i| state(i) == Some("done")).await;
    expect_gone(&studio, "needs you").await;
    expect(&studio, r"✓ ?1( done)?\b").await;

    // A run that fails is failed until someone sees it.
    let (agent, result) = call(
        agent,
        4,
        "run_workflow",
        json!({"workflow_name": "promiser"}),
    )
    .await;
    assert_eq!(
        result["final_state"], "return_validation_failed",
        "{result}"
    );
    let failed = result["run_id"].as_str().unwrap().to_string();
    let (agent, list) = attention_until(agent, &failed, "the run failed", |i| {
        state(i) == Some("failed")
    })
    .await;
    assert_eq!(list["counts"]["failed"], 1, "{list:#}");
    expect(&studio, r"✗ ?1( failed · 1 done| ✓1)").await;
    let (agent, acked) = call(agent, 5, "attention", json!({"ack": [failed]})).await;
    assert_eq!(acked["acknowledged"]["cleared"], json!([failed]), "{acked}");
    assert_eq!(acked["counts"]["failed"], 0, "{acked}");
    expect_gone(&studio, r"✗ ?1( failed)?\b").await;

    // The person seeing the done run from the inbox clears it for the agent too.
    studio.send_text("!", "test").unwrap();
    expect(&studio, "Inbox · 1 done").await;
    studio.send_text("\r", "test").unwrap();
    let _ = attention_until(agent, &run_id, "the done run seen", |i| i.is_none()).await;
    expect_gone(&studio, r"✓ ?1( done)?\b").await;
}
