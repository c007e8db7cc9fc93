//! Per-workflow run metadata in `DIR/.flowdeck/workflows.json`: run count, last run, last
//! result. Never in the manifest.

use super::result::{FinalState, WrittenFinalState};
use crate::store::files::write_atomic;
use crate::store::lock::{LOCK_WAIT, StateLock};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const FILE: &str = "workflows.json";
/// Held by every flowdeck process on the folder across reading, changing and writing `FILE`,
/// so that two processes recording runs at once both count.
const LOCK: &str = "workflows.json.lock";

/// What flowdeck remembers about one workflow's runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkflowMeta {
    pub runs: u64,
    pub last_run_id: Option<String>,
    pub last_final_state: Option<WrittenFinalState>,
    pub last_success: Option<bool>,
    pub last_finished_at: Option<String>,
}

/// The metadata file, updated under a lock (this process's, then every process's) with atomic
/// writes.
#[derive(Debug)]
pub struct Metadata {
    dir: PathBuf,
    path: PathBuf,
    lock: Mutex<()>,
}

impl Metadata {
    pub fn new(meta_dir: &Path) -> Self {
        Metadata {
            dir: meta_dir.to_path_buf(),
            path: meta_dir.join(FILE),
            lock: Mutex::new(()),
        }
    }

    /// Everything recorded (an unreadable file reads as empty and is rewritten on the next run).
    pub fn all(&self) -> BTreeMap<String, WorkflowMeta> {
        std::fs::read(&self.path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    pub fn get(&self, workflow: &str) -> WorkflowMeta {
        self.all().remove(workflow).unwrap_or_default()
    }

    /// This process's lock, then every process's. Without the second, the metadata is still
    /// written (atomically), at the risk of a record lost to another process.
    fn lock(&self) -> (std::sync::MutexGuard<'_, ()>, Option<StateLock>) {
        let guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let folder = StateLock::at(&self.dir.join(LOCK), LOCK_WAIT)
            .map_err(|e| tracing::warn!("cannot lock {}: {e}", self.path.display()))
            .ok();
        (guard, folder)
    }

    /// Records a finished run.
    pub fn record(&self, workflow: &str, run_id: &str, final_state: FinalState, at: &str) {
        let _locked = self.lock();
        let mut all = self.all();
        let meta = all.entry(workflow.to_string()).or_default();
        meta.runs += 1;
        meta.last_run_id = Some(run_id.to_string());
        meta.last_final_state = Some(final_state.into());
        meta.last_success = Some(final_state == FinalState::Completed);
        meta.last_finished_at = Some(at.to_string());
        match serde_json::to_vec_pretty(&all) {
            Ok(bytes) => {
                if let Err(e) = write_atomic(&self.dir, FILE, &bytes) {
                    tracing::warn!("cannot write {}: {e}", self.path.display());
                }
            }
            Err(e) => tracing::warn!("run metadata: {e}"),
        }
    }

    /// Forgets one workflow's record, or all.
    pub fn forget(&self, workflow: Option<&str>) {
        let _locked = self.lock();
        let mut all = self.all();
        match workflow {
            Some(w) => {
                all.remove(w);
            }
            None => all.clear(),
        }
        if let Ok(bytes) = serde_json::to_vec_pretty(&all) {
            let _ = write_atomic(&self.dir, FILE, &bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two `Metadata` on one folder stand for two flowdeck processes: each has its own
    /// in-process lock, as separate processes would.
    #[test]
    fn records_from_two_processes_are_all_kept() {
        let dir = tempfile::tempdir().expect("dir");
        let (a, b) = (Metadata::new(dir.path()), Metadata::new(dir.path()));
        const EACH: u64 = 50;
        std::thread::scope(|s| {
            for (who, meta) in [("a", &a), ("b", &b)] {
                s.spawn(move || {
                    for i in 0..EACH {
                        meta.record("shared", &format!("{who}{i}"), FinalState::Completed, "now");
                    }
                });
            }
        });
        assert_eq!(a.get("shared").runs, 2 * EACH, "no run lost");
    }
}
