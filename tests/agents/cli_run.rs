//! `flowdeck run` as a user runs it: failures, JSON, and runs in the folder's server (the
//! bundled workflows are bundled.rs's).

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use serde_json::json;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common;

fn bundled_copy() -> tempfile::TempDir {
    // A copy, so that the runs' journal goes to a temporary folder, not the source tree.
    common::bundled_workflows_copy()
}

fn flowdeck(workflows: &Path, args: &[&str], stdin: &str) -> Output {
    common::flowdeck_fed(workflows, args, stdin)
}

fn assert_green(out: &Output, name: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && stdout.starts_with(&format!("{name}: completed")),
        "{name}: exit {:?}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn display(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn failures_exit_non_zero_with_a_clear_message() {
    let workflows = bundled_copy();
    let out = flowdeck(workflows.path(), &["run", "make_build"], "");
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("make_build: validation_failed after 0 states"),
        "{stdout}"
    );
    assert!(stdout.contains("export PROJECT_ROOT=value"), "{stdout}");

    // A name no workflow has could not start: 2, the closest name, and no journal.
    let out = flowdeck(workflows.path(), &["run", "git_helth"], "");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("workflow 'git_helth' not found") && stderr.contains("'git_health'"),
        "{stderr}"
    );

    let out = flowdeck(
        workflows.path(),
        &["run", "make_build", "-i", "PROJECT_ROOT"],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not KEY=VALUE"));

    // Unanswered questions (stdin at its end) cancel the run.
    let out = flowdeck(workflows.path(), &["run", "guided_review"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("canceled"));
}

#[test]
fn json_output_is_the_full_result() {
    let workflows = bundled_copy();
    let project = common::project_with_makefile();
    let input = format!("PROJECT_ROOT={}", display(project.path()));
    let out = flowdeck(
        workflows.path(),
        &["run", "make_build", "-i", &input, "--json"],
        "",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for field in [
        "success",
        "workflow_name",
        "session_id",
        "final_state",
        "states_executed",
        "workflow_signature",
        "execution_log",
        "error",
        "run_id",
        "return_values",
        "duration_ms",
    ] {
        assert!(result.get(field).is_some(), "missing {field}");
    }
    assert_eq!(result["final_state"], "completed");
    // Progress went to stderr, one line per state, not to stdout.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("[1] "), "{stderr}");
    // The run is in the folder's history: its journal, and the recording of its terminal.
    let mut runs: Vec<String> = std::fs::read_dir(workflows.path().join(".flowdeck/runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    runs.sort();
    let run_id = result["run_id"].as_str().unwrap();
    assert_eq!(runs, [format!("{run_id}.cast"), format!("{run_id}.jsonl")]);
}

/// A workflow of one command that says `cli-run-42`, and one that sleeps.
const HELLO: &str = "name: hello\ndescription: Says a word.\ninitial_state: say\nstates:\n  say:\n    action: { tool: run_command, params: { command: 'echo cli-run-$((6*7))' } }\n";
const SLOW: &str = "name: slow\ndescription: Takes its time.\ninitial_state: wait\nstates:\n  wait:\n    action: { tool: run_command, params: { command: 'sleep 60', timeout: 120 } }\n";

/// `flowdeck run` with the folder's server up (a studio open on it): the run happens in the
/// server, so the studio shows it, its terminal kept there at the end; the command prints
/// the result as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flowdeck_run_while_a_studio_is_open_runs_in_the_server_and_shows_there() {
    use common::studio::{expect, open, quit};
    let (folder, runtime) = common::tiny_folder();
    std::fs::write(folder.path().join("hello.yaml"), HELLO).unwrap();
    let terminals = flowdeck::term::Terminals::new(flowdeck::term::TermConfig::default());
    let xdg = (
        "XDG_RUNTIME_DIR".to_string(),
        runtime.path().display().to_string(),
    );
    let program = vec![
        env!("CARGO_BIN_EXE_flowdeck").to_string(),
        "--workflows".into(),
        folder.path().display().to_string(),
    ];
    let studio = open(&terminals, program, None, (110, 32), vec![xdg]);
    expect(&studio, "hello").await;

    let (dir, sockets) = (folder.path().to_path_buf(), runtime.path().to_path_buf());
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_flowdeck"))
            .arg("--workflows")
            .arg(&dir)
            .args(["run", "hello", "--session-keep"])
            .env("XDG_RUNTIME_DIR", &sockets)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = assert_green(&out, "hello");
    assert!(stdout.contains("cli-run-42"), "{stdout}");
    assert!(stdout.contains("kept in the folder's server"), "{stdout}");
    // The studio shows the run's terminal, kept in the server.
    expect(&studio, r"s1 · hello").await;
    studio.send_text("]", "test").unwrap();
    expect(&studio, "cli-run-42").await;
    quit(&studio).await;
}

/// `flowdeck run` killed with -9 while its run goes on in the server: the server cancels the
/// run it was following, as Ctrl-C would have.
#[test]
fn a_flowdeck_run_killed_leaves_no_run_behind_in_the_server() {
    let (folder, runtime) = common::tiny_folder();
    std::fs::write(folder.path().join("slow.yaml"), SLOW).unwrap();
    let _server = common::Killed(common::serve_with(folder.path(), runtime.path(), &[]));
    let mut cli = Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(folder.path())
        .args(["run", "slow"])
        .env("XDG_RUNTIME_DIR", runtime.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut agent = common::mcp_agent(folder.path(), runtime.path(), &[]);
    let run_id = common::wait_until(common::LONG, "the run in the server", || {
        let runs = agent.call(2, "run_list", json!({"workflow_name": "slow"}));
        runs["active"][0]["run_id"].as_str().map(str::to_string)
    });
    cli.kill().unwrap();
    cli.wait().unwrap();
    let ended = common::wait_until(common::LONG, "the run cancelled", || {
        let status = agent.call(3, "run_status", json!({"run_id": run_id}));
        (status["status"] == "finished").then_some(status)
    });
    assert!(
        ended.to_string().contains("cancelled"),
        "the run did not end cancelled: {ended}"
    );
    drop(agent.stdin.take());
    let _ = agent.exit_within(common::LONG);
}
