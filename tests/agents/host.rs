//! One host per folder (issue 15): `flowdeck serve` hosts the engine on the folder's socket,
//! `flowdeck mcp` relays agents to it, so two agents at once share one engine; a second host
//! is refused with the process that holds the folder; a host killed with SIGKILL leaves a
//! stale socket that the next host replaces, and the relay of an agent attached to it ends
//! with a clear error. Real binaries, each test with a socket folder of its own.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::TINY;

use common::line_client::LineServer;
use serde_json::json;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// `flowdeck serve` on `folder`, its sockets under `runtime`; returns once its socket answers.
fn serve(folder: &Path, runtime: &Path) -> Child {
    serve_with(folder, runtime, &[])
}

use common::{LONG, answering, serve_with, socket_in};

/// `flowdeck mcp` as an agent's client starts it, with the same socket folder.
fn agent(folder: &Path, runtime: &Path) -> LineServer {
    agent_with(folder, runtime, &[])
}

/// [`agent`] with more arguments.
fn agent_with(folder: &Path, runtime: &Path, args: &[&str]) -> LineServer {
    common::mcp_agent(folder, runtime, args)
}

fn stderr_of(child: &mut Child) -> String {
    let mut text = String::new();
    if let Some(mut err) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut err, &mut text);
    }
    text
}

#[test]
fn two_agents_relayed_to_one_host_share_its_engine_and_a_save_conflicts() {
    let (folder, runtime) = common::tiny_folder();
    let host = serve(folder.path(), runtime.path());
    let mut a = agent(folder.path(), runtime.path());
    let mut b = agent(folder.path(), runtime.path());

    // A terminal one agent opens is the other's too: one engine.
    let opened = a.call(2, "open_terminal", json!({"command": ["bash", "--norc"]}));
    let id = opened["session_id"].as_str().unwrap().to_string();
    let listed = b.call(2, "list_terminal_sessions", json!({}));
    assert!(
        listed.to_string().contains(&id),
        "agent b does not see {id}: {listed}"
    );

    // Both save the same manifest from the version they read: one wins, one conflicts.
    let got = a.call(3, "workflow_get", json!({"name": "tiny"}));
    let version = got["version"].as_str().unwrap().to_string();
    let content = |marker: &str| TINY.replace("Lists sessions.", marker);
    let first = a.request(
        4,
        "tools/call",
        json!({"name": "workflow_save", "arguments": {"content": content("A wins."), "expected_version": version}}),
    );
    let second = b.request(
        4,
        "tools/call",
        json!({"name": "workflow_save", "arguments": {"content": content("B loses."), "expected_version": version}}),
    );
    assert_ne!(first["result"]["isError"], true, "{first}");
    assert_eq!(second["result"]["isError"], true, "{second}");
    assert!(
        second.to_string().contains("CONFLICT"),
        "a version conflict: {second}"
    );
    assert!(
        std::fs::read_to_string(folder.path().join("tiny.yaml"))
            .unwrap()
            .contains("A wins.")
    );

    // A second host for the folder is refused and names the first.
    let refused = Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(folder.path())
        .arg("serve")
        .env("XDG_RUNTIME_DIR", runtime.path())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(
        why.contains("already served by process") && why.contains(&host.id().to_string()),
        "{why}"
    );

    drop(a.stdin.take());
    drop(b.stdin.take());
    assert_eq!(a.exit_within(LONG), Some(0));
    assert_eq!(b.exit_within(LONG), Some(0));
    stop(host);
    // Stopped cleanly: no socket left behind (the lock file servers take turns on stays).
    let left: Vec<_> = std::fs::read_dir(runtime.path().join("flowdeck"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .filter(|name| !name.to_string_lossy().ends_with(".lock"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// The structured error of a failed tool call.
fn tool_error(response: &serde_json::Value) -> serde_json::Value {
    assert_eq!(response["result"]["isError"], true, "{response}");
    let text = response["result"]["content"][0]["text"].as_str().unwrap();
    serde_json::from_str(text).unwrap()
}

fn stop(mut host: Child) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(host.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = host.wait().unwrap();
    assert!(status.success(), "{status:?}: {}", stderr_of(&mut host));
}

#[test]
fn a_headless_host_in_approval_mode_refuses_unapproved_runs_until_flowdeck_approve() {
    let (folder, runtime) = common::tiny_folder();
    let host = serve_with(folder.path(), runtime.path(), &["--approve", "agent-runs"]);
    let mut a = agent(folder.path(), runtime.path());
    let run = json!({"name": "run_workflow", "arguments": {"workflow_name": "tiny"}});

    // Nobody is there to approve: refused at once, as a security error.
    let error = tool_error(&a.request(2, "tools/call", run.clone()));
    assert_eq!(error["error_code"], "RUN_NOT_APPROVED", "{error}");
    assert_eq!(error["code"], -32007, "{error}");
    assert_eq!(error["category"], "security", "{error}");
    assert_eq!(error["retryable"], false, "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("flowdeck approve"),
        "{error}"
    );

    // A person approves the content ahead, from the command line at their terminal: the
    // agent's run goes.
    let dir = folder.path().display().to_string();
    let xdg = vec![(
        "XDG_RUNTIME_DIR".to_string(),
        runtime.path().display().to_string(),
    )];
    let (code, said) =
        common::studio::at_a_terminal(&["--workflows", &dir, "approve", "tiny"], xdg.clone());
    assert_eq!(code, Some(0), "{said}");
    assert!(said.starts_with("approved tiny (content "), "{said}");
    let ran = a.call(3, "run_workflow", json!({"workflow_name": "tiny"}));
    assert_eq!(ran["success"], true, "{ran}");

    // Any change to the file needs a new approval.
    let changed = TINY.replace("Lists sessions.", "Lists them all.");
    std::fs::write(folder.path().join("tiny.yaml"), &changed).unwrap();
    common::wait_until(LONG, "the host to see the change", || {
        let got = a.call(4, "workflow_get", json!({"name": "tiny"}));
        (got["content"] == changed.as_str()).then_some(())
    });
    let error = tool_error(&a.request(5, "tools/call", run));
    assert_eq!(error["error_code"], "RUN_NOT_APPROVED", "{error}");

    // An unknown workflow cannot be approved, and says so.
    let (code, said) =
        common::studio::at_a_terminal(&["--workflows", &dir, "approve", "nope"], xdg);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("cannot approve nope"), "{said}");

    // A command with no terminal (a script, an agent's shell tool) may not approve.
    let scripted = Command::new("setsid")
        .arg(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(folder.path())
        .args(["approve", "tiny"])
        .env("XDG_RUNTIME_DIR", runtime.path())
        .output()
        .unwrap();
    assert_eq!(scripted.status.code(), Some(2), "{scripted:?}");
    assert!(
        String::from_utf8_lossy(&scripted.stderr).contains("it has no terminal"),
        "{scripted:?}"
    );
    drop(a.stdin.take());
    assert_eq!(a.exit_within(LONG), Some(0));
    stop(host);
}

#[test]
fn a_relayed_agent_keeps_the_read_only_and_approval_mode_of_its_own_command_line() {
    let (folder, runtime) = common::tiny_folder();
    let host = serve(folder.path(), runtime.path());
    let tool_names = |agent: &mut LineServer| -> Vec<String> {
        let listed = agent.request(9, "tools/list", json!({}));
        listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };

    let mut plain = agent(folder.path(), runtime.path());
    let all = tool_names(&mut plain);
    assert!(all.iter().any(|t| t == "workflow_save"), "{all:?}");
    let ran = plain.call(2, "run_workflow", json!({"workflow_name": "tiny"}));
    assert_eq!(
        ran["success"], true,
        "the host itself asks no approval: {ran}"
    );

    let mut read_only = agent_with(folder.path(), runtime.path(), &["--read-only"]);
    let offered = tool_names(&mut read_only);
    assert!(offered.iter().any(|t| t == "workflow_list"), "{offered:?}");
    for changing in [
        "workflow_save",
        "run_workflow",
        "send_input",
        "open_terminal",
    ] {
        assert!(
            !offered.iter().any(|t| t == changing),
            "{changing} offered to a read-only agent: {offered:?}"
        );
    }

    let mut approving = agent_with(folder.path(), runtime.path(), &["--approve", "agent-runs"]);
    let run = json!({"name": "run_workflow", "arguments": {"workflow_name": "tiny"}});
    let error = tool_error(&approving.request(2, "tools/call", run));
    assert_eq!(error["error_code"], "RUN_NOT_APPROVED", "{error}");

    for mut agent in [plain, read_only, approving] {
        drop(agent.stdin.take());
        assert_eq!(agent.exit_within(LONG), Some(0));
    }
    stop(host);
}

#[test]
fn a_host_killed_leaves_a_stale_socket_the_next_replaces_and_its_agents_are_told() {
    let (folder, runtime) = common::tiny_folder();
    let mut host = serve(folder.path(), runtime.path());
    let mut a = agent(folder.path(), runtime.path());
    a.call(2, "workflow_list", json!({}));
    host.kill().unwrap();
    host.wait().unwrap();
    // The relay ends, with an error for the agent, not silently.
    let code = a.exit_within(LONG);
    assert!(code.is_some_and(|c| c != 0), "{code:?}");
    let why = a
        .child
        .stderr
        .take()
        .map(|mut e| {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut e, &mut s);
            s
        })
        .unwrap_or_default();
    assert!(why.contains("ended the connection"), "{why}");
    // The socket is still there, and nothing answers on it: the next host takes its place.
    let mut next = serve(folder.path(), runtime.path());
    let mut b = agent(folder.path(), runtime.path());
    let listed = b.call(2, "workflow_list", json!({}));
    assert!(listed.to_string().contains("tiny"), "{listed}");
    drop(b.stdin.take());
    assert_eq!(b.exit_within(LONG), Some(0));
    next.kill().unwrap();
    next.wait().unwrap();
}

/// The binary rebuilt under a running server: the new `flowdeck mcp` is refused by the old
/// server in its first exchange, and says why, naming both versions and the server's process,
/// instead of speaking a protocol the server may not know.
#[test]
fn a_server_of_another_version_is_refused_naming_both_versions_and_how_to_end_it() {
    let (folder, runtime) = common::tiny_folder();
    let mut old = Command::new(env!("CARGO_BIN_EXE_flowdeck"));
    old.arg("--workflows")
        .arg(folder.path())
        .arg("serve")
        .env("XDG_RUNTIME_DIR", runtime.path())
        .env("FLOWDECK_FAKE_VERSION", "0.0.1-old")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut host = KillOnFailure(Some(old.spawn().unwrap()));
    let pid = host.0.as_ref().map_or(0, Child::id);
    answering(runtime.path());
    let output = Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(folder.path())
        .arg("mcp")
        .env("XDG_RUNTIME_DIR", runtime.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let why = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{why}");
    assert!(
        output.stdout.is_empty(),
        "nothing reached the agent's stdout"
    );
    let ours = env!("CARGO_PKG_VERSION");
    for part in [
        format!("this flowdeck is version {ours}"),
        "is version 0.0.1-old".to_string(),
        format!("kill {pid}"),
    ] {
        assert!(why.contains(&part), "{part:?} in {why}");
    }
    stop(host.0.take().unwrap());
}

#[test]
fn a_host_killed_mid_run_leaves_no_process_a_journaled_run_and_a_clean_restart() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("asker.yaml"), common::studio::ASKER).unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let mut host = serve(folder.path(), runtime.path());
    let mut a = agent(folder.path(), runtime.path());
    // A run that waits on its prompt, in a session of its own with a shell in it.
    let started = a.call(
        2,
        "run_workflow",
        json!({"workflow_name": "asker", "wait": false}),
    );
    let run_id = started["run_id"].as_str().unwrap().to_string();
    common::wait_until(LONG, "the run waiting on its prompt", || {
        let status = a.call(3, "run_status", json!({"run_id": run_id}));
        (status["status"] == "waiting_for_input").then_some(())
    });
    let pid = host.id();
    assert!(!common::session_processes_of(pid).is_empty());

    host.kill().unwrap();
    host.wait().unwrap();
    // The agent's relay ends with an error, not silently.
    let code = a.exit_within(LONG);
    assert!(code.is_some_and(|c| c != 0), "{code:?}");
    // The watchdog ends every process of the host's sessions.
    common::wait_until(LONG, "the sessions' processes gone", || {
        common::session_processes_of(pid).is_empty().then_some(())
    });
    // The manifest is intact, and the next host starts over the stale socket and journals
    // the run as interrupted.
    assert_eq!(
        std::fs::read_to_string(folder.path().join("asker.yaml")).unwrap(),
        common::studio::ASKER
    );
    let mut next = serve(folder.path(), runtime.path());
    let mut b = agent(folder.path(), runtime.path());
    assert_told_interrupted(&mut b, &run_id, "asker");
    drop(b.stdin.take());
    assert_eq!(b.exit_within(LONG), Some(0));
    next.kill().unwrap();
    next.wait().unwrap();
}

/// Every answer about a run whose flowdeck was killed mid-run reads its journal's last line:
/// `run_status` (status and result), `run_list`, and the workflow's run count and last result.
fn assert_told_interrupted(agent: &mut LineServer, run_id: &str, workflow: &str) {
    let status = agent.call(40, "run_status", json!({"run_id": run_id}));
    assert_eq!(status["status"], "finished", "{status}");
    let result = &status["result"];
    assert_eq!(result["final_state"], "interrupted", "{status}");
    assert_eq!(result["success"], false, "{status}");
    assert!(
        result["error"]
            .as_str()
            .is_some_and(|e| e.contains("killed or crashed")),
        "{status}"
    );
    // The run had started its first state (the prompt it waited on) and lasted a while.
    assert!(result["states_executed"].as_u64() >= Some(1), "{status}");
    assert!(result["duration_ms"].as_f64() > Some(0.0), "{status}");
    assert_eq!(status["started_by"]["kind"], "agent", "{status}");

    let listed = agent.call(41, "run_list", json!({}));
    let run = listed["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["run_id"] == run_id)
        .cloned()
        .unwrap_or_default();
    assert_eq!(run["final_state"], "interrupted", "{listed}");
    assert_eq!(run["error"], result["error"], "{listed}");
    assert_eq!(
        run["states_executed"], result["states_executed"],
        "{listed}"
    );

    let workflows = agent.call(42, "workflow_list", json!({}));
    let entry = workflows["workflows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == workflow)
        .cloned()
        .unwrap_or_default();
    assert_eq!(entry["last_result"], "interrupted", "{workflows}");
    assert_eq!(entry["runs"], 1, "{workflows}");
}

#[test]
fn a_server_an_agent_started_killed_mid_run_is_told_interrupted_by_the_next() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("asker.yaml"), common::studio::ASKER).unwrap();
    let runtime = tempfile::tempdir().unwrap();
    // No server: the agent's `flowdeck mcp` starts one in the background.
    let mut a = agent(folder.path(), runtime.path());
    let server = common::server_pid(runtime.path());
    assert_ne!(server, a.pid(), "the server is a process of its own");
    let started = a.call(
        2,
        "run_workflow",
        json!({"workflow_name": "asker", "wait": false}),
    );
    let run_id = started["run_id"].as_str().unwrap().to_string();
    common::wait_until(LONG, "the run waiting on its prompt", || {
        let status = a.call(3, "run_status", json!({"run_id": run_id}));
        (status["status"] == "waiting_for_input").then_some(())
    });
    // The agent's relay going away leaves the run to the server.
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    let mut watcher = agent(folder.path(), runtime.path());
    let status = watcher.call(4, "run_status", json!({"run_id": run_id}));
    assert_eq!(status["status"], "waiting_for_input", "{status}");
    // The server killed: its watchdog ends the run's processes, and the server the next
    // agent starts journals the run as interrupted.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(server as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    assert!(
        watcher.exit_within(LONG).is_some_and(|c| c != 0),
        "the relay says its server is gone"
    );
    common::wait_until(LONG, "the sessions' processes gone", || {
        common::session_processes_of(server)
            .is_empty()
            .then_some(())
    });
    let mut b = agent(folder.path(), runtime.path());
    assert_ne!(common::server_pid(runtime.path()), server);
    assert_told_interrupted(&mut b, &run_id, "asker");
    drop(b.stdin.take());
    assert_eq!(b.exit_within(LONG), Some(0));
}

#[test]
fn an_agent_gone_mid_run_leaves_its_started_run_going_and_its_waiting_call_cancelled() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("asker.yaml"), common::studio::ASKER).unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let host = serve(folder.path(), runtime.path());
    let mut watcher = agent(folder.path(), runtime.path());
    let status_of = |agent: &mut LineServer, run_id: &str| -> serde_json::Value {
        agent.call(90, "run_status", json!({"run_id": run_id}))
    };

    // Started with `wait: false`, the run is the host's: it goes on when its agent leaves.
    let mut a = agent(folder.path(), runtime.path());
    let started = a.call(
        2,
        "run_workflow",
        json!({"workflow_name": "asker", "wait": false}),
    );
    let kept = started["run_id"].as_str().unwrap().to_string();
    drop(a.stdin.take());
    assert_eq!(a.exit_within(LONG), Some(0));

    // A `run_workflow` call still waiting when its agent's client dies is cancelled, as any
    // call the client no longer waits for.
    let mut b = agent(folder.path(), runtime.path());
    b.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "run_workflow", "arguments": {"workflow_name": "asker"}}})
        .to_string(),
    );
    let waiting = common::wait_until(LONG, "b's run waiting on its prompt", || {
        let listed = watcher.call(3, "run_list", json!({}));
        listed["active"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["run_id"] != kept.as_str() && r["status"] == "waiting_for_input")
            .map(|r| r["run_id"].as_str().unwrap().to_string())
    });
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(b.pid() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let ended = common::wait_until(LONG, "b's run to end", || {
        let status = status_of(&mut watcher, &waiting);
        (status["status"] == "finished").then_some(status)
    });
    assert_eq!(ended["result"]["final_state"], "canceled", "{ended}");
    assert_eq!(
        status_of(&mut watcher, &kept)["status"],
        "waiting_for_input",
        "the run started without waiting goes on"
    );
    drop(watcher.stdin.take());
    assert_eq!(watcher.exit_within(LONG), Some(0));
    stop(host);
}

#[test]
fn a_process_of_another_user_is_refused_with_a_reason() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    if !rustix::process::getuid().is_root() {
        println!("SKIP: connecting as another user needs root to switch users");
        return;
    }
    let (folder, runtime) = common::tiny_folder();
    let mut host = serve(folder.path(), runtime.path());
    // The socket's folder is private by design; opened up here, as a misconfiguration
    // would, the uid check is what is left to refuse a stranger.
    let sockets = runtime.path().join("flowdeck");
    let socket = std::fs::read_dir(&sockets)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "sock"))
        .unwrap();
    for path in [runtime.path(), &sockets] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    // `nobody` connects (python3 is on every machine the tests run on) and prints what the
    // host says.
    let out = Command::new("python3")
        .args([
            "-c",
            "import socket,sys; s=socket.socket(socket.AF_UNIX); s.settimeout(20); s.connect(sys.argv[1]); \
             print(s.makefile().readline().strip())",
        ])
        .arg(&socket)
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    let line = BufReader::new(said.as_bytes())
        .lines()
        .next()
        .and_then(Result::ok)
        .unwrap_or_default();
    let answer: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
    assert_eq!(
        answer["error"]["code"],
        -32001,
        "{said} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("only its owner"),
        "{answer}"
    );
    host.kill().unwrap();
    host.wait().unwrap();
}

/// The flood ends at this many requests written or after this long. Not at the first write
/// that blocks: a host that reads without bound still blocks its client for seconds at a time
/// while it works through what it took (a debug build on two cores), and the flood must last
/// long enough for such a host to show its growth.
const FLOOD_REQUESTS: u64 = 50_000;
const FLOOD_TIME: Duration = Duration::from_secs(15);
/// How long the other agent's calls may take, each, while the flood goes on: a deadline for
/// an answer at all, not a measure of speed.
const CALL_DEADLINE: Duration = Duration::from_secs(5);
/// The host's resident memory under the flood. A debug build serves this folder in about
/// 40 MB, and the flood may add its caps (wire.rs: 4 MiB of unsent answers, 64 requests in
/// flight) and the allocator's slack: about 55 MB measured. Unbounded, the unread answers grew
/// it by 10 MB a second in a debug build on two cores (to 156 MB in this test) and to 1.8 GB in
/// 5 s in a release build.
const FLOOD_RSS_LIMIT: u64 = 100 * 1024 * 1024;

/// A host killed if the test fails before stopping it: a host that grew under a flood must not
/// outlive the test that found it.
struct KillOnFailure(Option<Child>);

impl Drop for KillOnFailure {
    fn drop(&mut self) {
        if let Some(mut host) = self.0.take() {
            let _ = host.kill();
            let _ = host.wait();
        }
    }
}

#[test]
fn a_client_that_never_reads_neither_grows_the_host_nor_holds_up_another_agent() {
    use std::io::Write;
    // The bundled workflows: a folder of the usual kind, whose `tools/list` answer (a `wf_`
    // tool with its input schema for each) is what an unread answer costs.
    let folder = common::bundled_workflows_copy();
    let runtime = tempfile::tempdir().unwrap();
    let mut host = KillOnFailure(Some(serve(folder.path(), runtime.path())));
    let pid = host.0.as_ref().unwrap().id();
    let mut other = agent(folder.path(), runtime.path());
    let listed = other.call(2, "workflow_list", json!({}));
    assert!(listed.to_string().contains("archive_logs"), "{listed}");
    let before = common::rss_of(pid);

    // A client straight on the socket: the handshake, then `tools/list` as fast as it can
    // write, never reading a byte. Its writes time out rather than block, so that the flood
    // ends (at its count or its time) whether or not the host stops reading.
    let mut flooder = std::os::unix::net::UnixStream::connect(socket_in(runtime.path())).unwrap();
    let handshake = format!(
        "{}\n{}\n",
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "flooder", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    );
    flooder.write_all(handshake.as_bytes()).unwrap();
    flooder
        .set_write_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    // Ids of ten digits (JSON allows no leading zeros) keep every line the same length.
    let line_of = |n: u64| {
        let id = 1_000_000_000 + n;
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\"}}\n")
    };
    let line_len = line_of(0).len() as u64;
    let flood = std::thread::spawn(move || {
        let started = std::time::Instant::now();
        let mut written = 0u64;
        // How long the host has taken none of the flood, at the end.
        let mut taken = std::time::Instant::now();
        let mut batch: Vec<u8> = Vec::new();
        let mut at = 0;
        let mut next = 1;
        let ended = loop {
            if written / line_len >= FLOOD_REQUESTS {
                break "its count";
            }
            if started.elapsed() >= FLOOD_TIME {
                break "its time";
            }
            if at == batch.len() {
                batch = (next..next + 100)
                    .flat_map(|n| line_of(n).into_bytes())
                    .collect();
                next += 100;
                at = 0;
            }
            match flooder.write(&batch[at..]) {
                Ok(n) => {
                    at += n;
                    written += n as u64;
                    taken = std::time::Instant::now();
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => panic!("the flood's write failed after {written} bytes: {e}"),
            }
        };
        (written / line_len, ended, taken.elapsed(), flooder)
    });

    // Meanwhile, and for a while after, the other agent's calls are answered, each in time,
    // and the host's memory is sampled between them.
    let mut peak = before;
    let mut took: Vec<Duration> = Vec::new();
    let mut flood_ended: Option<std::time::Instant> = None;
    let mut id = 100;
    while flood_ended.is_none_or(|at| at.elapsed() < Duration::from_secs(2)) {
        if flood_ended.is_none() && flood.is_finished() {
            flood_ended = Some(std::time::Instant::now());
        }
        let asked = std::time::Instant::now();
        let answer = other.request_within(
            CALL_DEADLINE,
            "a call beside the flood",
            id,
            "tools/call",
            json!({"name": "workflow_list", "arguments": {}}),
        );
        assert_ne!(answer["result"]["isError"], true, "{answer}");
        took.push(asked.elapsed());
        id += 1;
        peak = peak.max(common::rss_of(pid));
    }
    let (sent, ended, held_off, flooder) = flood.join().unwrap();
    took.sort();
    println!(
        "flood: {sent} requests written, ended by {ended}, the last {held_off:?} of it refused; \
         host RSS {} MB before, \
         {} MB at the peak; the other agent's {} calls took {:?} (median), {:?} at most",
        before / (1024 * 1024),
        peak / (1024 * 1024),
        took.len(),
        took[took.len() / 2],
        took[took.len() - 1],
    );
    assert!(
        peak < FLOOD_RSS_LIMIT,
        "the host grew to {} MB under a client that never reads ({} MB before; {sent} requests \
         written); the limit is {} MB",
        peak / (1024 * 1024),
        before / (1024 * 1024),
        FLOOD_RSS_LIMIT / (1024 * 1024)
    );

    // The flooder goes: the host still serves the other agent, and a new one.
    drop(flooder);
    let answer = other.request_within(
        CALL_DEADLINE,
        "a call after the flooder left",
        id,
        "tools/call",
        json!({"name": "workflow_list", "arguments": {}}),
    );
    assert_ne!(answer["result"]["isError"], true, "{answer}");
    let mut newcomer = agent(folder.path(), runtime.path());
    let listed = newcomer.call(2, "workflow_list", json!({}));
    assert!(listed.to_string().contains("archive_logs"), "{listed}");
    println!(
        "host RSS {} MB after the flooder left",
        common::rss_of(pid) / (1024 * 1024)
    );
    for mut agent in [other, newcomer] {
        drop(agent.stdin.take());
        assert_eq!(agent.exit_within(LONG), Some(0));
    }
    stop(host.0.take().unwrap());
}

/// Agent first (issue 22): the agent host's `flowdeck mcp` starts the folder's server in the
/// background, a process of its own in a session of its own, which outlives the agent while
/// a terminal lives and ends by itself once nothing is attached and nothing lives.
#[test]
fn an_agents_server_outlives_it_while_work_lives_and_then_ends_by_itself() {
    let (folder, runtime) = common::tiny_folder();
    let mut a = agent(folder.path(), runtime.path());
    let server = common::server_pid(runtime.path());
    let stat = std::fs::read_to_string(format!("/proc/{server}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    // Its own session (field 6 of stat, the session id, is its own pid).
    assert_eq!(fields[3], server.to_string(), "{stat}");
    let opened = a.call(2, "open_terminal", json!({"command": ["cat"]}));
    let id = opened["session_id"].as_str().unwrap().to_string();
    drop(a.stdin.take());
    assert_eq!(a.exit_within(LONG), Some(0));
    // The terminal lives: the server stays, and the next agent finds it.
    let mut b = agent(folder.path(), runtime.path());
    assert_eq!(common::server_pid(runtime.path()), server);
    let listed = b.call(3, "list_terminal_sessions", json!({}));
    assert_eq!(listed["sessions"][0]["session_id"], json!(id), "{listed}");
    b.call(4, "exit_terminal", json!({"session_id": id}));
    drop(b.stdin.take());
    assert_eq!(b.exit_within(LONG), Some(0));
    // Nothing attached, nothing lives: the server ends after its grace, and takes its
    // socket with it.
    common::wait_until(LONG, "the idle server's end", || {
        common::has_ended(server).then_some(())
    });
    let sockets = std::fs::read_dir(runtime.path().join("flowdeck"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "sock"))
        .count();
    assert_eq!(sockets, 0, "the socket went with the server");
}

/// Two front ends that find no server at once start one each; the servers take turns on the
/// socket, and both front ends end up on one engine.
#[test]
fn two_agents_starting_a_server_at_once_end_up_on_one() {
    let (folder, runtime) = common::tiny_folder();
    let (f, r) = (folder.path().to_path_buf(), runtime.path().to_path_buf());
    let first = std::thread::spawn(move || agent(&f, &r));
    let mut second = agent(folder.path(), runtime.path());
    let mut first = first.join().unwrap();
    let opened = first.call(2, "open_terminal", json!({"command": ["cat"]}));
    let listed = second.call(2, "list_terminal_sessions", json!({}));
    assert_eq!(
        listed["sessions"][0]["session_id"], opened["session_id"],
        "{listed}"
    );
    first.call(
        3,
        "exit_terminal",
        json!({"session_id": opened["session_id"]}),
    );
    for agent in [&mut first, &mut second] {
        drop(agent.stdin.take());
        assert_eq!(agent.exit_within(LONG), Some(0));
    }
}

/// A client that says it is a studio and then sends garbage is dropped (the server logs why);
/// the agents on the server are unaffected.
#[test]
fn a_studio_client_that_sends_garbage_is_dropped_and_the_agents_go_on() {
    use std::io::{BufRead, BufReader, Write};
    let (folder, runtime) = common::tiny_folder();
    let host = serve(folder.path(), runtime.path());
    let mut a = agent(folder.path(), runtime.path());
    let socket = std::fs::read_dir(runtime.path().join("flowdeck"))
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.path().extension().is_some_and(|x| x == "sock"))
        .unwrap()
        .path();
    let mut raw = std::os::unix::net::UnixStream::connect(socket).unwrap();
    raw.set_read_timeout(Some(LONG)).unwrap();
    let hello = json!({"flowdeck": {"protocol": 1, "version": env!("CARGO_PKG_VERSION"), "client": "studio"}});
    raw.write_all(format!("{hello}\n").as_bytes()).unwrap();
    let mut reader = BufReader::new(raw.try_clone().unwrap());
    let mut welcome = String::new();
    reader.read_line(&mut welcome).unwrap();
    assert!(welcome.contains("\"pid\""), "{welcome}");
    raw.write_all(b"\x00\xffnot a message at all\n").unwrap();
    // The server closes the connection: everything it sent is read, then the end.
    let mut rest = Vec::new();
    std::io::Read::read_to_end(&mut reader, &mut rest).expect("the server closes it");
    let listed = a.call(2, "list_terminal_sessions", json!({}));
    assert!(listed["sessions"].is_array(), "{listed}");
    drop(a.stdin.take());
    assert_eq!(a.exit_within(LONG), Some(0));
    stop(host);
}

/// A server that was ending as `flowdeck mcp` connected closes the connection unanswered:
/// the relay reaches the folder's server again (starting one) instead of ending with nothing
/// served. Played by a listener of the test's own that takes the connection and drops it.
#[test]
fn a_server_ending_as_an_agent_connects_sends_it_to_the_next_server() {
    let (folder, runtime) = common::tiny_folder();
    let sockets = runtime.path().join("flowdeck");
    std::fs::create_dir(&sockets).unwrap();
    std::fs::set_permissions(
        &sockets,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let socket = flowdeck::server::socket::socket_path_in(&sockets, folder.path()).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let ending = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        // As an ending server does: the socket goes first, then the connection, unanswered.
        std::fs::remove_file(&socket).unwrap();
        drop(listener);
        drop(stream);
    });
    let mut a = agent(folder.path(), runtime.path());
    ending.join().unwrap();
    let listed = a.call(2, "workflow_list", json!({}));
    assert!(listed.to_string().contains("tiny"), "{listed}");
    let server = common::server_pid(runtime.path());
    drop(a.stdin.take());
    assert_eq!(a.exit_within(LONG), Some(0));
    common::wait_until(LONG, "the idle server's end", || {
        common::has_ended(server).then_some(())
    });
}

/// A server nobody is attached to, with a terminal still running, ends by itself once its
/// folder is removed (a temporary folder cleaned up): nobody can reach that work any more.
/// Removing a folder whole does not always reach the watcher as an event; the server looks.
#[test]
fn a_server_whose_folder_is_removed_ends_though_a_terminal_lives() {
    let (folder, runtime) = common::tiny_folder();
    let mut a = agent(folder.path(), runtime.path());
    let server = common::server_pid(runtime.path());
    a.call(2, "open_terminal", json!({"command": ["cat"]}));
    drop(a.stdin.take());
    assert_eq!(a.exit_within(LONG), Some(0));
    assert!(
        !common::has_ended(server),
        "the terminal lives: the server stays"
    );
    std::fs::remove_dir_all(folder.path()).unwrap();
    common::wait_until(LONG, "the server of a removed folder to end", || {
        common::has_ended(server).then_some(())
    });
}

/// What `ps`, `top` and `pgrep` call process `pid` (`/proc/PID/comm`).
fn process_name(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap()
        .trim_end()
        .to_string()
}

/// A server a front end started is the binary re-executed through `/proc/self/exe`, which
/// the kernel names `exe`: it is named `flowdeck` all the same, so that `pgrep -x flowdeck`
/// finds it. Its session watchdog, the binary re-executed the same way, is named as what it
/// is, so that it is not taken for a server (nor ended with one by `pkill -x flowdeck`).
#[test]
fn a_server_a_front_end_started_is_named_flowdeck_and_its_watchdog_says_what_it_is() {
    let (folder, runtime) = common::tiny_folder();
    let mut a = agent(folder.path(), runtime.path());
    let server = common::background_server_of(folder.path());
    assert_eq!(process_name(server), "flowdeck");
    let found = Command::new("pgrep")
        .args(["-x", "flowdeck"])
        .output()
        .unwrap();
    let found = String::from_utf8_lossy(&found.stdout);
    assert!(
        found.lines().any(|pid| pid == server.to_string()),
        "pgrep -x flowdeck found {found:?}, not the server {server}"
    );

    // The first terminal starts the watchdog, the server's child.
    let opened = a.call(2, "open_terminal", json!({"command": ["cat"]}));
    let watchdog = common::wait_until(LONG, "the server's session watchdog", || {
        std::fs::read_dir("/proc")
            .ok()?
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .find(|pid| {
                let child = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                    s.rsplit(')').next().and_then(|r| r.split(' ').nth(2))
                        == Some(&server.to_string())
                });
                child
                    && std::fs::read(format!("/proc/{pid}/cmdline"))
                        .is_ok_and(|c| String::from_utf8_lossy(&c).contains("__flowdeck-watchdog"))
            })
    });
    // Named as its main starts: until then (just after its exec) the kernel calls it `exe`.
    common::wait_until(LONG, "the watchdog named flowdeck-watchd", || {
        (process_name(watchdog) == "flowdeck-watchd").then_some(())
    });
    a.call(
        3,
        "exit_terminal",
        json!({"session_id": opened["session_id"]}),
    );
    drop(a.stdin.take());
    assert_eq!(a.exit_within(LONG), Some(0));
}
