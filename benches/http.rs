//! MCP over streamable HTTP against stdio (issue 24, docs/PERFORMANCE.md): one client library,
//! the official TypeScript SDK (`tests/clients/ts/bench.mjs`), on one `flowdeck serve --http`.
//! A tool call's round trip over stdio (`flowdeck mcp` relayed to the server, as agent hosts
//! run it) and over HTTP, alternating; then 50 sessions over HTTP at once: the wall time from
//! the first connect to the last answer, and the server's memory with them all open.
//!
//! `cargo bench --bench http`; needs Node and `npm ci --prefix tests/clients/ts`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;

#[path = "support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::{Receiver, channel};

const TOKEN: &str = "a-token-for-the-http-bench";

/// Lines of a child's stderr as they come.
fn lines_of(stream: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

fn wait_for(lines: &Receiver<String>, what: &str) -> String {
    loop {
        let line = lines
            .recv_timeout(common::LONG)
            .unwrap_or_else(|_| panic!("no {what:?} within {:?}", common::LONG));
        if line.contains(what) {
            return line;
        }
    }
}

fn main() {
    let ts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/ts");
    if !ts.join("node_modules/@modelcontextprotocol/sdk").is_dir() {
        println!("skipped: run `npm ci --prefix tests/clients/ts` first (needs Node.js)");
        return;
    }
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("tiny.yaml"), common::TINY).unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let (server, told) = common::serve_over_http(
        folder.path(),
        runtime.path(),
        &[("FLOWDECK_HTTP_TOKEN", TOKEN)],
    );
    let url = told
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .trim_end_matches(';')
        .to_string();
    let pid = server.0.id();

    let mut bench = Command::new("node")
        .current_dir(&ts)
        .arg("bench.mjs")
        .arg("--server")
        .arg(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(folder.path())
        .args(["--url", &url])
        .env("XDG_RUNTIME_DIR", runtime.path())
        .env("FLOWDECK_HTTP_TOKEN", TOKEN)
        .env("SHELL", "/bin/bash")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let bench_lines = lines_of(bench.stderr.take().unwrap());
    let mut go_on = bench.stdin.take().unwrap();
    wait_for(&bench_lines, "round trips done");
    let idle_mib = support::resident_mib(pid);
    go_on.write_all(b"\n").unwrap();
    wait_for(&bench_lines, "sessions open");
    let open_mib = support::resident_mib(pid);
    go_on.write_all(b"\n").unwrap();
    drop(go_on);
    let out = bench.wait_with_output().unwrap();
    assert!(out.status.success(), "bench.mjs failed");
    let figures: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let samples = |key: &str| -> Vec<f64> {
        figures[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    let stdio = support::stats(
        "tool call over stdio (flowdeck mcp, relayed)",
        samples("stdio_ms"),
        "ms",
    );
    let http = support::stats("tool call over HTTP", samples("http_ms"), "ms");
    println!("  HTTP / stdio, medians {:>42.2}x", http / stdio);
    println!(
        "{} sessions over HTTP at once, connect + one call each {:>9.1} ms wall",
        figures["sessions"],
        figures["sessions_wall_ms"].as_f64().unwrap()
    );
    println!(
        "server memory: {idle_mib:.1} MiB after the round trips, {open_mib:.1} MiB with the {} sessions open (+{:.2} MiB each)",
        figures["sessions"],
        (open_mib - idle_mib) / figures["sessions"].as_f64().unwrap()
    );
    drop(server);
}
