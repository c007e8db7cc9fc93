//! The run history as lists show it: a run's summary folded from its journal (its ending read
//! the way `run_status` reads it), and the runs of a workflow, or of all, newest first.

use super::{
    Feedback, Journal, JournalEvent, RunEvent, RunSummary, is_run_id, result_from_journal,
};
use std::fs::{self};

impl Journal {
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
                actor,
                ..
            } => Some(RunSummary::started(
                run_id.clone(),
                workflow.clone(),
                event.at.clone(),
                session_id.clone(),
                actor.clone(),
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
        let names: Vec<String> = match fs::read_dir(&self.dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect(),
            Err(_) => Vec::new(),
        };
        let mut ids: Vec<String> = names
            .iter()
            .filter_map(|name| {
                let id = name.strip_suffix(".jsonl")?;
                is_run_id(id).then(|| id.to_string())
            })
            .collect();
        // Runs with a recording (recordings.rs), from the same listing.
        let recorded: std::collections::HashSet<&str> = names
            .iter()
            .filter(|name| name.ends_with(".cast"))
            .filter_map(|name| name.split('.').next())
            .collect();
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
            if let Some(mut summary) = self.summary(&id) {
                summary.recorded = recorded.contains(id.as_str());
                runs.push(summary);
            }
        }
        runs
    }
}
