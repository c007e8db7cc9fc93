//! One terminal session: a program on a real PTY, the threads that serve it, and its state.
//!
//! Three threads per session, none of them polling:
//! - the reader blocks on the PTY, feeds each chunk to the screen and the transcript, checks
//!   the registered waits, then lets old history go, and wakes whoever waits;
//! - the writer owns the PTY's input side and writes queued input in chunks, so that a
//!   program that stops reading blocks only that thread, never a caller holding a lock, and
//!   holds typed input until someone reads it (typing.rs);
//! - the waiter blocks in `wait()` for the program's exit status.
//!
//! Here is the session's state; its jobs are beside it: opening it ([`open`]), its output
//! ([`output`]), its input ([`input`]), waiting for output ([`waiting`]), reading what it shows
//! and has shown ([`reading`]), and the values it takes and gives ([`info`]).

mod info;
mod input;
mod open;
mod output;
mod reading;
mod waiting;

pub use info::{
    Activity, AwaitResult, Content, ExitInfo, HistoryLimits, OpenOptions, Program, SessionInfo,
};
pub use open::is_posix_shell;
use open::pty_size;

use super::decode::Decoder;
use super::deeds::Deeds;
use super::error::TermError;
use super::hush::Hush;
use super::inputs::Inputs;
use super::matcher::Watch;
use super::processes::{self, Teardown};
use super::quiet::QuietClock;
use super::recording::{RecordOptions, Recording, Tap};
use super::remote::Remote;
use super::screen::{Screen, Size};
use super::transcript::Transcript;
use super::typing::{Input, Probe};
use crate::actor::Actor;
use portable_pty::MasterPty;
use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::watch;

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
/// Chunks a viewer may be behind before the session waits for it.
const VIEW_BACKLOG: usize = 64;
/// The reader takes at most this much output at a time.
const READ_BATCH: usize = 64 << 10;

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
    /// The far side, for a shell reached through another program (remote.rs).
    remote: Option<Remote>,
    /// Recordings of what is shown (recording/).
    taps: Vec<Tap>,
    /// What was done by hand, in a shell session (deeds.rs).
    deeds: Option<Deeds>,
    /// Where what is shown goes as it comes, for a real terminal ([`Session::view`]).
    viewers: Vec<mpsc::SyncSender<Vec<u8>>>,
    /// A real terminal shows it and answers its queries ([`OpenOptions::relayed`]).
    relayed: bool,
    next_tap: u64,
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

/// A live terminal session.
pub struct Session {
    id: String,
    name: Option<String>,
    opened_by: Option<Actor>,
    command: Vec<String>,
    pid: u32,
    is_shell: bool,
    /// Where the shell runs when it is reached through another program (remote.rs).
    host: Option<String>,
    marker: String,
    /// A nonce of this session's own: ids are given again by the next process, and what
    /// names a place in this session's history (a search cursor) must not be read in theirs.
    instance: String,
    created: SystemTime,
    shared: Arc<Shared>,
    master: Mutex<Box<dyn MasterPty + Send>>,
    probe: Probe,
    input: Mutex<Option<mpsc::Sender<Input>>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    /// The startup files its shell was given (deeds/startup.rs), removed with the session.
    _startup: Option<tempfile::TempDir>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

impl Session {
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Whether the program started was a POSIX shell (here or on the far side).
    pub fn is_shell(&self) -> bool {
        self.is_shell
    }

    /// Where the shell runs, when flowdeck reaches it through another program (`h1`).
    pub fn host(&self) -> Option<&str> {
        self.host.as_deref()
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
            host: live.remote.as_ref().map(|r| r.place.clone()),
            title: live.screen.title(),
        }
    }

    /// How long since its program last wrote anything.
    pub fn quiet_for(&self) -> std::time::Duration {
        let live = self.shared.lock();
        live.quiet
            .last_change(super::matcher::QuietOn::Output)
            .elapsed()
    }

    /// Why the session can no longer read its output, if it failed.
    pub fn failure(&self) -> Option<String> {
        self.shared.lock().failed.clone()
    }

    /// The exit status, once the program has exited.
    pub fn exit(&self) -> Option<ExitInfo> {
        self.shared.lock().exit.clone()
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

    /// Current size.
    pub fn size(&self) -> Size {
        self.shared.lock().screen.size()
    }

    /// Resizes the PTY (the program gets SIGWINCH) and the screen. Sizes are clamped;
    /// returns the size applied.
    pub fn resize(&self, cols: u16, rows: u16) -> Result<Size, TermError> {
        let (size, _) = Size::clamped(cols, rows);
        // Under the `live` lock, which output is read under: a program answers SIGWINCH by
        // drawing for the new size at once, and that output must not reach a screen still of
        // the old size (it is lost there, and nothing draws it again).
        let mut live = self.shared.lock();
        let old = live.screen.size();
        live.screen.resize(size);
        for tap in &mut live.taps {
            tap.resize(size);
        }
        let resized = self
            .master
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .resize(pty_size(size));
        if let Err(e) = resized {
            // The program still has the old size: so does its screen.
            live.screen.resize(old);
            for tap in &mut live.taps {
                tap.resize(old);
            }
            return Err(TermError::Io {
                session: self.id.clone(),
                source: std::io::Error::other(e.to_string()),
            });
        }
        Ok(size)
    }

    /// Records what the session shows from now on, as an asciicast file (recording/),
    /// starting with the screen as it is.
    pub fn record(&self, options: RecordOptions) -> Result<Recording, TermError> {
        let path = options.path.clone();
        let mut live = self.shared.lock();
        live.next_tap += 1;
        let id = live.next_tap;
        let size = live.screen.size();
        let first = (live.bytes > 0).then(|| live.screen.vt().state_formatted());
        let (tap, started) =
            Recording::spawn(options, id, size, first).map_err(|source| TermError::Io {
                session: self.id.clone(),
                source,
            })?;
        let shared = Arc::downgrade(&self.shared);
        let detach = Box::new(move || {
            if let Some(shared) = shared.upgrade() {
                // Dropped outside the lock: a tap hands over what it still holds as it goes.
                let mut live = shared.lock();
                let gone: Vec<Tap> = live.taps.extract_if(.., |t| t.id == id).collect();
                drop(live);
                drop(gone);
            }
        });
        let shared = Arc::downgrade(&self.shared);
        let mark = Box::new(move |name: &str| {
            if let Some(shared) = shared.upgrade()
                && let Some(tap) = shared.lock().taps.iter_mut().find(|t| t.id == id)
            {
                tap.marker(name);
            }
        });
        let recording = Recording::new(path, started, detach, mark);
        live.taps.push(tap);
        Ok(recording)
    }

    /// What the session shows, from now on, as it comes: the screen as it is first (when
    /// anything was shown), then each chunk of output. For a real terminal that shows the
    /// session (`flowdeck record`): one that stops reading holds the program's output up, as
    /// a terminal does, rather than have it pile up here.
    pub fn view(&self) -> mpsc::Receiver<Vec<u8>> {
        let (tx, rx) = mpsc::sync_channel(VIEW_BACKLOG);
        let mut live = self.shared.lock();
        if live.bytes > 0 {
            let _ = tx.try_send(live.screen.vt().state_formatted().into_bytes());
        }
        live.viewers.push(tx);
        rx
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

    /// Stops the session: kills every process it started (see processes.rs), waits for the
    /// program's exit status, and stops the threads. Blocking.
    pub(in crate::term) fn shutdown(&self, grace: Duration) -> Teardown {
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
