//! What an agent pays for flowdeck (docs/PERFORMANCE.md, "Agents' cost"):
//!
//! 1. the tool list per toolset on the bundled folder: the whole `tools/list`, and what a model
//!    reads of it (names, descriptions, input schemas);
//! 2. a no-op call (`list_terminal_sessions`, no terminal open and three open) and the echo
//!    round trip (`send_input` + `await_output`) as agents' clients feel them: the official
//!    Python SDK 2.x and 1.x (tests/clients/python/bench.py, each beside a raw client in the
//!    same run) and the TypeScript SDK (tests/clients/ts/calls.mjs);
//! 3. the no-op call over streamable HTTP against the stdio relay, raw clients, alternating.
//!
//! `cargo bench --bench agents_cost`; `FLOWDECK_BENCH_QUICK=1` for a short run. The clients
//! come from .ci/run's installs (target/clients/python-venv, tests/clients/ts/node_modules);
//! SDK 1.x from `python3 -m venv target/clients/python1-venv &&
//! target/clients/python1-venv/bin/pip install -r tests/clients/python/requirements-sdk1.txt`.
//! A client that is not installed is skipped, saying so.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_flowdeck");

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A scratch copy of the bundled workflows (a server writes its journal into the folder).
fn bundled_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(repo().join("workflows")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
        }
    }
    dir
}

/// `tools/list` of `flowdeck mcp --toolsets WORD`, spoken to as JSON lines.
fn tools_list(folder: &Path, word: &str) -> Value {
    let mut child = Command::new(BIN)
        .arg("--workflows")
        .arg(folder)
        .args(["mcp", "--toolsets", word])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut ask = |id: u64, method: &str, params: Value| -> Value {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{line}").unwrap();
        loop {
            let message: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
            if message["id"] == id {
                return message["result"].clone();
            }
        }
    };
    ask(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "bench", "version": "0"}}),
    );
    let listed = ask(2, "tools/list", json!({}));
    drop(stdin);
    child.wait().unwrap();
    listed
}

fn surface(folder: &Path) {
    println!("tools/list on the bundled folder, per --toolsets word:");
    for word in [
        "terminal",
        "runs",
        "guided",
        "authoring",
        "history",
        "dynamic",
        "default",
        "all",
    ] {
        let listed = tools_list(folder, word);
        let tools = listed["tools"].as_array().unwrap();
        let visible: usize = tools
            .iter()
            .map(|t| {
                t["name"].as_str().unwrap().len()
                    + t["description"].as_str().unwrap().len()
                    + t["inputSchema"].to_string().len()
            })
            .sum();
        let outputs: usize = tools
            .iter()
            .map(|t| t["outputSchema"].to_string().len())
            .sum();
        println!(
            "  {word:<10} {:>3} tools  model-visible {:>6} B  output schemas {:>6} B  whole {:>6} B",
            tools.len(),
            visible,
            outputs,
            listed.to_string().len()
        );
    }
}

/// Runs a client script; its last line of stdout is its JSON figures.
fn client(what: &str, mut command: Command) {
    match command.stderr(Stdio::inherit()).output() {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            println!("  {what:<28} {}", text.lines().last().unwrap_or_default());
        }
        Ok(out) => println!("  {what:<28} failed: {}", out.status),
        Err(e) => println!("  {what:<28} not run: {e}"),
    }
}

fn python(venv: &str) -> Option<PathBuf> {
    let python = repo().join(venv).join("bin/python");
    python.is_file().then_some(python)
}

/// tests/clients/python/bench.py under `python`, against this binary on `folder`.
fn bench_py(python: &Path, folder: &Path, options: &[&str]) -> Command {
    let mut command = Command::new(python);
    command
        .arg(repo().join("tests/clients/python/bench.py"))
        .arg("--server")
        .arg(BIN)
        .arg("--workflows")
        .arg(folder)
        .args(options);
    command
}

fn main() {
    let quick = std::env::var_os("FLOWDECK_BENCH_QUICK").is_some();
    let rounds = if quick { "50" } else { "300" };
    let folder = bundled_copy();
    surface(folder.path());

    println!(
        "per call, milliseconds [median, p90]; `raw` is a plain JSON-RPC client in the same run:"
    );
    for (what, venv) in [
        ("python SDK 2.x", "target/clients/python-venv"),
        ("python SDK 1.x", "target/clients/python1-venv"),
    ] {
        match python(venv) {
            Some(python) => client(
                what,
                bench_py(&python, folder.path(), &["--rounds", rounds]),
            ),
            None => println!("  {what:<28} skipped: no {venv} (see this file's header)"),
        }
    }
    let ts = repo().join("tests/clients/ts");
    if ts.join("node_modules/@modelcontextprotocol/sdk").is_dir() {
        let mut command = Command::new("node");
        command
            .current_dir(&ts)
            .arg("calls.mjs")
            .arg("--server")
            .arg(BIN)
            .arg("--workflows")
            .arg(folder.path())
            .args(["--rounds", rounds]);
        client("typescript SDK", command);
    } else {
        println!(
            "  typescript SDK               skipped: no tests/clients/ts/node_modules (npm ci there)"
        );
    }

    println!("no-op call, stdio relay against streamable HTTP, raw clients alternating:");
    match python("target/clients/python-venv") {
        Some(python) => client(
            "relay / http",
            bench_py(&python, folder.path(), &["--http", "--rounds", rounds]),
        ),
        None => println!("  relay / http                 skipped: no target/clients/python-venv"),
    }
}
