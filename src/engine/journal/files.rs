//! A run's journal file: its id reserved by creating the file exclusively (two runs, here or
//! in another flowdeck, never share one), created or reopened for writing under its lock,
//! read from a cursor (a torn last line skipped), and given feedback once the run has ended.

use super::writer::{JournalWriter, live_marker};
use super::{Journal, JournalEvent, RunEvent, is_run_id, new_run_id, now};
use crate::actor::Actor;
use chrono::{DateTime, Utc};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;

impl Journal {
    /// A new run id whose journal file did not exist and now does (empty, until
    /// [`Journal::create`]): created exclusively, so two runs never share a journal, in this
    /// process or another. When the folder cannot be written the id is only likely unique.
    pub fn reserve(&self, started: DateTime<Utc>) -> String {
        let _ = fs::create_dir_all(&self.dir);
        let mut id = new_run_id(started);
        for attempt in 0..64 {
            let created = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(self.path(&id));
            match created {
                Ok(_) => return id,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    id = new_run_id(started + chrono::Duration::microseconds(attempt + 1));
                }
                Err(_) => return id,
            }
        }
        id
    }

    /// Gives back a reserved id whose run never started.
    pub fn release(&self, run_id: &str) {
        if is_run_id(run_id) && fs::metadata(self.path(run_id)).is_ok_and(|m| m.len() == 0) {
            let _ = fs::remove_file(self.path(run_id));
        }
    }

    /// Starts a run's journal. When the folder cannot be written, the run still runs and the
    /// writer only counts.
    pub fn create(&self, run_id: &str) -> JournalWriter {
        let path = self.path(run_id);
        let (dir, file_path, id) = (self.dir.clone(), path.clone(), run_id.to_string());
        JournalWriter::start(
            path,
            0,
            Box::new(move || {
                let file = fs::create_dir_all(&dir)
                    .and_then(|()| {
                        OpenOptions::new()
                            .create(true)
                            .append(true)
                            // What ran, with what inputs and output: the owner's business only.
                            .mode(0o600)
                            .open(&file_path)
                    })
                    .map_err(|e| {
                        format!(
                            "the run journal {} could not be created: {e}",
                            file_path.display()
                        )
                    })?;
                // Held until the writer is done, after the run's last event. The marker is
                // made only under the lock: a marker whose journal is unlocked means a dead
                // run. Blocking: readers probe the lock for an instant (`Journal::is_owned`).
                match file.lock() {
                    Ok(()) => {
                        if let Err(e) = File::create(live_marker(&file_path)) {
                            tracing::warn!("cannot mark run {id} as in flight: {e}");
                        }
                    }
                    Err(e) => tracing::warn!(
                        "cannot lock the run journal {}: {e}; if flowdeck is killed, the run will not be marked interrupted",
                        file_path.display()
                    ),
                }
                Ok(file)
            }),
        )
    }

    /// Goes on writing a run's journal after its writer was lost (the executor panicked):
    /// numbering goes on from its last line, and the lock is taken again.
    pub fn reopen(&self, run_id: &str) -> JournalWriter {
        let path = self.path(run_id);
        let seq = self
            .read(run_id, 0, usize::MAX)
            .ok()
            .and_then(|events| events.last().map(|e| e.seq))
            .unwrap_or(0);
        let file_path = path.clone();
        JournalWriter::start(
            path,
            seq,
            Box::new(move || {
                let reopened =
                    OpenOptions::new()
                        .append(true)
                        .open(&file_path)
                        .and_then(|mut file| {
                            file.lock()?;
                            // After a torn line the next one must start on a line of its own.
                            file.write_all(b"\n")?;
                            Ok(file)
                        });
                reopened.map_err(|e| {
                    format!(
                        "the run journal {} could not be reopened: {e}",
                        file_path.display()
                    )
                })
            }),
        )
    }

    /// A run's events with `seq` greater than `after`, at most `limit` of them. Unreadable
    /// lines (a torn last line) are skipped.
    pub fn read(
        &self,
        run_id: &str,
        after: u64,
        limit: usize,
    ) -> std::io::Result<Vec<JournalEvent>> {
        if !is_run_id(run_id) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no such run",
            ));
        }
        let bytes = std::fs::read(self.path(run_id))?;
        let mut events = Vec::new();
        // Lines are parsed as bytes: a line torn in the middle of a character is skipped
        // like any other torn line, and the lines after it still count.
        for line in bytes.split(|&b| b == b'\n') {
            let Ok(event) = serde_json::from_slice::<JournalEvent>(line) else {
                continue;
            };
            if event.seq > after {
                events.push(event);
                if events.len() >= limit {
                    break;
                }
            }
        }
        Ok(events)
    }

    /// Appends feedback to a finished or running run.
    pub fn append_feedback(
        &self,
        run_id: &str,
        score: Option<f64>,
        text: Option<String>,
        actor: &Actor,
    ) -> std::io::Result<JournalEvent> {
        let last = self
            .read(run_id, 0, usize::MAX)?
            .last()
            .map_or(0, |e| e.seq);
        let mut file = OpenOptions::new().append(true).open(self.path(run_id))?;
        let event = JournalEvent {
            seq: last + 1,
            at: now(),
            body: RunEvent::Feedback {
                score,
                text,
                actor: Some(actor.clone()),
            },
        };
        let mut line = serde_json::to_string(&event).map_err(std::io::Error::other)?;
        // After a torn line the new one must start on a line of its own.
        line.insert(0, '\n');
        line.push('\n');
        file.write_all(line.as_bytes())?;
        Ok(event)
    }
}
