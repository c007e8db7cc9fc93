//! Watching the workflows folder. The folder is watched, not the files, so that editors that
//! save by renaming a new file over the old one (vim) or by truncating and rewriting (VS Code)
//! are seen like any other write. Events are debounced; when the OS reports lost events, the
//! whole folder is rescanned.
//!
//! The debounce is ours, a thread that blocks until the OS reports something and then gathers
//! events until the folder has been quiet for [`DEBOUNCE`]: a quiet folder costs no wake-up at
//! all (the studio sits idle at 0 % CPU), where a ticking debouncer wakes 40 times a second.

use super::{Store, StoreError, is_manifest_name};
use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// How long the folder must be quiet before a change is read: long enough to see a save's
/// several writes as one, short enough that a change shows within a quarter of a second.
pub const DEBOUNCE: Duration = Duration::from_millis(50);
/// A folder that never goes quiet (a file rewritten every few milliseconds) is still read at
/// least this often.
const LONGEST_BATCH: Duration = Duration::from_millis(500);

/// A running watch; dropping it stops watching (and its thread, once it has applied what it
/// gathered).
pub struct Watcher {
    _watcher: RecommendedWatcher,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher").finish_non_exhaustive()
    }
}

impl Watcher {
    /// Starts watching the store's folder. Changes are applied to the store, which publishes
    /// them to its subscribers.
    pub fn start(store: &Arc<Store>) -> Result<Watcher, StoreError> {
        let root = store.root().to_path_buf();
        let io = |e: notify::Error| StoreError::io(&root, std::io::Error::other(e));
        let (tx, events) = channel();
        let mut watcher = notify::recommended_watcher(move |event| {
            let _ = tx.send(event);
        })
        .map_err(io)?;
        watcher
            .watch(&root, RecursiveMode::NonRecursive)
            .map_err(io)?;
        let weak: Weak<Store> = Arc::downgrade(store);
        std::thread::Builder::new()
            .name("store-watch".into())
            .spawn(move || debounce(&events, &weak))
            .map_err(|e| StoreError::io(&root, e))?;
        // Anything that changed between the first load and the start of the watch.
        store.rescan()?;
        Ok(Watcher { _watcher: watcher })
    }
}

/// What one quiet period's events ask of the store.
#[derive(Default)]
struct Batch {
    files: BTreeSet<String>,
    rescan: bool,
}

impl Batch {
    fn add(&mut self, event: notify::Result<notify::Event>, root: &Path) {
        match event {
            Ok(event) => {
                self.rescan |= event.need_rescan();
                let names = event
                    .paths
                    .iter()
                    .filter(|p| p.parent() == Some(root))
                    .filter_map(|p| p.file_name()?.to_str().map(str::to_string))
                    .filter(|name| is_manifest_name(name));
                self.files.extend(names);
            }
            Err(e) => {
                tracing::warn!("watching {}: {e}", root.display());
                self.rescan = true;
            }
        }
    }

    fn apply(self, store: &Store) {
        if self.rescan {
            if let Err(e) = store.rescan() {
                tracing::warn!("rescanning {}: {e}", store.root().display());
            }
        } else if !self.files.is_empty() {
            let files: Vec<String> = self.files.into_iter().collect();
            store.refresh_files(&files);
        }
    }
}

/// The watch thread: blocks until the OS reports something, gathers until quiet, applies.
/// Ends when the watcher is dropped (its sender with it) or the store is gone.
fn debounce(events: &Receiver<notify::Result<notify::Event>>, store: &Weak<Store>) {
    while let Ok(first) = events.recv() {
        let Some(live) = store.upgrade() else { return };
        let root = live.root().to_path_buf();
        drop(live);
        let mut batch = Batch::default();
        batch.add(first, &root);
        let started = Instant::now();
        let mut open = true;
        while open && started.elapsed() < LONGEST_BATCH {
            match events.recv_timeout(DEBOUNCE) {
                Ok(event) => batch.add(event, &root),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => open = false,
            }
        }
        let Some(live) = store.upgrade() else { return };
        batch.apply(&live);
        if !open {
            return;
        }
    }
}
