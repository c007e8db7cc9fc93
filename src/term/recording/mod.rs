//! A session's output recorded as it is shown, in asciinema's asciicast v3 format (v2 when
//! asked for: [`cast::Format`]): a JSON header line (the terminal's size and type, start
//! time, title), then one JSON line per event, `[seconds, "o", text]` for output, `[seconds,
//! "r", "COLSxROWS"]` for a resize, `[seconds, "m", name]` for a marker (a run marks each
//! state it enters) and `[seconds, "x", "status"]` when the session's program exits; v3's
//! seconds are the interval since the event before, v2's the time since the start. Any
//! asciicast player plays it (`asciinema play`, `asciinema convert`, the web player).
//!
//! The session's reader hands each shown chunk to a [`Tap`] under its lock (a copy and a
//! channel send that never waits); a thread of the recording's own turns the chunks into
//! text, masks the secrets it was given (term/mask.rs) and writes, so the disk never holds the
//! session up. A recording stops at its cap: past it, output is
//! only counted, and one last event says how much was left out.

pub mod cast;
mod mask;
pub mod play;
pub mod safe;
mod writer;

pub use mask::{DropMarkers, Utf8Stream};

use super::screen::Size;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

/// The largest recording file by default: a run's whole output, unless it floods.
pub const DEFAULT_CAP: u64 = 64 << 20;
/// Chunks waiting for the recording's thread before the session's reader waits for it.
const BACKLOG: usize = 256;

/// What to record where.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    pub path: PathBuf,
    /// The header's title (`flowdeck run RUN_ID: WORKFLOW`).
    pub title: String,
    /// Values never written: each is replaced by `mask`, wherever output is cut.
    pub secrets: Vec<String>,
    pub mask: String,
    /// The largest the file may grow, in bytes.
    pub cap: u64,
    /// v3 (the default), or v2 for whoever asks.
    pub format: cast::Format,
}

/// How a recording ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub path: PathBuf,
    /// The file's size.
    pub bytes: u64,
    /// Output bytes left out at the cap.
    pub left_out: u64,
    /// Why the file is incomplete (it could not be written).
    pub error: Option<String>,
}

/// One event for the recording's thread.
enum Frame {
    Output(Instant, Vec<u8>),
    Resize(Instant, Size),
    /// A marker of this name (the state a run entered).
    Marker(Instant, String),
    /// The session's program exited with this status.
    Exit(Instant, i32),
}

/// Secrets learned after the recording began, for its thread to take at its next event: a
/// lock, not the channel, so that telling them never waits for the disk.
type Learned = Arc<Mutex<Vec<String>>>;

/// The session's end of a recording, kept in the session's state. It never blocks the
/// session: when the recording's thread falls behind (a slow or stalled disk), chunks wait
/// here, up to [`HELD_MAX`] bytes; beyond that they are left out, and the file says so.
#[derive(Debug)]
pub struct Tap {
    pub id: u64,
    frames: SyncSender<Frame>,
    /// The cap was reached: chunks are only counted.
    full: Arc<AtomicBool>,
    left_out: Arc<AtomicU64>,
    held: VecDeque<Frame>,
    held_bytes: usize,
}

/// Output a tap holds for a recording's thread that fell behind.
const HELD_MAX: usize = 16 << 20;

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Frame::Output(_, bytes) => write!(f, "Output({} bytes)", bytes.len()),
            Frame::Resize(_, size) => write!(f, "Resize({}x{})", size.cols, size.rows),
            Frame::Marker(_, name) => write!(f, "Marker({name})"),
            Frame::Exit(_, status) => write!(f, "Exit({status})"),
        }
    }
}

impl Tap {
    /// A chunk of output as it is shown.
    pub fn output(&mut self, chunk: &[u8]) {
        if self.full.load(Ordering::Relaxed) || self.held_bytes + chunk.len() > HELD_MAX {
            self.left_out
                .fetch_add(chunk.len() as u64, Ordering::Relaxed);
            return;
        }
        self.held_bytes += chunk.len();
        self.held
            .push_back(Frame::Output(Instant::now(), chunk.to_vec()));
        self.pass_on();
    }

    pub fn resize(&mut self, size: Size) {
        self.held.push_back(Frame::Resize(Instant::now(), size));
        self.pass_on();
    }

    /// A marker, in order with the output around it (both come under the session's lock).
    pub fn marker(&mut self, name: &str) {
        self.held
            .push_back(Frame::Marker(Instant::now(), name.to_string()));
        self.pass_on();
    }

    /// The session's program exited with `status`.
    pub fn exit(&mut self, status: i32) {
        self.held.push_back(Frame::Exit(Instant::now(), status));
        self.pass_on();
    }

    /// Hands what it holds to the recording's thread, as much as its channel takes now.
    fn pass_on(&mut self) {
        while let Some(frame) = self.held.pop_front() {
            let bytes = match &frame {
                Frame::Output(_, b) => b.len(),
                Frame::Resize(..) | Frame::Marker(..) | Frame::Exit(..) => 0,
            };
            match self.frames.try_send(frame) {
                Ok(()) => self.held_bytes -= bytes,
                Err(TrySendError::Full(frame)) => {
                    self.held.push_front(frame);
                    return;
                }
                Err(TrySendError::Disconnected(_)) => {
                    self.held.clear();
                    self.held_bytes = 0;
                    return;
                }
            }
        }
    }
}

impl Drop for Tap {
    /// Let go (the recording finishes, or the session ends): what it still holds goes to the
    /// thread, which then ends.
    fn drop(&mut self) {
        for frame in self.held.drain(..) {
            if self.frames.send(frame).is_err() {
                break;
            }
        }
    }
}

/// A recording in progress. [`Recording::finish`] ends it and waits for its file; dropped
/// unfinished, it ends as soon as its session lets its tap go.
pub struct Recording {
    path: PathBuf,
    learned: Learned,
    detach: Option<Box<dyn FnOnce() + Send + Sync>>,
    /// Hands a marker to the session's tap (see [`Recording::new`]).
    mark: Box<dyn Fn(&str) + Send + Sync>,
    thread: Option<JoinHandle<Recorded>>,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// A started recording's thread, and what tells it secrets.
#[derive(Debug)]
pub struct Started {
    thread: JoinHandle<Recorded>,
    learned: Learned,
}

impl Recording {
    /// Starts the thread that writes a recording of a screen of `size` whose contents are
    /// `first` now (drawn as the first event, so that a recording begun mid-session shows
    /// what was there). Returns the tap for the session, numbered `id`, and the thread.
    pub fn spawn(
        options: RecordOptions,
        id: u64,
        size: Size,
        first: Option<String>,
    ) -> std::io::Result<(Tap, Started)> {
        let (frames, rx) = mpsc::sync_channel(BACKLOG);
        let full = Arc::new(AtomicBool::new(false));
        let left_out = Arc::new(AtomicU64::new(0));
        let learned: Learned = Arc::default();
        let file = writer::create(&options, size)?;
        let thread = {
            let (full, left_out, learned) = (full.clone(), left_out.clone(), learned.clone());
            let started = Instant::now();
            std::thread::Builder::new()
                .name(format!("record-{id}"))
                .spawn(move || {
                    writer::Writer::new(file, options, started, full, left_out, learned)
                        .run(rx, first)
                })?
        };
        let tap = Tap {
            id,
            frames,
            full,
            left_out,
            held: VecDeque::new(),
            held_bytes: 0,
        };
        Ok((tap, Started { thread, learned }))
    }

    /// A started recording; `detach` takes its tap out of the session, `mark` hands its tap
    /// a marker under the session's lock, so that the marker stands where the output was.
    pub fn new(
        path: PathBuf,
        started: Started,
        detach: Box<dyn FnOnce() + Send + Sync>,
        mark: Box<dyn Fn(&str) + Send + Sync>,
    ) -> Recording {
        Recording {
            path,
            learned: started.learned,
            detach: Some(detach),
            mark,
            thread: Some(started.thread),
        }
    }

    /// A marker named `name` here in the recording (masked as the output is).
    pub fn marker(&self, name: &str) {
        (self.mark)(name);
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Masks `secrets` too, in what is written from now on and, when the recording ends, in
    /// what was written before (the file is masked again once).
    pub fn mask(&self, secrets: Vec<String>) {
        self.learned
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(secrets);
    }

    /// Ends the recording: the session lets its tap go, and the file is completed (the
    /// held end of the output, the note of what the cap left out) and closed. Blocking.
    pub fn finish(mut self) -> Recorded {
        if let Some(detach) = self.detach.take() {
            detach();
        }
        let path = self.path.clone();
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or(Recorded {
                path,
                bytes: 0,
                left_out: 0,
                error: Some("the recording's thread failed".into()),
            })
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if let Some(detach) = self.detach.take() {
            detach();
        }
    }
}
