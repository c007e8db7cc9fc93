//! Each run's workflow, kept in `runs/.index` (`run_id<TAB>workflow` lines) so that listing a
//! workflow's runs never opens thousands of journals; a run missing from it is learned from
//! its journal's first line.

use super::{INDEX, Journal, JournalEvent, RunEvent, is_run_id};
use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;

impl Journal {
    /// The workflow a run ran, from the index or its journal's first line.
    pub(super) fn workflow_of(&self, run_id: &str) -> Option<String> {
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

    pub(super) fn load_index(&self) -> HashMap<String, String> {
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

    pub(super) fn remember(&self, run_id: &str, workflow: &str) {
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
    pub(super) fn first_line_workflow(&self, run_id: &str) -> Option<String> {
        match self.first_line(run_id)? {
            RunEvent::RunStarted { workflow, .. } => Some(workflow),
            _ => None,
        }
    }

    /// A journal's first line (its `run_started`), read alone.
    pub(super) fn first_line(&self, run_id: &str) -> Option<RunEvent> {
        use std::io::BufRead;
        let file = File::open(self.path(run_id)).ok()?;
        let mut line = Vec::new();
        std::io::BufReader::new(file)
            .take(1 << 20)
            .read_until(b'\n', &mut line)
            .ok()?;
        serde_json::from_slice::<JournalEvent>(line.trim_ascii_end())
            .ok()
            .map(|event| event.body)
    }
}
