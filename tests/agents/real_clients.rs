//! `flowdeck mcp` driven by real MCP clients: the official TypeScript SDK (tests/clients/ts),
//! the official Python SDK (tests/clients/python), the MCP Inspector CLI, and a hand-spoken
//! JSON-RPC client over Unix socket pairs, the stdio that Node-based agent hosts give a server.
//! The README's client snippets are launched exactly as written, with a real client.
//!
//! The clients' dependencies are installed by `.ci/run` (pinned: package-lock.json and
//! requirements.txt). Where one is missing, its test prints `SKIP: <client>: <reason>` with
//! the command that installs it, on the real stderr so that `cargo test` shows it; it is never
//! a silent pass. `.ci/run` lists the clients it installed in FLOWDECK_REAL_CLIENTS_REQUIRED,
//! and for those a missing dependency is a failure.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::Shutdown;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::common;

/// The most a client's whole run may take before it is killed.
const CLIENT_DEADLINE: Duration = Duration::from_secs(90);
/// The most one JSON-RPC answer or one process exit may take.
const ANSWER: Duration = Duration::from_secs(30);
/// The most a server may take to exit once its client has gone.
const EXIT: Duration = Duration::from_secs(5);

const BIN: &str = env!("CARGO_BIN_EXE_flowdeck");

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn ts_dir() -> PathBuf {
    repo().join("tests/clients/ts")
}

fn python_venv() -> PathBuf {
    repo().join("target/clients/python-venv")
}

// ------------------------------------------------------------------------------------------------
// Skips

use crate::common::skip_missing as skip;

/// The reason a Node client cannot run here, if it cannot: `min_major` is the oldest Node it
/// is known to run on, `package` what it needs from tests/clients/ts/node_modules.
fn node_missing(package: &str, min_major: u32) -> Option<String> {
    let install = "run `npm ci --prefix tests/clients/ts` (or .ci/run, which installs node and npm when missing)";
    let version = Command::new("node").arg("--version").output();
    let Some(version) = version.ok().filter(|o| o.status.success()) else {
        return Some(format!(
            "`node` is not on PATH; install Node.js {min_major} or newer, then {install}"
        ));
    };
    let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
    let major: u32 = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    if major < min_major {
        return Some(format!(
            "node {version} is older than {min_major}, the oldest Node {package} is tested with"
        ));
    }
    let manifest = ts_dir()
        .join("node_modules")
        .join(package)
        .join("package.json");
    if !manifest.is_file() {
        return Some(format!("{package} is not installed; {install}"));
    }
    None
}

/// The venv's python, or why the Python client cannot run here.
fn python_client() -> Result<PathBuf, String> {
    let install = "run .ci/run, or `python3 -m venv target/clients/python-venv && target/clients/python-venv/bin/pip install -r tests/clients/python/requirements.txt`";
    let python = python_venv().join("bin/python");
    if !python.is_file() {
        return Err(format!(
            "no virtual environment at {}; {install}",
            python_venv().display()
        ));
    }
    let pinned = std::fs::read_to_string(repo().join("tests/clients/python/requirements.txt"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("mcp==").map(str::to_string))
        .expect("requirements.txt pins mcp==VERSION");
    let installed = Command::new(&python)
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('mcp'))",
        ])
        .output();
    match installed {
        Ok(o) if o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == pinned => {
            Ok(python)
        }
        Ok(o) if o.status.success() => Err(format!(
            "the venv has mcp {}, requirements.txt pins {pinned}; {install}",
            String::from_utf8_lossy(&o.stdout).trim()
        )),
        _ => Err(format!("the venv has no `mcp` package; {install}")),
    }
}

// ------------------------------------------------------------------------------------------------
// Running a client with a deadline

struct Finished {
    success: bool,
    status: String,
    stdout: String,
    stderr: String,
}

impl Finished {
    fn report(&self) -> String {
        format!(
            "{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

fn collect(mut from: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = from.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Waits for `child` to exit by `deadline`; `None` when it has not.
fn wait_until(child: &mut Child, deadline: Instant) -> Option<std::process::ExitStatus> {
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs a client in a process group of its own. Past the deadline the group is killed, and
/// so is every server still serving `folder` (the Python SDK starts its server in a session of
/// its own).
fn run_client(command: Command, folder: &Path) -> Finished {
    run_client_with(command, folder, Servers::EndWithClient)
}

/// Whether the servers of the client's folder must be gone once the client is: a client that
/// spawns `flowdeck mcp` ends its server; one that connects over HTTP leaves the test's
/// `flowdeck serve` running.
#[derive(PartialEq)]
enum Servers {
    EndWithClient,
    Stay,
}

fn run_client_with(mut command: Command, folder: &Path, servers: Servers) -> Finished {
    command
        .env("FLOWDECK_CLIENT_DEADLINE_MS", "60000")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    let stdout = collect(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    let status = wait_until(&mut child, Instant::now() + CLIENT_DEADLINE);
    let (success, status) = match status {
        Some(status) => (status.success(), status.to_string()),
        None => {
            let group = nix::unistd::Pid::from_raw(-(child.id() as i32));
            let _ = nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGKILL);
            let _ = child.wait();
            kill_servers_of(folder);
            let status = format!("killed: the client did not finish within {CLIENT_DEADLINE:?}");
            (false, status)
        }
    };
    // Whatever the client did, no server of this folder may outlive it (checked before the
    // output is read to its end: a leftover server could hold the client's stderr open).
    let leftovers = match servers {
        Servers::EndWithClient => servers_of(folder),
        Servers::Stay => Vec::new(),
    };
    let outlived = !leftovers.is_empty() && !gone_by(folder, Instant::now() + EXIT);
    if outlived {
        kill_servers_of(folder);
    }
    let finished = Finished {
        success,
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    };
    assert!(
        !outlived,
        "flowdeck mcp (pids {leftovers:?}) outlived its client by {EXIT:?}\n{}",
        finished.report()
    );
    finished
}

/// The pids of the processes whose command line names `folder` (the servers given it).
fn servers_of(folder: &Path) -> Vec<i32> {
    let needle = folder.as_os_str().as_encoded_bytes();
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if cmdline.split(|b| *b == 0).any(|arg| arg == needle) {
            pids.push(pid);
        }
    }
    pids
}

fn gone_by(folder: &Path, deadline: Instant) -> bool {
    loop {
        if servers_of(folder).is_empty() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill_servers_of(folder: &Path) {
    for pid in servers_of(folder) {
        let pid = nix::unistd::Pid::from_raw(pid);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
    }
}

fn assert_passed(client: &str, finished: &Finished) {
    assert!(finished.success, "{client} failed: {}", finished.report());
    assert!(
        finished.stdout.contains("PASS ["),
        "{client} printed no PASS line: {}",
        finished.report()
    );
    // Visible with `cargo test -- --nocapture`: which steps passed, with which SDK version.
    println!("{}", finished.stdout.trim());
}

// ------------------------------------------------------------------------------------------------
// The SDK clients

#[test]
fn typescript_sdk_client_round_trip() {
    if let Some(reason) = node_missing("@modelcontextprotocol/sdk", 18) {
        return skip("ts", &reason);
    }
    let dir = common::bundled_workflows_copy();
    let mut command = Command::new("node");
    command
        .current_dir(ts_dir())
        .arg("client.mjs")
        .arg("--server")
        .arg(BIN)
        .arg("--workflows")
        .arg(dir.path());
    let finished = run_client(command, dir.path());
    assert_passed("the TypeScript SDK client", &finished);
}

/// The same round trip over streamable HTTP, against `flowdeck serve --http` of the folder.
#[test]
fn typescript_sdk_client_round_trip_over_http() {
    if let Some(reason) = node_missing("@modelcontextprotocol/sdk", 18) {
        return skip("ts", &reason);
    }
    let dir = common::bundled_workflows_copy();
    let runtime = tempfile::tempdir().unwrap();
    let token = "a-token-for-the-typescript-client";
    let host = crate::http::serve_http(
        dir.path(),
        runtime.path(),
        &[("FLOWDECK_HTTP_TOKEN", token), ("FLOWDECK_TOOLSETS", "all")],
    );
    let mut command = Command::new("node");
    command
        .current_dir(ts_dir())
        .env("FLOWDECK_HTTP_TOKEN", token)
        .arg("client.mjs")
        .arg("--url")
        .arg(host.url())
        .arg("--workflows")
        .arg(dir.path());
    let finished = run_client_with(command, dir.path(), Servers::Stay);
    assert_passed("the TypeScript SDK client over HTTP", &finished);
}

#[test]
fn python_sdk_client_round_trip() {
    let python = match python_client() {
        Ok(python) => python,
        Err(reason) => return skip("python", &reason),
    };
    let dir = common::bundled_workflows_copy();
    let mut command = Command::new(python);
    command
        .arg(repo().join("tests/clients/python/client.py"))
        .arg("--server")
        .arg(BIN)
        .arg("--workflows")
        .arg(dir.path());
    let finished = run_client(command, dir.path());
    assert_passed("the Python SDK client", &finished);
}

/// The same round trip over streamable HTTP, against `flowdeck serve --http` of the folder.
#[test]
fn python_sdk_client_round_trip_over_http() {
    let python = match python_client() {
        Ok(python) => python,
        Err(reason) => return skip("python", &reason),
    };
    let dir = common::bundled_workflows_copy();
    let runtime = tempfile::tempdir().unwrap();
    let token = "a-token-for-the-python-client";
    let host = crate::http::serve_http(
        dir.path(),
        runtime.path(),
        &[("FLOWDECK_HTTP_TOKEN", token), ("FLOWDECK_TOOLSETS", "all")],
    );
    let mut command = Command::new(python);
    command
        .env("FLOWDECK_HTTP_TOKEN", token)
        .arg(repo().join("tests/clients/python/client.py"))
        .arg("--url")
        .arg(host.url())
        .arg("--workflows")
        .arg(dir.path());
    let finished = run_client_with(command, dir.path(), Servers::Stay);
    assert_passed("the Python SDK client over HTTP", &finished);
}

// ------------------------------------------------------------------------------------------------
// The MCP Inspector CLI, run as the README documents it

/// The Inspector version that package.json pins.
fn pinned_inspector() -> String {
    let package: Value =
        serde_json::from_str(&std::fs::read_to_string(ts_dir().join("package.json")).unwrap())
            .unwrap();
    package["dependencies"]["@modelcontextprotocol/inspector"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The README's `npx ... @modelcontextprotocol/inspector@VERSION --cli ...` lines, as the
/// arguments after the package, with the version each names.
fn readme_inspector_lines(readme: &str) -> Vec<(String, Vec<String>)> {
    let package = "@modelcontextprotocol/inspector@";
    readme
        .lines()
        .filter(|l| {
            l.trim_start().starts_with("npx ") && l.contains(package) && l.contains(" --cli ")
        })
        .map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let at = words.iter().position(|w| w.starts_with(package)).unwrap();
            let version = words[at].trim_start_matches(package).to_string();
            (
                version,
                words[at + 1..].iter().map(|w| w.to_string()).collect(),
            )
        })
        .collect()
}

/// Runs the Inspector's CLI with `args` (a README line's, `flowdeck` and the folder filled in)
/// against a server of `folder`: its JSON output.
fn inspector(folder: &Path, args: &[String]) -> Value {
    inspector_with(folder, args, Servers::EndWithClient)
}

fn inspector_with(folder: &Path, args: &[String], servers: Servers) -> Value {
    let mut command = Command::new(ts_dir().join("node_modules/.bin/mcp-inspector"));
    command
        .current_dir(ts_dir())
        .args(args)
        .args(["--format", "json"])
        .env("SHELL", "/bin/bash");
    let finished = run_client_with(command, folder, servers);
    assert!(
        finished.success,
        "mcp-inspector {args:?} failed: {}",
        finished.report()
    );
    serde_json::from_str(&finished.stdout).unwrap_or_else(|e| {
        panic!(
            "mcp-inspector {args:?} printed no JSON ({e}): {}",
            finished.report()
        )
    })
}

/// The value after `flag` in `args`.
fn flag<'a>(args: &'a [String], flag: &str) -> &'a str {
    let at = args.iter().position(|a| a == flag).unwrap();
    &args[at + 1]
}

/// The Inspector's CLI over streamable HTTP, with the bearer token as a header: a tool call
/// and a resource read against `flowdeck serve --http`.
#[test]
fn inspector_cli_over_http() {
    if let Some(reason) = node_missing("@modelcontextprotocol/inspector", 20) {
        return skip("inspector", &reason);
    }
    let dir = common::bundled_workflows_copy();
    let runtime = tempfile::tempdir().unwrap();
    let token = "a-token-for-the-inspector";
    let host = crate::http::serve_http(
        dir.path(),
        runtime.path(),
        &[("FLOWDECK_HTTP_TOKEN", token), ("FLOWDECK_TOOLSETS", "all")],
    );
    let header = format!("Authorization: Bearer {token}");
    let over_http = |more: &[&str]| -> Vec<String> {
        [
            "--cli",
            &host.url(),
            "--transport",
            "http",
            "--header",
            &header,
        ]
        .iter()
        .chain(more)
        .map(|a| (*a).to_string())
        .collect()
    };
    let plan = inspector_with(
        dir.path(),
        &over_http(&[
            "--method",
            "tools/call",
            "--tool-name",
            "workflow_step_plan",
            "--tool-arg",
            "name=git_health",
        ]),
        Servers::Stay,
    );
    assert_eq!(
        plan["result"]["structuredContent"]["workflow"], "git_health",
        "{plan}"
    );
    let read = inspector_with(
        dir.path(),
        &over_http(&[
            "--method",
            "resources/read",
            "--uri",
            "flowdeck://workflows",
        ]),
        Servers::Stay,
    );
    assert!(
        read["result"]["contents"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("git_health")),
        "{read}"
    );
}

#[test]
fn inspector_cli_runs_the_readme_commands() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = readme_inspector_lines(&readme);
    let methods: Vec<&str> = lines.iter().map(|(_, a)| flag(a, "--method")).collect();
    for method in ["tools/list", "tools/call", "resources/read"] {
        assert!(
            methods.contains(&method),
            "README has no Inspector {method} line: {methods:?}"
        );
    }
    let pinned = pinned_inspector();
    for (version, args) in &lines {
        assert_eq!(
            version, &pinned,
            "README's Inspector is not the one package.json pins"
        );
        assert_eq!(args[..3], ["--cli", "flowdeck", "mcp"], "{args:?}");
        assert_eq!(flag(args, "--workflows"), "workflows", "{args:?}");
    }
    if let Some(reason) = node_missing("@modelcontextprotocol/inspector", 20) {
        return skip("inspector", &reason);
    }
    let dir = common::bundled_workflows_copy();
    for (_, args) in lines {
        let folder = dir.path().to_str().unwrap();
        let mut filled: Vec<String> = args.clone();
        filled[1] = BIN.to_string();
        let at = filled.iter().position(|a| a == "--workflows").unwrap();
        filled[at + 1] = folder.to_string();
        let out = inspector(dir.path(), &filled);
        let result = &out["result"];
        match flag(&args, "--method") {
            "tools/list" => {
                let names: Vec<&str> = result["tools"]
                    .as_array()
                    .unwrap_or_else(|| panic!("tools/list: {out:#}"))
                    .iter()
                    .filter_map(|t| t["name"].as_str())
                    .collect();
                // The default toolsets: what the README's agent gets.
                for name in [
                    "open_terminal",
                    "run_command",
                    "workflow_list",
                    "run_workflow",
                    "workflow_next",
                ] {
                    assert!(names.contains(&name), "tools/list lacks {name}: {names:?}");
                }
            }
            "tools/call" => {
                assert_ne!(result["isError"], json!(true), "{out:#}");
                let text = result["content"][0]["text"].as_str().unwrap();
                let payload: Value = serde_json::from_str(text)
                    .unwrap_or_else(|e| panic!("the text content is not JSON ({e}): {out:#}"));
                assert!(payload.is_object(), "{out:#}");
            }
            "resources/read" => {
                assert_eq!(
                    result["contents"][0]["uri"],
                    flag(&args, "--uri"),
                    "{out:#}"
                );
            }
            other => panic!("no check for the README's Inspector {other} line"),
        }
    }
}

// ------------------------------------------------------------------------------------------------
// The README's client snippets, launched as written

/// The servers the README's snippets describe, as (where, command, args).
fn readme_servers(readme: &str) -> Vec<(String, String, Vec<String>)> {
    let mut servers = Vec::new();
    let strings = |value: &Value| -> Vec<String> {
        value
            .as_array()
            .unwrap_or_else(|| panic!("args is not a list: {value}"))
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect()
    };
    // Claude Desktop and Cursor (`mcpServers`), VS Code (`servers`, each of `type: stdio`): the
    // ```json blocks.
    for block in fenced(readme, "json") {
        let config: Value = serde_json::from_str(block)
            .unwrap_or_else(|e| panic!("a ```json snippet is not JSON ({e}):\n{block}"));
        for key in ["mcpServers", "servers"] {
            for (name, server) in config[key].as_object().into_iter().flatten() {
                if key == "servers" {
                    assert_eq!(server["type"], "stdio", "VS Code's server {name}: {block}");
                }
                let command = server["command"].as_str().unwrap().to_string();
                servers.push((format!("{key}.{name}"), command, strings(&server["args"])));
            }
        }
    }
    // Codex CLI by hand: the ```toml blocks' `[mcp_servers.NAME]` tables.
    for block in fenced(readme, "toml") {
        let config: toml::Table = block
            .parse()
            .unwrap_or_else(|e| panic!("a ```toml snippet is not TOML ({e}):\n{block}"));
        let config = serde_json::to_value(config).unwrap();
        for (name, server) in config["mcp_servers"].as_object().into_iter().flatten() {
            let command = server["command"].as_str().unwrap().to_string();
            servers.push((
                format!("mcp_servers.{name}"),
                command,
                strings(&server["args"]),
            ));
        }
    }
    // Claude Code and Codex CLI: `claude mcp add NAME -- COMMAND ARGS...`.
    for line in readme.lines().map(str::trim_start) {
        let Some(kind) = ["claude mcp add ", "codex mcp add "]
            .into_iter()
            .find(|kind| line.starts_with(kind))
        else {
            continue;
        };
        let (_, server) = line
            .split_once(" -- ")
            .unwrap_or_else(|| panic!("no ` -- ` before the server command: {line}"));
        let mut words = server.split_whitespace().map(str::to_string);
        let command = words.next().unwrap();
        servers.push((kind.trim().to_string(), command, words.collect()));
    }
    servers
}

/// The contents of a text's ```LANG blocks.
fn fenced<'a>(text: &'a str, lang: &str) -> Vec<&'a str> {
    let open = format!("```{lang}\n");
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(&open) {
        let block = &rest[start + open.len()..];
        let end = block.find("```").expect("an unclosed ``` block");
        blocks.push(&block[..end]);
        rest = &block[end..];
    }
    blocks
}

#[test]
fn readme_client_snippets_launch_flowdeck_with_a_real_client() {
    // Every snippet, checked for shape first: exactly what the user copies, with the two
    // placeholders that the test fills in.
    let mut launches: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    for doc in ["README.md", "docs/MCP.md"] {
        let text = std::fs::read_to_string(repo().join(doc)).unwrap();
        let servers = readme_servers(&text);
        let kinds: Vec<&str> = servers.iter().map(|(w, ..)| w.as_str()).collect();
        assert!(
            kinds.contains(&"mcpServers.flowdeck") && kinds.contains(&"claude mcp add"),
            "{doc} should have the Claude Desktop and the Claude Code snippets: {kinds:?}"
        );
        if doc == "README.md" {
            for kind in ["servers.flowdeck", "mcp_servers.flowdeck", "codex mcp add"] {
                assert!(
                    kinds.contains(&kind),
                    "the README should have the VS Code and Codex CLI snippets: {kinds:?}"
                );
            }
        }
        for (snippet, command, args) in servers {
            assert_eq!(command, "flowdeck", "{doc} {snippet}: the command");
            assert!(
                args.iter().any(|a| a == "/path/to/workflows"),
                "{doc} {snippet}: no /path/to/workflows placeholder in {args:?}"
            );
            let name = format!("{doc} {snippet}");
            match launches.iter_mut().find(|(_, a)| *a == args) {
                Some((names, _)) => names.push(name),
                None => launches.push((vec![name], args)),
            }
        }
    }
    if let Some(reason) = node_missing("@modelcontextprotocol/sdk", 18) {
        return skip("ts (README snippets)", &reason);
    }
    for (snippets, args) in launches {
        let dir = common::bundled_workflows_copy();
        let folder = dir.path().to_str().unwrap();
        let args: Vec<&str> = args
            .iter()
            .map(|a| {
                if a == "/path/to/workflows" {
                    folder
                } else {
                    a.as_str()
                }
            })
            .collect();
        let launch = json!({"command": BIN, "args": args});
        let mut command = Command::new("node");
        command
            .current_dir(ts_dir())
            .arg("client.mjs")
            .arg("--launch")
            .arg(launch.to_string())
            .args([
                "--expect-workflow",
                "git_health",
                "--expect-workflow",
                "guided_review",
            ]);
        let finished = run_client(command, dir.path());
        assert_passed(
            &format!("{} with the TypeScript SDK client", snippets.join(", ")),
            &finished,
        );
    }
}

// ------------------------------------------------------------------------------------------------
// Socket pairs, as Node gives them

/// JSON-RPC lines over the client's ends of two socket pairs.
struct SocketClient {
    input: UnixStream,
    lines: Receiver<String>,
}

impl SocketClient {
    fn send(&mut self, message: Value) {
        self.input
            .write_all(format!("{message}\n").as_bytes())
            .unwrap();
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + ANSWER;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no answer to {method} within {ANSWER:?}"));
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|_| panic!("stdout carried a non-JSON line: {line}"));
            if message["id"] == json!(id) {
                assert!(message.get("error").is_none(), "{method}: {message}");
                return message["result"].clone();
            }
        }
    }
}

#[test]
fn stdio_over_unix_socket_pairs_round_trip_and_exit_cleanly() {
    let dir = common::bundled_workflows_copy();
    let (input, server_stdin) = UnixStream::pair().unwrap();
    let (server_stdout, output) = UnixStream::pair().unwrap();
    let mut child = Command::new(BIN)
        .arg("mcp")
        .arg("--workflows")
        .arg(dir.path())
        .env("SHELL", "/bin/bash")
        .stdin(Stdio::from(OwnedFd::from(server_stdin)))
        .stdout(Stdio::from(OwnedFd::from(server_stdout)))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = collect(child.stderr.take().unwrap());
    let (tx, lines) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(output).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut client = SocketClient { input, lines };
    let init = client.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "socket-pair-test", "version": "1"}}),
    );
    assert_eq!(init["serverInfo"]["name"], "flowdeck", "{init}");
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let tools = client.request(2, "tools/list", json!({}));
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"run_command") && names.contains(&"run_workflow"),
        "{names:?}"
    );
    let listed = client.request(
        3,
        "tools/call",
        json!({"name": "workflow_list", "arguments": {}}),
    );
    assert_ne!(listed["isError"], json!(true), "{listed}");
    let text = listed["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("guided_review"), "{text}");
    // Node's `stdin.end()`: the write side shuts down while the socket stays open.
    client.input.shutdown(Shutdown::Write).unwrap();
    let status = wait_until(&mut child, Instant::now() + EXIT);
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "flowdeck mcp did not exit within {EXIT:?} of its socket-pair stdin closing\n{}",
            stderr.join().unwrap()
        );
    };
    assert!(status.success(), "{status}\n{}", stderr.join().unwrap());
}
