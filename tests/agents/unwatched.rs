//! What nobody watches is closed, and the server says what happens (issue 37): a terminal an
//! agent opened, whose agent has gone and that nobody looks at, is listed by `flowdeck ls` as
//! abandoned and then closed after the configured time, while the terminal of an agent still
//! connected stays; `flowdeck serve` prints a line per event after its first. Real binary,
//! real servers, real agents over `flowdeck mcp`.

#![allow(clippy::unwrap_used)]

use crate::common;
use common::{LONG, wait_until};
use serde_json::{Value, json};
use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Instant;

/// `flowdeck ls --json` under `runtime`: the server of `dir` in it.
fn listed(dir: &Path, runtime: &Path) -> Value {
    common::listed_server(dir, runtime)
        .unwrap_or_else(|| panic!("no server of {} listed", dir.display()))
}

/// `flowdeck ls` as text.
fn ls_text(dir: &Path, runtime: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(dir)
        .arg("ls")
        .env("XDG_RUNTIME_DIR", runtime)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The terminal `session` as the server lists it, if it holds it.
fn terminal(server: &Value, session: &str) -> Option<Value> {
    server["terminals"]
        .as_array()?
        .iter()
        .find(|t| t["session_id"] == json!(session))
        .cloned()
}

/// The lines a child writes on stderr, as they come.
fn stderr_lines(child: &mut std::process::Child) -> mpsc::Receiver<String> {
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// Reads lines until one contains `part`, within [`LONG`]; fails with what was read.
fn line_with(lines: &mpsc::Receiver<String>, part: &str, seen: &mut Vec<String>) -> String {
    let end = Instant::now() + LONG;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => {
                seen.push(line.clone());
                if line.contains(part) {
                    return line;
                }
            }
            Err(_) => panic!(
                "no line with {part:?} within {LONG:?}; read:\n{}",
                seen.join("\n")
            ),
        }
    }
}

#[test]
fn a_gone_agents_terminal_is_listed_as_abandoned_then_closed_and_a_connected_ones_stays() {
    let (dir, runtime) = common::tiny_folder();
    let mut server = common::Killed(common::serve_with(
        dir.path(),
        runtime.path(),
        &["--close-abandoned-after", "3s"],
    ));
    let lines = stderr_lines(&mut server.0);
    let mut seen = Vec::new();
    let mut staying = common::mcp_agent(dir.path(), runtime.path(), &[]);
    let kept = staying.open_bash(2);
    let mut leaving = common::mcp_agent(dir.path(), runtime.path(), &[]);
    let left = leaving.open_bash(2);
    drop(leaving);
    line_with(&lines, "agent wire left; its terminal stays", &mut seen);

    let abandoned = wait_until(
        LONG,
        "ls to list the gone agent's terminal as abandoned",
        || {
            terminal(&listed(dir.path(), runtime.path()), &left)?["abandoned"]
                .as_object()
                .cloned()
        },
    );
    assert_eq!(abandoned["agent"], "wire", "{abandoned:?}");
    assert!(
        abandoned["closes_in_s"].as_u64().unwrap() <= 3,
        "{abandoned:?}"
    );
    let shown = ls_text(dir.path(), runtime.path());
    assert!(
        shown.contains("abandoned: 1 terminal of agent wire, who left; closed in"),
        "{shown}"
    );
    let server_now = listed(dir.path(), runtime.path());
    let connected = terminal(&server_now, &kept).unwrap();
    assert!(connected.get("abandoned").is_none(), "{connected}");

    // Closed once its time is up, and said so; the connected agent's terminal is still held.
    let closing = line_with(&lines, "closing terminal", &mut seen);
    assert!(
        closing.contains(&left) && closing.contains("agent wire"),
        "{closing}"
    );
    line_with(&lines, &format!("terminal {left} closed"), &mut seen);
    let after = listed(dir.path(), runtime.path());
    assert!(terminal(&after, &left).is_none(), "{after:#}");
    assert!(terminal(&after, &kept).is_some(), "{after:#}");
    // Written down with why.
    let audit = std::fs::read_to_string(dir.path().join(".flowdeck/audit.jsonl")).unwrap();
    let entry = audit
        .lines()
        .find(|l| l.contains("close_abandoned_terminal"))
        .unwrap_or_else(|| panic!("no audit line in {audit}"));
    assert!(
        entry.contains(&left) && entry.contains("nobody looked at it"),
        "{entry}"
    );
    // A tool call on the kept terminal still works: it was never closed.
    staying.call(3, "get_screen_content", json!({"session_id": kept}));
}

#[test]
fn serve_says_who_attaches_and_leaves_what_runs_and_why_it_stops() {
    let (dir, runtime) = common::tiny_folder();
    let mut server = common::Killed(common::serve_with(dir.path(), runtime.path(), &[]));
    let lines = stderr_lines(&mut server.0);
    let mut seen = Vec::new();
    line_with(&lines, "flowdeck: serving", &mut seen);
    let mut agent = common::mcp_agent(dir.path(), runtime.path(), &[]);
    line_with(&lines, "agent wire attached", &mut seen);
    let session = agent.open_bash(2);
    line_with(
        &lines,
        &format!("terminal {session} opened by agent wire"),
        &mut seen,
    );
    agent.call(3, "run_workflow", json!({"workflow_name": "tiny"}));
    line_with(&lines, "of tiny started by agent wire", &mut seen);
    let ended = line_with(&lines, "of tiny by agent wire ended", &mut seen);
    assert!(ended.contains("✓ completed"), "{ended}");
    drop(agent);
    line_with(&lines, "agent wire left; its terminal stays", &mut seen);
    // Each line after the first starts with the time.
    let timed = regex::Regex::new(r"^\d\d:\d\d:\d\d ").unwrap();
    assert!(
        seen.iter()
            .filter(|l| !l.starts_with("flowdeck:"))
            .all(|l| timed.is_match(l)),
        "{seen:#?}"
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(server.0.id()).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    line_with(&lines, &format!("terminal {session} closed"), &mut seen);
    line_with(&lines, "flowdeck: stopped (SIGTERM)", &mut seen);
}
