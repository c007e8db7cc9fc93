//! Agents' reads while other agents write to a slow disk (issue 21, docs/PERFORMANCE.md): 20
//! clients call `list_terminal_sessions` on `flowdeck serve` (each every 10 ms for 5 s, as
//! agents polling their terminals), first alone (idle), then while 20 others save workflows
//! as fast as they can and a `dd` beside the folder saturates the disk, so that every save's
//! fsync and lock file wait on it. The reads touch no disk: their p99 under that load should
//! stay within 2x of idle, which holds only when the saves wait on the blocking pool rather
//! than on the runtime's two workers that every call shares.
//!
//! `cargo bench --bench contention`; `FLOWDECK_BENCH_QUICK=1` shortens it;
//! `FLOWDECK_BENCH_DIR` puts the folder on another disk (a slower one shows more);
//! `FLOWDECK_BENCH_BIN` measures another build of `flowdeck` (an older one, for comparison);
//! `FLOWDECK_BENCH_LOAD=savers` or `=dd` applies one half of the load, to tell them apart;
//! `FLOWDECK_BENCH_KEEP=1` keeps the folder, whose `.flowdeck/audit.jsonl` holds each call's
//! duration as the server measured it (a tail there is the server's; one only here is not).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;

#[path = "support/mod.rs"]
mod support;

#[path = "support/client.rs"]
mod client;

use client::{Client, call, direct, quick, socket_of};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const READERS: usize = 20;
const SAVERS: usize = 20;

/// How often each reader calls: an agent polling its terminals, briskly. Readers that call
/// back to back instead would measure how the two cores are shared between reads and saves
/// (a throughput figure), not how long one agent's read waits behind other agents' saves.
const PACE: Duration = Duration::from_millis(10);

/// Each reader's `list_terminal_sessions` latencies, all readers at once, one call every
/// [`PACE`] each for `phase` (long enough for hundreds of saves to land among the reads).
async fn read_all(readers: &[Arc<Client>], phase: Duration) -> Vec<f64> {
    let tasks: Vec<_> = readers
        .iter()
        .map(|client| {
            let client = client.clone();
            tokio::spawn(async move {
                let mut samples = Vec::new();
                let mut tick = tokio::time::interval(PACE);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                let end = Instant::now() + phase;
                while Instant::now() < end {
                    tick.tick().await;
                    let t = Instant::now();
                    call(&client, "list_terminal_sessions", json!({})).await;
                    samples.push(t.elapsed().as_secs_f64() * 1000.0);
                }
                samples
            })
        })
        .collect();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    all
}

/// `dd` writing past the page cache, over and over, in a shell loop of its own: started once
/// and running before the reads are timed (a process spawned from the bench itself in the
/// middle of the timed reads stalls the bench's own clients for tens of milliseconds, which
/// is the bench's cost, not the server's). Ended with its process group.
struct Saturation {
    shell: std::process::Child,
    ballast: std::path::PathBuf,
}

impl Saturation {
    fn start(beside: &Path) -> Saturation {
        use std::os::unix::process::CommandExt;
        let ballast = beside.join("ballast");
        let shell = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "while :; do dd if=/dev/zero of='{}' bs=1M count=256 oflag=direct conv=fsync 2>/dev/null; done",
                ballast.display()
            ))
            .process_group(0)
            .spawn()
            .unwrap();
        let len = || std::fs::metadata(&ballast).map_or(0, |m| m.len());
        common::wait_until(Duration::from_secs(30), "dd's first file", || {
            (len() >= 200 << 20).then_some(())
        });
        common::wait_until(Duration::from_secs(30), "dd's second file", || {
            (len() < 100 << 20).then_some(())
        });
        Saturation { shell, ballast }
    }
}

impl Drop for Saturation {
    fn drop(&mut self) {
        let group = nix::unistd::Pid::from_raw(self.shell.id() as i32);
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        let _ = self.shell.wait();
        let _ = std::fs::remove_file(&self.ballast);
    }
}

fn main() {
    let runtime = support::runtime();
    runtime.block_on(async {
        let base = match std::env::var_os("FLOWDECK_BENCH_DIR") {
            Some(dir) => tempfile::tempdir_in(dir).unwrap(),
            None => tempfile::tempdir().unwrap(),
        };
        let folder = base.path().join("workflows");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("tiny.yaml"), common::TINY).unwrap();
        let sockets = tempfile::tempdir().unwrap();
        let binary = std::env::var_os("FLOWDECK_BENCH_BIN")
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_flowdeck").into());
        let mut host = std::process::Command::new(binary)
            .arg("--workflows")
            .arg(&folder)
            .arg("serve")
            .env("XDG_RUNTIME_DIR", sockets.path())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let socket = socket_of(sockets.path());
        let mut readers = Vec::new();
        for _ in 0..READERS {
            readers.push(Arc::new(direct(&socket).await));
        }
        let phase = Duration::from_secs(if quick() { 1 } else { 5 });

        let idle = read_all(&readers, phase).await;
        let idle_p99 = support::quantile(&idle, 0.99);
        support::stats("list_terminal_sessions, 20 readers, idle", idle, "ms");

        let stop = Arc::new(AtomicBool::new(false));
        let saves = Arc::new(AtomicUsize::new(0));
        let load = std::env::var("FLOWDECK_BENCH_LOAD").unwrap_or_default();
        let dd = (load != "savers").then(|| Saturation::start(base.path()));
        let savers_n = if load == "dd" { 0 } else { SAVERS };
        let mut savers = Vec::new();
        for i in 0..savers_n {
            let client = direct(&socket).await;
            let (stop, saves) = (stop.clone(), saves.clone());
            savers.push(tokio::spawn(async move {
                let mut samples = Vec::new();
                let mut n = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    n += 1;
                    let content = common::TINY
                        .replace("name: tiny", &format!("name: saver_{i}"))
                        .replace("Lists sessions.", &format!("Save {n}."));
                    let t = Instant::now();
                    call(
                        &client,
                        "workflow_save",
                        json!({"content": content, "overwrite": true}),
                    )
                    .await;
                    samples.push(t.elapsed().as_secs_f64() * 1000.0);
                    saves.fetch_add(1, Ordering::SeqCst);
                }
                client.cancel().await.unwrap();
                samples
            }));
        }
        // The load is on before the reads are timed.
        common::poll_until(Duration::from_secs(60), "the first saves", || {
            (saves.load(Ordering::SeqCst) >= savers_n).then_some(())
        })
        .await;
        let started = Instant::now();
        let loaded = read_all(&readers, phase).await;
        let loaded_p99 = support::quantile(&loaded, 0.99);
        let seconds = started.elapsed().as_secs_f64();
        let saved_during = saves.load(Ordering::SeqCst);
        stop.store(true, Ordering::SeqCst);
        let mut save_samples = Vec::new();
        for saver in savers {
            save_samples.extend(saver.await.unwrap());
        }
        drop(dd);
        support::stats(
            "list_terminal_sessions, 20 readers, 20 savers + dd",
            loaded,
            "ms",
        );
        if !save_samples.is_empty() {
            support::stats("workflow_save, 20 savers + dd", save_samples, "ms");
        }
        println!(
            "{:<58} {:>9.2}x  ({saved_during} saves in {seconds:.1} s)",
            "  reads' p99 under load / idle",
            loaded_p99 / idle_p99
        );
        for reader in readers {
            if let Ok(client) = Arc::try_unwrap(reader) {
                client.cancel().await.unwrap();
            }
        }
        host.kill().unwrap();
        host.wait().unwrap();
        if std::env::var_os("FLOWDECK_BENCH_KEEP").is_some() {
            println!("kept {}", base.keep().display());
        }
    });
}
