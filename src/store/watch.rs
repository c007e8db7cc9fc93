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
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex, PoisonError, Weak};
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
    _armed: Arc<Mutex<Armed>>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher").finish_non_exhaustive()
    }
}

/// The OS watch and the one path it is on: the folder when it can be listed, else the
/// nearest folder above it that exists, so that its creation (or a `chmod` that makes it
/// readable) is an event like any other and no timer has to look for it.
struct Armed {
    watcher: RecommendedWatcher,
    on: Option<PathBuf>,
}

impl Armed {
    /// Moves the watch to `target`. Whether it moved.
    fn point_at(&mut self, target: &Path) -> notify::Result<bool> {
        if self.on.as_deref() == Some(target) {
            return Ok(false);
        }
        if let Some(old) = self.on.take() {
            // A folder that was removed took its watch with it: nothing to undo then.
            let _ = self.watcher.unwatch(&old);
        }
        self.watcher.watch(target, RecursiveMode::NonRecursive)?;
        self.on = Some(target.to_path_buf());
        Ok(true)
    }
}

/// Where the watch belongs, best first: on the folder while it can be listed, else on the
/// existing folders above it, nearest first (watched not recursively: one may be a busy
/// folder like `/tmp`, whose events then cost one listing attempt of the folder per debounced
/// batch). A folder above that cannot be watched (not readable either) gives way to the next.
fn watch_targets(store: &Store) -> Vec<PathBuf> {
    let root = store.root();
    if store.folder_problem().is_none() {
        return vec![root.to_path_buf()];
    }
    let mut targets = Vec::new();
    let mut at = root.parent();
    while let Some(dir) = at {
        // `workflows` has the parent `""`: the current folder, the last one a relative path
        // names (the parent of `.` is `""` again).
        if dir.as_os_str().is_empty() {
            targets.push(PathBuf::from("."));
            break;
        }
        if dir.is_dir() {
            targets.push(dir.to_path_buf());
        }
        at = dir.parent();
    }
    targets
}

/// Points the watch where the folder's state says, and reads the folder again each time the
/// watch moved: what changed before the new watch was in place was seen by no watch. A few
/// rounds at most (a folder created and removed over and over must not hold the thread).
/// A folder that can be listed but not watched is an error; a problem folder with nothing
/// watchable above it is only logged (the studio still opens, without following it).
fn settle(store: &Store, armed: &Mutex<Armed>) -> notify::Result<()> {
    for _ in 0..8 {
        let mut failed = None;
        let mut moved = None;
        {
            let mut armed = armed.lock().unwrap_or_else(PoisonError::into_inner);
            for target in watch_targets(store) {
                match armed.point_at(&target) {
                    Ok(m) => {
                        moved = Some(m);
                        break;
                    }
                    Err(e) => failed = Some(e),
                }
            }
        }
        match (moved, failed) {
            (Some(false), _) => return Ok(()),
            (Some(true), _) => {}
            (None, Some(e)) if store.folder_problem().is_none() => return Err(e),
            (None, failed) => {
                tracing::warn!(
                    "{}: no folder above it can be watched ({}): it will not be followed",
                    store.root().display(),
                    failed.map_or_else(|| "none exists".to_string(), |e| e.to_string())
                );
                return Ok(());
            }
        }
        if let Err(e) = store.rescan() {
            tracing::warn!("rescanning {}: {e}", store.root().display());
        }
    }
    Ok(())
}

impl Watcher {
    /// Starts watching the store's folder (or, while it cannot be listed, the folder above
    /// it). Changes are applied to the store, which publishes them to its subscribers.
    pub fn start(store: &Arc<Store>) -> Result<Watcher, StoreError> {
        let root = store.root().to_path_buf();
        let io = |e: notify::Error| StoreError::io(&root, std::io::Error::other(e));
        let (tx, events) = channel();
        let watcher = notify::recommended_watcher(move |event| {
            let _ = tx.send(event);
        })
        .map_err(io)?;
        let armed = Arc::new(Mutex::new(Armed { watcher, on: None }));
        settle(store, &armed).map_err(io)?;
        let weak: Weak<Store> = Arc::downgrade(store);
        let weak_armed = Arc::downgrade(&armed);
        std::thread::Builder::new()
            .name("store-watch".into())
            .spawn(move || debounce(&events, &weak, &weak_armed))
            .map_err(|e| StoreError::io(&root, e))?;
        // Anything that changed between the first load and the start of the watch.
        store.rescan()?;
        settle(store, &armed).map_err(io)?;
        Ok(Watcher { _armed: armed })
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
            // Opening, reading and closing change nothing; and a rescan opens the folder
            // itself, so counting its own open as a change would rescan for ever.
            Ok(event) if matches!(event.kind, notify::EventKind::Access(_)) => {}
            Ok(event) => {
                self.rescan |= event.need_rescan();
                // The folder itself (removed, moved, its mode changed): list it again.
                // (While it cannot be listed, `apply` lists it on any event at all.)
                self.rescan |= event.paths.iter().any(|p| p == root);
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
        if self.rescan || store.folder_problem().is_some() {
            if let Err(e) = store.rescan() {
                tracing::warn!("rescanning {}: {e}", store.root().display());
            }
        } else if !self.files.is_empty() {
            let files: Vec<String> = self.files.into_iter().collect();
            store.refresh_files(&files);
        }
    }
}

/// The watch thread: blocks until the OS reports something, gathers until quiet, applies,
/// and moves the watch when the folder appeared or went. Ends when the watcher is dropped
/// (its sender with it) or the store is gone.
fn debounce(
    events: &Receiver<notify::Result<notify::Event>>,
    store: &Weak<Store>,
    armed: &Weak<Mutex<Armed>>,
) {
    // The OS names what changed by absolute paths (notify makes a relative watch absolute):
    // the folder `workflows`, as `flowdeck` run in a project names it, must be compared in
    // that form, or no change in it would ever be seen.
    let root = match store.upgrade() {
        Some(live) => {
            std::path::absolute(live.root()).unwrap_or_else(|_| live.root().to_path_buf())
        }
        None => return,
    };
    while let Ok(first) = events.recv() {
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
        if let Some(armed) = armed.upgrade()
            && let Err(e) = settle(&live, &armed)
        {
            tracing::warn!("watching {}: {e}", live.root().display());
        }
        if !open {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_being_opened_or_read_is_no_change() {
        use notify::event::{AccessKind, AccessMode, EventKind, ModifyKind};
        let root = Path::new("/flows");
        let on_root = |kind| Ok(notify::Event::new(kind).add_path(root.to_path_buf()));
        let mut batch = Batch::default();
        batch.add(
            on_root(EventKind::Access(AccessKind::Open(AccessMode::Any))),
            root,
        );
        batch.add(
            on_root(EventKind::Access(AccessKind::Close(AccessMode::Read))),
            root,
        );
        assert!(!batch.rescan && batch.files.is_empty());
        // Its mode changing is.
        batch.add(on_root(EventKind::Modify(ModifyKind::Any)), root);
        assert!(batch.rescan);
    }

    #[test]
    fn a_missing_folder_is_watched_from_the_nearest_folder_above_it_and_a_relative_one_ends() {
        let top = tempfile::tempdir().expect("a temp folder");
        let store = Store::open_lenient(top.path().join("a").join("b")).expect("lenient");
        assert!(store.folder_problem().is_some());
        let targets = watch_targets(&store);
        assert_eq!(targets.first().map(PathBuf::as_path), Some(top.path()));

        // A relative path ends at the current folder (whose parent is "" again).
        let store = Store::open_lenient("no-such-folder-here/workflows").expect("lenient");
        assert_eq!(watch_targets(&store), vec![PathBuf::from(".")]);

        let store = Store::open_lenient(top.path()).expect("lenient");
        assert_eq!(watch_targets(&store), vec![top.path().to_path_buf()]);
    }
}
