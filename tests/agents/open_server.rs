//! The folder's server in the open (issue 37): `flowdeck ls` lists this user's servers as
//! each says what it holds, `flowdeck stop` ends one as SIGTERM does (asking a person first,
//! refusing a script without --yes), and `flowdeck runs` lists the folder's runs with who
//! started them. Real binary, real servers, each test with a sockets' folder of its own.

#![allow(clippy::unwrap_used)]

use crate::common;
use common::line_client::LineServer;
use common::{LONG, has_ended, session_processes_of, wait_until};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `flowdeck --workflows DIR ARGS` with the sockets' folder `runtime`, stdin not a terminal.
fn flowdeck(dir: &Path, runtime: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(dir)
        .args(args)
        .env("XDG_RUNTIME_DIR", runtime)
        .env("SHELL", "/bin/bash")
        .env_remove("FLOWDECK_WORKFLOWS")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `flowdeck ls --json` under `runtime`: the report.
fn ls_json(dir: &Path, runtime: &Path) -> Value {
    let out = flowdeck(dir, runtime, &["ls", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The listed server of folder `dir` in an `ls --json` report.
fn server_of(report: &Value, dir: &Path) -> Value {
    let folder = dir.canonicalize().unwrap().display().to_string();
    report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["folder"] == json!(folder))
        .cloned()
        .unwrap_or_else(|| panic!("no server of {folder} in {report:#}"))
}

fn sleeper_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sleeper.yaml"), common::SLEEPER).unwrap();
    std::fs::write(dir.path().join("tiny.yaml"), common::TINY).unwrap();
    dir
}

#[test]
fn ls_and_stop_with_no_server_say_none_runs() {
    let dir = sleeper_folder();
    let runtime = tempfile::tempdir().unwrap();
    let out = flowdeck(dir.path(), runtime.path(), &["ls"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("no flowdeck server runs for you"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        ls_json(dir.path(), runtime.path()),
        json!({"servers": [], "not_answering": [], "stale": []})
    );
    let out = flowdeck(dir.path(), runtime.path(), &["stop", "--yes"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no flowdeck server serves"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn ls_lists_a_server_with_its_agent_by_name_and_its_terminal() {
    let dir = sleeper_folder();
    let runtime = tempfile::tempdir().unwrap();
    let server = common::Killed(common::serve_with(dir.path(), runtime.path(), &[]));
    let mut agent = common::mcp_agent(dir.path(), runtime.path(), &[]);
    let session = agent.open_bash(2);

    let listed = server_of(&ls_json(dir.path(), runtime.path()), dir.path());
    assert_eq!(listed["pid"], json!(server.0.id()), "{listed:#}");
    assert_eq!(listed["version"], env!("CARGO_PKG_VERSION"), "{listed:#}");
    for key in ["socket", "started_at", "uptime_s", "http_agents"] {
        assert!(!listed[key].is_null(), "{key} in {listed:#}");
    }
    assert_eq!(
        listed["attached"],
        json!([{"kind": "agent", "name": "wire"}]),
        "{listed:#}"
    );
    let terminals = listed["terminals"].as_array().unwrap();
    assert_eq!(terminals.len(), 1, "{listed:#}");
    assert_eq!(terminals[0]["session_id"], json!(session));
    assert_eq!(terminals[0]["running"], true);
    assert_eq!(terminals[0]["opened_by"]["client"], "wire");
    assert_eq!(listed["runs"], json!([]), "{listed:#}");

    let out = flowdeck(dir.path(), runtime.path(), &["ls"]);
    let shown = text(&out.stdout);
    for part in [
        dir.path().canonicalize().unwrap().display().to_string(),
        format!("process {}", server.0.id()),
        "attached: agent wire".into(),
        "holds: 1 terminal (1 running), 0 runs".into(),
    ] {
        assert!(shown.contains(&part), "{part} in {shown}");
    }
    // The agent gone, it is no longer attached; its terminal stays in the server.
    drop(agent);
    wait_until(LONG, "the agent to leave the list", || {
        let listed = server_of(&ls_json(dir.path(), runtime.path()), dir.path());
        (listed["attached"] == json!([]) && listed["terminals"].as_array()?.len() == 1)
            .then_some(())
    });
}

#[test]
fn ls_lists_a_silent_socket_as_not_answering_and_a_dead_ones_as_stale_without_hanging() {
    let dir = sleeper_folder();
    let runtime = tempfile::tempdir().unwrap();
    let sockets = runtime.path().join("flowdeck");
    std::fs::create_dir(&sockets).unwrap();
    std::fs::set_permissions(
        &sockets,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    // Listens and never answers: the kernel completes the connection, nobody writes.
    let _silent = std::os::unix::net::UnixListener::bind(sockets.join("silent.sock")).unwrap();
    // A socket whose listener has gone, as a killed server leaves it.
    drop(std::os::unix::net::UnixListener::bind(sockets.join("dead.sock")).unwrap());

    let (tx, rx) = std::sync::mpsc::channel();
    let (d, r) = (dir.path().to_path_buf(), runtime.path().to_path_buf());
    std::thread::spawn(move || {
        let _ = tx.send(flowdeck(&d, &r, &["ls", "--json"]));
    });
    let out = rx
        .recv_timeout(LONG)
        .expect("flowdeck ls to end though a socket never answers");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["servers"], json!([]), "{report:#}");
    let silent = &report["not_answering"][0];
    assert!(
        silent["socket"].as_str().unwrap().ends_with("silent.sock"),
        "{report:#}"
    );
    assert!(
        silent["error"].as_str().unwrap().contains("within 5 s"),
        "{report:#}"
    );
    let stale = &report["stale"][0];
    assert!(
        stale["socket"].as_str().unwrap().ends_with("dead.sock"),
        "{report:#}"
    );
}

/// A foreground server on `dir`, and an agent on it that started the sleeper and opened a
/// bash: the run's id, once the run's `sleep` runs.
fn busy_server(dir: &Path, runtime: &Path) -> (common::Killed, LineServer, String) {
    let server = common::Killed(common::serve_with(dir, runtime, &[]));
    let mut agent = common::mcp_agent(dir, runtime, &[]);
    let started = agent.call(
        2,
        "run_workflow",
        json!({"workflow_name": "sleeper", "wait": false}),
    );
    let run_id = started["run_id"].as_str().unwrap().to_string();
    agent.open_bash(3);
    let pid = server.0.id();
    wait_until(LONG, "the sleeper's sleep", || {
        session_processes_of(pid)
            .iter()
            .any(|p| {
                std::fs::read_to_string(format!("/proc/{p}/cmdline"))
                    .is_ok_and(|c| c.starts_with("sleep\u{0}300"))
            })
            .then_some(())
    });
    (server, agent, run_id)
}

#[test]
fn stop_yes_ends_the_server_closes_its_terminals_and_cancels_its_run() {
    let dir = sleeper_folder();
    let runtime = tempfile::tempdir().unwrap();
    let (mut server, _agent, run_id) = busy_server(dir.path(), runtime.path());
    let processes = session_processes_of(server.0.id());
    assert!(processes.len() >= 2, "{processes:?}");

    let out = flowdeck(dir.path(), runtime.path(), &["stop", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains(&format!("process {}", server.0.id()))
            && said.contains("1 run canceled, 2 terminals closed"),
        "{said}"
    );
    // `stop` waited for the end: the server has exited by the time it returns (this test,
    // its parent, has yet to reap it).
    assert!(has_ended(server.0.id()), "the server still runs");
    let status = wait_until(LONG, "the server's exit status", || {
        server.0.try_wait().unwrap()
    });
    assert!(status.success(), "{status:?}");
    wait_until(LONG, "the server's terminals' processes to end", || {
        processes.iter().all(|&p| has_ended(p as u32)).then_some(())
    });
    let journal = std::fs::read_to_string(
        dir.path()
            .join(".flowdeck/runs")
            .join(format!("{run_id}.jsonl")),
    )
    .unwrap();
    let end: Value = serde_json::from_str(journal.lines().last().unwrap()).unwrap();
    assert_eq!(end["type"], "run_finished", "{journal}");
    assert_eq!(end["final_state"], "canceled", "{end}");
    let listed = ls_json(dir.path(), runtime.path());
    assert_eq!(listed["servers"], json!([]), "{listed:#}");
}

#[test]
fn stop_without_yes_and_without_a_terminal_refuses_and_leaves_it_running() {
    let dir = sleeper_folder();
    let runtime = tempfile::tempdir().unwrap();
    let (mut server, _agent, _run) = busy_server(dir.path(), runtime.path());
    let out = flowdeck(dir.path(), runtime.path(), &["stop"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    for part in ["holds 2 terminals", "1 run", "--yes"] {
        assert!(said.contains(part), "{part} in {said}");
    }
    assert!(server.0.try_wait().unwrap().is_none(), "it was stopped");
    server_of(&ls_json(dir.path(), runtime.path()), dir.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_at_a_terminal_asks_and_no_leaves_it_running() {
    let dir = sleeper_folder();
    let runtime = tempfile::tempdir().unwrap();
    let (d, r) = (dir.path().to_path_buf(), runtime.path().to_path_buf());
    let (mut server, agent, _run) = tokio::task::spawn_blocking(move || busy_server(&d, &r))
        .await
        .unwrap();
    let terminals = flowdeck::term::Terminals::new(flowdeck::term::TermConfig::default());
    let program = vec![
        env!("CARGO_BIN_EXE_flowdeck").to_string(),
        "--workflows".into(),
        dir.path().display().to_string(),
        "stop".into(),
    ];
    let env = vec![(
        "XDG_RUNTIME_DIR".to_string(),
        runtime.path().display().to_string(),
    )];
    let session = common::studio::open(&terminals, program, None, (120, 30), env);
    common::studio::expect(
        &session,
        r"Stop it, ending its terminals and runs\? \[y/N\]",
    )
    .await;
    let screen = session.content(flowdeck::term::Content::Screen);
    assert!(
        screen.contains("agent wire") && screen.contains("sleeper, by agent wire"),
        "{screen}"
    );
    session.send_text("n\r", "test").unwrap();
    assert_eq!(common::studio::exit_code(&session).await, Some(1));
    assert!(
        session
            .content(flowdeck::term::Content::Screen)
            .contains("left running")
    );
    assert!(server.0.try_wait().unwrap().is_none(), "it was stopped");
    drop(agent);
}

#[test]
fn runs_lists_a_cli_run_and_an_agents_run_with_who_started_them() {
    let dir = sleeper_folder();
    let runtime = tempfile::tempdir().unwrap();
    // No server: the command line's own engine.
    let ran = flowdeck(dir.path(), runtime.path(), &["run", "tiny"]);
    assert!(ran.status.success(), "{}", text(&ran.stderr));
    // An agent's, in the server its `flowdeck mcp` started.
    let mut agent = common::mcp_agent(dir.path(), runtime.path(), &[]);
    let result = agent.call(2, "run_workflow", json!({"workflow_name": "tiny"}));
    assert_eq!(result["final_state"], "completed", "{result}");

    let out = flowdeck(dir.path(), runtime.path(), &["runs", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{report:#}");
    // Newest first: the agent's.
    assert_eq!(runs[0]["run_id"], result["run_id"], "{report:#}");
    assert_eq!(runs[0]["started_by"]["kind"], "agent", "{report:#}");
    assert_eq!(runs[0]["started_by"]["client"], "wire", "{report:#}");
    assert_eq!(runs[0]["who"], "agent wire");
    assert_eq!(runs[1]["started_by"], json!({"kind": "cli"}), "{report:#}");
    assert_eq!(runs[1]["who"], "cli");
    for run in runs {
        assert_eq!(run["workflow"], "tiny");
        assert_eq!(run["state"], "completed", "{run}");
        assert!(run["duration_ms"].is_number(), "{run}");
        assert!(run["started_at"].is_string(), "{run}");
        assert!(run["recorded"].is_boolean(), "{run}");
    }

    let out = flowdeck(dir.path(), runtime.path(), &["runs"]);
    let table = text(&out.stdout);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    assert!(
        lines[0].starts_with("RUN") && lines[0].contains("BY"),
        "{table}"
    );
    assert!(
        lines[1].contains("agent wire") && lines[1].contains("completed"),
        "{table}"
    );
    assert!(
        lines[2].contains(" cli ") && lines[2].contains("completed"),
        "{table}"
    );
    let out = flowdeck(
        dir.path(),
        runtime.path(),
        &["runs", "tiny", "--limit", "1"],
    );
    assert_eq!(
        text(&out.stdout).lines().count(),
        2,
        "{}",
        text(&out.stdout)
    );
    let out = flowdeck(dir.path(), runtime.path(), &["runs", "sleeper"]);
    assert!(
        text(&out.stdout).contains("no runs of sleeper"),
        "{}",
        text(&out.stdout)
    );
}
