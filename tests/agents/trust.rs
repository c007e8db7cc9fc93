//! The folder's server talks only to its owner, as an attacker tries it (issue 35): another
//! user (`nobody`, switched to as root) plants a folder and a socket where the front ends look,
//! or listens on a socket in the owner's folder; every front end (`flowdeck mcp`, `flowdeck
//! run`, the studio, `flowdeck approve`) refuses it with the path and its owner and sends it
//! nothing. One server per workflows folder whatever socket folder each process has; a
//! relayed agent's filters only narrow the host's; a front end always ends on a signal.

#![allow(clippy::unwrap_used)]

use crate::common;
use common::{Killed, LONG, wait_until};
use serde_json::json;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A listener that is not the owner's flowdeck: it answers every connection with a forged
/// welcome and an MCP answer, and appends how many bytes each connection sent it to its log.
/// `dir` mode: made by `nobody`, with its folder. `listener` mode: the socket bound by the
/// owner in the owner's folder, then listened on as `nobody`.
const IMPOSTOR: &str = r#"
import os, socket, sys, threading
mode, path, log = sys.argv[1], sys.argv[2], sys.argv[3]
if mode == "dir":
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    os.chmod(os.path.dirname(path), 0o755)
s = socket.socket(socket.AF_UNIX)
s.bind(path)
os.chmod(path, 0o777)
if mode == "listener":
    os.setgid(65534); os.setuid(65534)
s.listen(64)
print("listening", flush=True)
def serve(c):
    c.settimeout(3)
    try:
        c.sendall(b'{"flowdeck":{"protocol":1,"version":"0.1.0","pid":1}}\n{"jsonrpc":"2.0","id":1,"result":{"serverInfo":{"name":"IMPOSTOR"}}}\n')
        while True:
            data = c.recv(65536)
            with open(log, "a") as f:
                f.write("%d\n" % len(data))
            if not data:
                break
    except Exception:
        pass
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"#;

/// Whether this test may switch to another user (it runs as root in CI).
fn can_switch_users() -> bool {
    if rustix::process::getuid().is_root() {
        return true;
    }
    println!("SKIP: planting another user's socket needs root to switch users");
    false
}

/// Starts the impostor and returns once it listens; killed when dropped.
fn impostor(mode: &str, socket: &Path, log: &Path, as_nobody: bool) -> Killed {
    let mut command = Command::new("python3");
    command
        .args(["-c", IMPOSTOR, mode])
        .arg(socket)
        .arg(log)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if as_nobody {
        command.uid(65534).gid(65534);
    }
    let mut child = command.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "listening", "the impostor did not start");
    Killed(child)
}

/// A front end of `args`, with `env`, run to its end (with `stdin` written to it); its exit
/// code and stderr.
fn front_end(folder: &Path, args: &[&str], env: &[(&str, &Path)], stdin: &str) -> (i32, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_flowdeck"));
    command
        .arg("--workflows")
        .arg(folder)
        .args(args)
        .env_remove("XDG_RUNTIME_DIR")
        .envs(env.iter().map(|(k, v)| (k, v.as_os_str())))
        .env("SHELL", "/bin/bash")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    let pid = child.id();
    let status = wait_until(LONG, &format!("flowdeck {args:?} to end"), || {
        child.try_wait().unwrap()
    });
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let code = status
        .code()
        .unwrap_or_else(|| panic!("{pid} killed: {err}"));
    (code, err)
}

/// What every connection to the impostor sent it, in bytes.
fn bytes_received(log: &Path) -> u64 {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse::<u64>().ok())
        .sum()
}

/// Every front end, refused at `socket`'s folder or socket: exit status, the path and the
/// owner named, and nothing sent.
fn every_front_end_refuses(
    folder: &Path,
    env: &[(&str, &Path)],
    named: &Path,
    owner: &str,
    log: &Path,
) {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "victim", "version": "1"}}});
    let cases: [(&[&str], String); 4] = [
        (&["mcp"], format!("{initialize}\n")),
        (&["run", "tiny", "-i", "password=hunter2"], String::new()),
        (&["tui"], String::new()),
        (&["approve", "tiny"], String::new()),
    ];
    for (args, stdin) in cases {
        let (code, err) = front_end(folder, args, env, &stdin);
        assert_ne!(code, 0, "flowdeck {args:?} went on: {err}");
        for part in [&named.display().to_string(), owner, "XDG_RUNTIME_DIR"] {
            assert!(
                err.contains(part),
                "flowdeck {args:?} does not name {part}: {err}"
            );
        }
        assert!(!err.contains("IMPOSTOR"), "{err}");
    }
    assert_eq!(
        bytes_received(log),
        0,
        "the impostor received what was sent"
    );
}

#[test]
fn an_impostor_in_a_socket_folder_another_user_made_receives_nothing_from_any_front_end() {
    if !can_switch_users() {
        return;
    }
    let (folder, _) = common::tiny_folder();
    // The shared temporary folder, as /tmp is: anyone may make a folder in it.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let me = rustix::process::getuid().as_raw();
    let dir = tmp.path().join(format!("flowdeck-{me}"));
    let socket = flowdeck::server::socket::socket_path_in(&dir, folder.path()).unwrap();
    let log = tmp.path().join("received.log");
    let _impostor = impostor("dir", &socket, &log, true);
    every_front_end_refuses(
        folder.path(),
        &[("TMPDIR", tmp.path())],
        &dir,
        "nobody",
        &log,
    );
}

#[test]
fn a_listener_of_another_user_in_the_owners_folder_receives_nothing_from_any_front_end() {
    if !can_switch_users() {
        return;
    }
    let (folder, runtime) = common::tiny_folder();
    let dir = runtime.path().join("flowdeck");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let socket = flowdeck::server::socket::socket_path_in(&dir, folder.path()).unwrap();
    let logs = tempfile::tempdir().unwrap();
    std::fs::set_permissions(logs.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let log = logs.path().join("received.log");
    // Bound by the owner (the socket file is theirs), listened on by `nobody`: only the
    // listener's credentials tell.
    let _impostor = impostor("listener", &socket, &log, false);
    every_front_end_refuses(
        folder.path(),
        &[("XDG_RUNTIME_DIR", runtime.path())],
        &socket,
        "nobody",
        &log,
    );
}

/// `flowdeck serve` on `folder` with its sockets under `runtime`, run to its end if it does
/// not serve within a deadline: its exit code and stderr.
fn refused_serve(folder: &Path, runtime: &Path) -> (i32, String) {
    front_end(folder, &["serve"], &[("XDG_RUNTIME_DIR", runtime)], "")
}

#[test]
fn a_second_server_of_a_folder_is_refused_under_another_socket_folder_and_front_ends_find_the_first()
 {
    let (folder, runtime) = common::tiny_folder();
    let host = Killed(common::serve_with(folder.path(), runtime.path(), &[]));
    let pid = host.0.id().to_string();
    // Another XDG_RUNTIME_DIR (cron, sudo): another socket path, the same folder.
    let other = tempfile::tempdir().unwrap();
    let (code, err) = refused_serve(folder.path(), other.path());
    assert_ne!(code, 0, "a second server started: {err}");
    assert!(
        err.contains("already served") && err.contains(&pid),
        "the live server is not named: {err}"
    );
    // A front end with that other socket folder reaches the live server through its record.
    let mut agent = common::mcp_agent(folder.path(), other.path(), &[]);
    let opened = agent.call(2, "open_terminal", json!({"command": ["bash", "--norc"]}));
    let session = opened["session_id"].as_str().unwrap().to_string();
    let mut same = common::mcp_agent(folder.path(), runtime.path(), &[]);
    let listed = same.call(2, "list_terminal_sessions", json!({}));
    assert!(
        listed.to_string().contains(&session),
        "two engines: {listed}"
    );
    // Its socket file removed (a /tmp cleaner): a second server is still refused.
    let socket = std::fs::read_dir(runtime.path().join("flowdeck"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "sock"))
        .unwrap();
    std::fs::remove_file(&socket).unwrap();
    let (code, err) = refused_serve(folder.path(), runtime.path());
    assert_ne!(
        code, 0,
        "a second server started once the socket was gone: {err}"
    );
    assert!(err.contains(&pid), "{err}");
    // And the live server makes its socket again: a new front end reaches the same engine.
    let mut later = common::mcp_agent(folder.path(), runtime.path(), &[]);
    let listed = later.call(2, "list_terminal_sessions", json!({}));
    assert!(
        listed.to_string().contains(&session),
        "two engines: {listed}"
    );
}

#[test]
fn flowdeck_run_against_a_stopped_server_ends_at_once_on_sigterm() {
    let (folder, runtime) = common::tiny_folder();
    let host = Killed(common::serve_with(folder.path(), runtime.path(), &[]));
    let server = nix::unistd::Pid::from_raw(host.0.id() as i32);
    nix::sys::signal::kill(server, nix::sys::signal::Signal::SIGSTOP).unwrap();
    let mut run = Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(folder.path())
        .args(["run", "tiny"])
        .env("XDG_RUNTIME_DIR", runtime.path())
        .env("FLOWDECK_LOG", "flowdeck=debug")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once it has connected and waits for the server's answer (its stderr read by a thread,
    // so that the wait has a deadline).
    let err = BufReader::new(run.stderr.take().unwrap());
    let (lines, said) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in err.lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                return;
            }
        }
    });
    let mut told = String::new();
    while !told.contains("greeting it") {
        match said.recv_timeout(LONG) {
            Ok(line) => told.push_str(&line),
            Err(e) => panic!("flowdeck run never waited for the server ({e:?}): {told}"),
        }
    }
    let signalled = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(run.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    // Far below the 10 s it would otherwise wait for the server's answer.
    let status = wait_until(
        Duration::from_secs(5),
        "flowdeck run to end on SIGTERM",
        || run.try_wait().unwrap(),
    );
    let waited = signalled.elapsed();
    // The thread ends with the process's stderr.
    let rest: String = said.iter().collect::<Vec<_>>().join("\n");
    assert_ne!(status.code(), Some(0), "{rest}");
    assert!(
        rest.contains("SIGTERM") && rest.contains("no run was started"),
        "it does not say what it waited for: {rest}"
    );
    println!("flowdeck run ended {waited:?} after SIGTERM");
    nix::sys::signal::kill(server, nix::sys::signal::Signal::SIGCONT).unwrap();
}

/// A folder of three runnable workflows for the filter test.
fn filtered_folder() -> (tempfile::TempDir, tempfile::TempDir) {
    let (folder, runtime) = common::tiny_folder();
    for name in ["keep_a", "keep_b", "hidden"] {
        let manifest = common::TINY.replace("name: tiny", &format!("name: {name}"));
        std::fs::write(folder.path().join(format!("{name}.yaml")), manifest).unwrap();
    }
    (folder, runtime)
}

#[test]
fn a_relayed_agents_dynamic_filter_only_narrows_the_hosts() {
    let (folder, runtime) = filtered_folder();
    let _host = Killed(common::serve_with(
        folder.path(),
        runtime.path(),
        &[
            "--toolsets",
            "dynamic,authoring",
            "--dynamic-filter",
            "keep_*",
        ],
    ));
    let mut agent = common::mcp_agent(
        folder.path(),
        runtime.path(),
        &["--toolsets", "dynamic,authoring", "--dynamic-filter", "*"],
    );
    let listed = agent.request(2, "tools/list", json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .filter(|n| n.starts_with("wf_"))
        .collect();
    assert_eq!(names, ["wf_keep_a", "wf_keep_b"], "{listed}");
    let hidden = agent.request(
        3,
        "tools/call",
        json!({"name": "wf_hidden", "arguments": {}}),
    );
    assert!(
        hidden.get("error").is_some() || hidden["result"]["isError"] == true,
        "a tool the host does not offer ran: {hidden}"
    );
    let narrower = common::mcp_agent(
        folder.path(),
        runtime.path(),
        &["--toolsets", "dynamic", "--dynamic-filter", "*_b"],
    );
    let mut narrower = narrower;
    let listed = narrower.request(2, "tools/list", json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["wf_keep_b"], "{listed}");
}

/// A host that is the owner's, welcomes, answers `initialize` and then keeps the connection
/// open whatever its client does.
const KEEPS_OPEN: &str = r#"
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(4)
print("listening", flush=True)
c, _ = s.accept()
f = c.makefile("rb")
f.readline()
c.sendall(b'{"flowdeck":{"protocol":1,"version":"%s","pid":1}}\n' % sys.argv[2].encode())
f.readline()
c.sendall(b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"kept","version":"1"}}}\n')
time.sleep(600)
"#;

#[test]
fn a_relay_ends_once_its_agent_closed_stdin_and_its_answers_were_written() {
    let (folder, runtime) = common::tiny_folder();
    let dir = runtime.path().join("flowdeck");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let socket: PathBuf = flowdeck::server::socket::socket_path_in(&dir, folder.path()).unwrap();
    let mut host = Command::new("python3")
        .args(["-c", KEEPS_OPEN])
        .arg(&socket)
        .arg(flowdeck::server::hello::version())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(host.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _host = Killed(host);
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "agent", "version": "1"}}});
    let mut relay = Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(folder.path())
        .arg("mcp")
        .env("XDG_RUNTIME_DIR", runtime.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The request, then stdin closed at once: its answer is still owed, and written.
    relay
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{initialize}\n").as_bytes())
        .unwrap();
    let status = wait_until(LONG, "the relay to end after its agent left", || {
        relay.try_wait().unwrap()
    });
    let mut out = String::new();
    relay
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(
        out.contains("\"kept\""),
        "the owed answer was not written: {out}"
    );
    assert_eq!(status.code(), Some(0));
}

#[test]
fn a_port_http_cannot_take_is_said_by_flowdeck_mcp_and_refused_by_flowdeck_serve() {
    let (folder, runtime) = common::tiny_folder();
    // Another program holds the port first, as a squatter would.
    let squatter = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = squatter.local_addr().unwrap().to_string();
    let (code, err) = front_end(
        folder.path(),
        &["serve", "--http", &addr],
        &[("XDG_RUNTIME_DIR", runtime.path())],
        "",
    );
    assert_ne!(code, 0, "flowdeck serve started without its port: {err}");
    assert!(err.contains(&addr), "{err}");
    // The background server an agent's relay starts serves its socket and says why not HTTP,
    // on the relay's stderr, where agent hosts log it.
    let mut agent = common::mcp_agent_with(
        folder.path(),
        runtime.path(),
        &[],
        &[("FLOWDECK_HTTP", &addr)],
    );
    let listed = agent.call(2, "list_terminal_sessions", json!({}));
    assert!(listed.get("sessions").is_some(), "{listed}");
    drop(agent.stdin.take());
    assert_eq!(agent.exit_status(), Some(0));
    let mut said = String::new();
    agent
        .child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut said)
        .unwrap();
    assert!(
        said.contains("cannot serve MCP over HTTP on 127.0.0.1") && said.contains(&addr),
        "flowdeck mcp does not say it: {said}"
    );
    let server = common::background_server_of(folder.path());
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(server as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
}
