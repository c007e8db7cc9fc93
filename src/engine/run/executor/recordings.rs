//! The run's terminal recordings: each session the run works in is recorded from the moment
//! it does until the run ends (term/recording/), beside the run's journal, with the run's
//! secrets masked as the journal masks them, and marked with each state the run enters (a
//! recording begun mid-run starts with the state it began in), then how the run ended.

use super::Exec;
use crate::engine::contract::MASK;
use crate::term::recording::RecordOptions;

impl Exec<'_> {
    /// Starts recording a session, unless it already is or recordings are off. A recording
    /// that cannot start is logged; the run goes on without it.
    pub(super) fn start_recording(&mut self, session_id: &str) {
        let Ok(session) = self.engine.terminals().get(session_id) else {
            return;
        };
        if !self.worked_in.iter().any(|id| id == session_id) {
            session.learn_secrets(self.secrets.needles());
            self.worked_in.push(session_id.to_string());
        }
        let Some(cap) = self.engine.config().recording_cap else {
            return;
        };
        if self.recordings.iter().any(|(id, _)| id == session_id) {
            return;
        }
        let run_id = &self.run.run_id;
        let path =
            self.engine
                .journal()
                .recording_path(run_id, session_id, self.recordings.is_empty());
        let options = RecordOptions {
            path,
            title: format!("flowdeck run {run_id}: {} ({session_id})", self.wf.name),
            secrets: self.secrets.needles().to_vec(),
            mask: MASK.to_string(),
            cap,
            format: self.engine.config().recording_format,
        };
        match session.record(options) {
            Ok(recording) => {
                if let Some(state) = &self.last_state {
                    recording.marker(state);
                }
                self.recordings.push((session_id.to_string(), recording));
            }
            Err(e) => tracing::warn!("run {run_id}: session {session_id} is not recorded: {e}"),
        }
    }

    /// The run is at `name` (a state it entered, or how it ended): a marker in every
    /// recording it has open.
    pub(super) fn mark_recordings(&self, name: &str) {
        for (_, recording) in &self.recordings {
            recording.marker(name);
        }
    }

    /// The run learned secrets: masked in its recordings from now on.
    pub(super) fn mask_recordings(&self) {
        for (_, recording) in &self.recordings {
            recording.mask(self.secrets.needles().to_vec());
        }
        for id in &self.worked_in {
            if let Ok(session) = self.engine.terminals().get(id) {
                session.learn_secrets(self.secrets.needles());
            }
        }
    }

    /// Ends the run's recordings and returns their files.
    pub(super) async fn finish_recordings(&mut self) -> Vec<String> {
        let recordings = std::mem::take(&mut self.recordings);
        if recordings.is_empty() {
            return Vec::new();
        }
        let finished = tokio::task::spawn_blocking(move || {
            recordings
                .into_iter()
                .map(|(_, recording)| recording.finish())
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        let run_id = &self.run.run_id;
        for recorded in &finished {
            if let Some(error) = &recorded.error {
                tracing::warn!("run {run_id}: its recording is incomplete: {error}");
            }
            if recorded.left_out > 0 {
                tracing::info!(
                    "run {run_id}: {} bytes of output past the recording cap were not recorded in {}",
                    recorded.left_out,
                    recorded.path.display()
                );
            }
        }
        finished
            .into_iter()
            .map(|r| r.path.display().to_string())
            .collect()
    }
}
