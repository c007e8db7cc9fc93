//! One terminal session: a program on a real PTY, the threads that serve it, and its state.
//!
//! Three threads per session, none of them polling:
//! - the reader blocks on the PTY, feeds each chunk to the screen and the transcript, checks
//!   the registered waits, then lets old history go, and wakes whoever waits;
//! - the writer owns the PTY's input side and writes queued input in chunks, so that a
//!   program that stops reading blocks only that thread, never a caller holding a lock, and
//!   holds typed input until someone reads it (typing.rs);
//! - the waiter blocks in `wait()` for the program's exit status.

use super::error::TermError;
use super::hush::{self, End, Hush, HushState, Take};
use super::inputs::Inputs;
use super::keys::{self, KeyPress, Modes};
use super::matcher::{AwaitSpec, Event, Hit, Outcome, Quiet, QuietOn, Watch};
use super::processes::{self, MARKER_VAR, Teardown};
use super::quiet::QuietClock;
use super::screen::{Screen, ScreenSnapshot, Size};
use super::search::{self, Found, Query};
use super::transcript::{Decoder, Transcript, render_line, render_text};
use super::typing::{self, Host, Input, Probe};
use crate::actor::Actor;
use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};
use schemars::JsonSchema;
use serde::Serialize;
use std::fs::File;
use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::{oneshot, watch};

/// Largest input accepted in one call.
pub const MAX_INPUT_BYTES: usize = 1 << 20;
/// Typed input a session holds for a program that has not read it yet: more is refused
/// (retryable) rather than kept without bound.
pub const MAX_QUEUED_INPUT: usize = 4 * MAX_INPUT_BYTES;
/// How long after the program exits its last output may take to drain before waits are told.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(200);
/// Lines of history in the tail of a wait's result.
const TAIL_LINES: usize = 20;
/// Characters kept in the tail of a wait's result.
const TAIL_CHARS: usize = 4000;
/// Output the writer takes at most before it types an input; a program that writes without
/// pause is writing at the same time as the input, and the rest is the reader's.
const DRAIN_BEFORE_INPUT: usize = 256 << 10;
/// The reader takes at most this much output at a time.
const READ_BATCH: usize = 64 << 10;

/// What to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// A shell: the given path, else `$SHELL`, else `/bin/bash`.
    Shell(Option<String>),
    /// A program and its arguments.
    Command(Vec<String>),
}

/// Everything needed to open a session.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    pub program: Program,
    pub cwd: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    pub size: Size,
    pub name: Option<String>,
    /// Who opens it: recorded on the session for those who list it, never interpreted here.
    pub opened_by: Option<Actor>,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            program: Program::Shell(None),
            cwd: None,
            env: Vec::new(),
            size: Size {
                cols: 120,
                rows: 30,
            },
            name: None,
            opened_by: None,
        }
    }
}

/// How a program ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
pub struct ExitInfo {
    /// The exit code, when it exited by itself.
    pub code: Option<u32>,
    /// The signal that ended it, if one did.
    pub signal: Option<String>,
}

impl std::fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.signal, self.code) {
            (Some(signal), _) => write!(f, "killed by {signal}"),
            (None, Some(code)) => write!(f, "exit code {code}"),
            (None, None) => f.write_str("ended"),
        }
    }
}

/// A change a front end can redraw on: bytes read so far and whether the program ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Activity {
    pub bytes: u64,
    pub exited: bool,
    /// The session can no longer read its output ([`Session::failure`] says why).
    pub failed: bool,
}

/// What a session is, for listings.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct SessionInfo {
    pub session_id: String,
    pub name: Option<String>,
    /// The program and arguments started.
    pub command: Vec<String>,
    pub pid: u32,
    pub cols: u16,
    pub rows: u16,
    /// Milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    pub running: bool,
    pub exit: Option<ExitInfo>,
    /// Why the session can no longer read its program's output, when it failed (a bug or
    /// an I/O error): it can only be closed.
    pub failed: Option<String>,
    /// Who opened it (a person, an agent, a run), when known.
    pub opened_by: Option<Actor>,
    pub output_bytes: u64,
    pub history_lines: u64,
    pub is_shell: bool,
    pub title: String,
}

/// What `get_screen_content` reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    Screen,
    History,
    Tail(usize),
    /// The output after the last input of this typist (of anyone for `None`), past its echo.
    SinceInput(Option<String>),
}

/// The result of a wait.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AwaitResult {
    pub outcome: Outcome,
    /// The text the pattern (or stop pattern) matched.
    pub matched_text: Option<String>,
    /// The whole line the match is on, as displayed.
    pub matched_line: Option<String>,
    /// Numbered groups (1, 2, ...); `None` for a group that took no part.
    pub groups: Vec<Option<String>>,
    /// Named groups that matched.
    pub named_groups: indexmap::IndexMap<String, String>,
    /// The stop pattern that ended the wait, when one did.
    pub stop_pattern: Option<String>,
    pub elapsed_ms: f64,
    /// The last lines of output, bounded.
    pub tail: String,
    pub exit: Option<ExitInfo>,
    /// For a wait for quiet that ended so: how long the output (or screen) had been quiet.
    pub quiet_ms: Option<f64>,
}

/// Limits for one session's history.
#[derive(Debug, Clone, Copy)]
pub struct HistoryLimits {
    pub lines: usize,
    pub bytes: usize,
}

pub(super) struct Live {
    pub screen: Screen,
    pub transcript: Transcript,
    decoder: Decoder,
    /// Each typist's last input, and where its output begins.
    pub inputs: Inputs,
    /// A framed shell command whose plumbing is kept off the screen (hush.rs).
    hush: Option<Hush>,
    /// When output, and the screen's text, last changed (for quiet waits).
    quiet: QuietClock,
    watches: Vec<Watch>,
    next_watch: u64,
    pub exit: Option<ExitInfo>,
    eof: bool,
    /// The program exited and its output drained: waits end with `exited`.
    ended: bool,
    /// Why the session can no longer read its output (its reader thread failed): waits
    /// and input fail with it at once, rather than time out on a session that looks alive.
    failed: Option<String>,
    bytes: u64,
}

impl Live {
    /// Takes a chunk of output: into the screen and the transcript, past the echo of the
    /// last input, to the registered waits (which see it before old history is let go).
    /// Returns the answers to terminal queries.
    fn take(&mut self, chunk: &[u8]) -> Vec<u8> {
        self.bytes += chunk.len() as u64;
        let Some(hush) = self.hush.as_mut() else {
            return self.show(chunk);
        };
        match hush.take(chunk) {
            Take::Show => self.show(chunk),
            Take::Held => Vec::new(),
            Take::Replace(shown) => {
                self.hush = None;
                self.show(&shown)
            }
            Take::Stream { head, body, end } => self.stream(head, &body, end),
        }
    }

    /// A shown command's output (hush.rs): its text when it begins, its output as it comes,
    /// and at its end the output read back from the transcript for the caller.
    fn stream(&mut self, head: Option<Vec<u8>>, body: &[u8], end: Option<End>) -> Vec<u8> {
        let mut answer = Vec::new();
        if let Some(head) = head {
            answer.extend(self.show(&head));
            let at = self.transcript.end();
            if let Some(hush) = self.hush.as_mut() {
                hush.begun(at);
            }
        }
        answer.extend(self.show(body));
        if let Some(End { status, tail }) = end
            && let Some(hush) = self.hush.take()
        {
            let from = hush.body_from().unwrap_or_else(|| self.transcript.end());
            let output = hush::output_between(&self.transcript, from, self.transcript.end());
            hush.finish(status, output);
            // The next prompt starts a line of its own, as the framing's newline made it:
            // output that did not end with one (`printf x`) is not run into it.
            let mut shown = Vec::new();
            if self.screen.vt().cursor_position().1 != 0 {
                shown.extend_from_slice(b"\r\n");
            }
            shown.extend_from_slice(&tail);
            answer.extend(self.show(&shown));
        }
        answer
    }

    /// Gives up hiding a framed command: what was held is shown as it came.
    fn release_hush(&mut self) -> Vec<u8> {
        match self.hush.take() {
            Some(mut hush) => {
                let held = hush.release();
                self.show(&held)
            }
            None => Vec::new(),
        }
    }

    /// Output that is shown: see [`Live::take`].
    fn show(&mut self, chunk: &[u8]) -> Vec<u8> {
        let answer = self.screen.feed(chunk);
        self.quiet.output(&mut self.screen);
        self.decoder.feed(&mut self.transcript, chunk);
        self.inputs
            .advance(self.transcript.text(), self.transcript.offset(0));
        let mut i = 0;
        while i < self.watches.len() {
            let hit = self.watches[i].scan(&self.transcript, &mut self.screen, &self.inputs);
            match hit {
                Some(hit) => {
                    let mut w = self.watches.swap_remove(i);
                    if let Some(tx) = w.notify.take() {
                        let _ = tx.send(Event::Hit(hit));
                    }
                }
                None => i += 1,
            }
        }
        let keep = self.inputs.latest().end_or_start();
        self.transcript.trim(keep);
        answer
    }

    fn fail(&mut self, reason: String) {
        self.hush = None;
        for mut w in self.watches.drain(..) {
            if let Some(tx) = w.notify.take() {
                let _ = tx.send(Event::Failed(reason.clone()));
            }
        }
        self.failed = Some(reason);
        // Nothing more will be read: the writer must not wait for output.
        self.eof = true;
    }

    fn resolve_ended(&mut self) {
        // What a hidden command held is the program's last output: shown before waits end.
        let _ = self.release_hush();
        self.ended = true;
        for mut w in self.watches.drain(..) {
            if let Some(tx) = w.notify.take() {
                let _ = tx.send(Event::Ended);
            }
        }
    }

    /// How a wait of `session` that began at `started` ended.
    fn result(
        &self,
        session: &str,
        started: Instant,
        event: Option<Event>,
    ) -> Result<AwaitResult, TermError> {
        let mut result = AwaitResult {
            outcome: Outcome::Timeout,
            matched_text: None,
            matched_line: None,
            groups: Vec::new(),
            named_groups: indexmap::IndexMap::new(),
            stop_pattern: None,
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
            tail: self.tail(),
            exit: self.exit.clone(),
            quiet_ms: None,
        };
        match event {
            None => {}
            Some(Event::Failed(reason)) => {
                return Err(TermError::Failed {
                    session: session.to_string(),
                    reason,
                });
            }
            Some(Event::Ended) => result.outcome = Outcome::Exited,
            Some(Event::Hit(hit)) => {
                result.outcome = if hit.stop.is_some() {
                    Outcome::Stopped
                } else {
                    Outcome::Matched
                };
                result.stop_pattern = hit.stop;
                result.matched_text = Some(hit.text);
                result.matched_line = Some(hit.line);
                result.groups = hit.groups;
                result.named_groups = hit.named.into_iter().collect();
            }
        }
        Ok(result)
    }

    fn tail(&self) -> String {
        let lines: Vec<String> = self
            .transcript
            .last_lines(TAIL_LINES)
            .map(render_line)
            .collect();
        let tail = lines.join("\n");
        let count = tail.chars().count();
        if count <= TAIL_CHARS {
            tail
        } else {
            tail.chars().skip(count - TAIL_CHARS).collect()
        }
    }
}

struct Shared {
    live: Mutex<Live>,
    changed: Condvar,
    activity: watch::Sender<Activity>,
    /// Counts typed inputs as the writer types them: the output that follows is likely
    /// their echo, which front ends draw without waiting for their next frame.
    typed: watch::Sender<u64>,
    /// The writer holds typed input and wants to hear of each chunk of output.
    writer_waiting: AtomicBool,
    /// Bytes of typed input queued and not yet written.
    queued: AtomicUsize,
    /// The PTY's master side: output is taken from it only under the `live` lock.
    pty: Arc<File>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Live> {
        // A panic while holding the lock cannot leave the state half-updated in a way that
        // matters more than losing the session, so a poisoned lock is used as is.
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Host for Shared {
    fn typing(&self, seq: u64, echo: &str, buf: &mut [u8]) -> Vec<u8> {
        self.typed.send_modify(|n| *n += 1);
        let mut live = self.lock();
        // An older input written late (it waited for a reader) does not move the mark of a
        // newer one.
        if !live.inputs.is_current(seq) {
            // A hidden line typed without the output before it taken in cannot be told
            // apart from that output: it is shown instead.
            if live.hush.as_ref().is_some_and(|h| h.is_input(seq)) {
                return live.release_hush();
            }
            return Vec::new();
        }
        // Output the program wrote before this moment is taken first, so that the echo is
        // looked for after it, not in it.
        let mut answer = Vec::new();
        let mut drained = 0;
        while drained < DRAIN_BEFORE_INPUT {
            match read_ready(&self.pty, buf) {
                Ready::Chunk(n) => {
                    answer.extend(live.take(&buf[..n]));
                    drained += n;
                }
                Ready::Nothing | Ready::End => break,
            }
        }
        let end = live.transcript.end();
        live.inputs.typed(seq, echo, end);
        if let Some(hush) = live.hush.as_mut() {
            hush.typing(seq);
        }
        let bytes = live.bytes;
        drop(live);
        if drained > 0 {
            self.activity.send_modify(|a| a.bytes = bytes);
        }
        answer
    }

    fn wait_for_output(&self, wait: Duration) {
        self.writer_waiting.store(true, Ordering::SeqCst);
        let live = self.lock();
        if !live.eof {
            let _ = self.changed.wait_timeout(live, wait);
        }
        self.writer_waiting.store(false, Ordering::SeqCst);
    }

    fn ended(&self) -> bool {
        let live = self.lock();
        live.eof || live.exit.is_some()
    }

    fn dequeued(&self, bytes: usize) {
        self.queued.fetch_sub(bytes, Ordering::SeqCst);
    }
}

/// A live terminal session.
pub struct Session {
    id: String,
    name: Option<String>,
    opened_by: Option<Actor>,
    command: Vec<String>,
    pid: u32,
    is_shell: bool,
    marker: String,
    created: SystemTime,
    shared: Arc<Shared>,
    master: Mutex<Box<dyn MasterPty + Send>>,
    probe: Probe,
    input: Mutex<Option<mpsc::Sender<Input>>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

/// Shells that understand `$?`, `export`, `eval` and `printf` the POSIX way.
const POSIX_SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "busybox",
];

fn is_posix_shell(program: &str) -> bool {
    let base = program.rsplit('/').next().unwrap_or(program);
    let base = base.strip_prefix('-').unwrap_or(base);
    POSIX_SHELLS.contains(&base)
}

impl Session {
    /// Starts the program on a new PTY. `marker` is unique to this session across processes.
    #[expect(clippy::too_many_lines, reason = "issue 23 splits it by its jobs")]
    pub(super) fn spawn(
        id: String,
        marker: String,
        options: OpenOptions,
        limits: HistoryLimits,
    ) -> Result<Session, TermError> {
        let argv = match options.program {
            Program::Command(argv) if !argv.is_empty() => argv,
            Program::Command(_) => {
                return Err(TermError::Spawn {
                    program: String::new(),
                    reason: "the command is empty".into(),
                });
            }
            Program::Shell(shell) => vec![shell.unwrap_or_else(default_shell)],
        };
        let program = argv[0].clone();
        let spawn_error = |reason: String| TermError::Spawn {
            program: program.clone(),
            reason,
        };
        if let Some(cwd) = &options.cwd
            && !cwd.is_dir()
        {
            return Err(TermError::InvalidCwd(cwd.display().to_string()));
        }
        let (size, _) = Size::clamped(options.size.cols, options.size.rows);
        let pair = native_pty_system()
            .openpty(pty_size(size))
            .map_err(|e| spawn_error(format!("no PTY available: {e}")))?;
        let mut cmd = CommandBuilder::from_argv(argv.iter().map(Into::into).collect());
        cmd.env("TERM", "xterm-256color");
        cmd.env(MARKER_VAR, &marker);
        for (key, value) in &options.env {
            cmd.env(key, value);
        }
        match &options.cwd {
            Some(cwd) => cmd.cwd(cwd),
            None => {
                if let Ok(cwd) = std::env::current_dir() {
                    cmd.cwd(cwd);
                }
            }
        }
        let mut child = pair
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

        let (activity, _) = watch::channel(Activity::default());
        let shared = Arc::new(Shared {
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
            }),
            changed: Condvar::new(),
            activity,
            typed: watch::Sender::new(0),
            writer_waiting: AtomicBool::new(false),
            queued: AtomicUsize::new(0),
            pty: pty.clone(),
        });
        let probe = Probe::new(pty.clone(), pair.master.tty_name());
        let (input_tx, input_rx) = mpsc::channel::<Input>();
        let mut threads = Vec::new();
        let spawn_thread = |name: String, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new()
                .name(name)
                .spawn(f)
                .map_err(|e| TermError::Io {
                    session: id.clone(),
                    source: e,
                })
        };
        let writer_shared = shared.clone();
        let writer_probe = probe.clone();
        threads.push(spawn_thread(
            format!("pty-write-{id}"),
            Box::new(move || typing::write_loop(writer, input_rx, writer_probe, &*writer_shared)),
        )?);
        let replies = input_tx.clone();
        let reader_shared = shared.clone();
        threads.push(spawn_thread(
            format!("pty-read-{id}"),
            Box::new(move || {
                let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    read_loop(&pty, &reader_shared, &replies)
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
                reader_shared.lock().fail(reason);
                reader_shared.changed.notify_all();
                reader_shared.activity.send_modify(|a| a.failed = true);
            }),
        )?);
        let waiter_shared = shared.clone();
        threads.push(spawn_thread(
            format!("pty-wait-{id}"),
            Box::new(move || {
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
                let mut live = waiter_shared.lock();
                live.exit = Some(exit);
                waiter_shared.changed.notify_all();
                // Output written just before the exit may still be in the PTY; give the
                // reader a moment to take it, unless a leftover process keeps the PTY open.
                let deadline = Instant::now() + DRAIN_AFTER_EXIT;
                while !live.eof {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    live = match waiter_shared.changed.wait_timeout(live, left) {
                        Ok((guard, _)) => guard,
                        Err(poisoned) => poisoned.into_inner().0,
                    };
                }
                live.resolve_ended();
                let bytes = live.bytes;
                drop(live);
                waiter_shared.changed.notify_all();
                waiter_shared.activity.send_modify(|a| {
                    a.bytes = bytes;
                    a.exited = true;
                });
            }),
        )?);

        Ok(Session {
            is_shell: is_posix_shell(&program),
            id,
            name: options.name,
            opened_by: options.opened_by,
            command: argv,
            pid,
            marker,
            created: SystemTime::now(),
            shared,
            master: Mutex::new(pair.master),
            probe,
            input: Mutex::new(Some(input_tx)),
            threads: Mutex::new(threads),
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Whether the program started was a POSIX shell.
    pub fn is_shell(&self) -> bool {
        self.is_shell
    }

    pub fn info(&self) -> SessionInfo {
        let live = self.shared.lock();
        let size = live.screen.size();
        SessionInfo {
            session_id: self.id.clone(),
            name: self.name.clone(),
            command: self.command.clone(),
            pid: self.pid,
            cols: size.cols,
            rows: size.rows,
            created_at_ms: self
                .created
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            running: live.exit.is_none(),
            exit: live.exit.clone(),
            failed: live.failed.clone(),
            opened_by: self.opened_by.clone(),
            output_bytes: live.bytes,
            history_lines: live.transcript.total_lines(),
            is_shell: self.is_shell,
            title: live.screen.title(),
        }
    }

    /// Why the session can no longer read its output, if it failed.
    pub fn failure(&self) -> Option<String> {
        self.shared.lock().failed.clone()
    }

    /// The exit status, once the program has exited.
    pub fn exit(&self) -> Option<ExitInfo> {
        self.shared.lock().exit.clone()
    }

    /// Waits until the program has printed something (a shell's first prompt: by then its
    /// line editor owns the terminal, so input typed next is echoed once). Returns whether
    /// output arrived in time.
    pub async fn wait_for_output(&self, timeout: Duration) -> bool {
        let mut activity = self.activity();
        let waited =
            tokio::time::timeout(timeout, activity.wait_for(|a| a.bytes > 0 || a.exited)).await;
        matches!(waited, Ok(Ok(a)) if a.bytes > 0)
    }

    /// Waits until the shell is back at its prompt: in the foreground and reading its next
    /// line (its line editor has the terminal, or it reads in cooked mode), not just done
    /// with the program it ran. Re-checks when output arrives and, since a shell can start
    /// reading without printing anything, every few milliseconds. Returns whether it is at
    /// its prompt.
    pub async fn wait_for_prompt(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut activity = self.activity();
        let mut look = Duration::from_micros(500);
        loop {
            activity.borrow_and_update();
            if self.exit().is_some() {
                return false;
            }
            if self.require_shell_prompt().is_ok() && self.reading_input() {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            let wait = look.min(left);
            if let Ok(Err(_)) = tokio::time::timeout(wait, activity.changed()).await {
                // No more activity will be published; look again after the pause.
                tokio::time::sleep(wait).await;
            }
            look = (look * 2).min(Duration::from_millis(10));
        }
    }

    /// Whether input typed now would be read at once: a program in the foreground is
    /// blocked reading the terminal and has read everything typed before (see typing.rs).
    pub fn reading_input(&self) -> bool {
        self.probe.someone_reads()
    }

    /// The leader's pid while it has not been reaped (after that the pid may be reused).
    pub fn live_leader(&self) -> Option<i32> {
        self.exit().is_none().then_some(self.pid as i32)
    }

    /// The marker in the environment of every process this session started.
    pub fn marker(&self) -> &str {
        &self.marker
    }

    /// Follows output and exit, for front ends that redraw on change.
    pub fn activity(&self) -> watch::Receiver<Activity> {
        self.shared.activity.subscribe()
    }

    /// Changes each time typed input is written to the terminal (its echo comes next).
    pub fn typed(&self) -> watch::Receiver<u64> {
        self.shared.typed.subscribe()
    }

    /// Types text exactly as given (`\n` and `\r` press Enter, `\u{3}` is Ctrl-C). `by`
    /// names the typist, whose "since the last input" this input moves (inputs.rs).
    pub fn send_text(&self, text: &str, by: &str) -> Result<usize, TermError> {
        self.send(text.as_bytes().to_vec(), text, by, None)
    }

    /// Starts hiding the framed shell command of `nonce` (hush.rs), unless another one is
    /// hidden now (`None`: that command is shown as it runs, framing and all). With `shown`,
    /// only its framing is hidden and `shown` takes its place on the screen.
    pub(super) fn hush(
        &self,
        nonce: &str,
        shown: Option<Vec<u8>>,
    ) -> Option<watch::Receiver<HushState>> {
        let mut live = self.shared.lock();
        if live.hush.is_some() || live.ended || live.failed.is_some() {
            return None;
        }
        let (hush, rx) = match shown {
            Some(head) => Hush::shown(nonce, head),
            None => Hush::new(nonce),
        };
        live.hush = Some(hush);
        Some(rx)
    }

    /// Types the framed line of the hidden command `nonce`: output is held from the moment
    /// it is written. Its own echo is never shown; `echo` is what is shown in its place (a
    /// shown command's text, skipped by `since: last_input` like an echo), or nothing.
    pub(super) fn send_hidden(
        &self,
        text: &str,
        nonce: &str,
        echo: &str,
        by: &str,
    ) -> Result<usize, TermError> {
        self.send(text.as_bytes().to_vec(), echo, by, Some(nonce))
    }

    /// Stops hiding the command `nonce` if it still is: what was held is shown as it came.
    pub(super) fn release_hush(&self, nonce: &str) {
        let answer = {
            let mut live = self.shared.lock();
            if live.hush.as_ref().is_none_or(|h| h.nonce() != nonce) {
                return;
            }
            live.release_hush()
        };
        // Answers to terminal queries in what was held go to the program that asked.
        if !answer.is_empty()
            && let Some(tx) = self
                .input
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_ref()
        {
            let _ = tx.send(Input::Reply(answer));
        }
        self.shared.changed.notify_all();
        self.shared.activity.send_modify(|_| {});
    }

    /// Presses keys, encoded for the terminal's current modes.
    pub fn send_keys(&self, keys: &[KeyPress], by: &str) -> Result<usize, TermError> {
        let modes = Modes {
            application_cursor: self.shared.lock().screen.application_cursor(),
        };
        let bytes = keys::encode_all(keys, modes).map_err(|e| TermError::InvalidArgument {
            what: "a key".into(),
            reason: e.to_string(),
        })?;
        let echo: String = keys
            .iter()
            .map(|k| match k {
                KeyPress::Text(t) => t.as_str(),
                KeyPress::Named(keys::Named::Enter) => "\r",
                _ => "",
            })
            .collect();
        self.send(bytes, &echo, by, None)
    }

    /// Queues bytes for the program and marks the output position that `since: last_input`
    /// starts from, for `by`. Returns the number of bytes queued.
    /// With `hush`, the input is the framed line of that hidden command (hush.rs).
    fn send(
        &self,
        bytes: Vec<u8>,
        echo: &str,
        by: &str,
        hush: Option<&str>,
    ) -> Result<usize, TermError> {
        if bytes.len() > MAX_INPUT_BYTES {
            return Err(TermError::TooLarge {
                what: "the input",
                size: bytes.len(),
                max: MAX_INPUT_BYTES,
            });
        }
        let mut live = self.shared.lock();
        if let Some(reason) = &live.failed {
            return Err(TermError::Failed {
                session: self.id.clone(),
                reason: reason.clone(),
            });
        }
        if let Some(exit) = &live.exit {
            return Err(TermError::Exited {
                session: self.id.clone(),
                status: exit.to_string(),
            });
        }
        // Until the writer types it (typing.rs), output is not yet "after" this input.
        let len = bytes.len();
        let queued = self.shared.queued.load(Ordering::SeqCst);
        if queued + len > MAX_QUEUED_INPUT {
            return Err(TermError::InputQueueFull {
                session: self.id.clone(),
                queued,
                max: MAX_QUEUED_INPUT,
            });
        }
        let end = live.transcript.end();
        let seq = live.inputs.queued(by, end);
        if let Some(h) = live.hush.as_mut().filter(|h| hush == Some(h.nonce())) {
            h.set_input(seq);
        }
        let input = Input::Typed {
            bytes,
            seq,
            echo: echo.to_string(),
        };
        // Counted before it can be written (and so taken off the count).
        self.shared.queued.fetch_add(len, Ordering::SeqCst);
        let sent = self
            .input
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|tx| tx.send(input).is_ok());
        if !sent {
            self.shared.queued.fetch_sub(len, Ordering::SeqCst);
            return Err(TermError::Io {
                session: self.id.clone(),
                source: std::io::Error::new(
                    std::io::ErrorKind::BrokenPipe,
                    "the session is closing",
                ),
            });
        }
        Ok(len)
    }

    /// Reads the screen, the history or part of it, as plain text.
    pub fn content(&self, what: Content) -> String {
        let mut live = self.shared.lock();
        match what {
            Content::Screen => live.screen.text(),
            Content::History => {
                let t = &live.transcript;
                render_text(t.since(t.start()).trim_end_matches('\n'))
            }
            Content::Tail(n) => {
                let lines: Vec<String> = live.transcript.last_lines(n).map(render_line).collect();
                lines.join("\n")
            }
            Content::SinceInput(by) => render_text(
                live.transcript
                    .since(live.inputs.last(by.as_deref()).end_or_start())
                    .trim_end_matches('\n'),
            ),
        }
    }

    /// Searches the history and, while a full-screen program is in front, its screen
    /// (search.rs). The history is read a slice per hold of the lock, so that the reader is
    /// never kept waiting for a whole search.
    pub fn search(&self, query: &Query) -> Found {
        let screen = search::screen_rows(self.shared.lock().screen.vt());
        search::search(query, screen, |read| read(&self.shared.lock().transcript))
    }

    /// The screen with colours and attributes.
    pub fn snapshot(&self) -> ScreenSnapshot {
        self.shared.lock().screen.snapshot()
    }

    /// Runs `f` on the live vt100 screen (for drawing without copying it).
    pub fn with_screen<R>(&self, f: impl FnOnce(&vt100::Screen) -> R) -> R {
        f(self.shared.lock().screen.vt())
    }

    /// A copy of the screen as it is now, for a front end to draw.
    pub fn mirror(&self) -> super::mirror::Mirror {
        self.with_screen(super::mirror::Mirror::of)
    }

    /// Current size.
    pub fn size(&self) -> Size {
        self.shared.lock().screen.size()
    }

    /// Resizes the PTY (the program gets SIGWINCH) and the screen. Sizes are clamped;
    /// returns the size applied.
    pub fn resize(&self, cols: u16, rows: u16) -> Result<Size, TermError> {
        let (size, _) = Size::clamped(cols, rows);
        self.master
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .resize(pty_size(size))
            .map_err(|e| TermError::Io {
                session: self.id.clone(),
                source: std::io::Error::other(e.to_string()),
            })?;
        self.shared.lock().screen.resize(size);
        Ok(size)
    }

    /// The process group in the terminal's foreground: its leader and program name.
    pub fn foreground(&self) -> Option<(i32, String)> {
        let pgid = self
            .master
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .process_group_leader()?;
        Some((
            pgid,
            processes::program_name(pgid).unwrap_or_else(|| "?".into()),
        ))
    }

    /// Interrupts what runs in the foreground (a cancelled step): its process group gets
    /// SIGINT, SIGTERM, then SIGKILL after `grace`, and the shell stays. When the session's own
    /// program is in the foreground (a REPL), it gets a Ctrl-C as if typed by `by`. Blocking.
    pub fn interrupt_foreground(&self, grace: Duration, by: &str) {
        match self.foreground() {
            Some((pgid, _)) if pgid != self.pid as i32 => {
                processes::end_group(pgid, grace);
            }
            _ => {
                let _ = self.send(vec![0x03], "", by, None);
            }
        }
    }

    /// Fails unless a POSIX shell started this session and is itself in the foreground (at
    /// its prompt, not running a REPL or an editor).
    pub fn require_shell_prompt(&self) -> Result<(), TermError> {
        if let Some(exit) = self.exit() {
            return Err(TermError::Exited {
                session: self.id.clone(),
                status: exit.to_string(),
            });
        }
        let program = self.command.first().cloned().unwrap_or_default();
        if !self.is_shell {
            return Err(TermError::NotAShell {
                session: self.id.clone(),
                foreground: program,
            });
        }
        match self.foreground() {
            Some((pgid, name)) if pgid != self.pid as i32 => Err(TermError::NotAShell {
                session: self.id.clone(),
                foreground: name,
            }),
            _ => Ok(()),
        }
    }

    /// Waits until the pattern matches (and then, or alone, until the program settles: see
    /// quiet.rs), a stop pattern matches, the program ends or time runs out; fails at once
    /// when the session can no longer read its output. Dropping the future (cancellation)
    /// removes the wait.
    pub async fn await_output(&self, spec: AwaitSpec) -> Result<AwaitResult, TermError> {
        let started = Instant::now();
        let deadline = started + spec.timeout;
        let (Some(quiet), pattern) = (spec.quiet, spec.pattern.is_some()) else {
            let event = self.watch(spec, deadline).await;
            return self.shared.lock().result(&self.id, started, event);
        };
        let stops = spec.stop_patterns.clone();
        let matched = if pattern {
            match self.watch(spec, deadline).await {
                Some(Event::Hit(hit)) if hit.stop.is_none() => Some(hit),
                event => return self.shared.lock().result(&self.id, started, event),
            }
        } else {
            None
        };
        self.settle(stops, quiet, started, deadline, matched).await
    }

    /// Registers a wait, unless its event is already decided (a match in what has arrived,
    /// the program's end, a failure). With `screen`, the screen's text is watched while the
    /// returned guard lives.
    fn register(
        &self,
        spec: AwaitSpec,
        screen: bool,
    ) -> Result<(Registered<'_>, oneshot::Receiver<Event>), Event> {
        let (tx, rx) = oneshot::channel();
        let mut guard = self.shared.lock();
        let live = &mut *guard;
        if let Some(reason) = &live.failed {
            return Err(Event::Failed(reason.clone()));
        }
        live.next_watch += 1;
        let mut watch = Watch::new(live.next_watch, spec, &live.transcript);
        if let Some(hit) = watch.scan(&live.transcript, &mut live.screen, &live.inputs) {
            return Err(Event::Hit(hit));
        }
        if live.ended {
            return Err(Event::Ended);
        }
        if screen {
            live.quiet.watch_screen(&mut live.screen);
        }
        watch.notify = Some(tx);
        let id = watch.id;
        live.watches.push(watch);
        drop(guard);
        let registered = Registered {
            shared: &self.shared,
            id,
            screen,
        };
        Ok((registered, rx))
    }

    /// Registers a wait and waits for its event until `deadline`; `None` when time ran out.
    async fn watch(&self, spec: AwaitSpec, deadline: Instant) -> Option<Event> {
        let (_registered, mut rx) = match self.register(spec, false) {
            Ok(registered) => registered,
            Err(event) => return Some(event),
        };
        let wait = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(wait, &mut rx).await {
            Ok(Ok(event)) => Some(event),
            Ok(Err(_)) => Some(Event::Ended),
            // A hit sent in the same instant as the timeout still counts.
            Err(_) => rx.try_recv().ok(),
        }
    }

    /// Waits until the session has been quiet for `quiet` (after `matched`, the pattern's
    /// match, if there was one); stop patterns, the program's end and the deadline still end
    /// the wait. A timer, re-armed to the last change when output came meanwhile: no
    /// polling, and one wake-up per quiet period however fast the output.
    async fn settle(
        &self,
        stop_patterns: Vec<regex::Regex>,
        quiet: Quiet,
        started: Instant,
        deadline: Instant,
        matched: Option<Hit>,
    ) -> Result<AwaitResult, TermError> {
        let from = Instant::now();
        let stops = AwaitSpec {
            pattern: None,
            stop_patterns,
            since: super::Since::Entry,
            timeout: Duration::ZERO,
            typist: None,
            quiet: None,
        };
        // Registered once; its event (a stop pattern, the end) is awaited across timers.
        let (_registered, mut rx) = match self.register(stops, quiet.on == QuietOn::Screen) {
            Ok(registered) => registered,
            Err(event) => return self.shared.lock().result(&self.id, started, Some(event)),
        };
        loop {
            let last = self.shared.lock().quiet.last_change(quiet.on).max(from);
            let now = Instant::now();
            let settled_at = last + quiet.quiet;
            if now >= settled_at || now >= deadline {
                let live = self.shared.lock();
                let mut result = live.result(&self.id, started, matched.map(Event::Hit))?;
                if now >= settled_at {
                    result.outcome = Outcome::Matched;
                    result.quiet_ms = Some(now.duration_since(last).as_secs_f64() * 1000.0);
                } else {
                    result.outcome = Outcome::Timeout;
                }
                return Ok(result);
            }
            tokio::select! {
                event = &mut rx => {
                    let event = event.unwrap_or(Event::Ended);
                    return self.shared.lock().result(&self.id, started, Some(event));
                }
                () = tokio::time::sleep_until(settled_at.min(deadline).into()) => {}
            }
        }
    }

    /// Global stream offset of the newest output (for [`Since::After`](super::Since::After)).
    pub fn output_end(&self) -> u64 {
        self.shared.lock().transcript.end()
    }

    /// The plain-text output after a stream offset, raw (carriage returns kept).
    pub fn output_since(&self, offset: u64) -> String {
        self.shared.lock().transcript.since(offset).to_string()
    }

    /// A shown command's output from `offset` to now, as `run_command` returns it (hush.rs).
    pub(super) fn command_output(&self, offset: u64) -> String {
        let live = self.shared.lock();
        hush::output_between(&live.transcript, offset, live.transcript.end())
    }

    /// Stops the session: kills every process it started (see processes.rs), waits for the
    /// program's exit status, and stops the threads. Blocking.
    pub(super) fn shutdown(&self, grace: Duration) -> Teardown {
        let report = processes::terminate(self.live_leader(), &self.marker, grace);
        // Closing the queue ends the writer once it is not blocked in a write.
        self.input.lock().unwrap_or_else(|p| p.into_inner()).take();
        {
            let mut live = self.shared.lock();
            let deadline = Instant::now() + Duration::from_secs(2);
            while !live.ended {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                live = match self.shared.changed.wait_timeout(live, left) {
                    Ok((guard, _)) => guard,
                    Err(poisoned) => poisoned.into_inner().0,
                };
            }
            if !live.ended {
                live.resolve_ended();
            }
        }
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|p| p.into_inner()));
        for thread in threads {
            // Threads end once the PTY is closed by the last process; one held open by a
            // process that escaped is left to end on its own rather than hang the caller.
            if thread.is_finished() {
                let _ = thread.join();
            }
        }
        report
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Last resort when a session is dropped without being closed (flowdeck exiting):
        // nothing the session started may outlive it.
        if self.exit().is_none()
            || !processes::session_processes(self.live_leader(), &self.marker).is_empty()
        {
            processes::terminate(self.live_leader(), &self.marker, Duration::from_millis(200));
        }
    }
}

/// Removes a registered wait when the waiting future finishes or is dropped.
struct Registered<'a> {
    shared: &'a Shared,
    id: u64,
    /// The wait watches the screen's text (quiet.rs).
    screen: bool,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        let mut live = self.shared.lock();
        live.watches.retain(|w| w.id != self.id);
        if self.screen {
            live.quiet.unwatch_screen();
        }
    }
}

fn default_shell() -> String {
    std::env::var("SHELL")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "/bin/bash".to_string())
}

fn pty_size(size: Size) -> PtySize {
    PtySize {
        rows: size.rows,
        cols: size.cols,
        pixel_width: 0,
        pixel_height: 0,
    }
}

/// What the PTY has for the reader now.
enum Ready {
    Chunk(usize),
    Nothing,
    End,
}

/// Reads what the PTY holds, without blocking. Polling first also finishes moving output the
/// program has written into the master's buffer (the kernel does that in a work item, and a
/// poll that finds nothing waits for it), so `Nothing` means nothing was written.
fn read_ready(pty: &File, buf: &mut [u8]) -> Ready {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut fds = [PollFd::new(pty, PollFlags::IN)];
    match poll(&mut fds, Some(&Timespec::default())) {
        Ok(_) => {}
        Err(rustix::io::Errno::INTR) => return Ready::Nothing,
        Err(_) => return Ready::End,
    }
    let events = fds[0].revents();
    if !events.intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL) {
        return Ready::Nothing;
    }
    match (&*pty).read(buf) {
        Ok(0) => Ready::End,
        Ok(n) => Ready::Chunk(n),
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ready::Nothing,
        // EIO: every process holding the PTY is gone.
        Err(_) => Ready::End,
    }
}

/// Reads what the master's buffer already holds, without waiting for output still on its
/// way (unlike `read_ready`): a batch ends when the buffer is empty.
fn read_buffered(pty: &File, buf: &mut [u8]) -> Ready {
    match rustix::io::ioctl_fionread(pty) {
        Ok(0) | Err(_) => Ready::Nothing,
        // Under the lock only this thread reads, so the read finds the bytes counted.
        Ok(_) => match (&*pty).read(buf) {
            Ok(0) => Ready::End,
            Ok(n) => Ready::Chunk(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ready::Nothing,
            Err(_) => Ready::End,
        },
    }
}

/// Output a unit test prints to make the reader fail as a bug would.
#[cfg(test)]
const DIE_FOR_THE_TEST: &[u8] = b"\x1b]flowdeck-reader-dies\x07";

/// Reads the program's output until the PTY ends; an error is a failure of the session.
fn read_loop(
    pty: &File,
    shared: &Shared,
    replies: &mpsc::Sender<Input>,
) -> Result<(), std::io::Error> {
    use rustix::event::{PollFd, PollFlags, poll};
    let mut buf = vec![0u8; READ_BATCH];
    let mut ended = false;
    while !ended {
        // Wait for output without taking it: output leaves the kernel only under the lock,
        // where the writer, too, takes what came before an input (see `Host::typing`).
        let mut fds = [PollFd::new(pty, PollFlags::IN)];
        match poll(&mut fds, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
        let (answer, bytes) = {
            let mut live = shared.lock();
            // Everything already there, in one batch: per-batch work (waits, trimming,
            // wake-ups) is paid once, and a flood's lines that scroll away unseen can skip
            // the grid (fastforward.rs). The PTY hands out at most 4 KiB a read.
            let mut filled = 0;
            while filled < buf.len() {
                let ready = if filled == 0 {
                    read_ready(pty, &mut buf[filled..])
                } else {
                    read_buffered(pty, &mut buf[filled..])
                };
                match ready {
                    // A read that did not fill the kernel's buffer (4 KiB) took all there was.
                    Ready::Chunk(n) if n < 4095 => {
                        filled += n;
                        break;
                    }
                    Ready::Chunk(n) => filled += n,
                    Ready::Nothing => break,
                    Ready::End => {
                        ended = true;
                        break;
                    }
                }
            }
            if filled == 0 {
                // The writer took it, or the program is gone.
                continue;
            }
            #[cfg(test)]
            if buf[..filled]
                .windows(DIE_FOR_THE_TEST.len())
                .any(|w| w == DIE_FOR_THE_TEST)
            {
                panic!("the test asked the reader to die");
            }
            (live.take(&buf[..filled]), live.bytes)
        };
        if !answer.is_empty() {
            let _ = replies.send(Input::Reply(answer));
        }
        if shared.writer_waiting.load(Ordering::SeqCst) {
            shared.changed.notify_all();
        }
        shared.activity.send_modify(|a| a.bytes = bytes);
    }
    shared.lock().eof = true;
    shared.changed.notify_all();
    Ok(())
}
