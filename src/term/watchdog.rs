//! The watchdog: a small process that outlives flowdeck to end its sessions' processes when
//! flowdeck dies without closing them (`kill -9`, an OOM kill, a crash).
//!
//! A flowdeck that ends any other way closes its sessions itself. One that is killed cannot,
//! and its sessions' shells, background jobs and daemons would live on, re-parented to init.
//! No kernel mechanism covers all of them: `PR_SET_PDEATHSIG` reaches only a direct child and
//! fires when the *thread* that spawned it ends; a cgroup needs delegation that a user's
//! shell rarely has. So flowdeck starts this watchdog (its own binary, re-executed with
//! [`ARG`]) in a process group of its own, holding the read end of a pipe whose write end only
//! flowdeck has. When flowdeck ends, however it ends, the pipe reads end of file, and the
//! watchdog ends every process that carries the `FLOWDECK_SESSION=<flowdeck's pid>-` marker
//! or lives in the kernel session of a leader flowdeck told it about: SIGHUP and SIGTERM,
//! then SIGKILL after the grace period. Then it exits.

use super::processes;
use std::collections::HashSet;
use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// The first argument that makes the `flowdeck` binary a watchdog.
pub const ARG: &str = "__flowdeck-watchdog";

/// flowdeck's side: the pipe the watchdog reads.
#[derive(Debug)]
pub struct Watchdog {
    pipe: Mutex<ChildStdin>,
    pid: u32,
}

impl Watchdog {
    /// Starts a watchdog for this process's sessions. `program` is the flowdeck binary
    /// (normally `/proc/self/exe`).
    pub fn spawn(program: &std::path::Path, grace: Duration) -> std::io::Result<Watchdog> {
        let mut child = Command::new(program)
            .arg(ARG)
            .arg(format!("{}-", std::process::id()))
            .arg(grace.as_millis().to_string())
            .stdin(Stdio::piped())
            // Never flowdeck's stdout (the MCP protocol) or a terminal that may go away.
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Out of the terminal's foreground group: Ctrl-C and a hang-up are flowdeck's
            // to handle, and the watchdog must survive them to do its job.
            .process_group(0)
            .spawn()?;
        let pipe = child
            .stdin
            .take()
            .ok_or_else(|| std::io::Error::other("the watchdog has no input pipe"))?;
        Ok(Watchdog {
            pipe: Mutex::new(pipe),
            pid: child.id(),
        })
    }

    /// The watchdog's pid.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Tells the watchdog about a session leader, so that processes in its kernel session are
    /// ended even if they dropped the marker from their environment.
    pub fn track(&self, leader: u32) {
        self.tell(&format!("+{leader}\n"));
    }

    /// The leader's session is closed: its pid may be reused by someone else's process.
    pub fn untrack(&self, leader: u32) {
        self.tell(&format!("-{leader}\n"));
    }

    fn tell(&self, line: &str) {
        let mut pipe = self.pipe.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = pipe.write_all(line.as_bytes()) {
            tracing::warn!("the session watchdog is gone: {e}");
        }
    }
}

/// The watchdog process: `flowdeck __flowdeck-watchdog <pid>- <grace_ms>`, standard input the
/// pipe. Returns the exit status.
pub fn main(args: &[OsString]) -> i32 {
    // Signals that reach the whole group or session (a closing terminal, a Ctrl-C that
    // somehow gets here) must not stop the sweep. Blocked rather than ignored: the same
    // effect for a single-threaded process, without an unsafe signal handler.
    let mut blocked = nix::sys::signal::SigSet::empty();
    for signal in [
        nix::sys::signal::Signal::SIGHUP,
        nix::sys::signal::Signal::SIGINT,
        nix::sys::signal::Signal::SIGQUIT,
        nix::sys::signal::Signal::SIGTERM,
        nix::sys::signal::Signal::SIGPIPE,
    ] {
        blocked.add(signal);
    }
    let _ = blocked.thread_block();

    let (Some(prefix), Some(grace)) = (
        args.first().and_then(|a| a.to_str()),
        args.get(1)
            .and_then(|a| a.to_str())
            .and_then(|a| a.parse::<u64>().ok()),
    ) else {
        return 2;
    };
    // The prefix is a pid and a dash: anything else could match other processes' markers.
    let Some(pid) = prefix.strip_suffix('-') else {
        return 2;
    };
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return 2;
    }

    let mut leaders = HashSet::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if let Some(pid) = line.strip_prefix('+').and_then(|p| p.parse().ok()) {
            leaders.insert(pid);
        } else if let Some(pid) = line.strip_prefix('-').and_then(|p| p.parse::<i32>().ok()) {
            leaders.remove(&pid);
        }
    }
    // flowdeck is gone (or closed its end while exiting normally, when nothing is left).
    processes::terminate_all(
        || processes::processes_of(prefix, &leaders),
        Duration::from_millis(grace),
    );
    0
}
