//! The lock files of `DIR/.flowdeck/` that make a read-modify-write one step across every
//! flowdeck process on the folder, with a bounded wait: a holder that is stopped (Ctrl-Z,
//! SIGSTOP, a debugger) or stuck on a disk that does not answer must not hang every save
//! behind it. The waiter gives up with an error that names the holder, so the person can
//! see which process to wake or end, and an agent can retry.

use super::state_dir;
use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use thiserror::Error;

/// The lock file that writers of the folder hold, whatever process they are in.
const WRITE_LOCK: &str = "write.lock";

/// How long a writer waits for another holder. Holders keep a lock across one write (a
/// version check, a temporary file, an fsync, a rename), which takes milliseconds even on a
/// busy disk; a lock held this long belongs to a process that is not running.
pub const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Why a lock was not taken.
#[derive(Debug, Error)]
pub enum LockError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error(
        "{} is held by {} and was not released within {:.1} s; try again once it is (a stopped process can be resumed with `kill -CONT PID` or ended)",
        path.display(),
        holder.as_ref().map_or_else(|| "another process".to_string(), Holder::to_string),
        waited.as_secs_f32()
    )]
    Held {
        path: PathBuf,
        holder: Option<Holder>,
        waited: Duration,
    },
}

/// The process holding a lock, as the kernel reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    /// Its command name, when it can be read.
    pub program: Option<String>,
    /// Whether it is stopped (state `T`): the common reason for a lock never released.
    pub stopped: bool,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "process {}", self.pid)?;
        match (&self.program, self.stopped) {
            (Some(program), true) => write!(f, " ({program}, stopped)"),
            (Some(program), false) => write!(f, " ({program})"),
            (None, true) => write!(f, " (stopped)"),
            (None, false) => Ok(()),
        }
    }
}

/// An exclusive lock on a file of the state folder, shared by every flowdeck process on the
/// folder; released when dropped (and by the kernel if the process dies).
#[derive(Debug)]
pub struct StateLock {
    _file: File,
}

impl StateLock {
    /// The lock on the folder's writes.
    pub fn writes(root: &Path) -> Result<StateLock, LockError> {
        let dir = state_dir::ensure(root).map_err(|source| LockError::Io {
            path: root.join(super::META_DIR),
            source,
        })?;
        StateLock::at(&dir.join(WRITE_LOCK), LOCK_WAIT)
    }

    /// An exclusive lock on the lock file at `path` (created owner-only if needed), waiting
    /// at most `wait` for another holder to release it.
    pub fn at(path: &Path, wait: Duration) -> Result<StateLock, LockError> {
        let io_error = |source| LockError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .mode(0o600)
            .open(path)
            .map_err(io_error)?;
        let started = Instant::now();
        // Short at first (a writer usually finishes in a millisecond), then at most 50 ms
        // apart so that a waiter follows a busy lock closely without spinning.
        let mut pause = Duration::from_millis(1);
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(StateLock { _file: file }),
                Err(TryLockError::Error(e)) => return Err(io_error(e)),
                Err(TryLockError::WouldBlock) => {}
            }
            let waited = started.elapsed();
            if waited >= wait {
                return Err(LockError::Held {
                    path: path.to_path_buf(),
                    holder: holder_of(&file),
                    waited,
                });
            }
            std::thread::sleep(pause.min(wait - waited));
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }
}

/// The process that holds the `flock` on `file`, from `/proc/locks` (Linux), whose lines
/// read `1: FLOCK  ADVISORY  WRITE PID MAJOR:MINOR:INODE 0 EOF` (with `->` for waiters).
fn holder_of(file: &File) -> Option<Holder> {
    let meta = file.metadata().ok()?;
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let wanted = (
        nix::sys::stat::major(meta.dev()),
        nix::sys::stat::minor(meta.dev()),
        meta.ino(),
    );
    let pid = locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_ascii_whitespace().collect();
        if fields.get(1) != Some(&"FLOCK") {
            return None;
        }
        let mut id = fields.get(5)?.split(':');
        let major = u64::from_str_radix(id.next()?, 16).ok()?;
        let minor = u64::from_str_radix(id.next()?, 16).ok()?;
        let inode = id.next()?.parse::<u64>().ok()?;
        ((major, minor, inode) == wanted)
            .then(|| fields.get(4)?.parse::<u32>().ok())
            .flatten()
    })?;
    let program = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|comm| crate::workflow::names::display_safe(comm.trim_end()));
    let stopped = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            // The command name is in parentheses and may itself hold spaces and parentheses.
            let state = stat[stat.rfind(')')? + 1..]
                .split_ascii_whitespace()
                .next()?;
            Some(state == "T" || state == "t")
        })
        .unwrap_or(false);
    Some(Holder {
        pid,
        program,
        stopped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Child, Command, Stdio};

    /// A child process that holds the lock at `path` (util-linux's `flock`, which keeps it
    /// while its command runs), stopped once it has it; killed when dropped. Its command is a
    /// `cat` of a pipe, so that it ends as soon as the pipe closes.
    struct StoppedHolder(Child);

    impl StoppedHolder {
        fn hold(path: &Path) -> StoppedHolder {
            // `-o`: the command does not inherit the lock, so only `flock` itself holds it.
            let mut child = Command::new("flock")
                .arg("-o")
                .arg(path)
                .args(["sh", "-c", "echo held; exec cat"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("flock (util-linux) runs");
            // `held` is printed only once the lock is taken; the read ends at the latest when
            // the child dies, so it cannot hang.
            let mut line = String::new();
            let stdout = child.stdout.take().expect("piped");
            io::BufRead::read_line(&mut io::BufReader::new(stdout), &mut line)
                .expect("the holder's output");
            assert_eq!(line.trim(), "held", "the holder took the lock");
            let pid = nix::unistd::Pid::from_raw(child.id() as i32);
            nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP).expect("stopped");
            StoppedHolder(child)
        }
    }

    impl Drop for StoppedHolder {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    #[test]
    fn the_lock_excludes_other_holders() -> Result<(), LockError> {
        let root = tempfile::tempdir().map_err(|source| LockError::Io {
            path: PathBuf::new(),
            source,
        })?;
        let held = StateLock::writes(root.path())?;
        let path = root.path().join(super::super::META_DIR).join(WRITE_LOCK);
        assert!(matches!(
            StateLock::at(&path, Duration::from_millis(20)),
            Err(LockError::Held { .. })
        ));
        drop(held);
        StateLock::at(&path, Duration::from_millis(20))?;
        Ok(())
    }

    #[test]
    fn a_stopped_holder_is_waited_for_a_bounded_time_and_named() {
        let root = tempfile::tempdir().expect("a temporary folder");
        let path = root.path().join("held.lock");
        let holder = StoppedHolder::hold(&path);
        let err = StateLock::at(&path, Duration::from_millis(100))
            .expect_err("a stopped holder never releases the lock");
        let LockError::Held { holder: named, .. } = &err else {
            panic!("not a held lock: {err}");
        };
        let named = named.as_ref().expect("the holder is found in /proc/locks");
        assert_eq!(named.pid, holder.0.id());
        assert!(named.stopped, "{named} is stopped");
        let message = err.to_string();
        assert!(
            message.contains(&format!("process {} ('flock', stopped)", holder.0.id())),
            "{message}"
        );
        assert!(message.contains("try again"), "{message}");
        drop(holder);
        // Once its holder is gone, the lock is free.
        StateLock::at(&path, Duration::from_secs(10)).expect("free once the holder died");
    }
}
