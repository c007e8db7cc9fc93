//! The run journal: every run appended as JSON lines to `DIR/.flowdeck/runs/<run_id>.jsonl` as
//! it happens. It is the run history: listed, read from a cursor, given feedback, purged. A
//! torn last line (a crash mid-write) is skipped when read.

use super::events::Actor;
pub use super::journal_writer::JournalWriter;
use super::journal_writer::live_marker;
use super::run::ending::result_from_journal;
use super::{ContractPhase, StepStatus, WrittenFinalState};
use chrono::{DateTime, SecondsFormat, Utc};
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JournalEvent {
    /// 1, 2, 3, ... within the run: the cursor for reading on.
    pub seq: u64,
    /// RFC 3339, UTC, milliseconds.
    pub at: String,
    #[serde(flatten)]
    pub body: RunEvent,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RunEvent {
    RunStarted {
        run_id: String,
        workflow: String,
        version: Option<String>,
        /// The session the run works in: given, or the one it opened.
        session_id: Option<String>,
        /// Input names and values, secrets masked.
        inputs: IndexMap<String, String>,
        /// Who started it (absent in journals of older flowdeck versions).
        actor: Option<Actor>,
    },
    ContractChecked {
        phase: ContractPhase,
        valid: bool,
        detail: Value,
    },
    StepStarted {
        step: u32,
        state: String,
        tool: String,
        params: Value,
    },
    StepFinished {
        step: u32,
        state: String,
        tool: String,
        status: StepStatus,
        elapsed_ms: f64,
        /// The output the step observed, shortened.
        output: String,
        error: Option<String>,
    },
    Transition {
        from: String,
        to: Option<String>,
        condition: Option<String>,
    },
    WaitingForInput {
        state: String,
        prompt: String,
    },
    /// A question that was waiting is not any more: it timed out, or the run ended.
    PromptWithdrawn {
        state: String,
        reason: String,
    },
    Answered {
        state: String,
        valid: bool,
        issues: Vec<String>,
        /// Who answered (absent in journals of older flowdeck versions).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        actor: Option<Actor>,
    },
    RunFinished {
        final_state: WrittenFinalState,
        success: bool,
        states_executed: u32,
        error: Option<String>,
        return_values: IndexMap<String, String>,
        duration_ms: f64,
        /// Who cancelled the run, when it was cancelled.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cancelled_by: Option<Actor>,
    },
    Feedback {
        score: Option<f64>,
        text: Option<String>,
        /// Who gave it (absent in journals of older flowdeck versions).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        actor: Option<Actor>,
    },
}

/// The current time as journal timestamps write it.
pub fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// A run as the history lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunSummary {
    pub run_id: String,
    pub workflow: String,
    pub started_at: String,
    pub session_id: Option<String>,
    /// `None` while the run is going (or if it never finished: a crash).
    pub final_state: Option<WrittenFinalState>,
    pub success: Option<bool>,
    pub states_executed: Option<u32>,
    pub duration_ms: Option<f64>,
    /// Why it did not complete, as its last journal line says (an interrupted run's says its
    /// flowdeck died).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub feedback: Vec<Feedback>,
}

impl RunSummary {
    /// A run that has started and not ended yet.
    pub fn started(
        run_id: String,
        workflow: String,
        started_at: String,
        session_id: Option<String>,
    ) -> Self {
        RunSummary {
            run_id,
            workflow,
            started_at,
            session_id,
            final_state: None,
            success: None,
            states_executed: None,
            duration_ms: None,
            error: None,
            feedback: Vec::new(),
        }
    }

    /// Takes in the run's last line, when `line` is it (a summary followed live).
    pub fn ended_with(&mut self, line: &RunEvent) {
        if let RunEvent::RunFinished {
            final_state,
            success,
            states_executed,
            error,
            duration_ms,
            ..
        } = line
        {
            self.final_state = Some(final_state.clone());
            self.success = Some(*success);
            self.states_executed = Some(*states_executed);
            self.duration_ms = Some(*duration_ms);
            self.error = error.clone();
        }
    }
}

/// A run found cut off and ended `interrupted` by [`Journal::recover_interrupted`].
#[derive(Debug, Clone, PartialEq)]
pub struct Recovered {
    pub run_id: String,
    pub workflow: String,
    /// When its last line was written.
    pub at: String,
}

/// Feedback given on a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Feedback {
    pub score: Option<f64>,
    pub text: Option<String>,
    pub at: String,
}

/// The folder of run journals.
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    /// Each run's workflow, which never changes: how `list` filters thousands of runs
    /// without reading their journals. Kept in `runs/.index` across restarts; a run missing
    /// from it is learned from its journal's first line.
    names: Mutex<Option<HashMap<String, String>>>,
}

/// The file that keeps each run's workflow (`run_id<TAB>workflow` lines).
const INDEX: &str = ".index";

impl Journal {
    pub fn new(dir: PathBuf) -> Self {
        Journal {
            dir,
            names: Mutex::new(None),
        }
    }

    /// The workflow a run ran, from the index or its journal's first line.
    fn workflow_of(&self, run_id: &str) -> Option<String> {
        let mut names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        let names = names.get_or_insert_with(|| self.load_index());
        if let Some(name) = names.get(run_id) {
            return Some(name.clone());
        }
        let name = self.first_line_workflow(run_id)?;
        names.insert(run_id.to_string(), name.clone());
        self.remember(run_id, &name);
        Some(name)
    }

    fn load_index(&self) -> HashMap<String, String> {
        let Ok(text) = fs::read_to_string(self.dir.join(INDEX)) else {
            return HashMap::new();
        };
        text.lines()
            .filter_map(|line| {
                let (id, name) = line.split_once('\t')?;
                is_run_id(id).then(|| (id.to_string(), name.to_string()))
            })
            .collect()
    }

    fn remember(&self, run_id: &str, workflow: &str) {
        let appended = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(self.dir.join(INDEX))
            .and_then(|mut f| f.write_all(format!("{run_id}\t{workflow}\n").as_bytes()));
        if let Err(e) = appended {
            tracing::debug!("run index: {e}");
        }
    }

    /// The workflow named by a journal's first line (its `run_started`), read alone.
    fn first_line_workflow(&self, run_id: &str) -> Option<String> {
        use std::io::BufRead;
        let file = File::open(self.path(run_id)).ok()?;
        let mut line = Vec::new();
        std::io::BufReader::new(file)
            .take(1 << 20)
            .read_until(b'\n', &mut line)
            .ok()?;
        match serde_json::from_slice::<JournalEvent>(line.trim_ascii_end())
            .ok()?
            .body
        {
            RunEvent::RunStarted { workflow, .. } => Some(workflow),
            _ => None,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, run_id: &str) -> PathBuf {
        self.dir.join(format!("{run_id}.jsonl"))
    }

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

    /// Whether a run has a journal with a readable start (one without is damaged: no tool
    /// shows it, and purging removes it).
    pub fn exists(&self, run_id: &str) -> bool {
        self.summary(run_id).is_some()
    }

    /// Whether a flowdeck process is writing the run's journal: it holds the lock from the
    /// first line to the last. A journal with no end and no owner was cut off.
    pub fn is_owned(&self, run_id: &str) -> bool {
        if !is_run_id(run_id) {
            return false;
        }
        match File::open(self.path(run_id)) {
            Ok(file) => match file.try_lock_shared() {
                Ok(()) => false,
                Err(std::fs::TryLockError::WouldBlock) => true,
                Err(std::fs::TryLockError::Error(e)) => {
                    tracing::debug!("cannot probe the lock of run {run_id}: {e}");
                    false
                }
            },
            Err(_) => false,
        }
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

    /// The summary of one run, its ending read from its journal's last line (a run with no
    /// last line that nobody is writing was cut off: `interrupted`).
    pub fn summary(&self, run_id: &str) -> Option<RunSummary> {
        let events = self.read(run_id, 0, usize::MAX).ok()?;
        Self::summarize(&events, !self.is_owned(run_id))
    }

    /// The summary of a run's journal; `cut_off` when nobody is writing it.
    pub fn summarize(events: &[JournalEvent], cut_off: bool) -> Option<RunSummary> {
        let ended = result_from_journal(events, cut_off);
        let mut summary = events.iter().find_map(|event| match &event.body {
            RunEvent::RunStarted {
                run_id,
                workflow,
                session_id,
                ..
            } => Some(RunSummary::started(
                run_id.clone(),
                workflow.clone(),
                event.at.clone(),
                session_id.clone(),
            )),
            _ => None,
        })?;
        if let Some(ended) = ended {
            summary.final_state = Some(ended.final_state.into());
            summary.success = Some(ended.success);
            summary.states_executed = Some(ended.states_executed);
            summary.duration_ms = Some(ended.duration_ms);
            summary.error = ended.error;
        }
        summary.feedback = events
            .iter()
            .filter_map(|event| match &event.body {
                RunEvent::Feedback { score, text, .. } => Some(Feedback {
                    score: *score,
                    text: text.clone(),
                    at: event.at.clone(),
                }),
                _ => None,
            })
            .collect();
        Some(summary)
    }

    /// Runs, newest first, of one workflow or all, at most `limit`.
    pub fn list(&self, workflow: Option<&str>, limit: usize) -> Vec<RunSummary> {
        let mut ids: Vec<String> = match fs::read_dir(&self.dir) {
            Ok(entries) => entries
                .filter_map(|e| {
                    let name = e.ok()?.file_name().into_string().ok()?;
                    let id = name.strip_suffix(".jsonl")?;
                    is_run_id(id).then(|| id.to_string())
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        // Run ids start with the start time in milliseconds, fixed width: newest last.
        ids.sort();
        let mut runs = Vec::new();
        for id in ids.into_iter().rev() {
            if runs.len() >= limit {
                break;
            }
            // Only the runs listed are read whole.
            if let Some(w) = workflow
                && self.workflow_of(&id).as_deref() != Some(w)
            {
                continue;
            }
            if let Some(summary) = self.summary(&id) {
                runs.push(summary);
            }
        }
        runs
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

    /// Ends the journals of runs whose flowdeck died while they were in flight (a `kill -9`,
    /// a crash, a power cut): each gets a last `run_finished` event with the final state
    /// `interrupted` and the steps it had started. A run still going in another flowdeck
    /// process holds its journal's lock and is left alone. Returns the runs ended.
    pub fn recover_interrupted(&self) -> Vec<Recovered> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut recovered = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(run_id) = name.to_str().and_then(|n| n.strip_suffix(".live")) else {
                continue;
            };
            if !is_run_id(run_id) {
                continue;
            }
            let path = self.path(run_id);
            let Ok(mut file) = OpenOptions::new().append(true).open(&path) else {
                // No journal to end: a marker left by a purge or by hand.
                let _ = fs::remove_file(entry.path());
                continue;
            };
            if file.try_lock().is_err() {
                continue;
            }
            let events = self.read(run_id, 0, usize::MAX).unwrap_or_default();
            if events
                .iter()
                .any(|e| matches!(e.body, RunEvent::RunFinished { .. }))
            {
                let _ = fs::remove_file(entry.path());
                continue;
            }
            // The same facts a reader of the unended journal is told (`result_from_journal`).
            let Some(ended) = result_from_journal(&events, true) else {
                // No readable start: nothing to end.
                continue;
            };
            let event = JournalEvent {
                seq: events.last().map_or(0, |e| e.seq) + 1,
                at: now(),
                body: RunEvent::RunFinished {
                    final_state: ended.final_state.into(),
                    success: false,
                    states_executed: ended.states_executed,
                    error: ended.error,
                    return_values: IndexMap::new(),
                    duration_ms: ended.duration_ms,
                    cancelled_by: None,
                },
            };
            let Ok(mut line) = serde_json::to_string(&event) else {
                continue;
            };
            // After a torn line the new one must start on a line of its own.
            line.insert(0, '\n');
            line.push('\n');
            match file.write_all(line.as_bytes()) {
                Ok(()) => {
                    let _ = fs::remove_file(entry.path());
                    recovered.push(Recovered {
                        run_id: run_id.to_string(),
                        workflow: ended.workflow_name,
                        at: event.at,
                    });
                }
                Err(e) => tracing::warn!("cannot end the journal of run {run_id}: {e}"),
            }
        }
        recovered
    }

    /// Deletes the journals of one workflow's runs, or all; `keep` names runs still going here,
    /// and runs another flowdeck is writing are kept too. Purging all also removes damaged
    /// journals (no readable start) and stray in-flight markers.
    pub fn purge(&self, workflow: Option<&str>, keep: &[String]) -> usize {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return 0;
        };
        let mut removed = 0;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(run_id) = name.to_str().and_then(|n| n.strip_suffix(".jsonl")) else {
                continue;
            };
            if !is_run_id(run_id) || keep.iter().any(|k| k == run_id) || self.is_owned(run_id) {
                continue;
            }
            let matches = match (workflow, self.summary(run_id)) {
                (None, _) => true,
                (Some(w), Some(summary)) => summary.workflow == w,
                (Some(_), None) => false,
            };
            if matches && fs::remove_file(entry.path()).is_ok() {
                let _ = fs::remove_file(live_marker(&entry.path()));
                removed += 1;
            }
        }
        removed
    }
}

/// Run ids are `r<13 digits>-<4 hex>`: never a path.
pub fn is_run_id(id: &str) -> bool {
    let Some(rest) = id.strip_prefix('r') else {
        return false;
    };
    let Some((ms, tag)) = rest.split_once('-') else {
        return false;
    };
    ms.len() == 13
        && ms.bytes().all(|b| b.is_ascii_digit())
        && tag.len() == 4
        && tag.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A new run id: the start time in milliseconds and a random tag.
pub fn new_run_id(started: DateTime<Utc>) -> String {
    use std::hash::{BuildHasher, RandomState};
    let tag = RandomState::new().hash_one((started, std::process::id())) & 0xffff;
    format!("r{:013}-{tag:04x}", started.timestamp_millis().max(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::FinalState;

    #[test]
    fn run_ids_are_never_paths() {
        let id = new_run_id(Utc::now());
        assert!(is_run_id(&id), "{id}");
        for bad in [
            "../x",
            "r123",
            "r1234567890123-zzzz",
            "r1234567890123-abcd/..",
            "",
        ] {
            assert!(!is_run_id(bad), "{bad}");
        }
    }

    #[test]
    fn a_torn_last_line_is_skipped_and_feedback_still_appends() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::new(dir.path().join("runs"));
        let id = new_run_id(Utc::now());
        let mut w = journal.create(&id);
        w.append(RunEvent::RunStarted {
            run_id: id.clone(),
            workflow: "demo".into(),
            version: None,
            session_id: None,
            inputs: IndexMap::new(),
            actor: None,
        });
        w.finish_blocking();
        let path = dir.path().join("runs").join(format!("{id}.jsonl"));
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"seq\":2,\"at\":\"x\",\"type\":\"run_fin")
            .unwrap();
        let events = journal.read(&id, 0, 100).unwrap();
        assert_eq!(events.len(), 1);
        // A line torn inside a character does not hide the lines after it.
        f.write_all(b"\n{\"seq\":3,\"text\":\"caf\xc3").unwrap();
        assert_eq!(journal.read(&id, 0, 100).unwrap().len(), 1);
        let seq = journal
            .append_feedback(&id, Some(1.0), Some("good".into()), &Actor::person())
            .unwrap();
        assert_eq!(seq.seq, 2);
        let summary = journal.summary(&id).unwrap();
        assert_eq!(summary.feedback.len(), 1);
        // No end, and nobody writes it any more: cut off.
        assert_eq!(summary.final_state, Some(FinalState::Interrupted.into()));
        assert_eq!(journal.list(Some("demo"), 10).len(), 1);
        assert_eq!(journal.list(Some("other"), 10).len(), 0);
        assert_eq!(journal.purge(Some("demo"), &[]), 1);
        assert!(journal.list(None, 10).is_empty());
    }

    fn started(journal: &Journal, workflow: &str) -> (String, JournalWriter) {
        let id = new_run_id(Utc::now());
        let mut w = journal.create(&id);
        w.append(RunEvent::RunStarted {
            run_id: id.clone(),
            workflow: workflow.into(),
            version: None,
            session_id: None,
            inputs: IndexMap::new(),
            actor: None,
        });
        for step in 1..=2 {
            w.append(RunEvent::StepStarted {
                step,
                state: format!("s{step}"),
                tool: "send_input".into(),
                params: Value::Null,
            });
        }
        w.written_blocking();
        (id, w)
    }

    #[test]
    fn every_reader_agrees_on_damaged_cut_off_and_running_journals() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("runs");
        let journal = Journal::new(runs.clone());
        // Running: its writer holds the lock.
        let (running, mut writer) = started(&journal, "demo");
        assert!(journal.is_owned(&running));
        let summary = journal.summary(&running).unwrap();
        assert_eq!(summary.final_state, None);
        // Cut off: the same, once nobody writes it.
        writer.finish_blocking();
        assert!(!journal.is_owned(&running));
        let summary = journal.summary(&running).unwrap();
        assert_eq!(summary.final_state, Some(FinalState::Interrupted.into()));
        assert_eq!(summary.states_executed, Some(2));
        // Damaged: an empty file, garbage, and a stray marker.
        let empty = "r0000000000001-0000".to_string();
        let garbage = "r0000000000002-0000".to_string();
        fs::write(runs.join(format!("{empty}.jsonl")), b"").unwrap();
        fs::write(
            runs.join(format!("{garbage}.jsonl")),
            b"\x00\xffnot json\n{}\n",
        )
        .unwrap();
        fs::write(runs.join(format!("{garbage}.live")), b"").unwrap();
        for id in [&empty, &garbage] {
            assert!(!journal.exists(id), "{id}");
            assert!(journal.summary(id).is_none(), "{id}");
        }
        let listed: Vec<String> = journal
            .list(None, 100)
            .into_iter()
            .map(|s| s.run_id)
            .collect();
        assert_eq!(listed, vec![running.clone()]);
        // A live run is kept by a purge; everything else goes, damaged files and markers too.
        let (live, _writer) = started(&journal, "demo");
        assert_eq!(journal.purge(None, &[]), 3);
        let left: Vec<String> = fs::read_dir(&runs)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        let mut left = left;
        left.sort();
        assert_eq!(left, vec![format!("{live}.jsonl"), format!("{live}.live")]);
    }

    #[test]
    fn recovery_ends_dead_runs_and_leaves_live_ones() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::new(dir.path().join("runs"));
        let (dead, mut writer) = started(&journal, "demo");
        writer.finish_blocking();
        let (live, _writer) = started(&journal, "demo");
        let recovered = journal.recover_interrupted();
        assert_eq!(
            recovered
                .iter()
                .map(|r| r.run_id.as_str())
                .collect::<Vec<_>>(),
            vec![dead.as_str()]
        );
        assert_eq!(recovered[0].workflow, "demo");
        let events = journal.read(&dead, 0, 100).unwrap();
        match &events.last().unwrap().body {
            RunEvent::RunFinished {
                final_state,
                states_executed,
                ..
            } => {
                assert_eq!(*final_state, FinalState::Interrupted);
                assert_eq!(*states_executed, 2);
            }
            other => panic!("{other:?}"),
        }
        // Its summary reads that line: the ending and why.
        let summary = journal.summary(&dead).unwrap();
        assert_eq!(summary.final_state, Some(FinalState::Interrupted.into()));
        assert!(
            summary
                .error
                .is_some_and(|e| e.contains("killed or crashed"))
        );
        // Sequence numbers go on from the last event: cursors never go backwards.
        assert_eq!(events.last().unwrap().seq, 4);
        assert!(journal.recover_interrupted().is_empty());
        assert_eq!(journal.summary(&live).unwrap().final_state, None);
    }

    #[test]
    fn a_journal_that_cannot_be_written_says_so() {
        let dir = tempfile::tempdir().unwrap();
        // `runs` is a file: the journal cannot even be created.
        fs::write(dir.path().join("runs"), b"").unwrap();
        let journal = Journal::new(dir.path().join("runs"));
        let mut w = journal.create(&new_run_id(Utc::now()));
        w.finish_blocking();
        assert!(w.failure().unwrap().contains("could not be created"));
        // A full disk mid-run.
        let mut w = JournalWriter::start(
            PathBuf::from("/dev/full"),
            0,
            Box::new(|| {
                OpenOptions::new()
                    .append(true)
                    .open("/dev/full")
                    .map_err(|e| e.to_string())
            }),
        );
        w.written_blocking();
        assert!(w.failure().is_none());
        w.append(RunEvent::Feedback {
            score: None,
            text: None,
            actor: None,
        });
        w.finish_blocking();
        assert!(
            w.failure().unwrap().contains("could not be written"),
            "{:?}",
            w.failure()
        );
    }

    #[test]
    fn run_ids_are_reserved_on_disk_and_never_shared() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::new(dir.path().join("runs"));
        let at = Utc::now();
        let ids: std::collections::HashSet<String> =
            (0..500).map(|_| journal.reserve(at)).collect();
        // 500 runs in the same millisecond: 16 random bits would collide; the disk does not.
        assert_eq!(ids.len(), 500);
        let id = ids.iter().next().unwrap().clone();
        assert!(journal.path(&id).is_file());
        journal.release(&id);
        assert!(!journal.path(&id).exists());
    }
}
