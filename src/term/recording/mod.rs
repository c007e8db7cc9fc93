//! A session's output recorded as it is shown, in asciinema's asciicast v2 format: a JSON
//! header line (size, start time, title), then one JSON line per event, `[seconds, "o",
//! text]` for output and `[seconds, "r", "COLSxROWS"]` for a resize. Any asciicast player
//! plays it (`asciinema play`, `asciinema cat`, the web player).
//!
//! The session's reader hands each shown chunk to a [`Tap`] under its lock (a copy and a
//! channel send); a thread of the recording's own turns the chunks into text, masks the
//! secrets it was given (mask.rs) and writes, so the disk never holds the session up unless
//! it falls [`BACKLOG`] chunks behind. A recording stops at its cap: past it, output is
//! only counted, and one last event says how much was left out.

pub mod cast;
mod mask;
mod writer;

pub use mask::{StreamMask, Utf8Stream};

use super::screen::Size;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, SyncSender};
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
    /// The values to mask from here on (a run learns its secrets as it goes).
    Mask(Vec<String>),
}

/// The session's end of a recording, kept in the session's state.
#[derive(Debug)]
pub struct Tap {
    pub id: u64,
    frames: SyncSender<Frame>,
    /// The cap was reached: chunks are only counted.
    full: Arc<AtomicBool>,
    left_out: Arc<AtomicU64>,
}

impl Tap {
    /// A chunk of output as it is shown.
    pub fn output(&self, chunk: &[u8]) {
        if self.full.load(Ordering::Relaxed) {
            self.left_out
                .fetch_add(chunk.len() as u64, Ordering::Relaxed);
        } else {
            let _ = self
                .frames
                .send(Frame::Output(Instant::now(), chunk.to_vec()));
        }
    }

    pub fn resize(&self, size: Size) {
        let _ = self.frames.send(Frame::Resize(Instant::now(), size));
    }
}

/// A recording in progress. [`Recording::finish`] ends it and waits for its file; dropped
/// unfinished, it ends as soon as its session lets its tap go.
pub struct Recording {
    path: PathBuf,
    /// Kept apart from the tap's, for masks; let go when the recording finishes.
    frames: Option<SyncSender<Frame>>,
    detach: Option<Box<dyn FnOnce() + Send + Sync>>,
    thread: Option<JoinHandle<Recorded>>,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
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
    ) -> std::io::Result<(Tap, JoinHandle<Recorded>)> {
        let (frames, rx) = mpsc::sync_channel(BACKLOG);
        let full = Arc::new(AtomicBool::new(false));
        let left_out = Arc::new(AtomicU64::new(0));
        let file = writer::create(&options, size)?;
        let thread = {
            let (full, left_out) = (full.clone(), left_out.clone());
            let started = Instant::now();
            std::thread::Builder::new()
                .name(format!("record-{id}"))
                .spawn(move || {
                    writer::Writer::new(file, options, started, full, left_out).run(rx, first)
                })?
        };
        let tap = Tap {
            id,
            frames,
            full,
            left_out,
        };
        Ok((tap, thread))
    }

    /// A started recording of `tap`; `detach` takes the tap out of the session.
    pub fn new(
        path: PathBuf,
        tap: &Tap,
        thread: JoinHandle<Recorded>,
        detach: Box<dyn FnOnce() + Send + Sync>,
    ) -> Recording {
        Recording {
            path,
            frames: Some(tap.frames.clone()),
            detach: Some(detach),
            thread: Some(thread),
        }
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Masks `secrets` (with those given before) in what is written from now on.
    pub fn mask(&self, secrets: Vec<String>) {
        if let Some(frames) = &self.frames {
            let _ = frames.send(Frame::Mask(secrets));
        }
    }

    /// Ends the recording: the session lets its tap go, and the file is completed (the
    /// held end of the output, the note of what the cap left out) and closed. Blocking.
    pub fn finish(mut self) -> Recorded {
        if let Some(detach) = self.detach.take() {
            detach();
        }
        self.frames = None;
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
        self.frames = None;
        if let Some(detach) = self.detach.take() {
            detach();
        }
    }
}
