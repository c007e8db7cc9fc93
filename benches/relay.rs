//! Humans and agents on one engine (issue 15, docs/PERFORMANCE.md): the latency a relay adds
//! to a tool call (an agent through `flowdeck mcp`, against one connected to the host's socket
//! directly, alternated in one run on one host), and how long an agent's `send_input` takes to
//! show in the studio's frame (the studio in a PTY, its screen read back).
//!
//! `cargo bench --bench relay`; `FLOWDECK_BENCH_QUICK=1` shortens it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;

#[path = "support/mod.rs"]
mod support;

#[path = "support/client.rs"]
mod client;

use client::{Client, call, direct, quick, socket_of};
use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// An MCP client through `flowdeck mcp`, as an agent's client starts it.
async fn relayed(folder: &Path, runtime: &Path) -> Client {
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_flowdeck")).configure(|c| {
        c.arg("--workflows")
            .arg(folder)
            .arg("mcp")
            .env("XDG_RUNTIME_DIR", runtime);
    });
    ().serve(TokioChildProcess::new(command).unwrap())
        .await
        .unwrap()
}

async fn relay_cost(folder: &Path, runtime: &Path) {
    let mut host = std::process::Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(folder)
        .arg("serve")
        .env("XDG_RUNTIME_DIR", runtime)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let socket = socket_of(runtime);
    let straight = direct(&socket).await;
    let through = relayed(folder, runtime).await;
    let n = if quick() { 100 } else { 1000 };
    let (mut d, mut r) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let t = Instant::now();
        call(&straight, "list_terminal_sessions", json!({})).await;
        d.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        call(&through, "list_terminal_sessions", json!({})).await;
        r.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let d = support::stats("list_terminal_sessions, on the socket directly", d, "ms");
    let r = support::stats("list_terminal_sessions, through `flowdeck mcp`", r, "ms");
    println!(
        "{:<58} {:>9.3} ms",
        "  the relay's added latency (median)",
        r - d
    );
    straight.cancel().await.unwrap();
    through.cancel().await.unwrap();
    host.kill().unwrap();
    host.wait().unwrap();
}

/// An agent's `send_input` until the studio's screen shows what it typed.
async fn agent_input_to_frame(folder: &Path, runtime: &Path) {
    let terminals = flowdeck::term::Terminals::new(flowdeck::term::TermConfig::default());
    let studio = common::studio::open(
        &terminals,
        vec![
            env!("CARGO_BIN_EXE_flowdeck").into(),
            "--workflows".into(),
            folder.display().to_string(),
        ],
        None,
        (120, 40),
        vec![("XDG_RUNTIME_DIR".into(), runtime.display().to_string())],
    );
    common::studio::expect(&studio, "make_build").await;
    let agent = direct(&socket_of(runtime)).await;
    let opened = call(
        &agent,
        "open_terminal",
        json!({"command": ["bash", "--norc", "--noprofile"], "env": {"PS1": "$ "}}),
    )
    .await;
    let id = opened["session_id"].as_str().unwrap().to_string();
    common::studio::expect(&studio, r"\(agent: ").await;
    let rounds = if quick() { 10 } else { 50 };
    let mut samples = Vec::with_capacity(rounds);
    for i in 0..rounds {
        let mark = format!("agent-typed-{i}-x");
        let started = Instant::now();
        call(
            &agent,
            "send_input",
            json!({"session_id": id, "input_text": format!(": {mark}\n")}),
        )
        .await;
        common::studio::expect(&studio, &mark).await;
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
        // Cleared so that the next mark is the only one the screen can show.
        call(
            &agent,
            "send_input",
            json!({"session_id": id, "input_text": "clear\n"}),
        )
        .await;
        common::studio::expect_gone(&studio, &mark).await;
        // An agent's next call comes after it read the last answer: not inside the frame
        // the studio is still drawing (frames are capped at one per 16 ms under floods).
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    support::stats(
        "an agent's send_input until the studio's frame shows it",
        samples,
        "ms",
    );
    agent.cancel().await.unwrap();
    terminals.close_all().await;
}

fn main() {
    let runtime = support::runtime();
    runtime.block_on(async {
        let folder = common::bundled_workflows_copy();
        let sockets = tempfile::tempdir().unwrap();
        relay_cost(folder.path(), sockets.path()).await;
        agent_input_to_frame(folder.path(), sockets.path()).await;
    });
}
