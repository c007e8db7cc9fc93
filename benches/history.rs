//! Run history at scale (docs/PERFORMANCE.md): `run_list` over 10,000 journaled runs, the
//! newest 50 of all, and the 50 of a workflow that ran only 60 of those times; the first call
//! of a fresh engine (which learns each run's workflow from its journal or the index), and
//! later calls.
//!
//! `cargo bench --bench history`; `FLOWDECK_BENCH_QUICK=1` for a short run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/mod.rs"]
mod support;

use flowdeck::engine::{Engine, EngineConfig};
use std::time::Instant;

const RUNS: usize = 10_000;

/// A finished run's journal, as the executor writes one: 8 lines.
fn journal(run_id: &str, workflow: &str) -> String {
    let at = "2026-11-23T00:00:00.000Z";
    [
        format!(r#"{{"seq":1,"at":"{at}","type":"run_started","run_id":"{run_id}","workflow":"{workflow}","version":null,"session_id":"s1","inputs":{{}},"actor":{{"kind":"cli"}}}}"#),
        format!(r#"{{"seq":2,"at":"{at}","type":"step_started","step":1,"state":"a","tool":"run_command","params":{{"command":"make"}}}}"#),
        format!(r#"{{"seq":3,"at":"{at}","type":"step_finished","step":1,"state":"a","tool":"run_command","status":"success","elapsed_ms":12.5,"output":"built","error":null}}"#),
        format!(r#"{{"seq":4,"at":"{at}","type":"transition","from":"a","to":"b","condition":"success"}}"#),
        format!(r#"{{"seq":5,"at":"{at}","type":"step_started","step":2,"state":"b","tool":"send_input","params":{{}}}}"#),
        format!(r#"{{"seq":6,"at":"{at}","type":"step_finished","step":2,"state":"b","tool":"send_input","status":"success","elapsed_ms":0.5,"output":"","error":null}}"#),
        format!(r#"{{"seq":7,"at":"{at}","type":"transition","from":"b","to":null,"condition":null}}"#),
        format!(r#"{{"seq":8,"at":"{at}","type":"run_finished","final_state":"completed","success":true,"states_executed":2,"error":null,"return_values":{{}},"duration_ms":20.0}}"#),
    ]
    .join("\n")
        + "\n"
}

fn main() {
    let quick = std::env::var_os("FLOWDECK_BENCH_QUICK").is_some();
    let rounds = if quick { 20 } else { 200 };
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join(".flowdeck/runs");
    std::fs::create_dir_all(&runs).unwrap();
    for i in 0..RUNS {
        let run_id = format!(
            "r{:013}-{:04x}",
            1_700_000_000_000u64 + i as u64,
            i % 0x10000
        );
        let workflow = if i % 167 == 0 { "rare" } else { "common" };
        std::fs::write(
            runs.join(format!("{run_id}.jsonl")),
            journal(&run_id, workflow),
        )
        .unwrap();
    }
    let open = || {
        Engine::open(
            dir.path(),
            EngineConfig {
                watch: false,
                ..EngineConfig::default()
            },
        )
        .unwrap()
    };

    // A fresh engine, before and after the index exists.
    for label in [
        "first call, no index yet",
        "first call of a new engine, with the index",
    ] {
        let engine = open();
        let start = Instant::now();
        let listed = engine.run_list(Some("rare"), 50);
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        assert_eq!(listed.runs.len(), 50);
        println!("run_list(rare, 50) over {RUNS} runs, {label:<40} {ms:>8.3} ms");
    }

    let engine = open();
    let _ = engine.run_list(Some("rare"), 50);
    let mut all = Vec::new();
    let mut rare = Vec::new();
    for _ in 0..rounds {
        let start = Instant::now();
        let listed = engine.run_list(None, 50);
        all.push(start.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(listed.runs.len(), 50);
        let start = Instant::now();
        let listed = engine.run_list(Some("rare"), 50);
        rare.push(start.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(listed.runs.len(), 50);
    }
    support::stats(&format!("run_list(all, 50) over {RUNS} runs"), all, "ms");
    support::stats(&format!("run_list(rare, 50) over {RUNS} runs"), rare, "ms");
}
