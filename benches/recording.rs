//! What recording a run's terminal costs in ingest (docs/PERFORMANCE.md): the same workflow,
//! one `run_command` of `seq 1 2000000` (16.9 MB of output), run end to end by `Engine::run`
//! on two engines in this one process, one recording its runs (`recording_cap:
//! Some(DEFAULT_CAP)`, an asciicast v3 file beside the journal) and one not (`None`), in turn
//! (on, off, on, off, ... so that drift in what else the machine runs falls on both). Each
//! run is timed from its start to its result (its session opened, the flood taken to its
//! last line, the recording finished and closed, the session ended), with the CPU this
//! process used meanwhile (all its threads, the recording's writer among them; not the shell
//! nor `seq`): what a run cost flowdeck, whatever else the machine was doing. The recordings'
//! sizes say whether the cap was reached.
//!
//! `cargo bench --bench recording`; `FLOWDECK_BENCH_QUICK=1` for a short run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;

#[path = "support/mod.rs"]
mod support;

use flowdeck::engine::{Engine, EngineConfig, FinalState, RunRequest};
use flowdeck::term::recording::DEFAULT_CAP;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// The flood: 2,000,000 lines of `seq`, with a generous timeout.
const FLOOD: &str = "name: flood\ndescription: Prints 2,000,000 lines.\ninitial_state: a\nstates:\n  a: { action: { tool: run_command, params: { command: 'seq 1 2000000', timeout: 300 } } }\n";

/// What one run cost.
struct Sample {
    /// Start to result, in seconds.
    wall: f64,
    /// CPU seconds this process used meanwhile.
    cpu: f64,
    /// The recording's size in bytes, and whether it stopped at its cap; `None`: not recorded.
    recording: Option<(u64, bool)>,
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap()
        .trim()
        .to_string()
}

/// An engine on a folder of its own holding the flood, as the tests configure one (a quiet
/// bash for runs), recording with `cap` or not at all.
fn engine(cap: Option<u64>) -> (tempfile::TempDir, Arc<Engine>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("flood.yaml"), FLOOD).unwrap();
    let config = EngineConfig {
        recording_cap: cap,
        ..common::test_config(8, false)
    };
    let engine = Engine::open(dir.path(), config).unwrap();
    (dir, engine)
}

fn request() -> RunRequest {
    common::run_request("flood", &[])
}

/// Whether a recording's last event says it stopped at its cap.
fn stopped_at_cap(path: &Path) -> bool {
    let file = std::fs::read(path).unwrap();
    let tail = &file[file.len().saturating_sub(4096)..];
    String::from_utf8_lossy(tail).contains("the recording stopped at its cap")
}

/// One run of the flood on `engine`, checked; its recording (if any) measured and removed, so
/// that the runs do not fill the disk.
async fn run(engine: &Arc<Engine>, recording: bool) -> Sample {
    let pid = std::process::id();
    let cpu = support::cpu_seconds(pid);
    let started = Instant::now();
    let result = engine.run(request()).await.unwrap();
    let wall = started.elapsed().as_secs_f64();
    let cpu = support::cpu_seconds(pid) - cpu;
    assert_eq!(result.final_state, FinalState::Completed, "{result:?}");
    let recording = if recording {
        assert_eq!(result.recordings.len(), 1, "{:?}", result.recordings);
        let path = PathBuf::from(&result.recordings[0]);
        let bytes = std::fs::metadata(&path).unwrap().len();
        let capped = stopped_at_cap(&path);
        std::fs::remove_file(&path).unwrap();
        Some((bytes, capped))
    } else {
        assert!(result.recordings.is_empty(), "{:?}", result.recordings);
        None
    };
    Sample {
        wall,
        cpu,
        recording,
    }
}

fn main() {
    let quick = std::env::var_os("FLOWDECK_BENCH_QUICK").is_some();
    let rounds = if quick { 3 } else { 11 };
    println!("load average at start: {}", load_average());
    let runtime = support::runtime();
    runtime.block_on(async {
        let (_on_dir, on) = engine(Some(DEFAULT_CAP));
        let (_off_dir, off) = engine(None);
        // One untimed run each: the shell, `seq` and the page cache warm.
        run(&on, true).await;
        run(&off, false).await;
        let (mut with, mut without) = (Vec::new(), Vec::new());
        for i in 0..rounds {
            // Which goes first alternates too.
            if i % 2 == 0 {
                with.push(run(&on, true).await);
                without.push(run(&off, false).await);
            } else {
                without.push(run(&off, false).await);
                with.push(run(&on, true).await);
            }
        }
        let sizes: Vec<u64> = with
            .iter()
            .map(|s| s.recording.unwrap().0)
            .collect();
        let capped = with.iter().filter(|s| s.recording.unwrap().1).count();
        let wall = |samples: &[Sample]| samples.iter().map(|s| s.wall).collect::<Vec<_>>();
        let cpu = |samples: &[Sample]| samples.iter().map(|s| s.cpu).collect::<Vec<_>>();
        println!(
            "run of `seq 1 2000000`, start to result ({rounds} runs a side, interleaved):"
        );
        let on_wall = support::stats("  recording on", wall(&with), "s");
        let off_wall = support::stats("  recording off", wall(&without), "s");
        println!("{:<58} {:.3}x", "  on / off, medians", on_wall / off_wall);
        println!("CPU of this process (all its threads) during each run:");
        let on_cpu = support::stats("  recording on", cpu(&with), "s");
        let off_cpu = support::stats("  recording off", cpu(&without), "s");
        println!(
            "{:<58} {:.3}x  ({:+.3} s a run)",
            "  on / off, medians",
            on_cpu / off_cpu,
            on_cpu - off_cpu
        );
        println!(
            "recording size: min {} bytes, max {} bytes ({:.1} MB; cap {} bytes); stopped at the cap in {capped} of {}",
            sizes.iter().min().unwrap(),
            sizes.iter().max().unwrap(),
            *sizes.iter().max().unwrap() as f64 / 1e6,
            DEFAULT_CAP,
            sizes.len()
        );
        on.shutdown().await;
        off.shutdown().await;
    });
    println!("load average at end: {}", load_average());
}
