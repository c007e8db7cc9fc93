//! Reading a manifest file without trusting what its path is. A name in the folder may be a
//! named pipe (an ordinary open waits for a writer forever), a device (`/dev/zero` never ends),
//! a directory, a socket or a link to nothing. Only regular files are read, after following a
//! link; opens never block; no more than one byte past the size limit is read. Anything else
//! is reported as what it is, so that it is listed with a clear error, never skipped.

use super::files::content_version;
use crate::workflow::source::{Limits, too_large};
use crate::workflow::{Checked, Format, Violation, check_bytes};
use nix::fcntl::OFlag;
use std::fmt;
use std::fs::{Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Arc;
use thiserror::Error;

/// What a path is when it is not a regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Directory,
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
    /// A symbolic link whose target does not exist.
    DanglingLink,
    Other,
}

impl FileKind {
    /// The kind of a file that is not a regular one; `None` for a regular file.
    fn of(meta: &Metadata) -> Option<FileKind> {
        let t = meta.file_type();
        if t.is_file() {
            None
        } else if t.is_dir() {
            Some(FileKind::Directory)
        } else if t.is_fifo() {
            Some(FileKind::Fifo)
        } else if t.is_socket() {
            Some(FileKind::Socket)
        } else if t.is_char_device() {
            Some(FileKind::CharDevice)
        } else if t.is_block_device() {
            Some(FileKind::BlockDevice)
        } else {
            Some(FileKind::Other)
        }
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileKind::Directory => "a directory",
            FileKind::Fifo => "a named pipe (FIFO)",
            FileKind::Socket => "a socket",
            FileKind::CharDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::DanglingLink => "a symbolic link to nothing (its target does not exist)",
            FileKind::Other => "not a file flowdeck knows",
        })
    }
}

/// Why a manifest file could not be read.
#[derive(Debug, Error)]
pub enum ReadError {
    #[error("no such file")]
    NotFound,
    #[error("it is {0}, not a regular file")]
    NotRegular(FileKind),
    #[error("{0}")]
    Io(io::Error),
}

/// A regular file's bytes (at most one past the size limit) and its real size.
#[derive(Debug)]
pub struct Contents {
    pub bytes: Vec<u8>,
    pub size: u64,
}

/// Reads a manifest file: a regular file (a link is followed), opened without blocking, read
/// up to one byte past the size limit.
pub fn read_manifest(path: &Path) -> Result<Contents, ReadError> {
    // A first look that opens nothing, so that a device is refused without being opened:
    // opening some has effects (a tape rewinds, a terminal may become the controlling one).
    match std::fs::metadata(path) {
        Ok(meta) => {
            if let Some(kind) = FileKind::of(&meta) {
                return Err(ReadError::NotRegular(kind));
            }
        }
        Err(e) => return Err(classify(path, e)),
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags((OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits())
        .open(path)
        .map_err(|e| classify(path, e))?;
    // The path may have been replaced since the first look: what counts is what was opened.
    let meta = file.metadata().map_err(ReadError::Io)?;
    if let Some(kind) = FileKind::of(&meta) {
        return Err(ReadError::NotRegular(kind));
    }
    let cap = Limits::default().max_bytes as u64 + 1;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(cap)).unwrap_or(0));
    file.take(cap)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    Ok(Contents {
        // A file that grew while it was read is at least as big as what was read.
        size: meta.len().max(bytes.len() as u64),
        bytes,
    })
}

fn classify(path: &Path, e: io::Error) -> ReadError {
    if e.kind() != io::ErrorKind::NotFound {
        return ReadError::Io(e);
    }
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => ReadError::NotRegular(FileKind::DanglingLink),
        _ => ReadError::NotFound,
    }
}

/// A manifest file as read: its bytes and version, or why it cannot be read as a manifest.
#[derive(Debug, Clone)]
pub struct FileRead {
    pub bytes: Arc<[u8]>,
    /// SHA-256 of the bytes; empty when there are none to read (not a regular file, or an
    /// error), since no content version can describe such a file.
    pub version: String,
    /// Why the file cannot be validated, when it cannot.
    problem: Option<Violation>,
}

impl FileRead {
    /// Reads the file at `path`; `None` when there is nothing there.
    pub fn at(path: &Path) -> Option<FileRead> {
        let limits = Limits::default();
        let (bytes, problem) = match read_manifest(path) {
            Ok(c) if c.size > limits.max_bytes as u64 => {
                // The first bytes past the limit still give a version that changes with
                // most edits; the message gives the file's real size.
                (c.bytes, Some(too_large(c.size, &limits)))
            }
            Ok(c) => (c.bytes, None),
            Err(ReadError::NotFound) => return None,
            Err(ReadError::NotRegular(kind)) => (Vec::new(), Some(not_regular(kind))),
            Err(ReadError::Io(e)) => (Vec::new(), Some(unreadable(&e))),
        };
        let version = if problem.is_some() && bytes.is_empty() {
            String::new()
        } else {
            content_version(&bytes)
        };
        Some(FileRead {
            bytes: bytes.into(),
            version,
            problem,
        })
    }

    /// Validates what was read.
    pub fn check(&self, format: Format) -> Checked {
        match &self.problem {
            Some(problem) => Checked::unreadable(format, problem.clone()),
            None => check_bytes(&self.bytes, format),
        }
    }
}

/// The violation for a name in the folder that is not a regular file.
pub fn not_regular(kind: FileKind) -> Violation {
    Violation::error(
        "not_a_regular_file",
        "",
        format!("this is {kind}, not a regular file; only regular files are read as manifests"),
    )
    .expected("a regular file")
    .actual(kind.to_string())
}

/// The violation for a file that exists but cannot be read.
fn unreadable(e: &io::Error) -> Violation {
    Violation::error("unreadable", "", format!("the file cannot be read: {e}"))
        .actual(e.to_string())
}
