//! Runs on other machines as people and agents start them (issue 25): `flowdeck run --on`,
//! a fleet with `--on h1,h2,...`, and MCP's `run_workflow` with `on` and `open_terminal` with
//! `host`, the real binary reaching a real sshd on loopback (tests/common/sshd.rs) through
//! `FLOWDECK_SSH_COMMAND`.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::sshd::Sshd;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn folder() -> (tempfile::TempDir, tempfile::TempDir) {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(
        folder.path().join("on_a_host.yaml"),
        common::sshd::ON_A_HOST,
    )
    .unwrap();
    (folder, tempfile::tempdir().unwrap())
}

/// `flowdeck --workflows FOLDER ARGS` with the fixture's ssh, to its end.
fn flowdeck(sshd: &Sshd, folder: &Path, runtime: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_flowdeck"));
    command
        .arg("--workflows")
        .arg(folder)
        .args(args)
        .env("FLOWDECK_SSH_COMMAND", sshd.ssh_command())
        .env("XDG_RUNTIME_DIR", runtime)
        .stdin(Stdio::null());
    common::sshd::output_within(common::LONG, "flowdeck run", &mut command)
}

#[test]
fn flowdeck_run_on_a_host_runs_there_and_prints_its_return_values() {
    let sshd = Sshd::start();
    let (folder, runtime) = folder();
    let out = flowdeck(
        &sshd,
        folder.path(),
        runtime.path(),
        &[
            "run",
            "on_a_host",
            "--on",
            "h3",
            "-i",
            "MESSAGE=it's $(here)",
            "-i",
            "TOKEN=t",
        ],
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains(&format!("WHERE=127.0.0.4 {}", sshd.port())),
        "{said}"
    );
    assert!(said.contains("ECHOED=it's $(here)"), "{said}");
}

#[test]
fn a_fleet_prints_every_host_and_fails_when_one_did() {
    let sshd = Sshd::start();
    let (folder, runtime) = folder();
    std::fs::write(folder.path().join("hosts.conf"), "web: h1 h2\n").unwrap();
    let out = flowdeck(
        &sshd,
        folder.path(),
        runtime.path(),
        &[
            "run",
            "on_a_host",
            "--on",
            "web,down",
            "-i",
            "MESSAGE=hi",
            "-i",
            "TOKEN=t",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "one host was down");
    let fleet: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let hosts: Vec<&str> = fleet["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["host"].as_str().unwrap())
        .collect();
    assert_eq!(hosts, ["h1", "h2", "down"], "{fleet}");
    assert_eq!(fleet["completed"], 2, "{fleet}");
    assert_eq!(
        fleet["runs"][1]["result"]["return_values"]["WHERE"],
        format!("127.0.0.3 {}", sshd.port())
    );
    let down = fleet["runs"][2]["error"].as_str().unwrap();
    assert!(
        down.contains("cannot reach down") && down.contains("Connection refused"),
        "{down}"
    );
    // Without --json: a line a host, and the count.
    let out = flowdeck(
        &sshd,
        folder.path(),
        runtime.path(),
        &[
            "run",
            "on_a_host",
            "--on",
            "h1,h2",
            "-i",
            "MESSAGE=hi",
            "-i",
            "TOKEN=t",
        ],
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("on_a_host: 2 of 2 hosts completed"), "{said}");
}

#[test]
fn an_agent_runs_a_workflow_on_a_host_and_opens_a_terminal_there() {
    let sshd = Sshd::start();
    let (folder, runtime) = folder();
    let command = sshd.ssh_command();
    let mut agent = common::mcp_agent_with(
        folder.path(),
        runtime.path(),
        &[],
        &[("FLOWDECK_SSH_COMMAND", &command)],
    );
    let result = agent.call(
        2,
        "run_workflow",
        json!({"workflow_name": "on_a_host", "on": "h2", "inputs": {"MESSAGE": "from an agent", "TOKEN": "t"}}),
    );
    assert_eq!(result["final_state"], "completed", "{result}");
    assert_eq!(
        result["return_values"]["WHERE"],
        format!("127.0.0.3 {}", sshd.port())
    );
    let fleet = agent.call(
        3,
        "run_workflow",
        json!({"workflow_name": "on_a_host", "on": ["h1", "h3"], "inputs": {"MESSAGE": "x", "TOKEN": "t"}}),
    );
    assert_eq!(fleet["completed"], 2, "{fleet}");
    let opened = agent.call(4, "open_terminal", json!({"host": "h1", "cwd": "/tmp"}));
    assert_eq!(opened["host"], "h1", "{opened}");
    let session = opened["session_id"].as_str().unwrap();
    let ran = agent.call(
        5,
        "run_command",
        json!({"session_id": session, "command": "pwd; (exit 3)"}),
    );
    assert_eq!(ran["exit_code"], 3, "{ran}");
    assert_eq!(ran["output"], "/tmp", "{ran}");
}

/// A fleet still going at the wait ceiling answers as one started with `wait: false`, saying
/// so, and its runs go on to complete on every host.
#[test]
fn a_waiting_fleet_past_the_ceiling_answers_its_hosts_and_its_runs_complete() {
    let sshd = Sshd::start();
    let (folder, runtime) = folder();
    std::fs::write(folder.path().join("slow_step.yaml"), crate::budget::SLOW).unwrap();
    let command = sshd.ssh_command();
    let mut agent = common::mcp_agent_with(
        folder.path(),
        runtime.path(),
        &["--max-wait", "1s"],
        &[("FLOWDECK_SSH_COMMAND", &command)],
    );
    let asked = std::time::Instant::now();
    let fleet = agent.call(
        2,
        "run_workflow",
        json!({"workflow_name": "slow_step", "on": ["h1", "h2"]}),
    );
    assert_eq!(fleet["effective_timeout"], 1.0, "{fleet}");
    assert_eq!(fleet["hosts"], json!(["h1", "h2"]), "{fleet}");
    assert!(
        fleet["message"].as_str().unwrap().contains("still running"),
        "{fleet}"
    );
    assert!(
        asked.elapsed() < std::time::Duration::from_secs(4),
        "answered at the ceiling, not the runs' end: {:?}",
        asked.elapsed()
    );
    // The hosts' runs were under way before the ceiling: followed by their ids, each ends
    // completed with its value.
    let list = agent.call(3, "run_list", json!({"workflow_name": "slow_step"}));
    // The history lists runs in progress too.
    let ids: Vec<String> = list["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|run| run["run_id"].as_str().map(String::from))
        .collect();
    assert_eq!(ids.len(), 2, "a run a host: {list}");
    let deadline = std::time::Instant::now() + common::LONG;
    let mut call = 10;
    for run_id in &ids {
        let mut after = 0;
        loop {
            call += 1;
            let page = agent.call(
                call,
                "run_events",
                json!({"run_id": run_id, "after": after, "wait_seconds": 1}),
            );
            after = page["next_cursor"].as_u64().unwrap();
            if page["finished"] == true {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{run_id} did not finish within {:?}: {page}",
                common::LONG
            );
        }
        call += 1;
        let status = agent.call(call, "run_status", json!({"run_id": run_id}));
        assert_eq!(status["result"]["final_state"], "completed", "{status}");
        assert_eq!(
            status["result"]["return_values"]["RESULT"], "42",
            "{status}"
        );
    }
}
