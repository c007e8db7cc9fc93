//! Writing the folder: saves, renames and deletes. Each holds the store's write lock and the
//! folder's lock file across reading the version on disk, writing and renaming, so that two
//! writers with one expected version, in one process or two, cannot both win.

use super::files::{self, content_version, write_atomic};
use super::read::{ReadError, read_manifest};
use super::{Entry, SaveRequest, Saved, Store, StoreError, rename};
use crate::workflow::names::name_problem;
use crate::workflow::source::Limits;
use crate::workflow::{Format, check_bytes};

impl Store {
    /// Under the write lock: re-reads the files `name` would usually live in, since another
    /// process may have written one that this process's watcher has not reported yet.
    fn catch_up(&self, name: &str) {
        let candidates: Vec<String> = ["yaml", "yml", "json"]
            .iter()
            .map(|ext| format!("{name}.{ext}"))
            .collect();
        self.refresh_files(&candidates);
    }

    /// The content version of the file on disk (`None` when there is none): the version a
    /// write checks, not the catalog's, which may lag behind.
    fn version_on_disk(&self, file_name: &str) -> Result<Option<String>, StoreError> {
        let path = self.root.join(file_name);
        match read_manifest(&path) {
            Ok(contents) => Ok(Some(content_version(&contents.bytes))),
            Err(ReadError::NotFound) => Ok(None),
            Err(ReadError::NotRegular(kind)) => Err(StoreError::NotRegularFile {
                file: file_name.to_string(),
                kind,
            }),
            Err(ReadError::Io(e)) => Err(StoreError::io(&path, e)),
        }
    }

    /// Saves a manifest under the name it declares, atomically, keeping the format of an
    /// existing file. Invalid manifests are saved too (a broken file keeps its last good
    /// version for running); the caller decides whether to allow that.
    pub fn save(&self, request: SaveRequest<'_>) -> Result<Saved, StoreError> {
        let limit = Limits::default().max_bytes;
        if request.content.len() > limit {
            return Err(StoreError::TooLarge {
                size: request.content.len(),
                limit,
            });
        }
        if let Some(file) = request.file_name {
            return self.save_into(file, &request);
        }
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
        let _writing = self.lock_writes()?;
        self.catch_up(&name);
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
        self.write_checked(name, file_name, &request)
    }

    /// [`Store::save`] into a named file of the folder (`SaveRequest::file_name`): the text
    /// may be broken beyond naming anything, and is kept as typed.
    fn save_into(&self, file: &str, request: &SaveRequest<'_>) -> Result<Saved, StoreError> {
        if !files::is_own_manifest_name(file) {
            return Err(StoreError::InvalidName(format!(
                "{} is not a manifest file name of the folder",
                crate::workflow::names::display_safe(file)
            )));
        }
        let format = Format::from_file_name(file).unwrap_or(Format::Yaml);
        let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
        let name = check_bytes(request.content.as_bytes(), format)
            .name
            .unwrap_or_else(|| stem.to_string());
        let _writing = self.lock_writes()?;
        self.catch_up(&name);
        self.write_checked(name, file.to_string(), request)
    }

    /// The version check and the atomic write of a save, under the write lock.
    fn write_checked(
        &self,
        name: String,
        file_name: String,
        request: &SaveRequest<'_>,
    ) -> Result<Saved, StoreError> {
        let current = self.version_on_disk(&file_name)?;
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
        let path = self.root.join(&file_name);
        let scanning = self.lock_scans();
        write_atomic(&self.root, &file_name, request.content.as_bytes())
            .map_err(|e| StoreError::io(&path, e))?;
        self.refresh_written(&scanning, &[&file_name], request.author);
        Ok(Saved {
            name,
            file_name,
            version: Some(content_version(request.content.as_bytes())),
            previous_version: current,
        })
    }

    /// The file of `name` and its version on disk, for a rename or delete under the write
    /// lock. A file that vanished since the catalog saw it is a conflict when the caller
    /// named the version it expected, else not found.
    fn existing(
        &self,
        name: &str,
        expected_version: Option<&str>,
    ) -> Result<(Entry, String), StoreError> {
        self.catch_up(name);
        let entry = self.entry(name)?;
        let current = self.version_on_disk(&entry.file_name)?;
        match (expected_version, current) {
            (_, Some(current)) if expected_version.is_none_or(|expected| expected == current) => {
                Ok((entry, current))
            }
            (Some(expected), actual) => {
                self.refresh(&entry.file_name);
                Err(StoreError::Conflict {
                    name: name.to_string(),
                    expected: expected.to_string(),
                    actual,
                })
            }
            (None, _) => {
                self.refresh(&entry.file_name);
                Err(StoreError::NotFound(name.to_string()))
            }
        }
    }

    /// Deletes the manifest of `name`. With `expected_version`, only if it is unchanged.
    /// `author` tags the change (see [`Change::author`](super::Change::author)).
    pub fn delete(
        &self,
        name: &str,
        expected_version: Option<&str>,
        author: Option<&str>,
    ) -> Result<Saved, StoreError> {
        let _writing = self.lock_writes()?;
        let (entry, current) = self.existing(name, expected_version)?;
        let path = self.root.join(&entry.file_name);
        let scanning = self.lock_scans();
        std::fs::remove_file(&path).map_err(|e| StoreError::io(&path, e))?;
        files::sync_dir(&self.root).map_err(|e| StoreError::io(&self.root, e))?;
        self.refresh_written(&scanning, &[&entry.file_name], author);
        Ok(Saved {
            name: name.to_string(),
            file_name: entry.file_name,
            version: None,
            previous_version: Some(current),
        })
    }

    /// Renames workflow `from` to `to`: rewrites the `name` value in the file (nothing else in
    /// it changes, comments included) and moves the file to `<to>.<ext>`.
    pub fn rename(
        &self,
        from: &str,
        to: &str,
        expected_version: Option<&str>,
        author: Option<&str>,
    ) -> Result<Saved, StoreError> {
        if let Some(problem) = name_problem(to) {
            return Err(StoreError::InvalidName(problem));
        }
        let _writing = self.lock_writes()?;
        let (entry, _) = self.existing(from, expected_version)?;
        if from != to {
            self.catch_up(to);
            if !self.catalog().files_named(to).is_empty() {
                let existing = self.entry(to)?;
                return Err(StoreError::AlreadyExists {
                    name: to.to_string(),
                    file: existing.file_name,
                    version: existing.version,
                });
            }
        }
        let old_path = self.root.join(&entry.file_name);
        let bytes = match read_manifest(&old_path) {
            Ok(contents) => contents.bytes,
            Err(ReadError::NotFound) => return Err(StoreError::NotFound(from.to_string())),
            Err(ReadError::NotRegular(kind)) => {
                return Err(StoreError::NotRegularFile {
                    file: entry.file_name,
                    kind,
                });
            }
            Err(ReadError::Io(e)) => return Err(StoreError::io(&old_path, e)),
        };
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
        if new_file != entry.file_name {
            match self.version_on_disk(&new_file) {
                Ok(None) => {}
                Ok(Some(version)) => {
                    return Err(StoreError::AlreadyExists {
                        name: to.to_string(),
                        file: new_file,
                        version,
                    });
                }
                Err(e) => return Err(e),
            }
        }
        let new_path = self.root.join(&new_file);
        let scanning = self.lock_scans();
        files::write_atomic_like(&self.root, &new_file, renamed.as_bytes(), &old_path)
            .map_err(|e| StoreError::io(&new_path, e))?;
        if new_file != entry.file_name {
            std::fs::remove_file(&old_path).map_err(|e| StoreError::io(&old_path, e))?;
            files::sync_dir(&self.root).map_err(|e| StoreError::io(&self.root, e))?;
            self.refresh_written(&scanning, &[&entry.file_name], author);
        }
        self.refresh_written(&scanning, &[&new_file], author);
        Ok(Saved {
            name: to.to_string(),
            file_name: new_file,
            version: Some(content_version(renamed.as_bytes())),
            previous_version: Some(current),
        })
    }
}
