//! One server per workflows folder, whatever socket folder each process has. The socket's
//! path depends on `XDG_RUNTIME_DIR` and `TMPDIR` (socket.rs), which differ between a desktop
//! studio, an agent started from cron and one started under sudo, and a /tmp cleaner may
//! remove the socket file under a live server; neither may lead to a second engine writing
//! the same journals. So the folder's server holds a lock inside the workflows folder itself
//! (`DIR/.flowdeck/server.lock`, `flock`, for its whole life: the kernel lets go of it when
//! the process dies, however it dies), and writes beside it where it listens
//! (`server.json`: socket, pid, version, uid), so that a front end whose own socket path does
//! not answer still finds the live server. The record is only a pointer: the front ends
//! (server/connect.rs) trust the socket it names only after the same checks as any other.
//! Here, beside the engine, because it is the engine's rule (one engine per folder) kept in
//! the folder's own state (`DIR/.flowdeck/`).

use crate::store::lock::{LockError, StateLock};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The lock file a server holds for its life.
pub const LOCK: &str = "server.lock";

/// Where the live server says it listens.
pub const RECORD: &str = "server.json";

/// Where a folder's live server listens, as it wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub socket: PathBuf,
    pub pid: u32,
    pub version: String,
    pub uid: u32,
}

impl std::fmt::Display for Record {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "process {} (flowdeck {}, uid {}) listening on {}",
            self.pid,
            self.version,
            self.uid,
            self.socket.display()
        )
    }
}

/// Why this process may not serve the folder.
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    #[error(
        "the workflows folder {} is already served by {}: the studio and `flowdeck mcp` reach it; end it (`kill {}`) to serve the folder here",
        .folder.display(),
        .holder,
        .pid.map_or_else(|| "PID".to_string(), |p| p.to_string())
    )]
    Served {
        folder: PathBuf,
        /// The live server, as its record or the kernel's lock table says.
        holder: String,
        pid: Option<u32>,
    },
    #[error("cannot lock the workflows folder {} for its server: {source}", .folder.display())]
    Lock { folder: PathBuf, source: LockError },
}

/// How long a new server waits for the lock of a server that has died to be let go.
const GONE_HOLDER_WAIT: Duration = Duration::from_secs(10);

/// This process's claim on a folder: held until dropped (or the process ends).
#[derive(Debug)]
pub struct Claim {
    _lock: StateLock,
    record: PathBuf,
}

/// Claims `folder` for this process's server, or says which process serves it already.
pub fn claim(folder: &Path) -> Result<Claim, ClaimError> {
    let dir = crate::store::state_dir::ensure(folder).map_err(|source| ClaimError::Lock {
        folder: folder.to_path_buf(),
        source: LockError::Io {
            path: folder.join(crate::store::META_DIR),
            source,
        },
    })?;
    let path = dir.join(LOCK);
    let mut locked = StateLock::at(&path, Duration::ZERO);
    if let Err(LockError::Held { holder, .. }) = &locked {
        // A server killed a moment ago whose lock is still held (by a process of its that
        // has not let go yet): its successor waits a little rather than being turned away
        // by a server that is gone. A live holder is refused at once, as ever.
        let gone = |pid: u32| {
            i32::try_from(pid)
                .ok()
                .and_then(crate::term::processes::proc_info)
                .is_none_or(|p| p.zombie)
        };
        let recorded = read(folder).map(|r| r.pid);
        if holder
            .as_ref()
            .map(|h| h.pid)
            .or(recorded)
            .is_some_and(gone)
        {
            locked = StateLock::at(&path, GONE_HOLDER_WAIT);
        }
    }
    match locked {
        Ok(lock) => Ok(Claim {
            _lock: lock,
            record: dir.join(RECORD),
        }),
        Err(LockError::Held { holder, .. }) => {
            // The record says where it listens; a server that is still starting has none yet,
            // and the kernel's lock table still names it.
            let record = read(folder);
            let kernel_pid = holder.as_ref().map(|h| h.pid);
            let told = record.filter(|r| kernel_pid.is_none_or(|pid| pid == r.pid));
            Err(ClaimError::Served {
                folder: folder.to_path_buf(),
                holder: match (&told, &holder) {
                    (Some(record), _) => record.to_string(),
                    (None, Some(holder)) => format!("{holder} (starting)"),
                    (None, None) => "another process".into(),
                },
                pid: told.map(|r| r.pid).or(kernel_pid),
            })
        }
        Err(source) => Err(ClaimError::Lock {
            folder: folder.to_path_buf(),
            source,
        }),
    }
}

impl Claim {
    /// Writes where this server (of flowdeck `version`) listens, for the front ends whose own
    /// socket path differs.
    pub fn publish(&self, socket: &Path, version: &str) -> std::io::Result<()> {
        let record = Record {
            socket: socket.to_path_buf(),
            pid: std::process::id(),
            version: version.to_string(),
            uid: rustix::process::getuid().as_raw(),
        };
        let text = serde_json::to_vec_pretty(&record).map_err(std::io::Error::other)?;
        let (dir, name) = match (self.record.parent(), self.record.file_name()) {
            (Some(dir), Some(name)) => (dir, name.to_string_lossy()),
            _ => return Err(std::io::ErrorKind::InvalidInput.into()),
        };
        crate::store::files::write_atomic(dir, &name, &text)
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        // Only while the lock is still held (it is dropped after this): no other server can
        // have written a record of its own meanwhile.
        if read_at(&self.record).is_some_and(|r| r.pid == std::process::id()) {
            let _ = std::fs::remove_file(&self.record);
        }
    }
}

/// The record of the folder's live server, if one was written and reads as one.
pub fn read(folder: &Path) -> Option<Record> {
    read_at(
        &folder
            .join(crate::store::META_DIR)
            .join(RECORD)
            .to_path_buf(),
    )
}

fn read_at(path: &Path) -> Option<Record> {
    let text = std::fs::read(path).ok()?;
    serde_json::from_slice(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_claim_is_refused_naming_the_first_and_the_record_goes_with_it() {
        let folder = tempfile::tempdir().expect("a temp folder");
        let first = claim(folder.path()).expect("claimed");
        first
            .publish(Path::new("/run/user/1/flowdeck/abc.sock"), "0.1.0")
            .expect("published");
        let record = read(folder.path()).expect("a record");
        assert_eq!(record.pid, std::process::id());
        // flock locks belong to the open file: a second open in this process is refused too.
        let refused = claim(folder.path()).expect_err("refused").to_string();
        for part in [
            "already served",
            "/run/user/1/flowdeck/abc.sock",
            &std::process::id().to_string(),
        ] {
            assert!(refused.contains(part), "{part} in {refused}");
        }
        drop(first);
        assert_eq!(
            read(folder.path()),
            None,
            "the record is gone with its server"
        );
        claim(folder.path()).expect("claimed again once let go");
    }
}
