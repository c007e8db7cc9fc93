//! Writing one run's journal, off the async runtime.
//!
//! A journal line is a disk write, and a disk can stall (a full device, a network folder,
//! a busy machine): done on the runtime, one slow write would hold up every session and tool
//! call sharing its thread. So each run's journal has a thread of its own that owns the
//! file: the run numbers, masks and hands over each line at once and goes on, and waits
//! ([`JournalWriter::written`]) only where it matters, before it announces a line, so that
//! whoever hears of it can read it, and [`JournalWriter::finish`] before its result, so that
//! the result can say whether the journal was written.
//!
//! While the thread lives it holds an exclusive lock on the journal file and an in-flight
//! marker (`<run_id>.live`) beside it: the lock goes with the process however it ends, so a
//! marker whose journal can be locked by someone else belongs to a run whose flowdeck died
//! (see `Journal::recover_interrupted`).

use super::{JournalEvent, RunEvent, now};
use crate::engine::secrets::Secrets;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// The in-flight marker of a journal.
pub(super) fn live_marker(journal: &Path) -> PathBuf {
    journal.with_extension("live")
}

/// What the writing thread is asked to do, in order.
enum Op {
    Line {
        text: String,
        last: bool,
    },
    /// Answered once every line before it is written.
    Written(oneshot::Sender<()>),
}

/// How the thread gets its file: opening it may fail, and the failure is the journal's.
pub(super) type Opener = Box<dyn FnOnce() -> Result<File, String> + Send>;

/// Appends one run's events.
#[derive(Debug)]
pub struct JournalWriter {
    path: PathBuf,
    seq: u64,
    /// Masked in every line from the moment they are known.
    secrets: Secrets,
    ops: Option<mpsc::Sender<Op>>,
    /// Answered when the thread has closed the file (and so let go of its lock).
    closed: Option<oneshot::Receiver<()>>,
    /// Why the journal is not (or no longer) being written, if it is not.
    failure: Arc<Mutex<Option<String>>>,
}

impl JournalWriter {
    /// Starts the thread that opens the journal with `open` and writes it; lines are
    /// numbered from `seq + 1`.
    pub(super) fn start(path: PathBuf, seq: u64, open: Opener) -> JournalWriter {
        let failure = Arc::new(Mutex::new(None));
        let (ops, queue) = mpsc::channel();
        let (closing, closed) = oneshot::channel();
        let thread_failure = failure.clone();
        let thread_path = path.clone();
        let spawned = std::thread::Builder::new()
            .name("run-journal".into())
            .spawn(move || {
                serve(&thread_path, open, &queue, &thread_failure);
                let _ = closing.send(());
            });
        let (ops, closed) = match spawned {
            Ok(_) => (Some(ops), Some(closed)),
            Err(e) => {
                record_failure(
                    &failure,
                    format!("the run journal {} has no writer: {e}", path.display()),
                );
                (None, None)
            }
        };
        JournalWriter {
            path,
            seq,
            secrets: Secrets::default(),
            ops,
            closed,
            failure,
        }
    }

    /// Appends an event, secrets masked, and returns it as it will be written. A failed
    /// write is logged and recorded, and the run goes on: losing history is better than
    /// failing the work.
    pub fn append(&mut self, body: RunEvent) -> JournalEvent {
        self.seq += 1;
        let mut event = JournalEvent {
            seq: self.seq,
            at: now(),
            body,
        };
        if !self.secrets.is_empty()
            && let Ok(mut value) = serde_json::to_value(&event)
        {
            self.secrets.redact_value(&mut value);
            if let Ok(redacted) = serde_json::from_value(value) {
                event = redacted;
            }
        }
        match serde_json::to_string(&event) {
            Ok(mut text) => {
                text.push('\n');
                let last = matches!(event.body, RunEvent::RunFinished { .. });
                if let Some(ops) = &self.ops {
                    let _ = ops.send(Op::Line { text, last });
                }
            }
            Err(e) => tracing::warn!("journal event: {e}"),
        }
        event
    }

    /// Waits until every line appended so far is written (or failed to be).
    pub async fn written(&self) {
        if let Some(ops) = &self.ops {
            let (tx, rx) = oneshot::channel();
            if ops.send(Op::Written(tx)).is_ok() {
                let _ = rx.await;
            }
        }
    }

    /// Writes what is left, closes the file and lets go of its lock; later appends are
    /// only numbered.
    pub async fn finish(&mut self) {
        self.ops = None;
        if let Some(closed) = self.closed.take() {
            let _ = closed.await;
        }
    }

    /// [`JournalWriter::written`], for tests off the runtime.
    #[cfg(test)]
    pub fn written_blocking(&self) {
        if let Some(ops) = &self.ops {
            let (tx, rx) = oneshot::channel();
            if ops.send(Op::Written(tx)).is_ok() {
                let _ = rx.blocking_recv();
            }
        }
    }

    /// [`JournalWriter::finish`] for callers off the runtime.
    pub fn finish_blocking(&mut self) {
        self.ops = None;
        if let Some(closed) = self.closed.take() {
            let _ = closed.blocking_recv();
        }
    }

    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The run's secrets, masked in every line appended from now on.
    pub fn set_secrets(&mut self, secrets: Secrets) {
        self.secrets = secrets;
    }

    /// Why the journal was not (fully) written so far, if it was not: the run goes on, and
    /// its result says so.
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The first failure is the one reported.
fn record_failure(failure: &Mutex<Option<String>>, message: String) {
    let mut failure = failure.lock().unwrap_or_else(|p| p.into_inner());
    if failure.is_none() {
        *failure = Some(message);
    }
}

/// The writing thread: opens the journal, then writes lines in order until the run's
/// writer is gone. The file (and its lock) is closed when this returns.
fn serve(path: &Path, open: Opener, queue: &mpsc::Receiver<Op>, failure: &Mutex<Option<String>>) {
    let mut file = match open() {
        Ok(file) => Some(file),
        Err(message) => {
            tracing::warn!("{message}");
            record_failure(failure, message);
            None
        }
    };
    for op in queue {
        match op {
            Op::Line { text, last } => {
                let Some(f) = &mut file else { continue };
                // One write per line: a crash leaves at most the last line torn.
                if let Err(e) = f.write_all(text.as_bytes()) {
                    tracing::warn!("journal {}: {e}", path.display());
                    record_failure(
                        failure,
                        format!(
                            "the run journal {} could not be written: {e}",
                            path.display()
                        ),
                    );
                }
                if last {
                    let _ = fs::remove_file(live_marker(path));
                }
            }
            Op::Written(done) => {
                let _ = done.send(());
            }
        }
    }
}
