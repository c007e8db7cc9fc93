//! Reaching the folder's server, starting it when none answers: the flowdeck binary again as
//! `flowdeck serve --background`, detached from the front end that starts it (a session of its
//! own, which it takes first thing; its standard streams on `/dev/null`; its log in
//! `DIR/.flowdeck/server.log`), so that quitting the front end, closing its terminal or its
//! agent host ending never takes the server with it. Two front ends starting a server for one
//! folder at once end up with one: the second server finds the folder claimed (engine/claim.rs) and
//! ends; both front ends reach the first (connect.rs).

use super::socket;
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

/// A server being started in the background for a folder, until it answers.
#[derive(Debug)]
pub struct Started {
    child: Option<std::process::Child>,
    began: Instant,
    socket: PathBuf,
    log: PathBuf,
    /// How the started server ended, if it did.
    ended: Option<String>,
}

/// Starts the folder's server in the background; connect.rs waits for it to answer.
pub fn start(folder: &Path, options: ServerOptions) -> Result<Started, StartError> {
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
        // One agent's choice of tools and waits, told in its hello, is not the ceiling of the
        // server every front end of the folder shares.
        .env_remove("FLOWDECK_TOOLSETS")
        .env_remove("FLOWDECK_MAX_WAIT")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let child = command.spawn().map_err(|source| StartError::Spawn {
        program: program.into(),
        source,
    })?;
    Ok(Started {
        child: Some(child),
        began: Instant::now(),
        socket,
        log: crate::logfile::path(&canonical, crate::logfile::SERVER),
        ended: None,
    })
}

impl Started {
    /// The server answers: it is reaped by a thread of its own, since it outlives this front
    /// end as often as not and a zombie of it must not stay meanwhile.
    pub fn reaped(&mut self) {
        if let Some(mut child) = self.child.take() {
            std::thread::spawn(move || child.wait());
        }
    }

    /// An error once the server has had [`START_WAIT`] to answer.
    pub fn check(&mut self) -> Result<(), StartError> {
        if self.ended.is_none()
            && let Some(child) = &mut self.child
            && let Ok(Some(status)) = child.try_wait()
        {
            // Another front end's server won the folder (this one ended at once, in peace),
            // or it failed: either way, what answers now is what there is.
            self.ended = Some(status.to_string());
        }
        if self.began.elapsed() <= START_WAIT {
            return Ok(());
        }
        if self.ended.is_none()
            && let Some(mut child) = self.child.take()
        {
            let _ = child.kill();
            let _ = child.wait();
        }
        Err(StartError::NoAnswer {
            socket: self.socket.clone(),
            waited: START_WAIT,
            ended: self.ended.clone(),
            log: self.log.clone(),
        })
    }

    /// How long to wait before looking again. The server answers within tens of milliseconds
    /// of its start, and a refused connect costs microseconds: looked at every millisecond at
    /// first (an agent's `initialize` waits on this), every 10 ms once it takes longer (a
    /// loaded machine).
    pub fn pause(&self) -> Duration {
        if self.began.elapsed() < Duration::from_millis(300) {
            Duration::from_millis(1)
        } else {
            Duration::from_millis(10)
        }
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        // Given up on (a termination signal while it started): still reaped, never a zombie.
        self.reaped();
    }
}
