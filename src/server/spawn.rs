//! Reaching the folder's server, starting it when none answers: the flowdeck binary again as
//! `flowdeck serve --background`, detached from the front end that starts it (a session of its
//! own, which it takes first thing; its standard streams on `/dev/null`; its log in
//! `DIR/.flowdeck/server.log`), so that quitting the front end, closing its terminal or its
//! agent host ending never takes the server with it. Two front ends starting a server for one
//! folder at once end up with one: the servers take turns binding the socket (socket.rs) and
//! the second, finding the first, ends; both front ends reach the first.

use super::socket;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a server started here has to answer on its socket.
pub const START_WAIT: Duration = Duration::from_secs(15);

/// Why the folder's server cannot be reached.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot start the folder's server ({program}): {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error(
        "the folder's server did not answer on {} within {} s{}; its log is {}",
        .socket.display(),
        .waited.as_secs(),
        .ended.as_ref().map(|e| format!(" (it ended: {e})")).unwrap_or_default(),
        .log.display()
    )]
    NoAnswer {
        socket: PathBuf,
        waited: Duration,
        /// How the started server ended, if it did.
        ended: Option<String>,
        log: PathBuf,
    },
    #[error("{0}")]
    Socket(#[from] socket::SocketError),
    #[error("{}: {source}", .folder.display())]
    Folder {
        folder: PathBuf,
        source: std::io::Error,
    },
}

/// How a started server is asked to run.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServerOptions {
    /// Approval mode for agents' runs.
    pub approve_agent_runs: bool,
}

/// The folder's server: the one that answers on its socket, or one started now.
pub fn reach(folder: &Path, options: ServerOptions) -> Result<UnixStream, StartError> {
    if let Some(stream) = super::relay::connect(folder) {
        return Ok(stream);
    }
    let canonical = folder.canonicalize().map_err(|source| StartError::Folder {
        folder: folder.to_path_buf(),
        source,
    })?;
    let socket = socket::socket_path(&canonical).map_err(|source| StartError::Folder {
        folder: folder.to_path_buf(),
        source,
    })?;
    // The socket's folder is checked here, so that one that cannot hold it is said now,
    // rather than as a server that never answers.
    let dir = socket
        .parent()
        .map_or_else(socket::socket_dir, Path::to_path_buf);
    socket::ensure_private_dir(&dir)?;
    let program = "/proc/self/exe";
    let mut command = Command::new(program);
    // Named as a person would look for it in `ps`, not as the path it was started by.
    std::os::unix::process::CommandExt::arg0(&mut command, "flowdeck");
    command.arg("--workflows").arg(&canonical);
    if options.approve_agent_runs {
        command.args(["--approve", "agent-runs"]);
    }
    command
        .args(["serve", "--background"])
        // Detached from the front end's terminal in every way: a front end typed into one of
        // flowdeck's own terminals must not make the server one of that terminal's processes
        // (its teardown would end the server).
        .env_remove(crate::term::processes::MARKER_VAR)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = command.spawn().map_err(|source| StartError::Spawn {
        program: program.into(),
        source,
    })?;
    let started = Instant::now();
    let mut ended = None;
    loop {
        if let Some(stream) = super::relay::connect(&canonical) {
            // Reaped by a thread of its own: the server outlives this front end as often as
            // not, and a zombie of it must not stay meanwhile.
            std::thread::spawn(move || child.wait());
            return Ok(stream);
        }
        if ended.is_none()
            && let Ok(Some(status)) = child.try_wait()
        {
            // Another front end's server won the socket (this one ended at once, in peace),
            // or it failed: either way, what answers now is what there is.
            ended = Some(status.to_string());
        }
        if started.elapsed() > START_WAIT {
            if ended.is_none() {
                let _ = child.kill();
                let _ = child.wait();
            }
            return Err(StartError::NoAnswer {
                socket,
                waited: START_WAIT,
                ended,
                log: crate::logfile::path(&canonical, crate::logfile::SERVER),
            });
        }
        // The server answers within tens of milliseconds of its start, and a refused connect
        // costs microseconds: looked at every millisecond at first (an agent's `initialize`
        // waits on this), every 10 ms once it takes longer (a loaded machine).
        std::thread::sleep(if started.elapsed() < Duration::from_millis(300) {
            Duration::from_millis(1)
        } else {
            Duration::from_millis(10)
        });
    }
}
