//! An agent beside the person (issue 15): the studio hosts the folder, `flowdeck mcp` started
//! as an agent's client starts it relays to the studio's engine, and what the agent does shows
//! in the studio at once: the terminal it opens (marked with its client's name) and what it
//! types there, and the workflow it saves.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::TINY;

use common::line_client::LineServer;
use common::studio::{expect, expect_gone, open, quit, relayed_agent, studio_on};
use flowdeck::term::{TermConfig, Terminals};
use serde_json::json;
use std::path::Path;

#[tokio::test]
async fn what_an_agent_does_through_flowdeck_mcp_shows_in_the_studio() {
    let (folder, runtime) = common::tiny_folder();
    let terminals = Terminals::new(TermConfig::default());
    let (studio, xdg) = studio_on(&terminals, folder.path(), runtime.path(), &[]);
    expect(&studio, "tiny").await;

    let agent = relayed_agent(folder.path(), &xdg, &["--toolsets", "all"]).await;

    // The agent's terminal comes into the studio, marked as the agent's ("wire" is the
    // line client's name in `initialize`).
    let (mut agent, _) =
        common::agent_terminal(agent, Some("echo typed-by-the-agent-$((6*7))\n")).await;
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
        assert!(text.contains("SESSION_BUSY") && text.contains("typed into by the person at pts/"), "{text}");
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
    expect(&studio, r"Plan · tiny · run r\S+ \(agent: wire\)").await;
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

#[tokio::test]
async fn in_approval_mode_the_person_approves_or_denies_an_agents_run_seeing_its_diff() {
    let (folder, runtime) = common::tiny_folder();
    let terminals = Terminals::new(TermConfig::default());
    let (studio, xdg) = studio_on(
        &terminals,
        folder.path(),
        runtime.path(),
        &["--approve", "agent-runs"],
    );
    expect(&studio, "tiny").await;
    expect(&studio, "approval mode: an agent's run").await;
    let agent = relayed_agent(folder.path(), &xdg, &["--toolsets", "all"]).await;
    let run = json!({"name": "run_workflow", "arguments": {"workflow_name": "tiny"}});

    // The agent's run waits (a progress notification tells the agent why); the person is
    // asked, with the whole manifest as new.
    let asked = tokio::task::spawn_blocking(move || {
        let mut agent = agent;
        agent.send(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "run_workflow",
                "arguments": {"workflow_name": "tiny"},
                "_meta": {"progressToken": "approval"},
            }})
            .to_string(),
        );
        let (message, before) = agent.response_after(2);
        (agent, message, before)
    });
    expect(&studio, r"Approve this run\?").await;
    expect(&studio, r"agent: wire asks to run tiny").await;
    expect(&studio, r"never approved before").await;
    expect(&studio, r"\+ name: tiny").await;
    // A request just shown takes no answer for a moment (tui/settling.rs).
    expect_gone(&studio, r"New request").await;
    studio.send_text("y", "test").unwrap();
    let (agent, response, before) = asked.await.unwrap();
    assert_ne!(response["result"]["isError"], true, "{response}");
    assert!(
        before
            .iter()
            .any(|m| m["method"] == "notifications/progress"
                && m["params"]["message"]
                    .as_str()
                    .is_some_and(|t| t.contains("waiting for a person to approve"))),
        "no progress said the run waits: {before:?}"
    );
    assert_eq!(
        response["result"]["structuredContent"]["success"], true,
        "{response}"
    );
    expect_gone(&studio, r"Approve this run").await;

    // The file changes on disk: the next run asks again, showing the change against the
    // approved text; denied, the agent gets a security error and the run does not happen.
    let changed = TINY.replace("Lists sessions.", "Lists them all.");
    std::fs::write(folder.path().join("tiny.yaml"), &changed).unwrap();
    let asked = tokio::task::spawn_blocking(move || {
        let mut agent = agent;
        common::wait_until(common::LONG, "the change to reach the engine", || {
            let got = agent.call(3, "workflow_get", json!({"name": "tiny"}));
            (got["content"] == changed.as_str()).then_some(())
        });
        let response = agent.request(4, "tools/call", run);
        (agent, response)
    });
    expect(&studio, r"changed since the person at pts/\d+ approved it").await;
    expect(&studio, r"- description: Lists sessions\.").await;
    expect(&studio, r"\+ description: Lists them all\.").await;
    expect_gone(&studio, r"New request").await;
    studio.send_text("n", "test").unwrap();
    let (mut agent, response) = asked.await.unwrap();
    assert_eq!(response["result"]["isError"], true, "{response}");
    let text = response["result"]["content"][0]["text"].as_str().unwrap();
    let error: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(error["error_code"], "RUN_NOT_APPROVED", "{error}");
    assert_eq!(error["category"], "security", "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("denied"),
        "{error}"
    );
    expect(&studio, r"not_approved").await;

    drop(agent.stdin.take());
    tokio::task::spawn_blocking(move || agent.exit_status())
        .await
        .unwrap();
    quit(&studio).await;
}

/// The agent's tool call `tool` with `args`, off the test's runtime (the line client blocks).
async fn agent_calls(
    agent: LineServer,
    id: u64,
    tool: &str,
    args: serde_json::Value,
) -> (LineServer, serde_json::Value) {
    let tool = tool.to_string();
    tokio::task::spawn_blocking(move || {
        let mut agent = agent;
        let answer = agent.call(id, &tool, args);
        (agent, answer)
    })
    .await
    .unwrap()
}

/// Issue 36: benign on screen, evil queued, benign withdrawn. Evil takes benign's place at
/// once; a `y` pressed then was meant for benign and must approve nothing. Asked again, `y`
/// approves evil, knowingly.
#[tokio::test]
async fn in_approval_mode_y_answers_only_the_request_that_was_on_screen() {
    let (folder, runtime) = common::tiny_folder();
    std::fs::write(
        folder.path().join("evil.yaml"),
        TINY.replace("name: tiny", "name: evil"),
    )
    .unwrap();
    let terminals = Terminals::new(TermConfig::default());
    let xdg = (
        "XDG_RUNTIME_DIR".to_string(),
        runtime.path().display().to_string(),
    );
    let program = vec![
        env!("CARGO_BIN_EXE_flowdeck").to_string(),
        "--workflows".into(),
        folder.path().display().to_string(),
        "--approve".into(),
        "agent-runs".into(),
    ];
    // The moment a changed request takes no answer, long enough that the `y` below is
    // surely pressed inside it on a loaded machine (debug builds only).
    let env = vec![
        xdg.clone(),
        ("FLOWDECK_TEST_SETTLE_MS".to_string(), "3000".to_string()),
    ];
    let studio = open(&terminals, program, None, (110, 32), env);
    expect(&studio, "approval mode: an agent's run").await;
    expect(&studio, "evil").await;
    let agent = relayed_agent(folder.path(), &xdg, &["--toolsets", "all"]).await;
    let start = |name: &str| json!({"workflow_name": name, "wait": false});

    let (agent, benign) = agent_calls(agent, 2, "run_workflow", start("tiny")).await;
    let benign = benign["run_id"].as_str().unwrap().to_string();
    expect(&studio, r"agent: wire asks to run tiny").await;
    expect_gone(&studio, r"New request").await;
    expect(&studio, r"Approve this run\?").await;
    let (agent, evil) = agent_calls(agent, 3, "run_workflow", start("evil")).await;
    let evil = evil["run_id"].as_str().unwrap().to_string();
    expect(&studio, r"asks to run tiny .*1 of 2 waiting").await;

    // Benign withdrawn: evil is on screen, marked new, and the `y` meant for benign is
    // refused.
    let (agent, cancelled) =
        agent_calls(agent, 4, "workflow_cancel", json!({"run_id": benign})).await;
    assert!(!cancelled.to_string().contains("error_code"), "{cancelled}");
    expect(&studio, r"New request .*y and n wait").await;
    expect(&studio, r"agent: wire asks to run evil").await;
    studio.send_text("y", "test").unwrap();
    expect(&studio, r"a new request took the place of the one you saw").await;
    let (agent, status) = agent_calls(agent, 5, "run_status", json!({"run_id": evil})).await;
    assert_eq!(
        status["status"], "awaiting_approval",
        "evil was approved: {status}"
    );
    expect(&studio, r"asks to run evil").await;

    // Asked again: now `y` is evil's, and it runs.
    expect_gone(&studio, r"New request").await;
    expect(&studio, r"Approve this run\?").await;
    studio.send_text("y", "test").unwrap();
    expect(&studio, r"approved: evil runs").await;
    let evil_id = evil.clone();
    let mut agent = tokio::task::spawn_blocking(move || {
        let mut agent = agent;
        let ended = common::wait_until(common::LONG, "evil's run to end", || {
            let status = agent.call(6, "run_status", json!({"run_id": evil_id}));
            (status["status"] == "finished").then_some(status)
        });
        assert_eq!(ended["result"]["final_state"], "completed", "{ended}");
        agent
    })
    .await
    .unwrap();

    drop(agent.stdin.take());
    tokio::task::spawn_blocking(move || agent.exit_status())
        .await
        .unwrap();
    quit(&studio).await;
}

/// The studio on a tiny folder with a fault injected on F12 (debug builds:
/// `FLOWDECK_INJECT_PANIC`, src/tui/containment.rs), and an agent relayed to it with a bash
/// terminal of its own open: what a bug in the studio must never take away.
async fn studio_with_fault(
    fault: &str,
) -> (
    tempfile::TempDir,
    tempfile::TempDir,
    std::sync::Arc<flowdeck::term::Session>,
    LineServer,
    String,
) {
    let (folder, runtime) = common::tiny_folder();
    let terminals = Terminals::new(TermConfig::default());
    let xdg = (
        "XDG_RUNTIME_DIR".to_string(),
        runtime.path().display().to_string(),
    );
    let program = vec![
        env!("CARGO_BIN_EXE_flowdeck").to_string(),
        "--workflows".into(),
        folder.path().display().to_string(),
    ];
    let env = vec![
        xdg.clone(),
        ("FLOWDECK_INJECT_PANIC".to_string(), fault.to_string()),
    ];
    let studio = open(&terminals, program, None, (110, 32), env);
    expect(&studio, "tiny").await;
    let agent = relayed_agent(folder.path(), &xdg, &["--toolsets", "all"]).await;
    let (agent, id) = common::agent_terminal(agent, None).await;
    expect(&studio, r"\(agent: wire\)").await;
    (folder, runtime, studio, agent, id)
}

/// The agent types `echo WORD-$((6*7))` into its terminal and reads `WORD-42` back.
async fn agent_still_works(agent: LineServer, id: &str, word: &str) -> LineServer {
    let (id, word) = (id.to_string(), word.to_string());
    tokio::task::spawn_blocking(move || {
        let mut agent = agent;
        agent.call(
            10,
            "send_input",
            json!({"session_id": id, "input_text": format!("echo {word}-$((6*7))\n")}),
        );
        let seen = agent.call(
            11,
            "await_output",
            json!({"session_id": id, "pattern": format!("{word}-42"), "timeout": 30}),
        );
        assert_eq!(seen["outcome"], "matched", "{seen}");
        agent
    })
    .await
    .unwrap()
}

/// The studio's log (`DIR/.flowdeck/studio.log`) once it holds `text`, with a deadline.
fn log_with(folder: &Path, text: &str) -> String {
    let log = folder.join(".flowdeck").join("studio.log");
    common::wait_until(
        common::LONG,
        &format!("{text:?} in {}", log.display()),
        || {
            std::fs::read_to_string(&log)
                .ok()
                .filter(|l| l.contains(text))
        },
    )
}

const F12: &str = "\u{1b}[24~";

#[tokio::test]
async fn a_bug_in_the_studios_key_handling_is_survived_and_the_agent_keeps_its_terminal() {
    let (folder, _runtime, studio, agent, id) = studio_with_fault("update").await;
    studio.send_text(F12, "test").unwrap();
    expect(&studio, r"flowdeck hit a bug and carried on").await;
    let log = log_with(folder.path(), "injected: a bug in handling a key");
    assert!(log.contains("caught, the studio goes on"), "{log}");
    assert!(log.contains("containment"), "a backtrace: {log}");
    // The agent's terminal lives on, and the studio still draws it.
    let mut agent = agent_still_works(agent, &id, "after-the-bug").await;
    expect(&studio, "after-the-bug-42").await;
    // And the person's keys still reach the studio (raw mode): help opens.
    studio.send_text("?", "test").unwrap();
    expect(&studio, r" Keys .*Esc closes").await;
    studio.send_text("\u{1b}", "test").unwrap();
    drop(agent.stdin.take());
    tokio::task::spawn_blocking(move || agent.exit_status())
        .await
        .unwrap();
    quit(&studio).await;
}

#[tokio::test]
async fn a_panic_the_engine_survives_leaves_the_studio_its_terminal() {
    let (folder, _runtime, studio, mut agent, _id) = studio_with_fault("worker").await;
    studio.send_text(F12, "test").unwrap();
    let log = log_with(folder.path(), "injected: a bug in a worker task");
    assert!(log.contains("caught, the studio goes on"), "{log}");
    // The studio still owns the screen (the alternate one) and reads keys one by one: a
    // restored, cooked terminal would hold `?` back until Enter.
    assert!(
        studio.with_screen(|s| s.alternate_screen()),
        "the studio left its screen:\n{}",
        studio.content(flowdeck::term::Content::Screen)
    );
    studio.send_text("?", "test").unwrap();
    expect(&studio, r" Keys .*Esc closes").await;
    studio.send_text("\u{1b}", "test").unwrap();
    drop(agent.stdin.take());
    tokio::task::spawn_blocking(move || agent.exit_status())
        .await
        .unwrap();
    quit(&studio).await;
}

#[tokio::test]
async fn a_studio_that_cannot_draw_gives_its_screen_back_and_the_agent_goes_on() {
    let (folder, _runtime, studio, agent, id) = studio_with_fault("draw").await;
    studio.send_text(F12, "test").unwrap();
    // Every frame fails: the studio gives the terminal back, says why, and exits with
    // status 2; the folder's server, where the agent works, goes on.
    let ended = studio
        .await_output(common::studio::on_screen("never printed"))
        .await
        .unwrap();
    assert_eq!(
        ended.outcome,
        flowdeck::term::WaitOutcome::Exited,
        "{ended:#?}"
    );
    assert_eq!(studio.exit().and_then(|e| e.code), Some(2));
    let said = studio.content(flowdeck::term::Content::Screen);
    assert!(
        said.contains("the studio stopped after repeated internal errors"),
        "{said}"
    );
    assert!(said.contains("server goes on"), "{said}");
    assert!(
        !studio.with_screen(|s| s.alternate_screen()),
        "the person's own screen is back"
    );
    log_with(folder.path(), "injected: a bug in drawing");
    // The agent's terminal was not taken down with the studio.
    let mut agent = agent_still_works(agent, &id, "served-on").await;
    drop(agent.stdin.take());
    tokio::task::spawn_blocking(move || agent.exit_status())
        .await
        .unwrap();
}
