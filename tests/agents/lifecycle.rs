//! How the folder's server (`flowdeck serve`) and `flowdeck run` end, the ways processes
//! really end: SIGHUP (the terminal closed), SIGTERM, SIGINT, SIGQUIT, and `kill -9`. Each
//! leaves no process of its sessions (background jobs, `nohup`, `setsid` daemons, children that
//! ignore SIGTERM) and a journal that says how the run ended. And the standard streams that
//! agents and people really give `flowdeck mcp`: files, `/dev/null`, a terminal, another
//! user's pipes.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::line_client::LineServer;
use common::{LONG, session_processes_of, wait_until};

/// Shutdown's grace for runs (5 s) and a session's kill grace (2 s), with room to spare: how
/// long any ending may take.
const ENDING: Duration = Duration::from_secs(12);

/// One step that leaves every kind of process a shell can leave, then waits.
const SPAWNER: &str = r#"name: spawner
description: Starts a background job, a nohup job, a setsid daemon and a child that ignores SIGTERM and SIGHUP, then waits.
initial_state: spawn
states:
  spawn:
    action:
      tool: run_command
      params:
        command: "sleep 1000 & nohup sleep 1001 >/dev/null 2>&1 & setsid sleep 1002 & (trap '' TERM HUP; exec sleep 1003) & sleep 1004"
        timeout: 300
"#;

fn folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spawner.yaml"), SPAWNER).unwrap();
    dir
}

/// Waits until the five sleeps of the spawner run under `pid`'s sessions; returns every
/// process of those sessions (the shell too).
fn wait_for_spawned(pid: u32) -> Vec<i32> {
    wait_until(LONG, "the spawner's five processes", || {
        let processes = session_processes_of(pid);
        let sleeps = processes
            .iter()
            .filter(|p| {
                std::fs::read_to_string(format!("/proc/{p}/cmdline"))
                    .is_ok_and(|c| c.starts_with("sleep\u{0}100"))
            })
            .count();
        (sleeps == 5).then_some(processes)
    })
}

/// Waits until none of `pids` is alive; returns how long that took.
fn wait_all_gone(pids: &[i32], what: &str) -> Duration {
    let start = Instant::now();
    wait_until(ENDING, what, || {
        let alive: Vec<i32> = pids
            .iter()
            .copied()
            .filter(|&p| {
                std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                    let state = s.rfind(')').and_then(|i| s[i + 2..].chars().next());
                    !matches!(state, Some('Z' | 'X'))
                })
            })
            .collect();
        alive.is_empty().then_some(())
    });
    start.elapsed()
}

fn journal_end(dir: &Path, run_id: &str) -> Value {
    let journal =
        std::fs::read_to_string(dir.join(".flowdeck/runs").join(format!("{run_id}.jsonl")))
            .unwrap();
    let last = journal.lines().rev().find(|l| !l.is_empty()).unwrap();
    let event: Value = serde_json::from_str(last).unwrap();
    assert_eq!(event["type"], "run_finished", "{journal}");
    event
}

fn start_spawner(agent: &mut LineServer) -> String {
    let started = agent.call(
        2,
        "run_workflow",
        json!({"workflow_name": "spawner", "wait": false}),
    );
    started["run_id"].as_str().unwrap().to_string()
}

/// The folder's server in the foreground, and an agent on it that started the spawner.
fn served_spawner(dir: &Path, runtime: &Path) -> (std::process::Child, LineServer, String) {
    let server = common::serve_with(dir, runtime, &[]);
    let mut agent = common::mcp_agent(dir, runtime, &[]);
    let run_id = start_spawner(&mut agent);
    (server, agent, run_id)
}

#[test]
fn every_termination_signal_cancels_the_servers_runs_and_ends_every_process() {
    for ending in ["SIGHUP", "SIGTERM", "SIGINT", "SIGQUIT"] {
        let dir = folder();
        let runtime = tempfile::tempdir().unwrap();
        let (mut server, mut agent, run_id) = served_spawner(dir.path(), runtime.path());
        let processes = wait_for_spawned(server.id());
        kill(
            Pid::from_raw(server.id() as i32),
            ending.parse::<Signal>().unwrap(),
        )
        .unwrap();
        let status = wait_until(ENDING, "the server's end", || server.try_wait().unwrap());
        assert_eq!(status.code(), Some(0), "{ending}");
        // Ended by flowdeck itself before it exited: nothing is left for anyone to kill.
        wait_all_gone(
            &processes,
            &format!("the session's processes after {ending}"),
        );
        let end = journal_end(dir.path(), &run_id);
        assert_eq!(end["final_state"], "canceled", "{ending}: {end}");
        assert_eq!(end["states_executed"], 1, "{ending}: {end}");
        // The agent's relay is told its server ended.
        assert!(agent.exit_within(LONG).is_some_and(|c| c != 0), "{ending}");
    }
}

#[test]
fn after_kill_9_the_watchdog_ends_every_process_and_the_next_start_marks_the_run_interrupted() {
    let dir = folder();
    let runtime = tempfile::tempdir().unwrap();
    let (mut server, mut agent, run_id) = served_spawner(dir.path(), runtime.path());
    let processes = wait_for_spawned(server.id());
    kill(Pid::from_raw(server.id() as i32), Signal::SIGKILL).unwrap();
    server.wait().unwrap();
    let took = wait_all_gone(&processes, "the session's processes after kill -9");
    // The figure docs/PERFORMANCE.md quotes: the child that ignores SIGTERM and SIGHUP is
    // killed when the 2 s grace runs out, everything else goes at once.
    eprintln!("kill -9: every session process gone after {took:?}");
    assert!(agent.exit_within(LONG).is_some_and(|c| c != 0));

    // The run was in flight: the next server on the folder ends its journal as interrupted.
    let mut next = common::mcp_agent(dir.path(), runtime.path(), &[]);
    let status = next.call(2, "run_status", json!({"run_id": run_id}));
    assert_eq!(status["status"], "finished", "{status}");
    let listed = next.call(3, "run_list", json!({}));
    assert_eq!(listed["runs"][0]["final_state"], "interrupted", "{listed}");
    assert_eq!(listed["runs"][0]["states_executed"], 1, "{listed}");
    let end = journal_end(dir.path(), &run_id);
    assert_eq!(end["final_state"], "interrupted", "{end}");
    assert!(
        !dir.path()
            .join(".flowdeck/runs")
            .join(format!("{run_id}.live"))
            .exists(),
        "the in-flight marker outlived the recovery"
    );
}

/// `flowdeck run` beside a server runs an engine of its own on the folder (it does not
/// attach yet): opening it must not take the server's run in flight for a dead one.
#[test]
fn a_run_in_flight_in_another_live_process_is_not_marked_interrupted() {
    let dir = folder();
    std::fs::write(dir.path().join("tiny.yaml"), common::TINY).unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let (mut server, mut agent, run_id) = served_spawner(dir.path(), runtime.path());
    wait_for_spawned(server.id());
    let ran = Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(dir.path())
        .args(["run", "tiny", "--json"])
        .env("SHELL", "/bin/bash")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(ran.status.success(), "{ran:?}");
    let listed = agent.call(3, "run_list", json!({"workflow_name": "spawner"}));
    assert_eq!(listed["runs"][0]["run_id"], json!(run_id), "{listed}");
    assert_eq!(listed["runs"][0]["final_state"], Value::Null, "{listed}");
    kill(Pid::from_raw(server.id() as i32), Signal::SIGTERM).unwrap();
    server.wait().unwrap();
    assert_eq!(journal_end(dir.path(), &run_id)["final_state"], "canceled");
}

#[test]
fn flowdeck_run_prints_its_result_on_every_termination_signal() {
    for signal in ["SIGHUP", "SIGTERM", "SIGINT", "SIGQUIT"] {
        let dir = folder();
        let child = Command::new(env!("CARGO_BIN_EXE_flowdeck"))
            .arg("--workflows")
            .arg(dir.path())
            .args(["run", "spawner", "--json"])
            .env("SHELL", "/bin/bash")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let processes = wait_for_spawned(child.id());
        kill(
            Pid::from_raw(child.id() as i32),
            signal.parse::<Signal>().unwrap(),
        )
        .unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{signal}: {stderr}");
        assert!(stderr.contains(signal), "{signal}: {stderr}");
        let result: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{signal}: no JSON result ({e}): {stderr}"));
        assert_eq!(result["final_state"], "canceled", "{signal}: {result}");
        wait_all_gone(
            &processes,
            &format!("flowdeck run's processes after {signal}"),
        );
    }
}

#[test]
fn stdin_from_dev_null_or_a_file_is_served() {
    let dir = folder();
    let status = Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(dir.path())
        .arg("mcp")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));

    let requests = dir.path().join("requests.jsonl");
    std::fs::write(
        &requests,
        [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "file", "version": "0"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "workflow_list", "arguments": {}}}),
        ]
        .iter()
        .map(|m| format!("{m}\n"))
        .collect::<String>(),
    )
    .unwrap();
    let responses = dir.path().join("responses.jsonl");
    let status = Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(dir.path())
        .arg("mcp")
        .stdin(std::fs::File::open(&requests).unwrap())
        .stdout(std::fs::File::create(&responses).unwrap())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let text = std::fs::read_to_string(&responses).unwrap();
    let ids: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].clone())
        .collect();
    assert!(ids.contains(&json!(1)) && ids.contains(&json!(2)), "{text}");
}

#[tokio::test]
async fn a_person_typing_json_lines_in_a_terminal_gets_answers() {
    use flowdeck::term::{
        AwaitSpec, KeyPress, OpenOptions, Program, Since, TermConfig, Terminals, WaitOutcome,
    };
    let dir = folder();
    let terminals = Terminals::new(TermConfig::default());
    let session = terminals
        .open(OpenOptions {
            program: Program::Command(vec![
                env!("CARGO_BIN_EXE_flowdeck").into(),
                "--workflows".into(),
                dir.path().display().to_string(),
                "mcp".into(),
            ]),
            ..OpenOptions::default()
        })
        .unwrap();
    let wait = |pattern: &str| AwaitSpec {
        pattern: Some(regex::Regex::new(pattern).unwrap()),
        stop_patterns: Vec::new(),
        since: Since::LastInput,
        timeout: LONG,
        typist: None,
        quiet: None,
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "person", "version": "0"}}});
    session.send_text(&format!("{init}\n"), "test").unwrap();
    let r = session.await_output(wait(r#""serverInfo""#)).await.unwrap();
    assert_eq!(r.outcome, WaitOutcome::Matched, "{r:#?}");
    session
        .send_text("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"workflow_list\",\"arguments\":{}}}\n", "test")
        .unwrap();
    let r = session
        .await_output(wait(r#""id":2,"result""#))
        .await
        .unwrap();
    assert_eq!(r.outcome, WaitOutcome::Matched, "{r:#?}");
    // Ctrl-D at the start of a line is the end of input: the server ends.
    session.send_keys(&[KeyPress::Ctrl('d')], "test").unwrap();
    let r = session.await_output(wait("never printed")).await.unwrap();
    assert_eq!(r.outcome, WaitOutcome::Exited, "{r:#?}");
    assert_eq!(session.exit().and_then(|e| e.code), Some(0));
}

#[test]
fn pipes_of_another_user_are_served() {
    // Pipes that root made are another user's pipes for `nobody`: the reopen through
    // /proc/self/fd that a fast path would use is refused, and the server must still work.
    if std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap()) != 0 {
        eprintln!("SKIP: pipes_of_another_user_are_served needs root to start a process as nobody");
        return;
    }
    let dir = folder();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let as_nobody = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_flowdeck"));
        command
            .arg("--workflows")
            .arg(dir.path())
            .arg("mcp")
            .env("HOME", "/tmp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::uid(&mut command, 65534);
        std::os::unix::process::CommandExt::gid(&mut command, 65534);
        command
    };
    if let Err(e) = as_nobody().spawn().and_then(|mut c| {
        c.kill()?;
        c.wait()
    }) {
        eprintln!("SKIP: pipes_of_another_user_are_served: cannot start flowdeck as nobody: {e}");
        return;
    }
    // Several times: the old fallback answered only about half of the time.
    for _ in 0..5 {
        let mut server = LineServer::spawn(as_nobody());
        server.initialize();
        let listed = server.call(2, "workflow_list", json!({}));
        assert_eq!(listed["workflows"][0]["name"], "spawner", "{listed}");
        drop(server.stdin.take());
        assert_eq!(server.exit_status(), Some(0));
    }
}
