//! Opening a session: the program on a new PTY, and the reader, writer and waiter threads
//! that serve it.

use super::info::{Activity, ExitInfo, HistoryLimits, OpenOptions, Program};
use super::output::read_loop;
use super::{DRAIN_AFTER_EXIT, Live, Session, Shared};
use crate::term::decode::Decoder;
use crate::term::deeds::Deeds;
use crate::term::deeds::startup::{Startup, startup};
use crate::term::error::TermError;
use crate::term::inputs::Inputs;
use crate::term::processes::MARKER_VAR;
use crate::term::quiet::QuietClock;
use crate::term::remote::Remote;
use crate::term::screen::{Screen, Size};
use crate::term::transcript::Transcript;
use crate::term::typing::{self, Input, Probe};
use portable_pty::{Child, CommandBuilder, PtySize, native_pty_system};
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Instant, SystemTime};
use tokio::sync::watch;

/// Shells that understand `$?`, `export`, `eval` and `printf` the POSIX way.
const POSIX_SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "busybox",
];

/// Whether `program` is a POSIX shell: one flowdeck can run commands in and follow.
pub fn is_posix_shell(program: &str) -> bool {
    POSIX_SHELLS.contains(&base_name(program))
}

/// The folder a session starts in must be one.
fn check_cwd(cwd: Option<&Path>) -> Result<(), TermError> {
    match cwd {
        Some(cwd) if !cwd.is_dir() => Err(TermError::InvalidCwd(cwd.display().to_string())),
        _ => Ok(()),
    }
}

/// A shell's deeds, followed for drafts, and how it starts: a local bash or zsh is asked to
/// say when each command begins and how it ended (deeds/startup.rs).
fn deeds_of(
    is_shell: bool,
    far: bool,
    program: &str,
    env: &[(String, String)],
) -> (Option<Deeds>, Startup) {
    let mut deeds = is_shell.then(|| Deeds::new(&crate::term::nonce::nonce()));
    let start = match deeds.as_mut() {
        Some(deeds) if !far => startup(base_name(program), env, deeds),
        _ => Startup {
            env: env.to_vec(),
            folder: None,
        },
    };
    (deeds, start)
}

/// A program's name without its folder (and a login shell's `-`).
fn base_name(program: &str) -> &str {
    let base = program.rsplit('/').next().unwrap_or(program);
    base.strip_prefix('-').unwrap_or(base)
}

impl Session {
    /// Starts the program on a new PTY. `marker` is unique to this session across processes.
    pub(in crate::term) fn spawn(
        id: String,
        marker: String,
        options: OpenOptions,
        limits: HistoryLimits,
    ) -> Result<Session, TermError> {
        let remote = far_side(&options.program);
        let argv = argv(options.program, remote.as_ref())?;
        let program = argv[0].clone();
        let spawn_error = |reason: String| TermError::Spawn {
            program: program.clone(),
            reason,
        };
        check_cwd(options.cwd.as_deref())?;
        let (size, _) = Size::clamped(options.size.cols, options.size.rows);
        let pair = native_pty_system()
            .openpty(pty_size(size))
            .map_err(|e| spawn_error(format!("no PTY available: {e}")))?;
        let is_shell = remote.is_some() || is_posix_shell(&program);
        let (mut deeds, start) = deeds_of(is_shell, remote.is_some(), &program, &options.env);
        let cmd = command(&argv, &marker, &start.env, options.cwd.as_deref());
        let child = pair
            .slave
            .spawn_command(cmd)
            .map_err(|e| spawn_error(e.to_string()))?;
        // The slave end stays open only in the child, so the reader sees EOF when it is gone.
        drop(pair.slave);
        let pid = child.process_id().unwrap_or(0);
        let io_error = |e: anyhow::Error| TermError::Io {
            session: id.clone(),
            source: std::io::Error::other(e.to_string()),
        };
        let pty = Arc::new(
            typing::master_file(&*pair.master).map_err(|e| TermError::Io {
                session: id.clone(),
                source: e,
            })?,
        );
        let writer = pair.master.take_writer().map_err(io_error)?;

        let host = remote.as_ref().map(|r| r.place.clone());
        if let Some(deeds) = deeds.as_mut() {
            deeds.shell = i32::try_from(pid).ok();
        }
        let shared = new_shared(size, limits, pty.clone(), remote, deeds, options.relayed);
        let probe = Probe::new(pty.clone(), pair.master.tty_name());
        let (input_tx, input_rx) = mpsc::channel::<Input>();
        let mut threads = Vec::new();
        let writer_shared = shared.clone();
        let writer_probe = probe.clone();
        threads.push(spawn_thread(
            &id,
            format!("pty-write-{id}"),
            Box::new(move || typing::write_loop(writer, input_rx, writer_probe, &*writer_shared)),
        )?);
        let replies = input_tx.clone();
        let reader_shared = shared.clone();
        threads.push(spawn_thread(
            &id,
            format!("pty-read-{id}"),
            Box::new(move || read_thread(&pty, &reader_shared, &replies)),
        )?);
        let waiter_shared = shared.clone();
        threads.push(spawn_thread(
            &id,
            format!("pty-wait-{id}"),
            Box::new(move || wait_thread(child, &waiter_shared)),
        )?);

        Ok(Session {
            is_shell,
            host,
            id,
            name: options.name,
            opened_by: options.opened_by,
            command: argv,
            pid,
            marker,
            instance: crate::term::nonce::nonce(),
            created: SystemTime::now(),
            shared,
            master: Mutex::new(pair.master),
            probe,
            input: Mutex::new(Some(input_tx)),
            threads: Mutex::new(threads),
            _startup: start.folder,
        })
    }
}

/// The far side of a session whose shell flowdeck reaches through another program.
fn far_side(program: &Program) -> Option<Remote> {
    match program {
        Program::Remote {
            place,
            patience,
            person,
            ..
        } => Some(Remote::new(place.clone(), *patience, *person)),
        _ => None,
    }
}

/// The program and its arguments: the command given, the shell (by default the person's),
/// or the connect command with the far side's bootstrap last.
fn argv(program: Program, remote: Option<&Remote>) -> Result<Vec<String>, TermError> {
    Ok(match program {
        Program::Remote { mut connect, .. } if !connect.is_empty() => {
            connect.extend(remote.map(Remote::bootstrap));
            connect
        }
        Program::Remote { .. } => {
            return Err(TermError::Spawn {
                program: String::new(),
                reason: "the connect command is empty".into(),
            });
        }
        Program::Command(argv) if !argv.is_empty() => argv,
        Program::Command(_) => {
            return Err(TermError::Spawn {
                program: String::new(),
                reason: "the command is empty".into(),
            });
        }
        Program::Shell(shell) => vec![shell.unwrap_or_else(default_shell)],
    })
}

/// flowdeck's own serving settings, never passed on to a terminal's programs: the HTTP token
/// is a secret that a program (and so a screen an agent reads) must not hold, and a flowdeck
/// started inside a terminal serves its own folder, not on this server's port.
const WITHHELD: [&str; 3] = [
    "FLOWDECK_HTTP",
    "FLOWDECK_HTTP_TOKEN",
    "FLOWDECK_HTTP_ALLOW_REMOTE",
];

/// How the program is started: its terminal type, the session's marker every descendant
/// inherits, the environment asked for, and its working directory (flowdeck's by default).
fn command(
    argv: &[String],
    marker: &str,
    env: &[(String, String)],
    cwd: Option<&Path>,
) -> CommandBuilder {
    let mut cmd = CommandBuilder::from_argv(argv.iter().map(Into::into).collect());
    cmd.env("TERM", "xterm-256color");
    cmd.env(MARKER_VAR, marker);
    for name in WITHHELD {
        cmd.env_remove(name);
    }
    for (key, value) in env {
        cmd.env(key, value);
    }
    match cwd {
        Some(cwd) => cmd.cwd(cwd),
        None => {
            if let Ok(cwd) = std::env::current_dir() {
                cmd.cwd(cwd);
            }
        }
    }
    cmd
}

/// The state the session's threads share, empty: a blank screen of `size`, no history yet.
fn new_shared(
    size: Size,
    limits: HistoryLimits,
    pty: Arc<File>,
    remote: Option<Remote>,
    deeds: Option<Deeds>,
    relayed: bool,
) -> Arc<Shared> {
    let (activity, _) = watch::channel(Activity::default());
    Arc::new(Shared {
        live: Mutex::new(Live {
            screen: Screen::new(size),
            transcript: Transcript::new(limits.lines, limits.bytes),
            decoder: Decoder::default(),
            inputs: Inputs::default(),
            hush: None,
            quiet: QuietClock::new(),
            watches: Vec::new(),
            next_watch: 0,
            exit: None,
            eof: false,
            ended: false,
            failed: None,
            bytes: 0,
            remote,
            taps: Vec::new(),
            next_tap: 0,
            deeds,
            viewers: Vec::new(),
            relayed,
        }),
        changed: Condvar::new(),
        activity,
        typed: watch::Sender::new(0),
        writer_waiting: AtomicBool::new(false),
        queued: AtomicUsize::new(0),
        pty,
    })
}

/// Starts one of the session's threads; failing to is an I/O error of session `id`.
fn spawn_thread(
    id: &str,
    name: String,
    f: Box<dyn FnOnce() + Send>,
) -> Result<std::thread::JoinHandle<()>, TermError> {
    std::thread::Builder::new()
        .name(name)
        .spawn(f)
        .map_err(|e| TermError::Io {
            session: id.to_string(),
            source: e,
        })
}

/// The reader thread: the output into the session until the PTY ends. A reader that fails
/// (or panics on a bug) marks the session failed with the reason, so waits end at once.
fn read_thread(pty: &File, shared: &Shared, replies: &mpsc::Sender<Input>) {
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        read_loop(pty, shared, replies)
    }));
    let reason = match read {
        Ok(Ok(())) => return,
        Ok(Err(e)) => format!("reading its terminal failed: {e}"),
        Err(panic) => format!(
            "its output reader stopped on a bug: {}",
            crate::panics::message(&*panic)
        ),
    };
    tracing::error!("terminal session: {reason}");
    shared.lock().fail(reason);
    shared.changed.notify_all();
    shared.activity.send_modify(|a| a.failed = true);
}

/// The waiter thread: the program's exit, then (once its last output is read) the session's
/// end.
fn wait_thread(mut child: Box<dyn Child + Send + Sync>, shared: &Shared) {
    let status = child.wait();
    let exit = match status {
        Ok(s) => ExitInfo {
            code: s.signal().is_none().then(|| s.exit_code()),
            signal: s.signal().map(str::to_string),
        },
        Err(_) => ExitInfo {
            code: None,
            signal: None,
        },
    };
    let status = exit.status();
    let mut live = shared.lock();
    live.exit = Some(exit);
    shared.changed.notify_all();
    // Output written just before the exit may still be in the PTY; give the
    // reader a moment to take it, unless a leftover process keeps the PTY open.
    let deadline = Instant::now() + DRAIN_AFTER_EXIT;
    while !live.eof {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        live = match shared.changed.wait_timeout(live, left) {
            Ok((guard, _)) => guard,
            Err(poisoned) => poisoned.into_inner().0,
        };
    }
    live.resolve_ended();
    // Recordings say how the program ended, after what it showed (asciicast v3's `x`).
    if let Some(status) = status {
        for tap in &mut live.taps {
            tap.exit(status);
        }
    }
    let bytes = live.bytes;
    drop(live);
    shared.changed.notify_all();
    shared.activity.send_modify(|a| {
        a.bytes = bytes;
        a.exited = true;
    });
}

fn default_shell() -> String {
    std::env::var("SHELL")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "/bin/bash".to_string())
}

pub(super) fn pty_size(size: Size) -> PtySize {
    PtySize {
        rows: size.rows,
        cols: size.cols,
        pixel_width: 0,
        pixel_height: 0,
    }
}
