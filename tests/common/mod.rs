//! Helpers shared by the tests and benchmarks: the one long deadline, a quiet, predictable
//! bash, wait specs, small workflows, and a copy of the bundled workflows.

#![allow(clippy::unwrap_used, dead_code)]

pub mod line_client;
#[allow(
    unused_imports,
    reason = "the benchmarks share this module and start no agent"
)]
pub use line_client::agent_terminal;
pub mod render;
pub mod sshd;
pub mod studio;
pub mod tmux;

use flowdeck::term::{AwaitSpec, OpenOptions, Program, Session, Since, Terminals};
use regex::Regex;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How long anything a test waits for may take before the test fails. Far longer than any of it
/// takes (milliseconds, a second or two at most): the tests run as debug builds, in parallel,
/// on shared two-core machines, where a process can be descheduled for seconds; and every wait
/// ends as soon as what it awaits arrives, so the length costs a passing test nothing and
/// only bounds how long a hang takes to be reported.
pub const LONG: Duration = Duration::from_secs(30);

/// bash without rc files, with the prompt `$ ` and no history file.
pub fn bash_options() -> OpenOptions {
    OpenOptions {
        program: Program::Command(vec!["bash".into(), "--norc".into(), "--noprofile".into()]),
        env: vec![
            ("PS1".into(), "$ ".into()),
            ("HISTFILE".into(), "/dev/null".into()),
        ],
        ..OpenOptions::default()
    }
}

/// A bash session that has printed its first prompt.
pub async fn bash(t: &Terminals, timeout: Duration) -> Arc<Session> {
    let s = t.open(bash_options()).unwrap();
    assert!(s.wait_for_output(timeout).await, "bash printed no prompt");
    s
}

/// A wait for a pattern in multi-line mode where `\r` ends lines too, as manifests compile.
pub fn spec(pattern: &str, since: Since, timeout: Duration) -> AwaitSpec {
    AwaitSpec {
        pattern: Some(Regex::new(&format!("(?mR){pattern}")).unwrap()),
        stop_patterns: Vec::new(),
        since,
        timeout,
        typist: None,
        quiet: None,
    }
}

/// A temporary copy of the bundled `workflows/`, so that runs journal into it rather than the
/// source tree.
pub fn bundled_workflows_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir("workflows").unwrap() {
        let path = entry.unwrap().path();
        if let Some(name) = path.file_name().filter(|_| path.is_file()) {
            std::fs::copy(&path, dir.path().join(name)).unwrap();
        }
    }
    dir
}

/// Polls `check` until it returns `Some`, failing with `what` when `deadline` passes. For
/// things with no event to wait on (another process's exit, a file appearing); never a fixed
/// sleep.
pub fn wait_until<T>(deadline: Duration, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let end = std::time::Instant::now() + deadline;
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(
            std::time::Instant::now() < end,
            "timed out after {deadline:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Live processes of the sessions a flowdeck process opened: those whose environment carries
/// its `FLOWDECK_SESSION=<pid>-` marker.
pub fn session_processes_of(flowdeck_pid: u32) -> Vec<i32> {
    let marker = format!("FLOWDECK_SESSION={flowdeck_pid}-");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    let state = s.get(s.rfind(')')? + 2..)?.chars().next()?;
                    Some(state != 'Z' && state != 'X')
                })
                .unwrap_or(false);
            alive
                && std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| {
                    env.split(|&b| b == 0)
                        .any(|entry| entry.starts_with(marker.as_bytes()))
                })
        })
        .collect()
}

/// Awaits `work` (typically a polling loop) for at most `deadline`, failing with `what` when
/// it passes: the one way the async tests poll.
pub async fn within<T>(
    deadline: Duration,
    what: &str,
    work: impl std::future::Future<Output = T>,
) -> T {
    tokio::time::timeout(deadline, work)
        .await
        .unwrap_or_else(|_| panic!("timed out after {deadline:?} waiting for {what}"))
}

/// An engine for tests: sessions end after a short grace, runs start a quiet bash, and the
/// folder is followed only when `watch`.
pub fn test_engine(
    dir: &std::path::Path,
    max_runs: usize,
    watch: bool,
) -> Arc<flowdeck::engine::Engine> {
    flowdeck::engine::Engine::open(dir, test_config(max_runs, watch)).unwrap()
}

/// [`test_engine`]'s settings, for tests that change one.
pub fn test_config(max_runs: usize, watch: bool) -> flowdeck::engine::EngineConfig {
    flowdeck::engine::EngineConfig {
        terminals: flowdeck::term::TermConfig {
            kill_grace: Duration::from_millis(300),
            ..flowdeck::term::TermConfig::default()
        },
        max_runs,
        run_shell: Some(vec!["bash".into(), "--norc".into(), "--noprofile".into()]),
        watch,
        approve_agent_runs: false,
        ssh_command: None,
        recording_cap: Some(flowdeck::term::recording::DEFAULT_CAP),
        recording_format: flowdeck::term::recording::cast::Format::V3,
        close_abandoned_after: None,
        quiet_after: Some(flowdeck::engine::attention::DEFAULT_QUIET_AFTER),
    }
}

/// [`wait_until`] for async tests: polls without holding up the runtime that what it waits
/// for may run on.
pub async fn poll_until<T>(
    deadline: Duration,
    what: &str,
    mut check: impl FnMut() -> Option<T>,
) -> T {
    within(deadline, what, async {
        loop {
            if let Some(value) = check() {
                return value;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
}

/// A workflow that touches no terminal: it lists the sessions.
pub const TINY: &str = "name: tiny\ndescription: Lists sessions.\ninitial_state: look\nstates:\n  look:\n    action: { tool: list_terminal_sessions }\n";

/// A workflow of one quick command: `echo hi`.
pub const QUICK: &str = "name: quick\ndescription: Says hi.\ninitial_state: a\nstates:\n  a: { action: { tool: run_command, params: { command: 'echo hi' } } }\n";

/// A workflow whose one step runs `sleep 300`: a run that goes on until it is cancelled.
pub const SLEEPER: &str = "name: sleeper\ndescription: Sleeps.\ninitial_state: a\nstates:\n  a: { action: { tool: run_command, params: { command: 'sleep 300', timeout: 300 } } }\n";

/// A run of workflow `name` with `inputs`, as `flowdeck run` asks for one: in a session of
/// its own, here.
pub fn run_request(name: &str, inputs: &[(&str, &str)]) -> flowdeck::engine::RunRequest {
    flowdeck::engine::RunRequest {
        workflow: flowdeck::engine::WorkflowSource::Name(name.into()),
        session_id: None,
        inputs: inputs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        keep_session: false,
        host: None,
        actor: flowdeck::engine::Actor::Cli,
        require_approval: false,
    }
}

/// The tool parameters (or any other value) that `v` describes, as the wire would give them.
pub fn params<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).unwrap()
}

/// An agent, as the engine's actors name one: client `test-agent` on connection `c1`.
pub fn agent() -> flowdeck::engine::Actor {
    flowdeck::engine::Actor::Agent {
        client: "test-agent".into(),
        connection: "c1".into(),
    }
}

/// A run's result, within [`LONG`].
pub async fn finished(started: flowdeck::engine::StartedRun) -> flowdeck::engine::RunResult {
    within(LONG, "the run's end", started.finished()).await
}

/// The resident memory of process `pid`, in bytes (VmRSS in /proc).
pub fn rss_of(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or_else(|| panic!("no VmRSS for process {pid}: {status}"))
}

/// A folder holding `tiny.yaml` ([`TINY`]) and a socket folder of its own for its host
/// (`XDG_RUNTIME_DIR`), so that tests never meet each other's hosts.
pub fn tiny_folder() -> (tempfile::TempDir, tempfile::TempDir) {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("tiny.yaml"), TINY).unwrap();
    (folder, tempfile::tempdir().unwrap())
}

/// `flowdeck serve` on `folder` (with `args` after `serve`), its socket under `runtime`, its
/// stderr piped; returns once its socket answers.
pub fn serve_with(folder: &Path, runtime: &Path, args: &[&str]) -> std::process::Child {
    let child = serve_command(folder, runtime, args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    answering(runtime);
    child
}

/// The command [`serve_with`] runs, not yet started, its standard streams not yet set.
pub fn serve_command(folder: &Path, runtime: &Path, args: &[&str]) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_flowdeck"));
    command
        .arg("--workflows")
        .arg(folder)
        .arg("serve")
        .args(args)
        // Its shells read no rc file of the person running the tests (studio.rs says why).
        .envs(studio::quiet_env())
        .env("XDG_RUNTIME_DIR", runtime)
        .env("SHELL", "/bin/bash");
    command
}

/// `command` (its program, arguments and environment) run with at most `most` open
/// descriptors: bash sets the limit and then becomes the program, so the pid is the
/// program's. Its standard streams are for the caller to set.
pub fn with_descriptors(command: &std::process::Command, most: u32) -> std::process::Command {
    let mut limited = std::process::Command::new("bash");
    limited
        .arg("-c")
        .arg(format!("ulimit -n {most} && exec \"$0\" \"$@\""))
        .arg(command.get_program())
        .args(command.get_args());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => limited.env(key, value),
            None => limited.env_remove(key),
        };
    }
    limited
}

/// The socket of the server answering under `runtime`.
pub fn socket_in(runtime: &Path) -> std::path::PathBuf {
    std::fs::read_dir(runtime.join("flowdeck"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "sock"))
        .unwrap()
}

/// CPU seconds (user and system) process `pid` has used, from /proc (clock ticks of 1/100 s).
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

/// `flowdeck serve --http 127.0.0.1:0` on `folder` with `env`, and the line it prints about
/// where it serves (the URL, and the token's file or variable); killed when dropped. Its stderr is read up to that
/// line and then closed, as a server's whose terminal went away: it must serve on.
pub fn serve_over_http(folder: &Path, runtime: &Path, env: &[(&str, &str)]) -> (Killed, String) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(folder)
        .arg("serve")
        .args(
            (!env.iter().any(|(k, _)| *k == "FLOWDECK_HTTP"))
                .then_some(["--http", "127.0.0.1:0"])
                .into_iter()
                .flatten(),
        )
        .envs(studio::quiet_env())
        .envs(env.iter().copied())
        .env("XDG_RUNTIME_DIR", runtime)
        .env("SHELL", "/bin/bash")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let child = Killed(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    loop {
        let line = rx
            .recv_timeout(LONG)
            .expect("flowdeck serve --http to say where it serves");
        if line.contains("MCP over HTTP at") {
            return (child, line);
        }
    }
}

/// A process killed at the end of a test, however the test ends (a failed assertion
/// included): a foreground `flowdeck serve` never ends by itself.
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Returns once a server answers on a socket under `runtime`.
pub fn answering(runtime: &Path) {
    wait_until(LONG, "the server's socket", || {
        std::fs::read_dir(runtime.join("flowdeck"))
            .ok()?
            .filter_map(Result::ok)
            // A stale socket of an earlier server may lie beside it: any that answers.
            .filter(|e| e.path().extension().is_some_and(|x| x == "sock"))
            .any(|e| std::os::unix::net::UnixStream::connect(e.path()).is_ok())
            .then_some(())
    });
}

/// The folder's server that a front end started in the background (`flowdeck serve
/// --background` on the folder's canonical path), once it runs.
pub fn background_server_of(folder: &Path) -> u32 {
    let canonical = folder.canonicalize().unwrap();
    let wanted = format!("--workflows\0{}\0serve\0--background", canonical.display());
    wait_until(LONG, "the folder's background server", || {
        std::fs::read_dir("/proc")
            .ok()?
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .find(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&wanted))
            })
            .filter(|&pid| !has_ended(pid))
    })
}

/// Whether process `pid` has ended: gone, or a zombie nobody reaped yet (a test that opens
/// terminals is the subreaper of every orphan, servers that front ends started included).
pub fn has_ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => true,
    }
}

/// The process of the server answering under `runtime`, from the pid file beside its socket.
pub fn server_pid(runtime: &Path) -> u32 {
    wait_until(LONG, "the server's pid file", || {
        std::fs::read_dir(runtime.join("flowdeck"))
            .ok()?
            .filter_map(Result::ok)
            .find(|e| e.path().extension().is_some_and(|x| x == "pid"))
            .and_then(|e| std::fs::read_to_string(e.path()).ok())
            .and_then(|p| p.trim().parse().ok())
    })
}

/// `flowdeck mcp` as an agent's host starts it, with the socket folder `runtime`.
pub fn mcp_agent(folder: &Path, runtime: &Path, args: &[&str]) -> line_client::LineServer {
    mcp_agent_with(folder, runtime, args, &[])
}

/// [`mcp_agent`] with `env` set for it (and so for a server it starts).
pub fn mcp_agent_with(
    folder: &Path,
    runtime: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> line_client::LineServer {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_flowdeck"));
    command
        .arg("--workflows")
        .arg(folder)
        .arg("mcp")
        .args(args)
        .env("XDG_RUNTIME_DIR", runtime)
        .env("SHELL", "/bin/bash")
        // Every tool, unless a test names its toolsets.
        .env("FLOWDECK_TOOLSETS", "all")
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut server = line_client::LineServer::spawn(command);
    server.initialize();
    server
}

/// Prints a skip where `cargo test` shows it (libtest captures `eprintln!`, not the stderr
/// handle), or fails when `.ci/run` installed this program and it is missing all the same
/// (it lists those in FLOWDECK_REAL_CLIENTS_REQUIRED).
pub fn skip_missing(client: &str, reason: &str) {
    use std::io::Write;
    let required = std::env::var("FLOWDECK_REAL_CLIENTS_REQUIRED").unwrap_or_default();
    assert!(
        !required.split_whitespace().any(|c| c == client),
        "{client} should be installed (FLOWDECK_REAL_CLIENTS_REQUIRED={required}): {reason}"
    );
    let mut stderr = std::io::stderr();
    let _ = writeln!(stderr, "SKIP: {client}: {reason}");
}

/// asciinema's own player (the Python package, pinned in tests/clients/asciinema), to play
/// flowdeck's recordings; `None`, with a skip, when it is not installed.
pub fn asciinema() -> Option<std::path::PathBuf> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/clients/asciinema-venv/bin/asciinema");
    if path.is_file() {
        return Some(path);
    }
    skip_missing(
        "asciinema",
        "run .ci/run, or `python3 -m venv target/clients/asciinema-venv && target/clients/asciinema-venv/bin/pip install -r tests/clients/asciinema/requirements.txt`",
    );
    None
}

/// asciinema 3 (the Rust rewrite, from crates.io), installed by .ci/run under
/// target/clients/asciinema3, to convert flowdeck's asciicast v3 recordings; `None`, with a
/// skip, when it is not installed.
pub fn asciinema3() -> Option<std::path::PathBuf> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/clients/asciinema3/bin/asciinema");
    if path.is_file() {
        return Some(path);
    }
    skip_missing(
        "asciinema3",
        "run .ci/run, or `cargo install --locked asciinema --version '^3' --root target/clients/asciinema3`",
    );
    None
}

/// What a run's recording shows: its output events joined.
pub fn recorded_output(path: &str) -> String {
    use flowdeck::term::recording::cast::{CastEvent, CastReader};
    CastReader::open(Path::new(path))
        .unwrap()
        .filter_map(|event| match event.unwrap() {
            CastEvent::Output(_, text) => Some(text),
            _ => None,
        })
        .collect()
}

/// Waits through the engine, as a step does, until session `id` shows `pattern` (`since`:
/// `last_input`, `screen`, ...), failing with what the wait saw.
pub async fn engine_expect(e: &flowdeck::engine::Engine, id: &str, pattern: &str, since: &str) {
    use flowdeck::engine::Actor;
    use flowdeck::workflow::action::AwaitOutputParams;
    let waited = e
        .await_output(
            id,
            &params::<AwaitOutputParams>(
                serde_json::json!({"pattern": pattern, "since": since, "timeout": 30}),
            ),
            None,
            &Actor::Cli,
        )
        .await
        .unwrap();
    assert_eq!(
        waited.result.outcome,
        flowdeck::term::WaitOutcome::Matched,
        "waiting for {pattern:?}: {waited:?}"
    );
}

/// `flowdeck --workflows DIR run WORKFLOW` to its end, which must be a success (a run's
/// shell is bash, whatever the person's is).
pub fn run_to_success(dir: &Path, workflow: &str) -> std::process::Output {
    let ran = std::process::Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(dir)
        .args(["run", workflow])
        .env("SHELL", "/bin/bash")
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "flowdeck run {workflow}: {}",
        String::from_utf8_lossy(&ran.stderr)
    );
    ran
}

/// `flowdeck --workflows DIR ARGS` as a script runs it, with `stdin` written to it (answers to
/// `prompt` steps) and closed: its exit status and output.
pub fn flowdeck_fed(workflows: &Path, args: &[&str], stdin: &str) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(workflows)
        .args(args)
        .env("SHELL", "/bin/bash")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// The server of folder `dir` as `flowdeck ls --json` lists it under `runtime`, if it does.
pub fn listed_server(dir: &Path, runtime: &Path) -> Option<serde_json::Value> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(dir)
        .args(["ls", "--json"])
        .env("XDG_RUNTIME_DIR", runtime)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("flowdeck ls runs");
    assert_eq!(out.status.code(), Some(0), "flowdeck ls --json failed");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let folder = dir.canonicalize().ok()?.display().to_string();
    report["servers"]
        .as_array()?
        .iter()
        .find(|s| s["folder"] == serde_json::json!(folder))
        .cloned()
}

/// A project whose Makefile's default target builds `out/app` and whose `release` target
/// only says so: what the bundled build workflows run.
pub fn project_with_makefile() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("Makefile"),
        "all:\n\tmkdir -p out && echo ok > out/app\n\nrelease:\n\techo release build\n",
    )
    .unwrap();
    dir
}
