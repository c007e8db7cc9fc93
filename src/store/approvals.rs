//! Approved manifest contents (approval mode): `DIR/.flowdeck/approved.json` holds, for each
//! workflow, every content version (SHA-256 of the bytes) a person approved for agents to run,
//! and the text of the last one, so that the next request can be shown as a diff against it.
//!
//! The file is read on every check rather than cached: an approval given by another flowdeck
//! process (`flowdeck approve` beside `flowdeck serve`) counts at once. It is written whole and
//! atomically under its own lock. A file that cannot be read as approvals approves nothing
//! (approval fails closed); the next approval sets it aside as `approved.json.unreadable`
//! rather than overwrite what a person may want to look at.

use super::Store;
use super::error::StoreError;
use super::files::write_atomic;
use super::lock::{LOCK_WAIT, StateLock};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const APPROVALS_FILE: &str = "approved.json";
const APPROVALS_LOCK: &str = "approved.lock";
const SET_ASIDE: &str = "approved.json.unreadable";

/// How many approved versions of one workflow are remembered: enough to go back and forth
/// between branches without asking again, bounded so the file stays small.
const KEEP_VERSIONS: usize = 64;

/// The last content of a workflow a person approved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Approved {
    /// The content version (SHA-256 of the bytes).
    pub version: String,
    pub approved_at: String,
    /// Who approved it (`you` in the studio, `cli` for `flowdeck approve`).
    pub by: String,
    /// The text approved: what the next request is compared with.
    pub content: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct ApprovalsFile {
    #[serde(default)]
    workflows: BTreeMap<String, WorkflowApprovals>,
}

#[derive(Debug, Serialize, Deserialize)]
struct WorkflowApprovals {
    last: Approved,
    /// Every approved version, oldest first, `last`'s included.
    versions: Vec<String>,
}

impl Store {
    /// Whether a person approved exactly this content `version` of workflow `name`.
    pub fn is_approved(&self, name: &str, version: &str) -> bool {
        self.read_approvals()
            .ok()
            .and_then(|file| file.workflows.get(name).map(|w| w.contains(version)))
            .unwrap_or(false)
    }

    /// The last approved content of workflow `name`, if any.
    pub fn last_approved(&self, name: &str) -> Option<Approved> {
        let mut file = self.read_approvals().ok()?;
        file.workflows.remove(name).map(|w| w.last)
    }

    /// Remembers that `by` approved `content` (whose version is `version`) of workflow `name`.
    pub fn approve(
        &self,
        name: &str,
        version: &str,
        content: &str,
        by: &str,
    ) -> Result<Approved, StoreError> {
        let dir = self.meta_dir()?;
        let _lock =
            StateLock::at(&dir.join(APPROVALS_LOCK), LOCK_WAIT).map_err(StoreError::lock)?;
        let mut file = match self.read_approvals() {
            Ok(file) => file,
            Err(why) => {
                tracing::warn!("{why}; it is set aside as {SET_ASIDE}");
                std::fs::rename(dir.join(APPROVALS_FILE), dir.join(SET_ASIDE))
                    .map_err(|e| StoreError::io(dir.join(APPROVALS_FILE), e))?;
                ApprovalsFile::default()
            }
        };
        let approved = Approved {
            version: version.to_string(),
            approved_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            by: by.to_string(),
            content: content.to_string(),
        };
        let entry = file
            .workflows
            .entry(name.to_string())
            .or_insert_with(|| WorkflowApprovals {
                last: approved.clone(),
                versions: Vec::new(),
            });
        entry.last = approved.clone();
        entry.versions.retain(|v| v != version);
        entry.versions.push(version.to_string());
        let excess = entry.versions.len().saturating_sub(KEEP_VERSIONS);
        entry.versions.drain(..excess);
        let bytes = serde_json::to_vec_pretty(&file)
            .map_err(|e| StoreError::io(dir.join(APPROVALS_FILE), std::io::Error::other(e)))?;
        write_atomic(&dir, APPROVALS_FILE, &bytes)
            .map_err(|e| StoreError::io(dir.join(APPROVALS_FILE), e))?;
        Ok(approved)
    }

    /// The approvals on disk: none when there is no file yet; an error saying why when the
    /// file is there but is not approvals.
    fn read_approvals(&self) -> Result<ApprovalsFile, String> {
        let path = self.root().join(super::META_DIR).join(APPROVALS_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                format!(
                    "{} is not a list of approvals ({e}): nothing in it counts as approved",
                    path.display()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ApprovalsFile::default()),
            Err(e) => Err(format!(
                "cannot read {}: {e}: nothing in it counts as approved",
                path.display()
            )),
        }
    }
}

impl WorkflowApprovals {
    fn contains(&self, version: &str) -> bool {
        self.versions.iter().any(|v| v == version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::content_version;

    fn store() -> (tempfile::TempDir, std::sync::Arc<Store>) {
        let dir = tempfile::tempdir().expect("a folder");
        let store = Store::open(dir.path()).expect("the store");
        (dir, store)
    }

    #[test]
    fn an_approved_version_counts_and_any_other_does_not() -> Result<(), StoreError> {
        let (_dir, store) = store();
        let v1 = content_version(b"one");
        let v2 = content_version(b"two");
        assert!(!store.is_approved("build", &v1));
        assert_eq!(store.last_approved("build"), None);
        store.approve("build", &v1, "one", "you")?;
        assert!(store.is_approved("build", &v1));
        assert!(
            !store.is_approved("build", &v2),
            "a change needs its own approval"
        );
        assert!(
            !store.is_approved("deploy", &v1),
            "approvals are per workflow"
        );
        store.approve("build", &v2, "two", "cli")?;
        assert!(
            store.is_approved("build", &v1),
            "going back needs no new approval"
        );
        let last = store.last_approved("build").expect("the last approval");
        assert_eq!(
            (last.version.as_str(), last.content.as_str()),
            (v2.as_str(), "two")
        );
        assert_eq!(last.by, "cli");
        Ok(())
    }

    #[test]
    fn an_unreadable_file_approves_nothing_and_is_set_aside_not_lost() -> Result<(), StoreError> {
        let (dir, store) = store();
        let meta = store.meta_dir()?;
        let v = content_version(b"one");
        let garbage = format!("{{\"workflows\": {{\"build\": \"{v}\"");
        std::fs::write(meta.join(APPROVALS_FILE), &garbage).expect("written");
        assert!(!store.is_approved("build", &v), "fails closed");
        store.approve("build", &v, "one", "you")?;
        assert!(store.is_approved("build", &v));
        let kept = std::fs::read_to_string(dir.path().join(".flowdeck").join(SET_ASIDE))
            .expect("the unreadable file is kept");
        assert_eq!(kept, garbage);
        Ok(())
    }

    #[test]
    fn old_versions_are_forgotten_past_the_bound() -> Result<(), StoreError> {
        let (_dir, store) = store();
        let versions: Vec<String> = (0..KEEP_VERSIONS + 2)
            .map(|i| content_version(i.to_string().as_bytes()))
            .collect();
        for (i, v) in versions.iter().enumerate() {
            store.approve("build", v, &i.to_string(), "you")?;
        }
        assert!(!store.is_approved("build", &versions[0]));
        assert!(!store.is_approved("build", &versions[1]));
        assert!(store.is_approved("build", &versions[2]));
        assert!(store.is_approved("build", &versions[KEEP_VERSIONS + 1]));
        Ok(())
    }
}
