//! The workflows folder on disk: loading every manifest, saving atomically with optimistic
//! concurrency, renaming and deleting, watching for changes, and flowdeck's own state folder.
//!
//! The store uses `workflow` and nothing above it: it never calls the engine. Observers learn
//! of changes by [`Store::subscribe`]; every change, whether made through the store or by an
//! editor on disk, is published the same way.

pub mod approvals;
mod catalog;
mod entry;
mod error;
pub mod files;
mod folder;
pub mod lock;
mod read;
pub mod recovery;
mod rename;
pub use rename::rewrite_name;
pub mod state_dir;
mod subscription;
mod watch;
mod write;

pub use catalog::{Catalog, Change, ChangeKind};
pub use entry::{Entry, LastGood, Validated, WorkflowStatus};
pub use error::StoreError;
pub use files::{META_DIR, content_version, is_manifest_name, write_atomic};
pub use folder::{FolderProblem, FolderProblemKind};
pub use read::{Contents, FileKind, FileRead, ReadError, read_manifest};
pub use subscription::Subscription;
pub use watch::Watcher;

use crate::workflow::{Format, Workflow};
use lock::StateLock;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Files read one after the other below this many. A manifest reads and checks in a tenth of
/// a millisecond or so, and waking the thread pool for a handful costs more than that: its
/// idle workers spin (yielding the CPU in a loop) before they sleep again, and at hundreds of
/// saves a second that spinning took the CPU from every agent's calls (docs/PERFORMANCE.md).
const PARALLEL_LOAD: usize = 16;
/// What a save, rename or delete did.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Saved {
    pub name: String,
    pub file_name: String,
    /// The new content version (`None` after a delete).
    pub version: Option<String>,
    /// The version that was replaced, if any.
    pub previous_version: Option<String>,
}

/// A request to save a manifest.
#[derive(Debug, Clone, Default)]
pub struct SaveRequest<'a> {
    pub content: &'a str,
    /// The format of `content`; guessed from it when not given.
    pub format: Option<Format>,
    /// The version the caller last saw; the save fails with a conflict if the file is now
    /// different (or gone). `None` with an existing file needs `overwrite`.
    pub expected_version: Option<&'a str>,
    pub overwrite: bool,
    /// Tags the changes this save causes (see [`Change::author`]).
    pub author: Option<&'a str>,
    /// Save into this file of the folder, whatever name the text declares or whether it
    /// parses at all: an editor's work in progress goes back to the file it came from.
    pub file_name: Option<&'a str>,
}

/// The workflows folder.
#[derive(Debug)]
pub struct Store {
    root: PathBuf,
    catalog: RwLock<Catalog>,
    /// Serializes writes within the process; [`StateLock::writes`] does it across processes.
    write_lock: Mutex<()>,
    /// Serializes reading files into the catalog, so that an older read is never applied
    /// after a newer one. Files are read and checked under this lock only, never under the
    /// catalog's, so that readers of the catalog never wait for the disk.
    scan_lock: Mutex<()>,
    subscribers: Mutex<Vec<subscription::Subscriber>>,
    /// Whether a folder that cannot be listed is lived with (recorded in `problem`, the
    /// catalog emptied) rather than an error: the studio, which must open and say so.
    lenient: bool,
    /// What is wrong with the folder itself, as the last scan found it.
    problem: RwLock<Option<FolderProblem>>,
}

/// A write in progress: this process's lock, then every process's.
struct Writing<'a> {
    _folder: StateLock,
    _process: MutexGuard<'a, ()>,
}

/// A file read for the catalog.
enum Loaded {
    Gone,
    /// The catalog holds this version already.
    Unchanged,
    Read(Box<Validated>),
}

impl Store {
    /// Opens a workflows folder and loads every manifest in it; a folder that does not exist
    /// or cannot be read is an error.
    pub fn open(root: impl Into<PathBuf>) -> Result<Arc<Store>, StoreError> {
        let root = root.into();
        if !root.is_dir() {
            return Err(StoreError::NoFolder(root));
        }
        let store = Arc::new(Store::new(root, false));
        store.rescan()?;
        Ok(store)
    }

    /// Opens a workflows folder whatever state it is in: one that does not exist, is a file
    /// or cannot be read gives an empty store with the problem on record
    /// ([`Store::folder_problem`]), and a later [`Store::rescan`] (the watcher's, when the
    /// folder changes) picks the folder up once it is fixed.
    pub fn open_lenient(root: impl Into<PathBuf>) -> Result<Arc<Store>, StoreError> {
        let store = Arc::new(Store::new(root.into(), true));
        store.rescan()?;
        Ok(store)
    }

    fn new(root: PathBuf, lenient: bool) -> Store {
        Store {
            root,
            catalog: RwLock::new(Catalog::default()),
            write_lock: Mutex::new(()),
            scan_lock: Mutex::new(()),
            subscribers: Mutex::new(Vec::new()),
            lenient,
            problem: RwLock::new(None),
        }
    }

    /// What is wrong with the folder itself (missing, not a folder, unreadable), as the last
    /// scan found it; `None` when it could be listed.
    pub fn folder_problem(&self) -> Option<FolderProblem> {
        self.problem
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Records what the folder's listing found; the change to publish when it differs.
    fn set_problem(&self, problem: Option<FolderProblem>) -> Option<Change> {
        let mut held = self.problem.write().unwrap_or_else(PoisonError::into_inner);
        if *held == problem {
            return None;
        }
        *held = problem;
        Some(Change {
            kind: ChangeKind::Folder,
            file_name: String::new(),
            name: String::new(),
            version: None,
            author: None,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Read access to the catalog of manifests.
    pub fn catalog(&self) -> RwLockReadGuard<'_, Catalog> {
        self.catalog.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn catalog_mut(&self) -> RwLockWriteGuard<'_, Catalog> {
        self.catalog.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes this process's write lock, then the folder's. Held across a version check and
    /// the write that follows it, so that two writers with one expected version, in one
    /// process or in two, cannot both win.
    fn lock_writes(&self) -> Result<Writing<'_>, StoreError> {
        let process = self
            .write_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let folder = StateLock::writes(&self.root).map_err(StoreError::lock)?;
        Ok(Writing {
            _folder: folder,
            _process: process,
        })
    }

    fn lock_scans(&self) -> MutexGuard<'_, ()> {
        self.scan_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A stream of every change from now on, bounded (subscription.rs). Dropping it
    /// unsubscribes.
    pub fn subscribe(&self) -> Subscription {
        let (subscriber, subscription) = subscription::pair();
        self.subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(subscriber);
        subscription
    }

    fn publish(&self, changes: Vec<Change>) {
        if changes.is_empty() {
            return;
        }
        let mut subscribers = self
            .subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        subscribers.retain(|subscriber| changes.iter().all(|c| subscriber.send(c)));
    }

    /// flowdeck's own state folder, `DIR/.flowdeck/`, created on first use, owner-only, with
    /// a `.gitignore` of `*` so that it never pollutes the user's repository.
    pub fn meta_dir(&self) -> Result<PathBuf, StoreError> {
        state_dir::ensure(&self.root).map_err(|e| StoreError::io(self.root.join(META_DIR), e))
    }

    /// Re-reads the whole folder (at start, and when the watcher lost events).
    pub fn rescan(&self) -> Result<Vec<Change>, StoreError> {
        let _scanning = self.lock_scans();
        let (on_disk, folder) = match self.manifest_files() {
            Ok(files) => (files, self.set_problem(None)),
            // The folder went away or became unreadable: its workflows are gone with it (a
            // run in progress keeps the version it started with), and the problem says why.
            Err(StoreError::Io { source, .. }) if self.lenient => (
                Vec::new(),
                self.set_problem(Some(FolderProblem::from_io(&self.root, &source))),
            ),
            Err(e) => return Err(e),
        };
        let gone: Vec<String> = self
            .catalog()
            .entries()
            .map(|e| e.file_name.clone())
            .filter(|f| on_disk.binary_search(f).is_err())
            .collect();
        let loaded = self.load(&on_disk);
        let changes = {
            let mut catalog = self.catalog_mut();
            let mut changes: Vec<Change> = folder.into_iter().collect();
            changes.extend(gone.iter().filter_map(|f| catalog.remove(f)));
            changes.extend(apply(&mut catalog, loaded));
            let folder = folder_changes(&mut catalog, &changes);
            changes.extend(folder);
            changes
        };
        self.publish(changes.clone());
        Ok(changes)
    }

    /// Re-reads one file after the watcher saw it change.
    pub fn refresh(&self, file_name: &str) -> Vec<Change> {
        self.refresh_files(&[file_name.to_string()])
    }

    /// Re-reads some files of the folder at once: read and checked on both cores, with one
    /// folder-level recheck for all of them (a `git checkout` changes hundreds).
    pub fn refresh_files(&self, files: &[String]) -> Vec<Change> {
        self.refresh_files_as(files, None)
    }

    /// Re-reads files this store just wrote, tagging the changes with their `author`. The
    /// caller holds the scan lock from before its write until this is done: otherwise the
    /// watcher could take the write's own events first and tell the change as nobody's.
    fn refresh_written(
        &self,
        _scanning: &MutexGuard<'_, ()>,
        files: &[&str],
        author: Option<&str>,
    ) -> Vec<Change> {
        let files: Vec<String> = files.iter().map(|f| f.to_string()).collect();
        self.refresh_locked(&files, author)
    }

    fn refresh_files_as(&self, files: &[String], author: Option<&str>) -> Vec<Change> {
        let _scanning = self.lock_scans();
        self.refresh_locked(files, author)
    }

    /// [`Store::refresh_files_as`] with the scan lock held.
    fn refresh_locked(&self, files: &[String], author: Option<&str>) -> Vec<Change> {
        let files: Vec<String> = files
            .iter()
            .filter(|f| is_manifest_name(f))
            .cloned()
            .collect();
        if files.is_empty() {
            return Vec::new();
        }
        let loaded = self.load(&files);
        let changes = {
            let mut catalog = self.catalog_mut();
            let mut changes = apply(&mut catalog, loaded);
            if !changes.is_empty() {
                let folder = folder_changes(&mut catalog, &changes);
                changes.extend(folder);
            }
            for change in &mut changes {
                change.author = author.map(str::to_string);
            }
            changes
        };
        self.publish(changes.clone());
        changes
    }

    /// Reads and checks files outside the catalog's lock: a folder's worth both cores at a
    /// time, a few (a save's candidates, a watcher's batch of edits) on the calling thread.
    fn load(&self, files: &[String]) -> Vec<(String, Loaded)> {
        let load_one = |file: &String| {
            let loaded = match FileRead::at(&self.root.join(file)) {
                None => Loaded::Gone,
                Some(read) if self.catalog().holds(file, &read.version) => Loaded::Unchanged,
                Some(read) => match Format::from_file_name(file) {
                    Some(format) => {
                        let checked = read.check(format);
                        Loaded::Read(Box::new(Validated::new(read, checked)))
                    }
                    None => Loaded::Gone,
                },
            };
            (file.clone(), loaded)
        };
        if files.len() < PARALLEL_LOAD {
            files.iter().map(load_one).collect()
        } else {
            files.par_iter().map(load_one).collect()
        }
    }

    /// Every manifest name in the folder, sorted, whatever it is on disk: a directory or a
    /// named pipe called `x.yaml` is listed with an error, not left out without a word.
    fn manifest_files(&self) -> Result<Vec<String>, StoreError> {
        let listed = folder::list(&self.root).map_err(|e| StoreError::io(&self.root, e))?;
        let mut names = Vec::new();
        for name in listed {
            match name.into_string() {
                Ok(name) if is_manifest_name(&name) => names.push(name),
                Ok(_) => {}
                Err(name) => {
                    if is_manifest_name(&name.to_string_lossy()) {
                        tracing::warn!(
                            "{}: a manifest name that is not UTF-8 cannot be loaded; rename it",
                            crate::workflow::names::sanitize(&name.to_string_lossy())
                        );
                    }
                }
            }
        }
        names.sort();
        Ok(names)
    }

    /// The workflow to run under `name`: the current version when valid, else the last valid
    /// one. Two files with the name, or a file that never was valid, is an error; so is
    /// `name.yaml` (or .yml, .json) when it does not parse and no file declares `name`.
    pub fn runnable(&self, name: &str) -> Result<(Arc<Workflow>, String), StoreError> {
        self.runnable_good(name)
            .map(|good| (good.workflow, good.version))
    }

    /// [`Store::runnable`] with the bytes of the version that runs (what a person approves).
    pub fn runnable_good(&self, name: &str) -> Result<LastGood, StoreError> {
        let catalog = self.catalog();
        let files = catalog.files_for(name);
        match files.as_slice() {
            [] => Err(StoreError::NotFound(name.to_string())),
            [entry] => match &entry.last_good {
                Some(good) => Ok(good.clone()),
                None => Err(StoreError::Invalid {
                    name: name.to_string(),
                    file: entry.file_name.clone(),
                    violations: entry.violations(),
                }),
            },
            many => Err(StoreError::DuplicateName {
                name: name.to_string(),
                files: many.iter().map(|e| e.file_name.clone()).collect(),
            }),
        }
    }

    /// The one file that defines `name`.
    pub fn entry(&self, name: &str) -> Result<Entry, StoreError> {
        let catalog = self.catalog();
        let files = catalog.files_named(name);
        match files.as_slice() {
            [] => Err(StoreError::NotFound(name.to_string())),
            [entry] => Ok((*entry).clone()),
            many => Err(StoreError::DuplicateName {
                name: name.to_string(),
                files: many.iter().map(|e| e.file_name.clone()).collect(),
            }),
        }
    }
}

/// Puts what was read into the catalog.
fn apply(catalog: &mut Catalog, loaded: Vec<(String, Loaded)>) -> Vec<Change> {
    loaded
        .into_iter()
        .filter_map(|(file, loaded)| match loaded {
            Loaded::Gone => catalog.remove(&file),
            Loaded::Unchanged => None,
            Loaded::Read(validated) => catalog.upsert(&file, *validated),
        })
        .collect()
}

/// Folder-level rechecks, as changes for the files they touched beyond `already`.
fn folder_changes(catalog: &mut Catalog, already: &[Change]) -> Vec<Change> {
    catalog
        .recheck_folder()
        .into_iter()
        .filter(|f| !already.iter().any(|c| &c.file_name == f))
        .filter_map(|f| {
            catalog.get_file(&f).map(|e| Change {
                author: None,
                kind: ChangeKind::Changed,
                file_name: f.clone(),
                name: e.name().to_string(),
                version: Some(e.version.clone()),
            })
        })
        .collect()
}
