//! The one way a front end reaches the folder's server (the studio, `flowdeck mcp`,
//! `flowdeck run`, `flowdeck approve`): nothing is written to a socket before it is known to
//! be this user's server, as tmux checks its socket folder before it connects.
//!
//! Before connecting: the socket's folder is a folder (not a symbolic link) owned by this
//! user and writable by nobody else, and the socket is a socket owned by this user. After
//! connecting, before the first byte: the listening process is this user's (`SO_PEERCRED`).
//! Any other answer is refused with the path, its owner and mode, and what to do; there is no
//! silent fallback to another path. Then the hello (hello.rs) is exchanged, and a server that
//! was ending as it was reached is reached again. Only this module makes a [`Connection`].
//!
//! Where it looks: this process's socket path for the folder (socket.rs), then the socket the
//! folder's live server recorded (engine/claim.rs), which differs when the two processes have
//! another `XDG_RUNTIME_DIR` or `TMPDIR`.

use super::hello::{self, Hello, Welcome};
use super::socket;
use super::spawn::{self, ServerOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use tokio::io::BufReader;
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

/// What to do about the socket or its folder, in every refusal.
const ADVICE: &str = "another user may have planted it to receive what flowdeck sends: remove it if it is yours to remove, or set XDG_RUNTIME_DIR to a private folder of yours";

/// Why a socket was not trusted: nothing was written to it.
#[derive(Debug, thiserror::Error)]
pub enum Untrusted {
    #[error(
        "flowdeck will not connect through {} ({why}; owner {}, mode {mode:o}): {ADVICE}",
        .path.display(),
        owner_name(*.owner)
    )]
    Folder {
        path: PathBuf,
        why: &'static str,
        owner: u32,
        mode: u32,
    },
    #[error(
        "flowdeck will not connect to {} ({why}; owner {}, mode {mode:o}): {ADVICE}",
        .path.display(),
        owner_name(*.owner)
    )]
    Socket {
        path: PathBuf,
        why: &'static str,
        owner: u32,
        mode: u32,
    },
    #[error(
        "flowdeck will not talk to the process listening on {} (it runs as {}, not as you): {ADVICE}",
        .path.display(),
        owner_name(*.uid)
    )]
    Listener { path: PathBuf, uid: u32 },
}

/// A user as a person reads it: `nobody (uid 65534)`.
fn owner_name(uid: u32) -> String {
    match nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)) {
        Ok(Some(user)) => format!("{} (uid {uid})", user.name),
        _ => format!("uid {uid}"),
    }
}

/// A connection to the folder's server, checked and greeted.
#[derive(Debug)]
pub struct Connection {
    read: BufReader<OwnedReadHalf>,
    write: OwnedWriteHalf,
    welcome: Welcome,
}

impl Connection {
    /// The server's answer to the hello.
    pub fn welcome(&self) -> &Welcome {
        &self.welcome
    }

    /// The process listening on the socket, as the kernel says (`SO_PEERCRED`), when it
    /// can tell: what a front end compares with the pid a server reports before it signals
    /// one.
    pub fn peer_pid(&self) -> Option<i32> {
        self.read.get_ref().as_ref().peer_cred().ok()?.pid()
    }

    /// The stream's two halves, for the protocol that follows the hello, and the welcome.
    pub fn into_parts(self) -> (BufReader<OwnedReadHalf>, OwnedWriteHalf, Welcome) {
        (self.read, self.write, self.welcome)
    }
}

/// Whether to start a server when none answers, and how.
#[derive(Debug, Clone, Copy)]
pub enum IfNone {
    /// Give `None`: the front end works without a server.
    Leave,
    /// Start one in the background (spawn.rs).
    Start(ServerOptions),
}

/// The folder's server, checked and greeted with `hello`; `None` when none answers and
/// `if_none` says to leave it so. Every wait in it is bounded (the hello's answer by
/// [`hello::WELCOME_WAIT`], a started server by [`spawn::START_WAIT`]), and it may be dropped
/// at any await (a front end selects it against termination signals).
pub async fn connect(
    folder: &Path,
    hello: &Hello,
    if_none: IfNone,
) -> anyhow::Result<Option<Connection>> {
    let mut again = hello::ReachAgain::default();
    loop {
        let stream = match reach(folder, if_none).await? {
            Some(stream) => stream,
            None => return Ok(None),
        };
        let (read, mut write) = stream.into_split();
        let mut read = BufReader::new(read);
        match hello::greet(&mut read, &mut write, hello, folder).await {
            Ok(welcome) => {
                return Ok(Some(Connection {
                    read,
                    write,
                    welcome,
                }));
            }
            // A server that was ending as this connected served nothing: the next one.
            Err(e) if again.after(&e) => {}
            Err(e) => return Err(e),
        }
    }
}

/// The server listening on `socket` (one `flowdeck ls` found in the sockets' folder),
/// checked as [`connect`] checks a folder's before a byte is written, and greeted with
/// `hello`; `None` when nothing listens there (the socket of a server that died).
pub async fn connect_at(socket: &Path, hello: &Hello) -> anyhow::Result<Option<Connection>> {
    let Some(stream) = checked(socket).await? else {
        return Ok(None);
    };
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    let welcome = hello::greet(&mut read, &mut write, hello, socket).await?;
    Ok(Some(Connection {
        read,
        write,
        welcome,
    }))
}

/// A checked stream to the folder's server, started if `if_none` says so.
async fn reach(folder: &Path, if_none: IfNone) -> anyhow::Result<Option<UnixStream>> {
    if let Some(stream) = locate(folder).await? {
        return Ok(Some(stream));
    }
    let IfNone::Start(options) = if_none else {
        return Ok(None);
    };
    let mut started = spawn::start(folder, options)?;
    loop {
        if let Some(stream) = locate(folder).await? {
            started.reaped();
            return Ok(Some(stream));
        }
        started.check()?;
        tokio::time::sleep(started.pause()).await;
    }
}

/// A checked stream to whatever serves the folder now, if anything does: at this process's
/// socket path, else at the one the folder's live server recorded.
pub async fn locate(folder: &Path) -> Result<Option<UnixStream>, LocateError> {
    // No server serves a folder that is not there: what the front end does without one
    // says what is wrong with it.
    let Ok(canonical) = folder.canonicalize() else {
        return Ok(None);
    };
    let Ok(own) = socket::socket_path(&canonical) else {
        return Ok(None);
    };
    if let Some(stream) = checked(&own).await? {
        return Ok(Some(stream));
    }
    match crate::engine::claim::read(&canonical) {
        Some(record) if record.socket != own && record.socket.is_absolute() => {
            let found = checked(&record.socket).await?;
            if found.is_some() {
                tracing::info!(
                    "the folder's server listens on {}, not on {}: reached through its record",
                    record.socket.display(),
                    own.display()
                );
            }
            Ok(found)
        }
        _ => Ok(None),
    }
}

/// Why the folder's server could not be looked for.
#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    #[error(transparent)]
    Untrusted(#[from] Untrusted),
    #[error("{}: {source}", .path.display())]
    Io { path: PathBuf, source: io::Error },
}

/// The server at `path` once the socket, its folder and its listener are found to be this
/// user's; `None` when nothing listens there.
async fn checked(path: &Path) -> Result<Option<UnixStream>, LocateError> {
    let me = rustix::process::getuid().as_raw();
    let Some(dir) = path.parent() else {
        return Ok(None);
    };
    let Some(meta) = metadata(dir)? else {
        return Ok(None);
    };
    let folder_problem = if meta.file_type().is_symlink() {
        Some("a symbolic link")
    } else if meta.uid() != me {
        Some("not yours")
    } else if !meta.is_dir() {
        // Yours, and nothing can listen in it: no server here. Starting one says why the
        // folder cannot hold its socket (spawn.rs), and the studio then hosts the folder.
        return Ok(None);
    } else if meta.mode() & 0o022 != 0 {
        Some("others may write in it")
    } else {
        None
    };
    if let Some(why) = folder_problem {
        return Err(Untrusted::Folder {
            path: dir.to_path_buf(),
            why,
            owner: meta.uid(),
            mode: meta.mode() & 0o7777,
        }
        .into());
    }
    let Some(meta) = metadata(path)? else {
        return Ok(None);
    };
    let socket_problem = if !meta.file_type().is_socket() {
        Some("not a socket")
    } else if meta.uid() != me {
        Some("not yours")
    } else {
        None
    };
    if let Some(why) = socket_problem {
        return Err(Untrusted::Socket {
            path: path.to_path_buf(),
            why,
            owner: meta.uid(),
            mode: meta.mode() & 0o7777,
        }
        .into());
    }
    let stream = match UnixStream::connect(path).await {
        Ok(stream) => stream,
        // The file of a server that died, or one that ended between the two steps.
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::ConnectionRefused | io::ErrorKind::NotFound
            ) =>
        {
            return Ok(None);
        }
        Err(source) => {
            return Err(LocateError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let peer = stream.peer_cred().map_err(|source| LocateError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if peer.uid() != me {
        return Err(Untrusted::Listener {
            path: path.to_path_buf(),
            uid: peer.uid(),
        }
        .into());
    }
    tracing::debug!("{} is this user's server: greeting it", path.display());
    Ok(Some(stream))
}

/// A path's own metadata (a symbolic link is not followed), or `None` when there is nothing.
fn metadata(path: &Path) -> Result<Option<std::fs::Metadata>, LocateError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(meta)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(LocateError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[tokio::test]
    async fn a_socket_in_a_folder_others_may_write_is_refused_before_connecting() {
        let top = tempfile::tempdir().expect("a temp folder");
        let dir = top.path().join("sockets");
        std::fs::create_dir(&dir).expect("created");
        let path = dir.join("x.sock");
        let listener = tokio::net::UnixListener::bind(&path).expect("bound");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("mode");
        let refused = checked(&path).await.expect_err("refused").to_string();
        for part in [&dir.display().to_string(), "others may write", "mode 777"] {
            assert!(refused.contains(part), "{part} in {refused}");
        }
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).expect("mode");
        assert!(checked(&path).await.expect("trusted").is_some());
        drop(listener);
        // A folder that is a symbolic link to a private one is refused too.
        let link = top.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).expect("linked");
        let refused = checked(&link.join("x.sock")).await;
        assert!(
            matches!(
                refused,
                Err(LocateError::Untrusted(Untrusted::Folder { .. }))
            ),
            "{refused:?}"
        );
        // Nothing at the path, or a socket nobody listens on: no server, no error.
        assert!(
            checked(&dir.join("none.sock"))
                .await
                .expect("fine")
                .is_none()
        );
        assert!(checked(&path).await.expect("stale").is_none());
    }
}
