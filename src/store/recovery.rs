//! Recovery copies: the text of a manifest being edited in the studio, kept in
//! `DIR/.flowdeck/recovery/` while it has unsaved changes, so that a crash, a kill or a
//! closed terminal loses nothing. A save or a discard removes the copy; the studio offers the
//! ones it finds when it starts. Each copy is written whole and atomically: never a torn one.
//!
//! A copy records the version of the file its text was typed over (`<file>.recovery`, JSON),
//! so that recovering it over a file that changed since is a conflict the person settles, not
//! a save over a change they never saw. Copies of earlier flowdecks (`<file>`, the text alone)
//! still load, with their base unknown.

use super::Store;
use super::error::StoreError;
use super::files::{is_manifest_name, is_own_manifest_name, write_atomic};
use std::path::{Path, PathBuf};

const RECOVERY_DIR: &str = "recovery";

/// What follows a file's name in the name of its copy.
const COPY: &str = ".recovery";

/// A recovery copy on disk.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Recovered {
    /// The manifest's file name in the workflows folder.
    pub file: String,
    /// The copy's text.
    pub text: String,
    /// The version of the file the text was typed over; `None` when unknown (a copy written
    /// by an earlier flowdeck, which did not record it).
    #[serde(default)]
    pub base_version: Option<String>,
}

/// A copy's file as written now.
#[derive(serde::Serialize, serde::Deserialize)]
struct Kept {
    base_version: Option<String>,
    text: String,
}

impl Store {
    fn recovery_dir(&self) -> Result<PathBuf, StoreError> {
        let dir = self.meta_dir()?.join(RECOVERY_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
        Ok(dir)
    }

    /// Keeps `text`, typed over version `base_version` of manifest `file` (a file name of
    /// the folder; `None`: not known), as the file's recovery copy.
    pub fn recovery_save(
        &self,
        file: &str,
        text: &str,
        base_version: Option<&str>,
    ) -> Result<(), StoreError> {
        let file = checked(file)?;
        let dir = self.recovery_dir()?;
        let name = format!("{file}{COPY}");
        let kept = Kept {
            base_version: base_version.map(str::to_string),
            text: text.to_string(),
        };
        let bytes = serde_json::to_vec(&kept)
            .map_err(|e| StoreError::io(dir.join(&name), std::io::Error::other(e)))?;
        write_atomic(&dir, &name, &bytes).map_err(|e| StoreError::io(dir.join(&name), e))?;
        // An earlier flowdeck's copy of the file is older than this one.
        remove(&dir.join(file))
    }

    /// Removes the recovery copy of `file`, if there is one (of either form).
    pub fn recovery_discard(&self, file: &str) -> Result<(), StoreError> {
        let file = checked(file)?;
        let dir = self.meta_dir()?.join(RECOVERY_DIR);
        remove(&dir.join(format!("{file}{COPY}")))?;
        remove(&dir.join(file))
    }

    /// Every recovery copy, by file name; unreadable ones are skipped (and logged).
    pub fn recovery_list(&self) -> Vec<Recovered> {
        let Ok(dir) = self.meta_dir().map(|d| d.join(RECOVERY_DIR)) else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut found: Vec<Recovered> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| read_copy(&entry.path(), entry.file_name().to_str()?))
            .collect();
        // A file with both forms: the one that records its base was written last (a save
        // of it removes the other), so the earlier flowdeck's goes.
        found.sort_by(|a, b| {
            (&a.file, a.base_version.is_none()).cmp(&(&b.file, b.base_version.is_none()))
        });
        found.dedup_by(|later, first| later.file == first.file);
        found
    }
}

/// The copy at `path` (named `name` in the recovery folder), when it is one.
fn read_copy(path: &Path, name: &str) -> Option<Recovered> {
    let (file, recorded) = match name.strip_suffix(COPY) {
        Some(file) => (file, true),
        None => (name, false),
    };
    if !is_manifest_name(file) {
        return None;
    }
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => {
            tracing::warn!("recovery copy {}: {e}", path.display());
            return None;
        }
    };
    if !recorded {
        return Some(Recovered {
            file: file.to_string(),
            text,
            base_version: None,
        });
    }
    match serde_json::from_str::<Kept>(&text) {
        Ok(kept) => Some(Recovered {
            file: file.to_string(),
            text: kept.text,
            base_version: kept.base_version,
        }),
        Err(e) => {
            tracing::warn!("recovery copy {}: {e}", path.display());
            None
        }
    }
}

/// Removes the file at `path`; one that is not there is no error.
fn remove(path: &Path) -> Result<(), StoreError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(StoreError::io(path, e)),
        _ => Ok(()),
    }
}

/// A manifest file name, never a path: a recovery copy lands in the recovery folder only.
fn checked(file: &str) -> Result<&str, StoreError> {
    if is_own_manifest_name(file) {
        Ok(file)
    } else {
        Err(StoreError::io(
            PathBuf::from(file),
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a manifest file name of the workflows folder",
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_is_kept_listed_and_discarded_and_never_lands_outside() {
        let dir = tempfile::tempdir().expect("a temp folder");
        let store = Store::open(dir.path()).expect("the store");
        assert!(store.recovery_list().is_empty());
        store
            .recovery_save("deploy.yaml", "name: deploy\n# unsaved\n", Some("v1"))
            .expect("saved");
        assert_eq!(
            store.recovery_list(),
            vec![Recovered {
                file: "deploy.yaml".into(),
                text: "name: deploy\n# unsaved\n".into(),
                base_version: Some("v1".into()),
            }]
        );
        store.recovery_discard("deploy.yaml").expect("discarded");
        store
            .recovery_discard("deploy.yaml")
            .expect("twice is fine");
        assert!(store.recovery_list().is_empty());
        for bad in ["../x.yaml", "a/b.yaml", "notes.txt", ".hidden.yaml"] {
            assert!(store.recovery_save(bad, "x", None).is_err(), "{bad}");
        }
        // Not a workflow of the folder: the store's list does not see it.
        store
            .recovery_save("deploy.yaml", "x", None)
            .expect("saved");
        assert!(store.catalog().entries().next().is_none());
    }

    #[test]
    fn an_earlier_flowdecks_copy_loads_with_its_base_unknown_and_a_new_one_replaces_it() {
        let dir = tempfile::tempdir().expect("a temp folder");
        let store = Store::open(dir.path()).expect("the store");
        let recovery = store.recovery_dir().expect("the folder");
        std::fs::write(recovery.join("deploy.yaml"), "name: deploy\n# old\n").expect("written");
        assert_eq!(
            store.recovery_list(),
            vec![Recovered {
                file: "deploy.yaml".into(),
                text: "name: deploy\n# old\n".into(),
                base_version: None,
            }]
        );
        store
            .recovery_save("deploy.yaml", "name: deploy\n# new\n", Some("v2"))
            .expect("saved");
        let listed = store.recovery_list();
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert_eq!(listed[0].base_version.as_deref(), Some("v2"));
        assert!(!recovery.join("deploy.yaml").exists());
        // Both forms at once (a save that could not remove the old one): the new one counts,
        // and a discard removes both.
        std::fs::write(recovery.join("deploy.yaml"), "name: deploy\n# old\n").expect("written");
        assert_eq!(store.recovery_list()[0].text, "name: deploy\n# new\n");
        store.recovery_discard("deploy.yaml").expect("discarded");
        assert!(store.recovery_list().is_empty());
    }
}
