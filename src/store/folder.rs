//! What is wrong with the workflows folder itself, when something is: it does not exist, it
//! is a file, or it cannot be read. A store opened with [`super::Store::open_lenient`] lives
//! with such a folder (empty, the problem on record) and recovers when the folder is fixed;
//! one opened with [`super::Store::open`] refuses it, as the command line's one-shot
//! commands want.

use schemars::JsonSchema;
use serde::Serialize;
use std::io;
use std::path::Path;

/// Which way the folder is wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FolderProblemKind {
    /// Nothing is at the path (or a folder on the way to it is missing).
    Missing,
    /// Something that is not a folder is at the path.
    NotAFolder,
    /// The folder exists but this process may not read it.
    PermissionDenied,
    /// Any other reason the operating system gave.
    Unreadable,
}

/// Why the workflows folder cannot be listed, in the operating system's words too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
pub struct FolderProblem {
    /// The folder's path as flowdeck was given it.
    pub path: String,
    pub kind: FolderProblemKind,
    /// The operating system's reason, e.g. `No such file or directory`.
    pub reason: String,
}

impl FolderProblem {
    /// The problem that listing `path` failed with.
    pub fn from_io(path: &Path, error: &io::Error) -> FolderProblem {
        let kind = match error.kind() {
            io::ErrorKind::NotFound => FolderProblemKind::Missing,
            io::ErrorKind::NotADirectory => FolderProblemKind::NotAFolder,
            io::ErrorKind::PermissionDenied => FolderProblemKind::PermissionDenied,
            _ => FolderProblemKind::Unreadable,
        };
        // The OS's words without the `(os error N)` that Display appends: the message
        // puts the reason in parentheses already.
        let reason = error.to_string();
        let reason = match reason.rfind(" (os error ") {
            Some(at) if reason.ends_with(')') => reason[..at].to_string(),
            _ => reason,
        };
        FolderProblem {
            path: path.display().to_string(),
            kind,
            reason,
        }
    }

    /// One line for any front end: what is wrong, with the OS's reason.
    pub fn message(&self) -> String {
        let what = match self.kind {
            FolderProblemKind::Missing => "does not exist",
            FolderProblemKind::NotAFolder => "is not a folder",
            FolderProblemKind::PermissionDenied => "cannot be read: permission denied",
            FolderProblemKind::Unreadable => "cannot be read",
        };
        format!(
            "the workflows folder {} {what} ({})",
            crate::workflow::names::display_safe(&self.path),
            crate::workflow::names::sanitize(&self.reason)
        )
    }

    /// What a person can do about it (any front end: no keys, no tool names).
    pub fn remedy(&self) -> String {
        let path = crate::workflow::names::display_safe(&self.path);
        match self.kind {
            FolderProblemKind::Missing => format!("create it (mkdir -p {path}) or name another"),
            FolderProblemKind::NotAFolder => {
                format!("move {path} aside and create a folder there, or name another")
            }
            FolderProblemKind::PermissionDenied => {
                format!("give yourself read access (chmod u+rx {path}) or name another")
            }
            FolderProblemKind::Unreadable => "fix it or name another folder".to_string(),
        }
    }
}

/// The manifest-looking names in `root`, or why it cannot be listed.
pub(super) fn list(root: &Path) -> io::Result<Vec<std::ffi::OsString>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(root)? {
        names.push(entry?.file_name());
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_os_reason_is_kept_and_the_kind_named() {
        let dir = tempfile::tempdir().expect("a temp folder");
        let missing = dir.path().join("nope");
        let err = list(&missing).expect_err("missing");
        let problem = FolderProblem::from_io(&missing, &err);
        assert_eq!(problem.kind, FolderProblemKind::Missing);
        assert!(problem.message().contains("does not exist"));
        assert_eq!(problem.reason, "No such file or directory");
        assert!(problem.message().contains("(No such file or directory)"));
        assert!(problem.remedy().contains("mkdir -p"));

        let file = dir.path().join("file");
        std::fs::write(&file, "x").expect("a file");
        let err = list(&file).expect_err("a file");
        assert_eq!(
            FolderProblem::from_io(&file, &err).kind,
            FolderProblemKind::NotAFolder
        );
    }
}
