//! Cleaning up after flowdeck processes that died: the journals of runs whose process died
//! mid-run are ended `interrupted`, and the history is purged on request (runs in progress
//! kept).

use super::writer::live_marker;
use super::{Journal, JournalEvent, Recovered, RunEvent, is_run_id, now, result_from_journal};
use indexmap::IndexMap;
use std::fs::{self, OpenOptions};
use std::io::Write;

impl Journal {
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
                self.remove_recordings(run_id);
                removed += 1;
            }
        }
        removed
    }
}
