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
    terminate(&state)?;
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

/// SIGTERM to the server, once its process is found to be this user's.
fn terminate(state: &State) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let Ok(pid) = i32::try_from(state.pid) else {
        bail!("the server reported process {}: not a process", state.pid);
    };
    if pid <= 1 || state.pid == std::process::id() {
        bail!("the server reported process {pid}: flowdeck will not signal it");
    }
    let me = rustix::process::getuid().as_raw();
    match std::fs::metadata(format!("/proc/{pid}")) {
        Ok(meta) if meta.uid() == me => {}
        Ok(meta) => bail!(
            "the server reported process {pid}, which runs as uid {}, not as you: nothing was signalled",
            meta.uid()
        ),
        Err(e) => bail!("the server reported process {pid}, which cannot be looked at: {e}"),
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGTERM,
    )
    .map_err(|e| anyhow::anyhow!("cannot signal the server (process {pid}): {e}"))
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
