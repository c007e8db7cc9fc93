//! Whether the process at the other end of a connection may answer approval requests.
//!
//! Approval mode exists so that an agent cannot run manifest content no person has seen. An
//! agent reaches flowdeck through MCP (no tool approves) and through the terminals flowdeck
//! opens for it, where it can type any command, including `flowdeck` itself: a studio or
//! `flowdeck approve` started there would be the agent approving its own run. So the right
//! to approve is the kernel's word, not the client's: the connecting process (its pid from
//! `SO_PEERCRED`) must
//! - have a controlling terminal (a person sits at one; an agent host's own shell tool
//!   usually runs commands without one),
//! - not have that terminal be one of this server's sessions,
//! - not descend from this server (which is the child subreaper of its sessions' processes,
//!   so a process that left a session by forking twice and calling `setsid` is re-parented to
//!   it and still found), and
//! - not descend from any process started inside a flowdeck session (the session's marker
//!   in the environment it started with, which a process cannot take back from its own
//!   `/proc` entry).
//!
//! What this does not stop (docs/ARCHITECTURE.md says so too): a process of the same user
//! can do anything the user can, so an agent with a shell of its own outside flowdeck that
//! gives it a terminal (for example one that can drive the person's tmux) can approve, and
//! any process can edit `approved.json`. Approval mode guards the paths flowdeck gives an
//! agent; agents that have more than that belong under another user or in a sandbox.

use crate::term::processes::{ancestry, carries_any_marker, proc_info};

/// `Ok` when process `pid` may answer approval requests, or why not (for a person to read).
/// `server` is the pid of the folder's server when one is up (`None` for a command that
/// approves with no server running), `session_ttys` the terminals of its sessions.
pub fn may_approve(
    pid: Option<u32>,
    server: Option<u32>,
    session_ttys: &[i32],
) -> Result<(), String> {
    let pid = pid
        .and_then(|p| i32::try_from(p).ok())
        .ok_or("the kernel did not say which process connected")?;
    let me = proc_info(pid).ok_or("the process that connected is gone")?;
    if me.tty == 0 {
        return Err(
            "it has no terminal: approving is for a person at a terminal (an agent's shell tool has none)"
                .into(),
        );
    }
    if session_ttys.contains(&me.tty) {
        return Err(
            "it runs in one of flowdeck's own terminals, which agents can type into".into(),
        );
    }
    let server = server.and_then(|p| i32::try_from(p).ok());
    for process in ancestry(me.pid) {
        if Some(process.pid) == server {
            return Err(
                "it was started from one of flowdeck's own terminals, which agents can type into"
                    .into(),
            );
        }
        if carries_any_marker(process.pid) {
            return Err(
                "it was started inside a flowdeck terminal, which agents can type into".into(),
            );
        }
    }
    Ok(())
}

/// Which terminal process `pid` reads from (its standard input), as `pts/3`: how people at
/// several studios are told apart. `process PID` when it reads from none.
pub fn terminal_name(pid: Option<u32>) -> String {
    let Some(pid) = pid else {
        return "an unknown process".into();
    };
    std::fs::read_link(format!("/proc/{pid}/fd/0"))
        .ok()
        .and_then(|path| {
            path.to_str()?
                .strip_prefix("/dev/")
                .filter(|name| name.starts_with("pts/") || name.starts_with("tty"))
                .map(str::to_string)
        })
        .unwrap_or_else(|| format!("process {pid}"))
}

/// The controlling terminals of processes `leaders` (the sessions' first processes).
pub fn ttys_of(leaders: &[i32]) -> Vec<i32> {
    leaders
        .iter()
        .filter_map(|&pid| proc_info(pid))
        .map(|p| p.tty)
        .filter(|&tty| tty != 0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_without_a_terminal_may_not_approve() {
        // `setsid` leaves the child without a controlling terminal, whatever ran the tests.
        let mut child = std::process::Command::new("setsid")
            .args(["sleep", "30"])
            .spawn()
            .expect("setsid runs");
        let pid = child.id();
        // The child leaves the test's terminal (if any) when `setsid` has run in it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let refused = loop {
            match may_approve(Some(pid), None, &[]) {
                Err(why) if why.contains("no terminal") => break true,
                _ if std::time::Instant::now() > deadline => break false,
                _ => std::thread::sleep(std::time::Duration::from_millis(5)),
            }
        };
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            refused,
            "a process with no terminal was not refused within 10 s"
        );
    }

    #[test]
    fn an_unknown_process_may_not_approve() {
        assert!(may_approve(None, None, &[]).is_err());
        assert!(may_approve(Some(u32::MAX), None, &[]).is_err());
    }
}
