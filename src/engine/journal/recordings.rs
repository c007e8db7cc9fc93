//! A run's recordings beside its journal: `<run_id>.cast` for the session the run began in,
//! `<run_id>.<session>.cast` for each other session it worked in (recording/ in term).

use super::{Journal, is_run_id};
use std::path::PathBuf;

impl Journal {
    /// Where a run's recording of a session goes: `first` is the session it began in.
    pub fn recording_path(&self, run_id: &str, session: &str, first: bool) -> PathBuf {
        if first {
            return self.dir.join(format!("{run_id}.cast"));
        }
        // Session ids are flowdeck's own (`s3`); anything else is kept out of the name.
        let session: String = session
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
            .collect();
        self.dir.join(format!("{run_id}.{session}.cast"))
    }

    /// A run's recordings on disk, the session it began in first.
    pub fn recordings(&self, run_id: &str) -> Vec<PathBuf> {
        if !is_run_id(run_id) {
            return Vec::new();
        }
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|name| {
                    name.strip_prefix(run_id).is_some_and(|rest| {
                        rest == ".cast" || (rest.starts_with('.') && rest.ends_with(".cast"))
                    })
                })
            })
            .collect();
        // `RUN.cast` sorts before `RUN.s2.cast`; session numbers in order after it.
        found.sort_by_key(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (name.len(), name)
        });
        found
    }

    /// Removes a run's recordings (with its journal, by a purge).
    pub(super) fn remove_recordings(&self, run_id: &str) {
        for path in self.recordings(run_id) {
            let _ = std::fs::remove_file(path);
        }
    }
}
