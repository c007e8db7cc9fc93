//! Executor overhead per state (docs/PERFORMANCE.md): a workflow of 50 `set_env` states run
//! end to end, against the same 50 `set_env` calls made directly on the engine; and a workflow
//! of 50 `list_terminal_sessions` states, which touch no terminal, for the executor alone.
//!
//! `cargo bench --bench runs`; `FLOWDECK_BENCH_QUICK=1` for a short run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/mod.rs"]
mod support;

use flowdeck::engine::{Actor, Engine, EngineConfig, FinalState, RunRequest, WorkflowSource};
use flowdeck::term::TermConfig;
use flowdeck::workflow::action::{OpenTerminalParams, SetEnvParams};
use std::fmt::Write;
use std::time::{Duration, Instant};

const STATES: usize = 50;

fn manifest(name: &str, action: impl Fn(usize) -> String) -> String {
    let mut text = format!(
        "name: {name}\ndescription: {STATES} states in a row\ninitial_state: s0\nstates:\n"
    );
    for i in 0..STATES {
        writeln!(text, "  s{i}:\n    action: {}", action(i)).unwrap();
        if i + 1 < STATES {
            writeln!(text, "    transitions: [{{ next_state: s{} }}]", i + 1).unwrap();
        }
    }
    text
}

fn main() {
    let quick = std::env::var_os("FLOWDECK_BENCH_QUICK").is_some();
    let rounds = if quick { 3 } else { 20 };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("set_env_chain.yaml"),
        manifest("set_env_chain", |i| {
            format!("{{ tool: set_env, params: {{ vars: {{ V{i}: value-{i} }} }} }}")
        }),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("list_chain.yaml"),
        manifest("list_chain", |_| {
            "{ tool: list_terminal_sessions }".to_string()
        }),
    )
    .unwrap();
    let runtime = support::runtime();
    runtime.block_on(async {
        let engine = Engine::open(
            dir.path(),
            EngineConfig {
                terminals: TermConfig {
                    kill_grace: Duration::from_millis(300),
                    ..TermConfig::default()
                },
                run_shell: Some(vec!["bash".into(), "--norc".into(), "--noprofile".into()]),
                watch: false,
                ..EngineConfig::default()
            },
        )
        .unwrap();
        let session = engine
            .open_terminal(
                &OpenTerminalParams {
                    command: Some(vec!["bash".into(), "--norc".into(), "--noprofile".into()]),
                    ..OpenTerminalParams::default()
                },
                &Actor::Cli,
            )
            .await
            .unwrap();
        let request = |name: &str| RunRequest {
            workflow: WorkflowSource::Name(name.into()),
            session_id: Some(session.session_id.clone()),
            inputs: Default::default(),
            keep_session: true,
            host: None,
            actor: Actor::Cli,
            require_approval: false,
        };
        let mut per_state_run = Vec::new();
        let mut per_state_direct = Vec::new();
        let mut per_state_pure = Vec::new();
        for _ in 0..rounds {
            let t = Instant::now();
            let result = engine.run(request("set_env_chain")).await.unwrap();
            assert_eq!(
                result.final_state,
                FinalState::Completed,
                "{:?}",
                result.error
            );
            per_state_run.push(t.elapsed().as_secs_f64() * 1000.0 / STATES as f64);

            let t = Instant::now();
            for i in 0..STATES {
                let params: SetEnvParams = serde_json::from_value(
                    serde_json::json!({"vars": {format!("V{i}"): format!("value-{i}")}}),
                )
                .unwrap();
                engine
                    .set_env(&session.session_id, &params, None, &Actor::Cli)
                    .await
                    .unwrap();
            }
            per_state_direct.push(t.elapsed().as_secs_f64() * 1000.0 / STATES as f64);

            let t = Instant::now();
            let result = engine.run(request("list_chain")).await.unwrap();
            assert_eq!(result.final_state, FinalState::Completed);
            per_state_pure.push(t.elapsed().as_secs_f64() * 1000.0 / STATES as f64);
        }
        let run = support::stats("run of 50 set_env states", per_state_run, "ms/state");
        let direct = support::stats(
            "the same 50 set_env calls, no executor",
            per_state_direct,
            "ms/state",
        );
        println!(
            "{:<52} {:>8.3} ms/state",
            "executor overhead (difference)",
            run - direct
        );
        support::stats(
            "run of 50 list_terminal_sessions states (no I/O)",
            per_state_pure,
            "ms/state",
        );
        engine.shutdown().await;
    });
}
