//! Where a folder's host listens: one Unix socket per workflows folder, so that the studio,
//! `flowdeck serve` and every `flowdeck mcp` an agent starts meet on one engine. The socket
//! lives in an owner-only folder (`$XDG_RUNTIME_DIR/flowdeck/`, else `/tmp/flowdeck-$UID/`),
//! is named from a hash of the folder's canonical path (so any folder fits `sun_path`), and a
//! `.pid` file beside it says which process hosts the folder. A socket left by a host that
//! died is found stale (nothing answers) and replaced.

use sha2::{Digest, Sha256};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Why a folder cannot be hosted here.
#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error(
        "{} is not a private folder of yours (owner uid {owner}, mode {mode:o}): flowdeck will not put its socket there",
        .path.display()
    )]
    NotPrivate {
        path: PathBuf,
        owner: u32,
        mode: u32,
    },
    #[error(
        "the workflows folder {} is already hosted by {} (its socket is {}): `flowdeck mcp` reaches it; stop it first to host the folder here",
        .folder.display(),
        .holder,
        .socket.display()
    )]
    Hosted {
        folder: PathBuf,
        socket: PathBuf,
        /// `process 1234`, or `another process` when its pid file is gone.
        holder: String,
    },
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> SocketError + '_ {
    move |source| SocketError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The folder that holds the sockets of this user.
pub fn socket_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(runtime) => PathBuf::from(runtime).join("flowdeck"),
        None => {
            std::env::temp_dir().join(format!("flowdeck-{}", rustix::process::getuid().as_raw()))
        }
    }
}

/// The socket of a workflows folder (its canonical path hashed).
pub fn socket_path(folder: &Path) -> io::Result<PathBuf> {
    socket_path_in(&socket_dir(), folder)
}

/// The socket of a workflows folder in the sockets' folder `dir`.
pub fn socket_path_in(dir: &Path, folder: &Path) -> io::Result<PathBuf> {
    let canonical = folder.canonicalize()?;
    let digest = Sha256::digest(canonical.as_os_str().as_encoded_bytes());
    Ok(dir.join(format!("{}.sock", &hex::encode(digest)[..24])))
}

/// The pid file beside a socket.
pub fn pid_path(socket: &Path) -> PathBuf {
    socket.with_extension("pid")
}

/// Creates the socket folder owner-only, or checks that an existing one is: another user
/// must not be able to put a socket of theirs where `flowdeck mcp` would connect.
pub fn ensure_private_dir(dir: &Path) -> Result<(), SocketError> {
    match std::fs::DirBuilder::new()
        .mode(0o700)
        .recursive(true)
        .create(dir)
    {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io_error(dir)(e)),
    }
    let meta = std::fs::symlink_metadata(dir).map_err(io_error(dir))?;
    let me = rustix::process::getuid().as_raw();
    if !meta.is_dir() || meta.uid() != me {
        return Err(SocketError::NotPrivate {
            path: dir.to_path_buf(),
            owner: meta.uid(),
            mode: meta.mode() & 0o777,
        });
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(io_error(dir))?;
    }
    Ok(())
}

/// Binds the folder's socket (0600), replacing a stale one; refuses when a live host answers
/// on it.
pub fn bind(folder: &Path) -> Result<(tokio::net::UnixListener, PathBuf), SocketError> {
    let socket = socket_path(folder).map_err(io_error(folder))?;
    let dir = socket.parent().map_or_else(socket_dir, Path::to_path_buf);
    ensure_private_dir(&dir)?;
    // Two servers starting at once for one folder (two front ends each starting one) take
    // turns here: the second finds the first listening and is refused, rather than both
    // finding a stale socket and the second unlinking the first's.
    let _turn = bind_turn(&socket)?;
    match tokio::net::UnixListener::bind(&socket) {
        Ok(listener) => return finish(listener, socket),
        Err(e) if e.kind() != io::ErrorKind::AddrInUse => return Err(io_error(&socket)(e)),
        Err(_) => {}
    }
    // Something is there: a live host, or the file of one that died.
    if std::os::unix::net::UnixStream::connect(&socket).is_ok() {
        let holder = std::fs::read_to_string(pid_path(&socket))
            .ok()
            .and_then(|p| p.trim().parse::<u32>().ok())
            .map_or_else(
                || "another process".to_string(),
                |pid| format!("process {pid}"),
            );
        return Err(SocketError::Hosted {
            folder: folder.to_path_buf(),
            socket,
            holder,
        });
    }
    tracing::info!("replacing the stale socket {}", socket.display());
    std::fs::remove_file(&socket).map_err(io_error(&socket))?;
    let listener = tokio::net::UnixListener::bind(&socket).map_err(io_error(&socket))?;
    finish(listener, socket)
}

/// An exclusive lock on the socket's lock file, held while a server checks and binds.
fn bind_turn(socket: &Path) -> Result<nix::fcntl::Flock<std::fs::File>, SocketError> {
    let path = socket.with_extension("lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&path)
        .map_err(io_error(&path))?;
    nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive).map_err(|(_, e)| {
        SocketError::Io {
            path,
            source: io::Error::from(e),
        }
    })
}

fn finish(
    listener: tokio::net::UnixListener,
    socket: PathBuf,
) -> Result<(tokio::net::UnixListener, PathBuf), SocketError> {
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))
        .map_err(io_error(&socket))?;
    let pid = pid_path(&socket);
    std::fs::write(&pid, format!("{}\n", std::process::id())).map_err(io_error(&pid))?;
    Ok((listener, socket))
}

/// Which file a bound socket is (device and inode), to tell it from one put in its place.
pub fn identity(socket: &Path) -> Option<(u64, u64)> {
    std::fs::symlink_metadata(socket)
        .ok()
        .map(|meta| (meta.dev(), meta.ino()))
}

/// Binds the folder's socket again after it was removed under a live server (a /tmp cleaner,
/// a person's `rm`): its folder made again if it went too, anything left at the path
/// replaced. Only a server that holds the folder's claim (engine/claim.rs) calls this, so no other
/// server of the folder can be listening there.
pub fn rebind(socket: &Path) -> Result<tokio::net::UnixListener, SocketError> {
    let dir = socket.parent().map_or_else(socket_dir, Path::to_path_buf);
    ensure_private_dir(&dir)?;
    match std::fs::remove_file(socket) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_error(socket)(e)),
    }
    let listener = tokio::net::UnixListener::bind(socket).map_err(io_error(socket))?;
    finish(listener, socket.to_path_buf()).map(|(listener, _)| listener)
}

/// Removes the socket and its pid file when the host ends, if they are still its own.
pub fn unbind(socket: &Path) {
    let pid = pid_path(socket);
    let ours = std::fs::read_to_string(&pid)
        .ok()
        .is_some_and(|p| p.trim() == std::process::id().to_string());
    if ours {
        let _ = std::fs::remove_file(socket);
        let _ = std::fs::remove_file(pid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_folder_gets_a_short_socket_name() {
        let deep = tempfile::tempdir().expect("a temp folder");
        let mut folder = deep.path().to_path_buf();
        for _ in 0..20 {
            folder.push("a-rather-long-folder-name");
        }
        std::fs::create_dir_all(&folder).expect("created");
        let socket = socket_path(&folder).expect("a path");
        assert!(socket.as_os_str().len() < 108 || socket_dir().as_os_str().len() > 70);
        assert_eq!(socket_path(&folder).expect("again"), socket, "stable");
        assert_ne!(socket_path(deep.path()).expect("other"), socket);
    }

    #[test]
    fn a_folder_of_another_owner_or_mode_is_refused_or_narrowed() {
        let top = tempfile::tempdir().expect("a temp folder");
        let dir = top.path().join("sockets");
        std::fs::create_dir(&dir).expect("created");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("mode");
        ensure_private_dir(&dir).expect("narrowed");
        let mode = std::fs::metadata(&dir).expect("meta").mode() & 0o777;
        assert_eq!(mode, 0o700);
        let file = top.path().join("file");
        std::fs::write(&file, "").expect("written");
        assert!(matches!(
            ensure_private_dir(&file),
            Err(SocketError::NotPrivate { .. }) | Err(SocketError::Io { .. })
        ));
    }
}
