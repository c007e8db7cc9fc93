//! `flowdeck stop [DIR]`: ends a folder's server as SIGTERM does (its runs canceled and
//! journaled, its terminals closed), after asking a person at a terminal when it holds
//! anything. The process signalled is the one the server says it is over its socket, once
//! connect.rs has checked that socket, and only when the kernel agrees (the socket's
//! listener, status.rs) and the process is this user's: never a pid read from a file.

use super::ls::{self, describe, held};
use crate::server::status::{self, State};
use crate::workflow::names::sanitize;
use anyhow::{Result, bail};
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// How long the server has to end once signalled: its runs get 5 s to record their end and
/// its terminals' processes 2 s more to go.
pub(super) const DEADLINE: Duration = Duration::from_secs(10);

/// `flowdeck stop`'s arguments.
#[derive(Debug, clap::Args)]
pub struct StopArgs {
    /// The workflows folder whose server to stop [default: the workflows folder]
    #[arg(value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Stop it without asking, even when it holds terminals or runs (for scripts)
    #[arg(long, short = 'y')]
    yes: bool,
}

/// `flowdeck stop --help`'s examples.
pub(super) const EXAMPLES: &str = "Examples:
  flowdeck stop                       the server of ./workflows (asks first if it holds anything)
  flowdeck stop ~/src/app/workflows   another folder's
  flowdeck stop --yes                 in a script: no question, whatever it holds

Exit status: 0 stopped; 1 nothing stopped (no server for the folder, the answer was no, or it
did not end within 10 s); 2 it could not be asked (it holds something and there is no
terminal to ask at without --yes, or its socket is not trusted).";

pub(super) fn stop(folder: &Path, args: &StopArgs, out: &mut impl Write) -> Result<ExitCode> {
    let folder = args.dir.as_deref().unwrap_or(folder);
    let shown = sanitize(&folder.display().to_string());
    let runtime = super::runtime()?;
    let asked = runtime
        .block_on(async { tokio::time::timeout(ls::DEADLINE, status::of_folder(folder)).await });
    runtime.shutdown_timeout(Duration::from_millis(200));
    let Ok(asked) = asked else {
        bail!(
            "the flowdeck server of {shown} did not say what it holds within {} s (stopped with Ctrl-Z, or wedged): nothing was signalled",
            ls::DEADLINE.as_secs()
        );
    };
    let Some(state) = asked? else {
        eprintln!("flowdeck: no flowdeck server serves {shown}");
        return Ok(ExitCode::from(1));
    };
    // Held from now on: whatever the person takes to answer, the signal goes to this
    // process, never to one that took its number after it ended.
    let server = pinned(&state)?;
    if state.holds_anything() && !args.yes {
        if !std::io::stdin().is_terminal() {
            eprintln!(
                "flowdeck: the server of {shown} holds {}: stopping it ends them. There is no terminal to ask at: `flowdeck stop --yes` stops it anyway",
                held(&state)
            );
            return Ok(ExitCode::from(2));
        }
        if !confirmed(&state)? {
            eprintln!("flowdeck: left running");
            return Ok(ExitCode::from(1));
        }
    }
    rustix::process::pidfd_send_signal(&server, rustix::process::Signal::TERM)
        .map_err(|e| anyhow::anyhow!("cannot signal the server (process {}): {e}", state.pid))?;
    if gone_within(state.pid, DEADLINE) {
        writeln!(
            out,
            "stopped the flowdeck server of {} (process {}): {}",
            sanitize(&state.folder.display().to_string()),
            state.pid,
            ended(&state)
        )?;
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!(
            "flowdeck: the server of {shown} (process {}) has not ended within {} s; `kill -9 {}` ends it at once (its runs then end as interrupted)",
            state.pid,
            DEADLINE.as_secs(),
            state.pid
        );
        Ok(ExitCode::from(1))
    }
}

/// Shows what the server holds and asks; yes only for `y` or `yes`.
fn confirmed(state: &State) -> Result<bool> {
    let mut told = Vec::new();
    describe(state, &mut told)?;
    let mut err = std::io::stderr().lock();
    err.write_all(&told)?;
    write!(err, "Stop it, ending its terminals and runs? [y/N] ")?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// The server's process, held by a pidfd, once it is found to be this user's (the pid was
/// matched with the socket's `SO_PEERCRED` by status.rs).
fn pinned(state: &State) -> Result<std::os::fd::OwnedFd> {
    use std::os::unix::fs::MetadataExt;
    let Some(pid) = i32::try_from(state.pid)
        .ok()
        .filter(|&pid| pid > 1 && state.pid != std::process::id())
        .and_then(rustix::process::Pid::from_raw)
    else {
        bail!(
            "the server reported process {}: flowdeck will not signal it",
            state.pid
        );
    };
    let server = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty())
        .map_err(|e| anyhow::anyhow!("the server's process {} cannot be held: {e}", state.pid))?;
    let me = rustix::process::getuid().as_raw();
    match std::fs::metadata(format!("/proc/{}", state.pid)) {
        Ok(meta) if meta.uid() == me => Ok(server),
        Ok(meta) => bail!(
            "the server reported process {}, which runs as uid {}, not as you: nothing was signalled",
            state.pid,
            meta.uid()
        ),
        Err(e) => bail!(
            "the server reported process {}, which cannot be looked at: {e}",
            state.pid
        ),
    }
}

/// Whether process `pid` has ended by `deadline`: gone, or a zombie its parent has not
/// reaped whose every thread has ended (its first thread is a zombie while the others are
/// still ending).
fn gone_within(pid: u32, deadline: Duration) -> bool {
    let end = Instant::now() + deadline;
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
        let ended = stat.map_or(true, |stat| {
            let zombie = stat
                .rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with(['Z', 'X']));
            let threads = std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, Iterator::count);
            zombie && threads <= 1
        });
        if ended {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        // Another process's end has nothing to wait on here but its /proc entry.
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What stopping it ended: `1 run canceled, 2 terminals closed`, or `it held nothing`.
fn ended(state: &State) -> String {
    if !state.holds_anything() {
        return "it held nothing".into();
    }
    let runs = state.runs.len();
    let terminals = state.terminals.len();
    format!(
        "{} canceled, {} closed",
        super::words::count(runs, "run", "runs"),
        super::words::count(terminals, "terminal", "terminals")
    )
}
