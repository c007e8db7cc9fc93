//! `flowdeck record NAME`: a shell in the person's own terminal, recorded as `asciinema rec`
//! does; when it exits, the workflow NAME drafted from what was done in it (term/deeds.rs,
//! workflow/draft.rs) is written into the folder, with the recording beside it.
//!
//! The shell runs on a PTY of flowdeck's (a term session, as the studio's panes do), so that
//! flowdeck sees what is typed at the prompt and into the programs it starts. The person's
//! terminal shows the session's output as it comes and answers its programs' queries
//! itself; their keys are typed into the session as they come.

use crate::engine::authoring::{NoDraft, draft_of};
use crate::engine::contract::MASK;
use crate::term::recording::{DEFAULT_CAP, RecordOptions};
use crate::term::session::is_posix_shell;
use crate::term::{OpenOptions, Program, Session, Size, TermConfig, Terminals};
use crate::workflow::credentials;
use crate::workflow::names::{display_safe, is_valid_name};
use anyhow::{Context, Result, bail};
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// What to record, and where it goes.
#[derive(Debug, Clone)]
pub struct RecordArgs {
    pub name: String,
    /// Replace a workflow file of that name.
    pub force: bool,
}

/// Who types, for the session's inputs.
const TYPIST: &str = "person";

pub fn record(folder: &Path, args: &RecordArgs) -> Result<ExitCode> {
    let name = &args.name;
    if !is_valid_name(name) {
        bail!(
            "{} is not a workflow name: lowercase letters, digits and _ only",
            display_safe(name)
        );
    }
    if !folder.is_dir() {
        bail!(
            "{} is not a folder: give the workflows folder with --workflows DIR",
            folder.display()
        );
    }
    // Refused before the shell starts, not after the procedure was done for nothing.
    let cast = folder.join(format!("{name}.cast"));
    let mut replaced = workflow_files(folder, name);
    replaced.extend(cast.exists().then(|| cast.clone()));
    if let Some(taken) = replaced.first()
        && !args.force
    {
        bail!(
            "{} exists: choose another name, or give --force to replace it",
            taken.display()
        );
    }
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        bail!("flowdeck record needs a terminal: it runs a shell for you to type in");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the runtime")?;
    let deeds = runtime.block_on(shell(name, &cast))?;
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    // Created meanwhile (another editor, an agent) and not to be replaced: kept, and the
    // draft takes a name of its own rather than clash with it.
    let name = match workflow_files(folder, name).is_empty() || args.force {
        true => name.clone(),
        false => free_name(folder, name),
    };
    let drafted = match draft_of(&name, "", deeds, &place()) {
        Ok(drafted) => drafted,
        Err(NoDraft::Nothing) => {
            let _ = std::fs::remove_file(&cast);
            eprintln!("flowdeck record: nothing was typed at the shell's prompt; no draft written");
            return Ok(ExitCode::from(1));
        }
        Err(NoDraft::Invalid(why)) => bail!("{why}"),
    };
    let file = format!("{name}.yaml");
    crate::store::files::write_atomic(folder, &file, drafted.content.as_bytes())
        .with_context(|| format!("writing {}", folder.join(&file).display()))?;
    // Replaced: a file of the name in another format would declare the name twice.
    for other in workflow_files(folder, &name) {
        if other.file_name().is_some_and(|f| f != file.as_str()) {
            std::fs::remove_file(&other)
                .with_context(|| format!("replacing {}", other.display()))?;
        }
    }
    let secrets = match drafted.secrets.as_slice() {
        [] => String::new(),
        names if drafted.lifted.is_empty() => format!(
            "; a run asks for {} (typed where the terminal hid it)",
            names.join(", ")
        ),
        names => format!(
            "; a run asks for {} (typed where the terminal hid it, or credentials lifted from command lines: {})",
            names.join(", "),
            drafted.lifted.join("; ")
        ),
    };
    eprintln!(
        "flowdeck record: wrote {} ({} commands{secrets}); its recording is {} (flowdeck replay {})",
        folder.join(&file).display(),
        drafted.commands,
        cast.display(),
        cast.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The workflow files named `name`, in any format.
fn workflow_files(folder: &Path, name: &str) -> Vec<PathBuf> {
    ["yaml", "yml", "json"]
        .iter()
        .map(|ext| folder.join(format!("{name}.{ext}")))
        .filter(|p| p.exists())
        .collect()
}

/// `NAME_draft`, or `NAME_draft_2` and on: a name no file has.
fn free_name(folder: &Path, name: &str) -> String {
    let base = format!("{name}_draft");
    let mut candidate = base.clone();
    let mut n = 2;
    while !workflow_files(folder, &candidate).is_empty() {
        candidate = format!("{base}_{n}");
        n += 1;
    }
    candidate
}

/// Runs the person's shell until it exits, recorded to `cast`; what was done in it.
async fn shell(name: &str, cast: &Path) -> Result<Vec<crate::term::deeds::Deed>> {
    let (cols, rows) = crossterm::terminal::size().unwrap_or((80, 24));
    let terminals = Terminals::new(TermConfig::default());
    // A shell that is not a POSIX one (fish, nu) tells nothing of what is done in it.
    let shell = match std::env::var("SHELL") {
        Ok(shell) if is_posix_shell(&shell) => None,
        Ok(other) => {
            eprintln!("flowdeck record: {other} is no POSIX shell; recording bash");
            Some("bash".to_string())
        }
        Err(_) => None,
    };
    let session = terminals
        .open(OpenOptions {
            program: Program::Shell(shell),
            env: vec![("FLOWDECK_RECORD".into(), name.to_string())],
            size: Size { cols, rows },
            name: Some(format!("record-{name}")),
            relayed: true,
            ..OpenOptions::default()
        })
        .context("starting your shell")?;
    let recording = session
        .record(RecordOptions {
            path: cast.to_path_buf(),
            title: format!("flowdeck record {name}"),
            secrets: Vec::new(),
            mask: MASK.to_string(),
            cap: DEFAULT_CAP,
            format: super::settings::recording_format_from_env()?.unwrap_or_default(),
        })
        .context("starting the recording")?;
    eprint!(
        "flowdeck record: recording {name}; leave the shell (exit, Ctrl-D) to write the draft\r\n"
    );
    let raw = Raw::take()?;
    let shown = show(&session);
    let typing = Typing::start(session.clone());
    let resizing = follow_size(session.clone());
    let ended = tokio::select! {
        () = exited(&session) => None,
        why = ended_from_outside() => Some(why),
    };
    if let Some(why) = &ended {
        // The draft is written all the same: nothing done is lost.
        let _ = terminals.close(session.id()).await;
        tracing::info!("flowdeck record {name}: {why}");
    }
    resizing.abort();
    typing.stop();
    let _ = tokio::task::spawn_blocking(move || shown.join()).await;
    drop(raw);
    // Credentials typed on command lines become the draft's secret arguments: the recording
    // beside it must not keep them either.
    let typed: Vec<String> = session
        .deeds()
        .unwrap_or_default()
        .iter()
        .flat_map(|deed| credentials::values_in(&deed.line))
        .collect();
    recording.mask(typed);
    let recorded = tokio::task::spawn_blocking(move || recording.finish())
        .await
        .context("finishing the recording")?;
    if let Some(error) = recorded.error {
        eprintln!("flowdeck record: the recording is incomplete: {error}");
    }
    let deeds = session.deeds().unwrap_or_default();
    terminals.close_all().await;
    Ok(deeds)
}

/// Writes what the session shows to this terminal until it ends.
fn show(session: &Arc<Session>) -> std::thread::JoinHandle<()> {
    let view = session.view();
    std::thread::spawn(move || {
        let mut out = std::io::stdout();
        while let Ok(chunk) = view.recv() {
            if out.write_all(&chunk).and_then(|()| out.flush()).is_err() {
                return;
            }
        }
    })
}

/// Until the session's program has exited.
async fn exited(session: &Session) {
    let mut activity = session.activity();
    while !activity.borrow_and_update().exited {
        if activity.changed().await.is_err() {
            return;
        }
    }
}

/// Until the terminal goes away (SIGHUP) or flowdeck is asked to end (SIGTERM): why.
async fn ended_from_outside() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut hangup), Ok(mut term)) = (
        signal(SignalKind::hangup()),
        signal(SignalKind::terminate()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = hangup.recv() => "the terminal went away",
        _ = term.recv() => "asked to end",
    }
}

/// The person's keys, typed into the session as they come, by a thread that looks at the
/// terminal a tenth of a second at a time, so that it stops reading once the shell has ended.
struct Typing {
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl Typing {
    fn start(session: Arc<Session>) -> Typing {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin();
            let mut buf = [0u8; 4096];
            while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
                let mut fds = [rustix::event::PollFd::new(
                    &stdin,
                    rustix::event::PollFlags::IN,
                )];
                let timeout = rustix::event::Timespec {
                    tv_sec: 0,
                    tv_nsec: 100_000_000,
                };
                match rustix::event::poll(&mut fds, Some(&timeout)) {
                    Ok(0) => continue,
                    Ok(_) => {}
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(_) => return,
                }
                let n = match stdin.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                // A full queue (a program that reads nothing meanwhile) takes the keys later.
                while let Err(crate::term::TermError::InputQueueFull { .. }) =
                    session.send_bytes(&buf[..n], TYPIST)
                {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
            }
        });
        Typing { stop }
    }

    fn stop(self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Resizes the session with the terminal (SIGWINCH).
fn follow_size(session: Arc<Session>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let Ok(mut winch) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::window_change())
        else {
            return;
        };
        while winch.recv().await.is_some() {
            if let Ok((cols, rows)) = crossterm::terminal::size() {
                let _ = session.resize(cols, rows);
            }
        }
    })
}

/// The terminal in raw mode while the shell runs: every key goes to it as typed. Given back
/// on every path, a panic's included.
struct Raw;

impl Raw {
    fn take() -> Result<Raw> {
        crossterm::terminal::enable_raw_mode().context("setting the terminal to raw mode")?;
        Ok(Raw)
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

/// Where the procedure was done: the shell ran where this command was started, as this user.
fn place() -> crate::workflow::draft::Place {
    crate::workflow::draft::Place {
        home: std::env::var("HOME").ok(),
        cwd: std::env::current_dir()
            .ok()
            .map(|dir| dir.display().to_string()),
    }
}
