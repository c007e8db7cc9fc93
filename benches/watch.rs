//! How long a change on disk takes to reach a store subscriber: the latency a TUI or MCP
//! client sees (SPEC §3.5: within a quarter of a second). Prints the median and p99 over 200
//! writes.

use flowdeck::store::{Store, Watcher};
use std::time::{Duration, Instant};

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(dir.path()).expect("open");
    let _watcher = Watcher::start(&store).expect("watch");
    let rx = store.subscribe();
    let mut samples = Vec::new();
    for i in 0..200 {
        let content = format!(
            "name: watched\ndescription: write {i}\ninitial_state: s\nstates:\n  s:\n    action: {{tool: list_terminal_sessions}}\n"
        );
        let start = Instant::now();
        std::fs::write(dir.path().join("watched.yaml"), content).expect("write");
        loop {
            let change = rx
                .recv_timeout(Duration::from_secs(5))
                .expect("change seen");
            if change.file_name == "watched.yaml" {
                break;
            }
        }
        samples.push(start.elapsed());
    }
    samples.sort();
    let pct = |p: f64| samples[((samples.len() as f64 - 1.0) * p).round() as usize];
    println!(
        "watch latency over {} writes: median {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        samples.len(),
        pct(0.5).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3,
        pct(1.0).as_secs_f64() * 1e3
    );
}
