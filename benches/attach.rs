//! A studio attached to the folder's server, beside one that hosts the engine itself (as it does
//! when no server can be started), in one run (issue 22, docs/PERFORMANCE.md): how long
//! attaching takes to a complete first frame with four busy panes, how long a key typed in
//! focus mode takes to show its echo, what a flood costs the program when an attached studio
//! shows it, the bytes a second the server sends a studio during floods, the server's CPU with
//! several studios, and the CPU of an idle server and studio. The studio is the real binary in
//! a PTY; the server is `flowdeck serve`.
//!
//! `cargo bench --bench attach`; `FLOWDECK_BENCH_QUICK=1` shortens it.

#![allow(clippy::unwrap_used)]

#[path = "../tests/common/mod.rs"]
mod common;

#[path = "support/mod.rs"]
mod support;

use common::studio::{expect, on_screen, open, timed_seq};
use flowdeck::term::{Session, TermConfig, Terminals};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn quick() -> bool {
    std::env::var_os("FLOWDECK_BENCH_QUICK").is_some()
}

/// The studio binary in a 200x50 terminal, with the socket folder `runtime`.
fn studio(terminals: &Terminals, folder: &Path, runtime: &Path) -> Arc<Session> {
    let program = vec![
        env!("CARGO_BIN_EXE_flowdeck").to_string(),
        "--workflows".into(),
        folder.display().to_string(),
    ];
    let xdg = ("XDG_RUNTIME_DIR".to_string(), runtime.display().to_string());
    open(terminals, program, None, (200, 50), vec![xdg])
}

/// Four terminals opened by an agent on the server, each printing as fast as it can, the
/// grid of four shown.
async fn four_busy_panes(folder: &Path, runtime: &Path) -> common::line_client::LineServer {
    let (folder, runtime) = (folder.to_path_buf(), runtime.to_path_buf());
    tokio::task::spawn_blocking(move || {
        let mut agent = common::mcp_agent(&folder, &runtime, &[]);
        for n in 0..4u64 {
            let opened = agent.call(
                10 + n,
                "open_terminal",
                json!({"command": ["bash", "--norc", "--noprofile"], "cols": 200, "rows": 50}),
            );
            let id = opened["session_id"].as_str().unwrap().to_string();
            agent.call(
                20 + n,
                "send_input",
                json!({"session_id": id, "input_text": format!("yes busy-pane-{n} | cat -n\n")}),
            );
        }
        agent
    })
    .await
    .unwrap()
}

/// Spawn to the first frame that shows the list and a busy pane.
async fn attach_to_first_frame(folder: &Path, runtime: &Path) -> f64 {
    let terminals = Terminals::new(TermConfig::default());
    let started = Instant::now();
    let s = studio(&terminals, folder, runtime);
    expect(&s, r"busy-pane-\d").await;
    let took = started.elapsed().as_secs_f64() * 1000.0;
    s.send_text("q", "bench").unwrap();
    let _ = s.await_output(on_screen("never printed")).await;
    took
}

/// A key typed in focus mode into a shell pane, until its echo is drawn: each round types a
/// word of its own untimed, then one key after it, timed until the word with that key is on
/// the screen (a word typed at once would be several keys, their echoes drawn in one frame).
async fn key_echo(s: &Session, rounds: usize) -> Vec<f64> {
    s.send_text("t", "bench").unwrap();
    expect(s, r"FOCUS|\[s\d+ · ").await;
    s.send_text("i", "bench").unwrap();
    expect(s, "FOCUS").await;
    s.send_text("echo ready-$((40+2))\r", "bench").unwrap();
    expect(s, "ready-42").await;
    let mut samples = Vec::with_capacity(rounds);
    for n in 0..rounds {
        // A word of its own each round, so a match is this key's echo and no earlier one.
        let word = format!("k{n:04}");
        s.send_text(&word, "bench").unwrap();
        expect(s, &word).await;
        let started = Instant::now();
        s.send_text("z", "bench").unwrap();
        expect(s, &format!("{word}z")).await;
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
        s.send_text("\u{15}", "bench").unwrap();
    }
    samples
}

/// During four floods: the server's CPU with no studio, one, two and three attached (each
/// showing the four panes in a grid).
async fn floods_watched(server: u32, folder: &Path, runtime: &Path) {
    let span = Duration::from_secs(if quick() { 2 } else { 5 });
    let alone = support::cpu_share(server, span).await;
    let (bytes, screens) = bytes_to_a_studio(folder, runtime, span).await;
    println!(
        "{:<58} {:>9.0} KB/s ({screens} screen messages a second)",
        "server to a studio watching four floods",
        bytes / 1024.0
    );
    let terminals = Terminals::new(TermConfig::default());
    let mut studios = Vec::new();
    let mut shares = Vec::new();
    for _ in 0..3 {
        let s = studio(&terminals, folder, runtime);
        expect(&s, r"busy-pane-\d").await;
        s.send_text("g", "bench").unwrap();
        expect(
            &s,
            r"(?s)busy-pane-\d.*busy-pane-\d.*busy-pane-\d.*busy-pane-\d",
        )
        .await;
        studios.push(s);
        let share = support::cpu_share(server, span).await;
        println!(
            "{:<58} server {share:.1} % of a core (none attached: {alone:.1} %)",
            format!(
                "four floods shown in a grid, {} studio(s) attached",
                studios.len()
            ),
        );
        shares.push(share);
    }
    println!(
        "{:<58} {:>9.2}x",
        "  server CPU, three studios / one",
        shares[2] / shares[0]
    );
    for s in &studios {
        s.send_text("d", "bench").unwrap();
        let _ = s.await_output(on_screen("never printed")).await;
    }
}

/// What the server sends a studio that shows every session while they flood, per second:
/// bytes, and screen messages. Measured as a studio of the bench's own on the socket, which
/// speaks the studio protocol and counts what it reads.
async fn bytes_to_a_studio(folder: &Path, runtime: &Path, span: Duration) -> (f64, f64) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let socket =
        flowdeck::server::socket::socket_path_in(&runtime.join("flowdeck"), folder).unwrap();
    let stream = tokio::net::UnixStream::connect(socket).await.unwrap();
    let (read, mut write) = stream.into_split();
    let mut read = tokio::io::BufReader::new(read);
    let hello = json!({"flowdeck": {"protocol": 1, "version": env!("CARGO_PKG_VERSION"), "client": "studio"}});
    write
        .write_all(format!("{hello}\n").as_bytes())
        .await
        .unwrap();
    let mut line = String::new();
    // The welcome, the count of studios, then the snapshot with the sessions to watch.
    let sessions: Vec<String> = loop {
        line.clear();
        read.read_line(&mut line).await.unwrap();
        let message: serde_json::Value = serde_json::from_str(&line).unwrap();
        if let Some(snapshot) = message.get("snapshot") {
            break snapshot["sessions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["session_id"].as_str().unwrap().to_string())
                .collect();
        }
    };
    let watch = json!({"watch": {"sessions": sessions}});
    write
        .write_all(format!("{watch}\n").as_bytes())
        .await
        .unwrap();
    let (mut bytes, mut screens) = (0usize, 0usize);
    let end = tokio::time::Instant::now() + span;
    while let Ok(read_some) = tokio::time::timeout_at(end, read.read_line(&mut line)).await {
        bytes += read_some.unwrap();
        screens += usize::from(line.starts_with("{\"screen\""));
        line.clear();
    }
    let seconds = span.as_secs_f64();
    (bytes as f64 / seconds, screens as f64 / seconds)
}

fn main() {
    let runtime = support::runtime();
    runtime.block_on(async {
        let folder = common::bundled_workflows_copy();
        let sockets = tempfile::tempdir().unwrap();
        let terminals = Terminals::new(TermConfig::default());
        let rounds = if quick() { 20 } else { 200 };

        // In-process: a studio that hosts the engine itself, as it does when no server can be
        // started (a file where the sockets' folder belongs).
        let no_sockets = tempfile::tempdir().unwrap();
        std::fs::write(no_sockets.path().join("flowdeck"), "").unwrap();
        let hosting = studio(&terminals, folder.path(), no_sockets.path());
        expect(&hosting, "agents cannot reach this studio").await;
        let local = key_echo(&hosting, rounds).await;
        support::stats("key echo, studio hosting the engine", local, "ms");
        // Its shell ends with it: it asks first.
        hosting.send_text("\u{7}q", "bench").unwrap();
        expect(&hosting, r"Quit\? y / n").await;
        hosting.send_text("y", "bench").unwrap();
        let _ = hosting.await_output(on_screen("never printed")).await;

        // Attached: the same studio on `flowdeck serve`.
        let mut server = common::serve_with(folder.path(), sockets.path(), &[]);
        let server_pid = server.id();
        let idle_span = Duration::from_secs(if quick() { 2 } else { 5 });
        let attached = studio(&terminals, folder.path(), sockets.path());
        expect(&attached, "make_build").await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (server_idle, studio_idle) = tokio::join!(
            support::cpu_share(server_pid, idle_span),
            support::cpu_share(attached.pid(), idle_span)
        );
        println!(
            "{:<58} server {server_idle:.2} %, studio {studio_idle:.2} % of a core over {idle_span:?}",
            "idle, attached"
        );
        println!(
            "{:<58} {:>9.1} MiB",
            "server resident memory, a studio attached, no session",
            support::resident_mib(server_pid)
        );
        let remote = key_echo(&attached, rounds).await;
        support::stats("key echo, studio attached to the server", remote, "ms");

        // The studio's cost to a flooding program, attached: the same flood in a session
        // the studio does not show.
        let plain = common::bash(&terminals, Duration::from_secs(60)).await;
        let seq_rounds = if quick() { 2 } else { 11 };
        let (mut with, mut without) = (Vec::new(), Vec::new());
        for round in 0..seq_rounds {
            without.push(timed_seq(&plain, round).await);
            with.push(timed_seq(&attached, 100 + round).await);
        }
        let without = support::stats("`seq 1 2000000`, no studio", without, "s");
        let with = support::stats("`seq 1 2000000`, a pane an attached studio shows", with, "s");
        println!(
            "{:<58} {:>9.3}x",
            "  attached studio / none (median)",
            with / without
        );
        // Detached: the shell is the server's, killed below.
        attached.send_text("\u{7}d", "bench").unwrap();
        let _ = attached.await_output(on_screen("never printed")).await;

        drop(plain);
        server.kill().unwrap();
        server.wait().unwrap();

        // Attaching, with four panes busy at 200x50 (a folder of their own: the first pane
        // a studio shows is a busy one).
        let busy = common::bundled_workflows_copy();
        let mut server = common::serve_with(busy.path(), sockets.path(), &[]);
        let agent = four_busy_panes(busy.path(), sockets.path()).await;
        let mut attach = Vec::new();
        for _ in 0..if quick() { 3 } else { 10 } {
            attach.push(attach_to_first_frame(busy.path(), sockets.path()).await);
        }
        support::stats(
            "attach to the first frame, four busy panes at 200x50",
            attach,
            "ms",
        );
        floods_watched(server.id(), busy.path(), sockets.path()).await;
        drop(agent);
        server.kill().unwrap();
        server.wait().unwrap();
        terminals.close_all().await;
    });
}
