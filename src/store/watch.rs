//! Watching the workflows folder. The folder is watched, not the files, so that editors that
//! save by renaming a new file over the old one (vim) or by truncating and rewriting (VS Code)
//! are seen like any other write. Events are debounced; when the OS reports lost events, the
//! whole folder is rescanned.

use super::{Store, StoreError, is_manifest_name};
use notify::RecursiveMode;
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};
use std::collections::BTreeSet;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// How long the folder must be quiet before a change is read: long enough to see a save's
/// several writes as one, short enough that a change shows within a quarter of a second.
pub const DEBOUNCE: Duration = Duration::from_millis(50);
/// How often the debouncer checks for quiet files.
const TICK: Duration = Duration::from_millis(25);

/// A running watch; dropping it stops watching.
pub struct Watcher {
    _debouncer: Debouncer<notify::RecommendedWatcher, RecommendedCache>,
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
        let weak: Weak<Store> = Arc::downgrade(store);
        let root = store.root().to_path_buf();
        let handler = move |result: DebounceEventResult| {
            let Some(store) = weak.upgrade() else { return };
            match result {
                Ok(events) => {
                    if events.iter().any(|e| e.need_rescan()) {
                        rescan(&store);
                        return;
                    }
                    let files: BTreeSet<String> = events
                        .iter()
                        .flat_map(|e| e.paths.iter())
                        .filter(|p| p.parent() == Some(store.root()))
                        .filter_map(|p| p.file_name()?.to_str().map(str::to_string))
                        .filter(|name| is_manifest_name(name))
                        .collect();
                    let files: Vec<String> = files.into_iter().collect();
                    store.refresh_files(&files);
                }
                Err(errors) => {
                    for e in errors {
                        tracing::warn!("watching {}: {e}", store.root().display());
                    }
                    rescan(&store);
                }
            }
        };
        let mut debouncer = new_debouncer(DEBOUNCE, Some(TICK), handler)
            .map_err(|e| StoreError::io(&root, std::io::Error::other(e)))?;
        debouncer
            .watch(&root, RecursiveMode::NonRecursive)
            .map_err(|e| StoreError::io(&root, std::io::Error::other(e)))?;
        // Anything that changed between the first load and the start of the watch.
        store.rescan()?;
        Ok(Watcher {
            _debouncer: debouncer,
        })
    }
}

fn rescan(store: &Store) {
    if let Err(e) = store.rescan() {
        tracing::warn!("rescanning {}: {e}", store.root().display());
    }
}
