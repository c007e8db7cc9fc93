//! Finding and ending every process a session started.
//!
//! A session's processes are not just its process group: an interactive shell puts each
//! background job in a group of its own, `nohup` ignores SIGHUP, and a daemon calls
//! `setsid` and leaves the session. So a process belongs to a session if it is in the
//! session's kernel session (portable-pty makes the child a session leader) or carries the
//! session's `FLOWDECK_SESSION` marker in its environment, which every descendant inherits.
//! flowdeck also makes itself a child subreaper, so orphans of its sessions are re-parented
//! to it rather than to init, and it can reap them instead of leaving zombies.

use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// The environment variable that marks a session's processes.
pub const MARKER_VAR: &str = "FLOWDECK_SESSION";

/// One process as `/proc/PID/stat` describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcInfo {
    pub pid: i32,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    /// The controlling terminal's device number (`tty_nr`); 0 when it has none.
    pub tty: i32,
    pub zombie: bool,
}

/// Reads `/proc/PID/stat`. `None` when the process is gone.
pub fn proc_info(pid: i32) -> Option<ProcInfo> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may itself hold spaces and parentheses.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    let tty = fields.next()?.parse().ok()?;
    Some(ProcInfo {
        pid,
        ppid,
        pgrp,
        session,
        tty,
        zombie: state == "Z" || state == "X",
    })
}

/// A process and each of its parents up to (not including) init, as `/proc` says now.
pub fn ancestry(pid: i32) -> impl Iterator<Item = ProcInfo> {
    // A loop in what /proc says (pids reused mid-walk) must not hang the walk.
    const MAX_DEPTH: usize = 1024;
    std::iter::successors(proc_info(pid), |p| {
        (p.ppid > 1).then(|| proc_info(p.ppid)).flatten()
    })
    .take(MAX_DEPTH)
}

/// The command name of a process (`/proc/PID/comm`).
pub fn program_name(pid: i32) -> Option<String> {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(comm.trim_end().to_string())
}

fn all_pids() -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// Whether a process was started inside a flowdeck session (of any flowdeck process): its
/// environment, as it was when it started, carries a session marker. A process cannot take
/// this back from its own `/proc` entry by unsetting the variable later, but its children
/// can be started without it.
pub fn carries_any_marker(pid: i32) -> bool {
    let marker = format!("{MARKER_VAR}=");
    has_env_entry(pid, |e| e.starts_with(marker.as_bytes()))
}

/// Whether a process's environment has an entry for which `matches` holds.
fn has_env_entry(pid: i32, matches: impl Fn(&[u8]) -> bool) -> bool {
    match std::fs::read(format!("/proc/{pid}/environ")) {
        Ok(environ) => environ.split(|&b| b == 0).any(matches),
        Err(_) => false,
    }
}

/// Live (not zombie) processes other than this one for which `belongs` holds.
fn live_processes(belongs: impl Fn(&ProcInfo) -> bool) -> Vec<ProcInfo> {
    let own = std::process::id() as i32;
    all_pids()
        .into_iter()
        .filter(|&pid| pid != own)
        .filter_map(proc_info)
        .filter(|p| !p.zombie && belongs(p))
        .collect()
}

/// Live (not zombie) processes that belong to a session: in the kernel session of `leader`
/// (while it lives; once it has been reaped its pid, and so its session id, may belong to
/// someone else) or carrying the session's marker.
pub fn session_processes(leader: Option<i32>, marker: &str) -> Vec<ProcInfo> {
    let marker = format!("{MARKER_VAR}={marker}");
    live_processes(|p| {
        Some(p.session) == leader || has_env_entry(p.pid, |e| e == marker.as_bytes())
    })
}

/// What a teardown did.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Teardown {
    /// Processes that were running when the teardown began.
    pub processes: usize,
    /// Processes that outlived SIGHUP and SIGTERM and the grace period and were killed.
    pub killed: usize,
    /// Processes still alive at the end (should be zero; nonzero means something escaped).
    pub survivors: usize,
}

/// Ends every process of a session: SIGHUP and SIGTERM, then SIGKILL for whatever is left
/// after `grace`. Blocking; run it off the async runtime.
pub fn terminate(leader: Option<i32>, marker: &str, grace: Duration) -> Teardown {
    terminate_all(|| session_processes(leader, marker), grace)
}

/// Ends every process `find` finds (and keeps finding, for anything forked meanwhile):
/// SIGHUP and SIGTERM, then SIGKILL for whatever is left after `grace`. Blocking.
pub fn terminate_all(find: impl Fn() -> Vec<ProcInfo>, grace: Duration) -> Teardown {
    let mut report = Teardown::default();
    let first = find();
    report.processes = first.len();
    if first.is_empty() {
        return report;
    }
    // SIGHUP first: it is what a closing terminal sends, and an interactive shell (which
    // ignores SIGTERM) exits on it and passes it on to its jobs.
    signal_all(&first, Signal::SIGHUP);
    signal_all(&first, Signal::SIGTERM);
    // Stopped jobs (Ctrl-Z) handle the signals above only once continued.
    signal_all(&first, Signal::SIGCONT);
    let deadline = Instant::now() + grace;
    let mut left = first;
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
        left = find();
        // Processes forked during the teardown get the same treatment.
        signal_all(&left, Signal::SIGTERM);
    }
    // Whatever is left is killed; repeat a few times for anything forked meanwhile.
    for _ in 0..50 {
        if left.is_empty() {
            break;
        }
        report.killed += left.len();
        signal_all(&left, Signal::SIGKILL);
        std::thread::sleep(Duration::from_millis(2));
        left = find();
    }
    report.survivors = left.len();
    report
}

/// Live processes of every session a flowdeck process opened: those carrying a marker that
/// starts with `prefix` (`<pid>-`), and those in the kernel session of one of `leaders` while
/// that leader still carries such a marker (its pid, and so its session id, is then still
/// ours). How the watchdog finds what a killed flowdeck left behind.
pub fn processes_of(prefix: &str, leaders: &HashSet<i32>) -> Vec<ProcInfo> {
    let marker = format!("{MARKER_VAR}={prefix}");
    let marked = |pid: i32| has_env_entry(pid, |e| e.starts_with(marker.as_bytes()));
    let sessions: HashSet<i32> = leaders.iter().copied().filter(|&l| marked(l)).collect();
    live_processes(|p| sessions.contains(&p.session) || marked(p.pid))
}

/// Ends one process group (a cancelled step's job): SIGINT, as Ctrl-C would, then SIGTERM,
/// then SIGKILL if it is still there after `grace`. Blocking. Returns whether it had to kill.
pub fn end_group(pgid: i32, grace: Duration) -> bool {
    if pgid <= 1 {
        return false;
    }
    let group = Pid::from_raw(pgid);
    let alive = || nix::sys::signal::killpg(group, None).is_ok();
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGCONT] {
        let _ = nix::sys::signal::killpg(group, signal);
    }
    let deadline = Instant::now() + grace;
    while alive() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    if alive() {
        let _ = nix::sys::signal::killpg(group, Signal::SIGKILL);
        return true;
    }
    false
}

fn signal_all(processes: &[ProcInfo], signal: Signal) {
    for p in processes {
        // ESRCH (already gone) is the outcome we want.
        let _ = kill(Pid::from_raw(p.pid), signal);
    }
}

/// Makes this process the reaper of its descendants' orphans (Linux), so a daemon forked in
/// a session ends up as flowdeck's child and can be reaped when the session closes.
pub fn adopt_orphans() {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
            tracing::debug!("cannot become a child subreaper: {e}");
        }
    }
}

/// Reaps zombie children of this process that are not in `keep` (the leaders whose own
/// waiter threads reap them). These are orphans adopted from closed or running sessions.
/// A child in this process's own session is one this process started itself (`tmux` for
/// the clipboard, the folder's server, a test's `flowdeck mcp`): whoever started it waits
/// for its exit status, which reaping it here would take away (`ECHILD`).
pub fn reap_adopted(keep: &HashSet<i32>) -> usize {
    let own = std::process::id() as i32;
    let own_session = proc_info(own).map(|me| me.session);
    let mut reaped = 0;
    for info in all_pids().into_iter().filter_map(proc_info) {
        if info.ppid != own
            || !info.zombie
            || keep.contains(&info.pid)
            || Some(info.session) == own_session
        {
            continue;
        }
        // ECHILD: someone else reaped it first, which is as good.
        if waitpid(Pid::from_raw(info.pid), Some(WaitPidFlag::WNOHANG)).is_ok() {
            reaped += 1;
        }
    }
    reaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_its_own_stat() {
        let me = proc_info(std::process::id() as i32).unwrap();
        assert!(!me.zombie);
        assert!(me.ppid > 0);
        assert!(program_name(std::process::id() as i32).is_some());
        assert_eq!(proc_info(i32::MAX), None);
    }
}
