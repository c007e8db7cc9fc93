//! The run journal: every run appended as JSON lines to `DIR/.flowdeck/runs/<run_id>.jsonl` as
//! it happens. It is the run history: listed, read from a cursor, given feedback, purged. A
//! torn last line (a crash mid-write) is skipped when read. Here: the journal's lines and the
//! folder; a run's file in `files.rs`, the workflow index in `index.rs`, summaries and lists in
//! `summaries.rs`, recovery and purging in `recovery.rs`, the runs' terminal recordings
//! beside their journals in `recordings.rs`.

mod ending;
mod files;
mod index;
mod recordings;
mod recovery;
mod summaries;
mod writer;

use super::{ContractPhase, StepStatus, WrittenFinalState};
use crate::actor::Actor;
use chrono::{DateTime, SecondsFormat, Utc};
pub use ending::{result_from_journal, span_ms};
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
pub use writer::JournalWriter;

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
    /// Who started it, as its first line says (absent in journals of older flowdeck versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_by: Option<Actor>,
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
    /// Its terminal was recorded (`flowdeck replay RUN_ID` plays it; run_status names the
    /// files). Left out when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recorded: bool,
}

impl RunSummary {
    /// A run that has started and not ended yet.
    pub fn started(
        run_id: String,
        workflow: String,
        started_at: String,
        session_id: Option<String>,
        started_by: Option<Actor>,
    ) -> Self {
        RunSummary {
            run_id,
            workflow,
            started_at,
            session_id,
            started_by,
            final_state: None,
            success: None,
            states_executed: None,
            duration_ms: None,
            error: None,
            feedback: Vec::new(),
            recorded: false,
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
/// Where the runs of the workflows folder `folder` are journaled (and recorded).
pub fn runs_dir(folder: &Path) -> PathBuf {
    folder.join(crate::store::META_DIR).join("runs")
}

impl Journal {
    pub fn new(dir: PathBuf) -> Self {
        Journal {
            dir,
            names: Mutex::new(None),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, run_id: &str) -> PathBuf {
        self.dir.join(format!("{run_id}.jsonl"))
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
    use std::fs::{self, OpenOptions};
    use std::io::Write;

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
