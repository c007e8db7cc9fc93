//! MCP figures (docs/PERFORMANCE.md): `initialize` time from process start, tool round trips
//! (`list_terminal_sessions`, `get_screen_content`, `workflow_list`), and the echo round trip
//! (`send_input` + `await_output`), all through rmcp's client talking to the real binary.
//!
//! `cargo bench --bench mcp`; `FLOWDECK_BENCH_QUICK=1` for a short run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/mod.rs"]
mod support;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};
use std::time::Instant;

fn args(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

fn main() {
    let quick = std::env::var_os("FLOWDECK_BENCH_QUICK").is_some();
    let n = if quick { 100 } else { 1000 };
    let starts = if quick { 5 } else { 30 };
    let runtime = support::runtime();
    runtime.block_on(async {
        let command = || {
            tokio::process::Command::new(env!("CARGO_BIN_EXE_flowdeck")).configure(|c| {
                c.arg("--workflows").arg("workflows").arg("mcp");
            })
        };
        let mut init = Vec::new();
        for _ in 0..starts {
            let t = Instant::now();
            let client = ().serve(TokioChildProcess::new(command()).unwrap()).await.unwrap();
            init.push(t.elapsed().as_secs_f64() * 1000.0);
            client.cancel().await.unwrap();
        }
        support::stats("initialize answered, from process start", init, "ms");

        let client = ().serve(TokioChildProcess::new(command()).unwrap()).await.unwrap();
        let call = |name: &'static str, a: Value| {
            let client = &client;
            async move {
                let r = client
                    .call_tool(CallToolRequestParams::new(name).with_arguments(args(a)))
                    .await
                    .unwrap();
                // An error's payload is the JSON text of its content.
                assert_ne!(r.is_error, Some(true), "{name}: {:?}", r.content);
                r.structured_content.unwrap_or(Value::Null)
            }
        };
        let opened = call(
            "open_terminal",
            json!({"command": ["bash", "--norc"], "env": {"PS1": "$ "}}),
        )
        .await;
        let id = opened["session_id"].as_str().unwrap().to_string();
        for (name, a) in [
            ("list_terminal_sessions", json!({})),
            ("get_screen_content", json!({"session_id": id})),
            ("workflow_list", json!({})),
        ] {
            let mut samples = Vec::with_capacity(n);
            for _ in 0..n {
                let t = Instant::now();
                call(name, a.clone()).await;
                samples.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            support::stats(&format!("{name} round trip"), samples, "ms");
        }
        let mut samples = Vec::with_capacity(n);
        for i in 0..n {
            let t = Instant::now();
            call(
                "send_input",
                json!({"session_id": id, "input_text": format!("echo R{i}\n")}),
            )
            .await;
            let r = call(
                "await_output",
                json!({"session_id": id, "pattern": format!("^R{i}$"), "timeout": 30}),
            )
            .await;
            samples.push(t.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(r["outcome"], "matched");
        }
        support::stats("echo round trip (send_input + await_output)", samples, "ms");
        client.cancel().await.unwrap();
    });
}
