//! File-level helpers: which names are manifests, content versions, atomic writes.

use crate::workflow::Format;
use sha2::{Digest, Sha256};
use std::fs::{File, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The folder (inside the workflows folder) where flowdeck keeps its own state.
pub const META_DIR: &str = ".flowdeck";

/// Whether `name` names a manifest directly inside the folder: a manifest name, never a path.
pub fn is_own_manifest_name(name: &str) -> bool {
    is_manifest_name(name) && !name.contains('/') && !name.contains('\0')
}

/// Whether a file name in the workflows folder is a manifest: `*.yaml`, `*.yml` or `*.json`,
/// and not a hidden file or an editor's swap, backup or lock file (`.*.swp`, `*~`, `.#*`,
/// `4913`), nor one of flowdeck's own temporary files.
pub fn is_manifest_name(name: &str) -> bool {
    !name.starts_with('.')
        && !name.ends_with('~')
        && name != "4913"
        && Format::from_file_name(name).is_some()
}

/// The content version: SHA-256 of the bytes, in hex.
pub fn content_version(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Writes `bytes` to `dir/file_name` atomically: a temporary file in the same folder, fsync,
/// rename over the target, fsync of the folder. A crash or a full disk leaves either the old
/// file or the new one, never a torn one; the temporary file is removed on failure.
///
/// A replaced file keeps its mode; a new one gets the mode any program would give it
/// (`0666` less the umask), not the temporary file's owner-only `0600`.
pub fn write_atomic(dir: &Path, file_name: &str, bytes: &[u8]) -> io::Result<()> {
    let target = dir.join(file_name);
    write_atomic_with_mode(dir, file_name, bytes, mode_for(&target))
}

/// [`write_atomic`] for a file that takes over from `previous` (a rename): it keeps the
/// previous file's mode.
pub(crate) fn write_atomic_like(
    dir: &Path,
    file_name: &str,
    bytes: &[u8],
    previous: &Path,
) -> io::Result<()> {
    write_atomic_with_mode(dir, file_name, bytes, mode_for(previous))
}

/// The mode of the file at `path`, or a new file's when there is none.
fn mode_for(path: &Path) -> u32 {
    std::fs::metadata(path)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or_else(|_| 0o666 & !umask())
}

/// The process's umask, read from `/proc/self/status`: setting the umask is the only other
/// way to learn it, and that would change it for every thread while it is read.
fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        // The common default, for kernels too old to show it.
        .unwrap_or(0o022)
}

fn write_atomic_with_mode(dir: &Path, file_name: &str, bytes: &[u8], mode: u32) -> io::Result<()> {
    let target = dir.join(file_name);
    let mut tmp = tempfile::Builder::new()
        .prefix(".flowdeck-save-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.as_file()
        .set_permissions(Permissions::from_mode(mode))?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(&target).map_err(|e| e.error)?;
    sync_dir(dir)
}

/// Makes a rename or delete in `dir` durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_names() {
        for yes in ["a.yaml", "a.yml", "b.json", "A.YAML"] {
            assert!(is_manifest_name(yes), "{yes}");
        }
        for no in [
            ".a.yaml.swp",
            "a.yaml~",
            ".#a.yaml",
            "4913",
            ".hidden.yaml",
            "a.txt",
            ".flowdeck-save-x.tmp",
            "a.yaml.swp",
        ] {
            assert!(!is_manifest_name(no), "{no}");
        }
    }

    #[test]
    fn versions_are_sha256() {
        assert_eq!(
            content_version(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        write_atomic(dir.path(), "a.yaml", b"one")?;
        write_atomic(dir.path(), "a.yaml", b"two")?;
        assert_eq!(std::fs::read(dir.path().join("a.yaml"))?, b"two");
        assert_eq!(std::fs::read_dir(dir.path())?.count(), 1);
        Ok(())
    }

    #[test]
    fn new_files_get_the_usual_mode_and_replaced_ones_keep_theirs() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let mode = |name: &str| -> io::Result<u32> {
            Ok(std::fs::metadata(dir.path().join(name))?
                .permissions()
                .mode()
                & 0o7777)
        };
        write_atomic(dir.path(), "new.yaml", b"one")?;
        assert_eq!(mode("new.yaml")?, 0o666 & !umask());
        if umask() == 0o022 {
            assert_eq!(mode("new.yaml")?, 0o644, "not the temporary file's 0600");
        }
        std::fs::set_permissions(dir.path().join("new.yaml"), Permissions::from_mode(0o640))?;
        write_atomic(dir.path(), "new.yaml", b"two")?;
        assert_eq!(mode("new.yaml")?, 0o640, "a replaced file keeps its mode");
        write_atomic_like(
            dir.path(),
            "moved.yaml",
            b"two",
            &dir.path().join("new.yaml"),
        )?;
        assert_eq!(mode("moved.yaml")?, 0o640, "a renamed file keeps its mode");
        Ok(())
    }

    #[test]
    fn the_umask_is_read_from_the_kernel() {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let shown = status
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .map(str::trim)
            .unwrap_or("0022");
        assert_eq!(format!("{:04o}", umask()), shown);
    }

    #[test]
    fn failed_write_keeps_the_old_state() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::create_dir(dir.path().join("a.yaml"))?;
        std::fs::write(dir.path().join("a.yaml").join("inside"), b"x")?;
        assert!(write_atomic(dir.path(), "a.yaml", b"new").is_err());
        let names: Vec<_> = std::fs::read_dir(dir.path())?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name())
            .collect();
        assert_eq!(
            names,
            vec![std::ffi::OsString::from("a.yaml")],
            "no temporary file left behind"
        );
        Ok(())
    }
}
