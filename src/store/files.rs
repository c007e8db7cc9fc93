//! File-level helpers: which names are manifests, content versions, atomic writes.

use crate::workflow::Format;
use crate::workflow::source::Limits;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

/// The folder (inside the workflows folder) where flowdeck keeps its own state.
pub const META_DIR: &str = ".flowdeck";

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

/// Reads a manifest, but never more than one byte past the size limit: a huge file is refused
/// by validation without being read whole.
pub fn read_limited(path: &Path) -> io::Result<Vec<u8>> {
    let limit = Limits::default().max_bytes as u64 + 1;
    let mut bytes = Vec::new();
    File::open(path)?.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Writes `bytes` to `dir/file_name` atomically: a temporary file in the same folder, fsync,
/// rename over the target, fsync of the folder. A crash or a full disk leaves either the old
/// file or the new one, never a torn one; the temporary file is removed on failure.
pub fn write_atomic(dir: &Path, file_name: &str, bytes: &[u8]) -> io::Result<()> {
    let target = dir.join(file_name);
    let mut tmp = tempfile::Builder::new()
        .prefix(".flowdeck-save-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    if let Ok(meta) = std::fs::metadata(&target) {
        tmp.as_file().set_permissions(meta.permissions())?;
    }
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
