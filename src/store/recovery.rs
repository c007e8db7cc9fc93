//! Recovery copies: the text of a manifest being edited in the studio, kept in
//! `DIR/.flowdeck/recovery/<file>` while it has unsaved changes, so that a crash, a kill or a
//! closed terminal loses nothing. A save or a discard removes the copy; the studio offers the
//! ones it finds when it starts. Each copy is written whole and atomically: never a torn one.

use super::Store;
use super::error::StoreError;
use super::files::{is_manifest_name, is_own_manifest_name, write_atomic};
use std::path::PathBuf;

const RECOVERY_DIR: &str = "recovery";

/// A recovery copy on disk.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Recovered {
    /// The manifest's file name in the workflows folder.
    pub file: String,
    /// The copy's text.
    pub text: String,
}

impl Store {
    fn recovery_dir(&self) -> Result<PathBuf, StoreError> {
        let dir = self.meta_dir()?.join(RECOVERY_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
        Ok(dir)
    }

    /// Keeps `text` as the recovery copy of manifest `file` (a file name of the folder).
    pub fn recovery_save(&self, file: &str, text: &str) -> Result<(), StoreError> {
        let file = checked(file)?;
        let dir = self.recovery_dir()?;
        write_atomic(&dir, file, text.as_bytes()).map_err(|e| StoreError::io(dir.join(file), e))
    }

    /// Removes the recovery copy of `file`, if there is one.
    pub fn recovery_discard(&self, file: &str) -> Result<(), StoreError> {
        let file = checked(file)?;
        let path = self.meta_dir()?.join(RECOVERY_DIR).join(file);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(StoreError::io(&path, e)),
            _ => Ok(()),
        }
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
            .filter_map(|entry| {
                let file = entry.file_name().to_str()?.to_string();
                if !is_manifest_name(&file) {
                    return None;
                }
                match std::fs::read_to_string(entry.path()) {
                    Ok(text) => Some(Recovered { file, text }),
                    Err(e) => {
                        tracing::warn!("recovery copy {}: {e}", entry.path().display());
                        None
                    }
                }
            })
            .collect();
        found.sort_by(|a, b| a.file.cmp(&b.file));
        found
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
            .recovery_save("deploy.yaml", "name: deploy\n# unsaved\n")
            .expect("saved");
        assert_eq!(
            store.recovery_list(),
            vec![Recovered {
                file: "deploy.yaml".into(),
                text: "name: deploy\n# unsaved\n".into()
            }]
        );
        store.recovery_discard("deploy.yaml").expect("discarded");
        store
            .recovery_discard("deploy.yaml")
            .expect("twice is fine");
        assert!(store.recovery_list().is_empty());
        for bad in ["../x.yaml", "a/b.yaml", "notes.txt", ".hidden.yaml"] {
            assert!(store.recovery_save(bad, "x").is_err(), "{bad}");
        }
        // Not a workflow of the folder: the store's list does not see it.
        store.recovery_save("deploy.yaml", "x").expect("saved");
        assert!(store.catalog().entries().next().is_none());
    }
}
