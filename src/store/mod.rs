//! The workflows folder on disk: loading every manifest, saving atomically with optimistic
//! concurrency, renaming and deleting, watching for changes, and flowdeck's own state folder.
//!
//! The store uses `workflow` and nothing above it: it never calls the engine. Observers learn
//! of changes by [`Store::subscribe`]; every change, whether made through the store or by an
//! editor on disk, is published the same way.

mod catalog;
mod entry;
mod error;
pub mod files;
mod rename;
mod watch;

pub use catalog::{Catalog, Change, ChangeKind};
pub use entry::{Entry, LastGood, Status};
pub use error::StoreError;
pub use files::{META_DIR, content_version, is_manifest_name, write_atomic};
pub use watch::Watcher;

use crate::workflow::names::name_problem;
use crate::workflow::{Format, Workflow, check_bytes};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// What a save, rename or delete did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
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
}

/// The workflows folder.
#[derive(Debug)]
pub struct Store {
    root: PathBuf,
    catalog: RwLock<Catalog>,
    /// Serializes writes, so that a version check and the write that follows it are one step.
    write_lock: Mutex<()>,
    subscribers: Mutex<Vec<Sender<Change>>>,
}

impl Store {
    /// Opens a workflows folder and loads every manifest in it.
    pub fn open(root: impl Into<PathBuf>) -> Result<Arc<Store>, StoreError> {
        let root = root.into();
        if !root.is_dir() {
            return Err(StoreError::NoFolder(root));
        }
        let store = Arc::new(Store {
            root,
            catalog: RwLock::new(Catalog::default()),
            write_lock: Mutex::new(()),
            subscribers: Mutex::new(Vec::new()),
        });
        store.rescan()?;
        Ok(store)
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

    fn lock_writes(&self) -> MutexGuard<'_, ()> {
        self.write_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A stream of every change from now on. Dropping the receiver unsubscribes.
    pub fn subscribe(&self) -> Receiver<Change> {
        let (tx, rx) = channel();
        self.subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(tx);
        rx
    }

    fn publish(&self, changes: Vec<Change>) {
        if changes.is_empty() {
            return;
        }
        let mut subscribers = self
            .subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        subscribers.retain(|tx| changes.iter().all(|c| tx.send(c.clone()).is_ok()));
    }

    /// flowdeck's own state folder, `DIR/.flowdeck/`, created on first use with a `.gitignore`
    /// of `*` so that it never pollutes the user's repository.
    pub fn meta_dir(&self) -> Result<PathBuf, StoreError> {
        let dir = self.root.join(META_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
        let ignore = dir.join(".gitignore");
        if !ignore.exists() {
            write_atomic(&dir, ".gitignore", b"*\n").map_err(|e| StoreError::io(&ignore, e))?;
        }
        Ok(dir)
    }

    /// Re-reads the whole folder (at start, and when the watcher lost events).
    pub fn rescan(&self) -> Result<Vec<Change>, StoreError> {
        let on_disk = self.manifest_files()?;
        let mut changes = Vec::new();
        {
            let mut catalog = self.catalog_mut();
            let known: Vec<String> = catalog.entries().map(|e| e.file_name.clone()).collect();
            for gone in known.iter().filter(|f| !on_disk.contains(f)) {
                changes.extend(catalog.remove(gone));
            }
            for file in &on_disk {
                match files::read_limited(&self.root.join(file)) {
                    Ok(bytes) => changes.extend(catalog.upsert(file, bytes)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        changes.extend(catalog.remove(file))
                    }
                    Err(e) => tracing::warn!("cannot read {file}: {e}"),
                }
            }
            changes.extend(self.folder_changes(&mut catalog, &changes));
        }
        self.publish(changes.clone());
        Ok(changes)
    }

    /// Re-reads one file after the watcher saw it change.
    pub fn refresh(&self, file_name: &str) -> Vec<Change> {
        if !is_manifest_name(file_name) {
            return Vec::new();
        }
        let mut changes = Vec::new();
        {
            let mut catalog = self.catalog_mut();
            match files::read_limited(&self.root.join(file_name)) {
                Ok(bytes) => changes.extend(catalog.upsert(file_name, bytes)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    changes.extend(catalog.remove(file_name))
                }
                Err(e) => tracing::warn!("cannot read {file_name}: {e}"),
            }
            if !changes.is_empty() {
                changes.extend(self.folder_changes(&mut catalog, &changes));
            }
        }
        self.publish(changes.clone());
        changes
    }

    /// Folder-level rechecks, as changes for the files they touched beyond `already`.
    fn folder_changes(&self, catalog: &mut Catalog, already: &[Change]) -> Vec<Change> {
        catalog
            .recheck_folder()
            .into_iter()
            .filter(|f| !already.iter().any(|c| &c.file_name == f))
            .filter_map(|f| {
                catalog.get_file(&f).map(|e| Change {
                    kind: ChangeKind::Changed,
                    file_name: f.clone(),
                    name: e.name().to_string(),
                    version: Some(e.version.clone()),
                })
            })
            .collect()
    }

    fn manifest_files(&self) -> Result<Vec<String>, StoreError> {
        let read = std::fs::read_dir(&self.root).map_err(|e| StoreError::io(&self.root, e))?;
        let mut names = Vec::new();
        for entry in read.flatten() {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if is_manifest_name(&name)
                && entry
                    .file_type()
                    .is_ok_and(|t| t.is_file() || t.is_symlink())
            {
                names.push(name);
            }
        }
        names.sort();
        Ok(names)
    }

    /// The workflow to run under `name`: the current version when valid, else the last valid
    /// one. Two files with the name, or a file that never was valid, is an error.
    pub fn runnable(&self, name: &str) -> Result<(Arc<Workflow>, String), StoreError> {
        let catalog = self.catalog();
        let files = catalog.files_named(name);
        match files.as_slice() {
            [] => Err(StoreError::NotFound(name.to_string())),
            [entry] => match &entry.last_good {
                Some(good) => Ok((good.workflow.clone(), good.version.clone())),
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

    /// Saves a manifest under the name it declares, atomically, keeping the format of an
    /// existing file. Invalid manifests are saved too (a broken file keeps its last good
    /// version for running); the caller decides whether to allow that.
    pub fn save(&self, request: SaveRequest<'_>) -> Result<Saved, StoreError> {
        let format = request
            .format
            .unwrap_or_else(|| Format::sniff(request.content));
        let checked = check_bytes(request.content.as_bytes(), format);
        let Some(name) = checked.name.clone() else {
            return Err(StoreError::Unnamed {
                violations: checked.violations,
            });
        };
        if let Some(problem) = name_problem(&name) {
            return Err(StoreError::InvalidName(problem));
        }
        let _writing = self.lock_writes();
        let existing = self
            .catalog()
            .files_named(&name)
            .first()
            .map(|e| (e.file_name.clone(), e.format));
        let file_name = match existing {
            Some((file, existing_format)) if existing_format != format => {
                return Err(StoreError::FormatMismatch {
                    name,
                    file,
                    expected: match existing_format {
                        Format::Yaml => "YAML",
                        Format::Json => "JSON",
                    },
                });
            }
            Some((file, _)) => file,
            None => format!("{name}.{}", format.extension()),
        };
        let path = self.root.join(&file_name);
        // The version on disk, not the catalog's: the watcher may not have caught up yet.
        let current = match files::read_limited(&path) {
            Ok(bytes) => Some(content_version(&bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(StoreError::io(&path, e)),
        };
        match (request.expected_version, &current) {
            (Some(expected), actual) if actual.as_deref() != Some(expected) => {
                return Err(StoreError::Conflict {
                    name,
                    expected: expected.to_string(),
                    actual: actual.clone(),
                });
            }
            (None, Some(version)) if !request.overwrite => {
                return Err(StoreError::AlreadyExists {
                    name,
                    file: file_name,
                    version: version.clone(),
                });
            }
            _ => {}
        }
        self.meta_dir()?;
        write_atomic(&self.root, &file_name, request.content.as_bytes())
            .map_err(|e| StoreError::io(&path, e))?;
        self.refresh(&file_name);
        Ok(Saved {
            name,
            file_name,
            version: Some(content_version(request.content.as_bytes())),
            previous_version: current,
        })
    }

    /// Deletes the manifest of `name`. With `expected_version`, only if it is unchanged.
    pub fn delete(&self, name: &str, expected_version: Option<&str>) -> Result<Saved, StoreError> {
        let _writing = self.lock_writes();
        let entry = self.entry(name)?;
        let path = self.root.join(&entry.file_name);
        let current = files::read_limited(&path).map(|b| content_version(&b)).ok();
        if let Some(expected) = expected_version
            && current.as_deref() != Some(expected)
        {
            return Err(StoreError::Conflict {
                name: name.to_string(),
                expected: expected.to_string(),
                actual: current,
            });
        }
        std::fs::remove_file(&path).map_err(|e| StoreError::io(&path, e))?;
        files::sync_dir(&self.root).map_err(|e| StoreError::io(&self.root, e))?;
        self.refresh(&entry.file_name);
        Ok(Saved {
            name: name.to_string(),
            file_name: entry.file_name,
            version: None,
            previous_version: current,
        })
    }

    /// Renames workflow `from` to `to`: rewrites the `name` value in the file (nothing else in
    /// it changes, comments included) and moves the file to `<to>.<ext>`.
    pub fn rename(
        &self,
        from: &str,
        to: &str,
        expected_version: Option<&str>,
    ) -> Result<Saved, StoreError> {
        if let Some(problem) = name_problem(to) {
            return Err(StoreError::InvalidName(problem));
        }
        let _writing = self.lock_writes();
        let entry = self.entry(from)?;
        if from != to && !self.catalog().files_named(to).is_empty() {
            let existing = self.entry(to)?;
            return Err(StoreError::AlreadyExists {
                name: to.to_string(),
                file: existing.file_name,
                version: existing.version,
            });
        }
        let old_path = self.root.join(&entry.file_name);
        let bytes = files::read_limited(&old_path).map_err(|e| StoreError::io(&old_path, e))?;
        let current = content_version(&bytes);
        if let Some(expected) = expected_version
            && expected != current
        {
            return Err(StoreError::Conflict {
                name: from.to_string(),
                expected: expected.to_string(),
                actual: Some(current),
            });
        }
        let renamed = rename::rewrite_name(&bytes, entry.format, to)?;
        let new_file = format!("{to}.{}", entry.format.extension());
        if new_file != entry.file_name && self.root.join(&new_file).exists() {
            return Err(StoreError::AlreadyExists {
                name: to.to_string(),
                file: new_file.clone(),
                version: String::new(),
            });
        }
        self.meta_dir()?;
        let new_path = self.root.join(&new_file);
        write_atomic(&self.root, &new_file, renamed.as_bytes())
            .map_err(|e| StoreError::io(&new_path, e))?;
        if new_file != entry.file_name {
            std::fs::remove_file(&old_path).map_err(|e| StoreError::io(&old_path, e))?;
            files::sync_dir(&self.root).map_err(|e| StoreError::io(&self.root, e))?;
            self.refresh(&entry.file_name);
        }
        self.refresh(&new_file);
        Ok(Saved {
            name: to.to_string(),
            file_name: new_file,
            version: Some(content_version(renamed.as_bytes())),
            previous_version: Some(current),
        })
    }
}
