//! The logs of the processes that have no stderr to write to: the studio's
//! (`DIR/.flowdeck/studio.log`: it owns the terminal stderr writes to, and a log line there
//! would tear its screen) and the folder's server started in the background
//! (`DIR/.flowdeck/server.log`: its stderr is `/dev/null`). In a file, what went wrong (a
//! caught panic with its backtrace, an agent refused, a save that failed) is there for the
//! person to read or attach to a report. The file is owner-only, like the rest of
//! `.flowdeck/`, and kept small: past [`ROTATE_AT`] it is moved to `NAME.1` when a process
//! opens it.
//!
//! A log that cannot be written (its disk full, its folder gone) never stops the process: the
//! line is lost, and [`trouble`] says so for as long as it lasts, so that the studio can tell
//! the person why the log they would attach to a report has a hole.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use tokio::sync::watch;

/// The studio's log, in the folder's state folder.
pub const STUDIO: &str = "studio.log";

/// The log of the folder's server when it runs in the background.
pub const SERVER: &str = "server.log";

/// A log this long is set aside (one generation) before a studio appends to it.
const ROTATE_AT: u64 = 4 << 20;

/// Why this process's log cannot be written now, if it cannot.
static TROUBLE: LazyLock<watch::Sender<Option<String>>> =
    LazyLock::new(|| watch::Sender::new(None));

/// Why this process's log cannot be written (`None` while it can), as it changes.
pub fn trouble() -> watch::Receiver<Option<String>> {
    TROUBLE.subscribe()
}

fn note(trouble: Option<String>) {
    TROUBLE.send_if_modified(|now| {
        let changed = *now != trouble;
        *now = trouble;
        changed
    });
}

/// The log's file, which says when a write fails and when writes work again.
struct Watched {
    file: File,
    path: PathBuf,
}

impl Write for Watched {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let written = self.file.write(buf);
        note(
            written
                .as_ref()
                .err()
                .map(|e| format!("{}: {e}", self.path.display())),
        );
        written
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// Sends this process's log (`FLOWDECK_LOG`, else warnings and flowdeck's own information) to
/// the log `name` of the folder, and returns its path; or says why it cannot be written, with
/// the log then thrown away.
pub fn init(folder: &Path, name: &str) -> Result<PathBuf, String> {
    start(open(folder, name), folder, name)
}

/// Sends this process's log to the log `name` in this user's state folder
/// (`$XDG_STATE_HOME/flowdeck`, else `~/.local/state/flowdeck`), for a folder that does
/// not exist yet: a studio started where there is no `workflows/` is a newcomer's first
/// minute, and creating the folder just for a log (or saying it cannot be written) would
/// be an alarm about nothing they did.
pub fn init_for_missing(folder: &Path, name: &str) -> Result<PathBuf, String> {
    let opened = user_state_dir().and_then(|dir| open_in(&dir, name));
    start(opened, folder, name)
}

/// This user's own state folder for flowdeck, created owner-only.
fn user_state_dir() -> Result<PathBuf, String> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local").join("state")))
        .ok_or_else(|| "neither XDG_STATE_HOME nor HOME is set".to_string())?;
    let dir = base.join("flowdeck");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

fn start(
    opened: Result<(PathBuf, File), String>,
    folder: &Path,
    name: &str,
) -> Result<PathBuf, String> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("FLOWDECK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,flowdeck=info"));
    match opened {
        Ok((path, file)) => {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_ansi(false)
                // A failed write is `Watched`'s to report (below), never tracing's
                // `eprintln!` onto the studio's screen.
                .log_internal_errors(false)
                .with_writer(Mutex::new(Watched {
                    file,
                    path: path.clone(),
                }))
                .try_init();
            tracing::info!(
                "flowdeck {} ({name}, process {}) on {}",
                env!("CARGO_PKG_VERSION"),
                std::process::id(),
                folder.display()
            );
            Ok(path)
        }
        Err(why) => {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_writer(std::io::sink)
                .try_init();
            note(Some(why.clone()));
            Err(why)
        }
    }
}

/// Where the log `name` of the folder is.
pub fn path(folder: &Path, name: &str) -> PathBuf {
    folder.join(crate::store::META_DIR).join(name)
}

/// The log `name` in the folder's state folder.
fn open(folder: &Path, name: &str) -> Result<(PathBuf, File), String> {
    let dir = crate::store::state_dir::ensure(folder)
        .map_err(|e| format!("{}: {e}", folder.join(crate::store::META_DIR).display()))?;
    open_in(&dir, name)
}

/// The log `name` in `dir`, set aside first when long.
fn open_in(dir: &Path, name: &str) -> Result<(PathBuf, File), String> {
    let path = dir.join(name);
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > ROTATE_AT) {
        let _ = std::fs::rename(&path, dir.join(format!("{name}.1")));
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((path, file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_log_is_owner_only_in_the_state_folder_and_set_aside_when_long() {
        let folder = tempfile::tempdir().expect("a temporary folder");
        let (path, _) = open(folder.path(), SERVER).expect("opened");
        assert_eq!(path, folder.path().join(".flowdeck").join(SERVER));
        let mode = std::fs::metadata(&path)
            .expect("exists")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::write(&path, vec![b'x'; ROTATE_AT as usize + 1]).expect("written");
        let (path, _) = open(folder.path(), SERVER).expect("opened again");
        assert_eq!(std::fs::metadata(&path).expect("exists").len(), 0);
        let old = folder.path().join(".flowdeck").join(format!("{SERVER}.1"));
        assert_eq!(
            std::fs::metadata(old).expect("set aside").len(),
            ROTATE_AT + 1
        );
    }

    #[test]
    fn a_write_that_fails_is_told_and_so_is_the_first_that_works_again() {
        let mut trouble = trouble();
        // `/dev/full` fails every write with ENOSPC, as a full disk does.
        let full = OpenOptions::new()
            .append(true)
            .open("/dev/full")
            .expect("/dev/full");
        let mut log = Watched {
            file: full,
            path: PathBuf::from("/dev/full"),
        };
        assert!(log.write_all(b"a line\n").is_err());
        assert!(trouble.has_changed().expect("a static sender"));
        let why = trouble.borrow_and_update().clone().expect("told");
        assert!(
            why.starts_with("/dev/full: No space left on device"),
            "{why}"
        );
        // Failing again tells nothing new.
        assert!(log.write_all(b"another\n").is_err());
        assert!(!trouble.has_changed().expect("a static sender"));

        let folder = tempfile::tempdir().expect("a temporary folder");
        let (_, file) = open(folder.path(), STUDIO).expect("opened");
        log.file = file;
        log.write_all(b"space again\n").expect("written");
        assert!(trouble.has_changed().expect("a static sender"));
        assert_eq!(*trouble.borrow_and_update(), None);
    }

    #[test]
    fn a_folder_that_cannot_hold_it_says_why() {
        let why = open(Path::new("/nonexistent/flowdeck/folder"), STUDIO).expect_err("no folder");
        assert!(
            why.contains("/nonexistent/flowdeck/folder/.flowdeck"),
            "{why}"
        );
    }
}
