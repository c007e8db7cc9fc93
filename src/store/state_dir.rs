//! flowdeck's own folder inside the workflows folder, `DIR/.flowdeck/`: owner-only (it holds
//! run journals and the audit log of what agents did), ignored by git, and home of the lock
//! files (lock.rs) that make a read-modify-write one step across processes.

use super::files::{META_DIR, write_atomic};
use std::fs::DirBuilder;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Creates `root/.flowdeck/` if needed (mode 0700, with a `.gitignore` of `*`) and returns it.
///
/// A `.flowdeck` that is a symbolic link is refused: what flowdeck writes there would land
/// outside the workflows folder. One made by an older flowdeck with a wider mode is narrowed.
pub fn ensure(root: &Path) -> io::Result<PathBuf> {
    let dir = root.join(META_DIR);
    match DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(&dir)?;
    if !meta.is_dir() {
        return Err(io::Error::other(format!(
            "{} is not a folder{}; flowdeck keeps its state there",
            dir.display(),
            if meta.file_type().is_symlink() {
                " (it is a symbolic link)"
            } else {
                ""
            }
        )));
    }
    // The mode asked for at creation is narrowed by the umask, never widened; a folder left
    // by an older flowdeck may be wider. Only its owner may change it: anyone else is told.
    if meta.mode() & 0o077 != 0
        && let Err(e) = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
    {
        tracing::warn!(
            "{} is readable by others and cannot be made owner-only: {e}",
            dir.display()
        );
    }
    if !dir.join(".gitignore").exists() {
        write_atomic(&dir, ".gitignore", b"*\n")?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_owner_only_with_a_gitignore() -> io::Result<()> {
        let root = tempfile::tempdir()?;
        let dir = ensure(root.path())?;
        assert_eq!(std::fs::metadata(&dir)?.mode() & 0o777, 0o700);
        assert_eq!(std::fs::read(dir.join(".gitignore"))?, b"*\n");
        Ok(())
    }

    #[test]
    fn an_older_wider_folder_is_narrowed() -> io::Result<()> {
        let root = tempfile::tempdir()?;
        let dir = root.path().join(META_DIR);
        std::fs::create_dir(&dir)?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))?;
        ensure(root.path())?;
        assert_eq!(std::fs::metadata(&dir)?.mode() & 0o777, 0o700);
        Ok(())
    }

    #[test]
    fn a_symbolic_link_is_refused() -> io::Result<()> {
        let root = tempfile::tempdir()?;
        let elsewhere = tempfile::tempdir()?;
        std::os::unix::fs::symlink(elsewhere.path(), root.path().join(META_DIR))?;
        assert!(ensure(root.path()).is_err());
        assert!(super::super::lock::StateLock::writes(root.path()).is_err());
        assert_eq!(
            std::fs::read_dir(elsewhere.path())?.count(),
            0,
            "nothing written there"
        );
        Ok(())
    }
}
