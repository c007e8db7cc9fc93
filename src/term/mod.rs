//! Terminal sessions: programs on real PTYs, their screens, their output history, and exact
//! waiting for output. Knows nothing of workflows or runs.
//!
//! - [`session`]: one PTY session and its reader, writer and waiter threads;
//! - [`screen`]: the vt100 grid and the answers to terminal queries;
//! - [`fastforward`]: what of a batch of output can skip the grid (it scrolls away unseen);
//! - [`transcript`]: the output as plain text, kept outside the grid;
//! - [`decode`]: the parser that turns output bytes into that text;
//! - [`escapes`]: the same stream read character by character: text, controls, sequences;
//! - [`mask`]: secrets masked on what the terminal shows, for every sink;
//! - [`echo`]: where output caused by an input starts, past its echo;
//! - [`matcher`]: waits registered with the reader thread;
//! - [`search`]: finding lines of the history and a full-screen program's screen;
//! - [`keys`]: keys to bytes in the terminal's current mode;
//! - [`remote`]: a shell reached through ssh (or docker, kubectl, sudo), told apart by its markers;
//! - [`shell`]: commands, exit statuses and environment through a POSIX shell;
//! - [`typing`]: the writer, which types input when someone reads the terminal;
//! - [`processes`]: every process of a session, found, ended and reaped;
//! - [`watchdog`]: the process that ends them when flowdeck itself is killed.

pub mod decode;
pub mod deeds;
pub mod echo;
pub mod error;
pub mod escapes;
pub mod fastforward;
pub mod hush;
pub mod inputs;
pub mod keys;
pub mod mask;
pub mod matcher;
pub mod mirror;
pub mod nonce;
pub mod processes;
pub mod quiet;
pub mod recording;
pub mod remote;
pub mod screen;
pub mod search;
pub mod session;
pub mod shell;
pub mod transcript;
pub mod typing;
pub mod watchdog;

pub use error::TermError;
pub use keys::{KeyPress, Named};
pub use matcher::{AwaitSpec, Quiet, QuietOn, Since, WaitOutcome};
pub use processes::Teardown;
pub use screen::{ScreenSnapshot, Size};
pub use session::{
    AwaitResult, Content, ExitInfo, MAX_INPUT_BYTES, MAX_QUEUED_INPUT, OpenOptions, Program,
    Session, SessionInfo,
};
pub use shell::{CommandOutcome, CommandResult};

use indexmap::IndexMap;
use session::HistoryLimits;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Limits and defaults for the sessions of one flowdeck process.
#[derive(Debug, Clone)]
pub struct TermConfig {
    /// Sessions open at once (exited ones count until closed).
    pub max_sessions: usize,
    /// History lines kept per session.
    pub history_lines: usize,
    /// History bytes kept per session (whichever limit is reached first).
    pub history_bytes: usize,
    /// Time between SIGTERM and SIGKILL when a session closes.
    pub kill_grace: Duration,
    /// The flowdeck binary to start as a [`watchdog`] with the first session, so that a
    /// `kill -9` of this process leaves none of its sessions' processes behind. `None` in
    /// processes that are not the flowdeck binary (the library's tests).
    pub watchdog: Option<std::path::PathBuf>,
}

impl Default for TermConfig {
    fn default() -> Self {
        TermConfig {
            max_sessions: 32,
            history_lines: 10_000,
            history_bytes: 8 << 20,
            kill_grace: Duration::from_secs(2),
            watchdog: None,
        }
    }
}

/// Longest session name.
pub const MAX_NAME_LEN: usize = 64;

/// The open sessions of this process.
#[derive(Debug)]
pub struct Terminals {
    config: TermConfig,
    sessions: Mutex<IndexMap<String, Arc<Session>>>,
    /// Sessions being spawned: they count against the limit and hold their names, so that
    /// the spawn itself (a fork and an exec, slow on a busy disk) runs without the sessions'
    /// lock, which every list and lookup takes.
    opening: Mutex<Opening>,
    /// Leaders of sessions being closed: their waiter threads reap them, not `reap`.
    closing: Mutex<HashSet<i32>>,
    /// Started with the first session when configured; `None` inside when it could not start.
    watchdog: std::sync::OnceLock<Option<watchdog::Watchdog>>,
    /// The number of the next session's id: s1, s2, … in each registry (an engine has one),
    /// never reused while it lives.
    next_id: AtomicU64,
}

/// Slots taken by opens in progress.
#[derive(Debug, Default)]
struct Opening {
    count: usize,
    names: Vec<String>,
}

/// An open in progress; its slot (and name) is given back when dropped, whether the session
/// was inserted or the spawn failed.
struct Reserved<'a> {
    terminals: &'a Terminals,
    name: Option<String>,
}

impl Drop for Reserved<'_> {
    fn drop(&mut self) {
        let mut opening = self.terminals.opening();
        opening.count -= 1;
        if let Some(name) = &self.name
            && let Some(at) = opening.names.iter().position(|n| n == name)
        {
            opening.names.swap_remove(at);
        }
    }
}

/// Process markers are numbered across the process, not per registry: a test process holds
/// many engines, and no two of their sessions may share a marker.
static NEXT_MARKER: AtomicU64 = AtomicU64::new(1);

impl Terminals {
    pub fn new(config: TermConfig) -> Self {
        processes::adopt_orphans();
        Terminals {
            config,
            sessions: Mutex::new(IndexMap::new()),
            opening: Mutex::new(Opening::default()),
            closing: Mutex::new(HashSet::new()),
            watchdog: std::sync::OnceLock::new(),
            next_id: AtomicU64::new(1),
        }
    }

    /// The watchdog, started on first need.
    fn watchdog(&self) -> Option<&watchdog::Watchdog> {
        self.watchdog
            .get_or_init(|| {
                let program = self.config.watchdog.as_deref()?;
                match watchdog::Watchdog::spawn(program, self.config.kill_grace) {
                    Ok(watchdog) => Some(watchdog),
                    Err(e) => {
                        tracing::warn!(
                            "cannot start the session watchdog ({e}): if flowdeck is killed, its sessions' processes will outlive it"
                        );
                        None
                    }
                }
            })
            .as_ref()
    }

    pub fn config(&self) -> &TermConfig {
        &self.config
    }

    fn sessions(&self) -> MutexGuard<'_, IndexMap<String, Arc<Session>>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn opening(&self) -> MutexGuard<'_, Opening> {
        self.opening.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a slot for a session about to be spawned, checking the limit and the name against
    /// the open sessions and the other opens in progress.
    fn reserve(&self, name: Option<&String>) -> Result<Reserved<'_>, TermError> {
        // Both locks, always in this order, only for the check: never across a spawn.
        let sessions = self.sessions();
        let mut opening = self.opening();
        let open = sessions.len() + opening.count;
        if open >= self.config.max_sessions {
            return Err(TermError::TooManySessions {
                open,
                max: self.config.max_sessions,
            });
        }
        if let Some(name) = name
            && (sessions.values().any(|s| s.name() == Some(name)) || opening.names.contains(name))
        {
            return Err(TermError::NameTaken(name.clone()));
        }
        opening.count += 1;
        opening.names.extend(name.cloned());
        Ok(Reserved {
            terminals: self,
            name: name.cloned(),
        })
    }

    /// Opens a session. Fails when the limit is reached or the name is taken or unsafe.
    pub fn open(&self, options: OpenOptions) -> Result<Arc<Session>, TermError> {
        if let Some(name) = &options.name
            && !is_valid_session_name(name)
        {
            return Err(TermError::InvalidName(name.clone()));
        }
        check_options(&options)?;
        let reserved = self.reserve(options.name.as_ref())?;
        let id = format!("s{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        // Unique across flowdeck processes, so one never tears down another's processes.
        let marker = format!(
            "{}-{}",
            std::process::id(),
            NEXT_MARKER.fetch_add(1, Ordering::Relaxed)
        );
        let limits = HistoryLimits {
            lines: self.config.history_lines,
            bytes: self.config.history_bytes,
        };
        let watchdog = self.watchdog();
        let session = Arc::new(Session::spawn(id.clone(), marker, options, limits)?);
        if let Some(watchdog) = watchdog {
            watchdog.track(session.pid());
        }
        let mut sessions = self.sessions();
        sessions.insert(id, session.clone());
        // Under the sessions' lock: the slot moves from the opens in progress to the sessions
        // in one step, never counted twice.
        drop(reserved);
        drop(sessions);
        Ok(session)
    }

    /// A session by id or by name.
    pub fn get(&self, id_or_name: &str) -> Result<Arc<Session>, TermError> {
        let sessions = self.sessions();
        sessions
            .get(id_or_name)
            .or_else(|| sessions.values().find(|s| s.name() == Some(id_or_name)))
            .cloned()
            .ok_or_else(|| TermError::NotFound(names::display(id_or_name)))
    }

    pub fn list(&self) -> Vec<SessionInfo> {
        let sessions: Vec<Arc<Session>> = self.sessions().values().cloned().collect();
        sessions.iter().map(|s| s.info()).collect()
    }

    /// Every session's listing, with how long its program has written nothing.
    pub fn list_quiet(&self) -> Vec<(SessionInfo, std::time::Duration)> {
        let sessions: Vec<Arc<Session>> = self.sessions().values().cloned().collect();
        sessions.iter().map(|s| (s.info(), s.quiet_for())).collect()
    }

    /// The processes that lead the sessions still running (their PTYs' first process).
    pub fn live_leaders(&self) -> Vec<i32> {
        self.sessions()
            .values()
            .filter_map(|s| s.live_leader())
            .collect()
    }

    pub fn len(&self) -> usize {
        self.sessions().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Closes a session: every process it started is ended and reaped.
    pub async fn close(&self, id_or_name: &str) -> Result<Teardown, TermError> {
        let session = self.get(id_or_name)?;
        let leader = session.pid() as i32;
        self.closing_set().insert(leader);
        self.sessions().shift_remove(session.id());
        let grace = self.config.kill_grace;
        let report = tokio::task::spawn_blocking(move || session.shutdown(grace))
            .await
            .unwrap_or_default();
        self.closing_set().remove(&leader);
        if let Some(Some(watchdog)) = self.watchdog.get() {
            watchdog.untrack(leader as u32);
        }
        self.reap();
        Ok(report)
    }

    /// Closes every session at once (on shutdown). Returns the ids of those closed.
    pub async fn close_all(&self) -> Vec<String> {
        let sessions: Vec<Arc<Session>> = self.sessions().drain(..).map(|(_, s)| s).collect();
        let ids: Vec<String> = sessions.iter().map(|s| s.id().to_string()).collect();
        self.closing_set()
            .extend(sessions.iter().map(|s| s.pid() as i32));
        let grace = self.config.kill_grace;
        let closing: Vec<_> = sessions
            .into_iter()
            .map(|s| tokio::task::spawn_blocking(move || s.shutdown(grace)))
            .collect();
        for handle in closing {
            let _ = handle.await;
        }
        if let Some(Some(watchdog)) = self.watchdog.get() {
            for leader in self.closing_set().iter() {
                watchdog.untrack(*leader as u32);
            }
        }
        self.closing_set().clear();
        self.reap();
        ids
    }

    fn closing_set(&self) -> MutexGuard<'_, HashSet<i32>> {
        self.closing.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reaps orphans adopted from sessions (never a leader: its own waiter thread reaps it).
    fn reap(&self) {
        let mut leaders: HashSet<i32> = self.sessions().values().map(|s| s.pid() as i32).collect();
        leaders.extend(self.closing_set().iter().copied());
        processes::reap_adopted(&leaders);
    }
}

/// What the kernel cannot pass to a program is refused, not cut: a NUL ends a C string, so
/// an argument, a path or an environment entry holding one would arrive shortened (or the
/// spawn would fail as if the program were missing).
fn check_options(options: &OpenOptions) -> Result<(), TermError> {
    let nul = |what: String| TermError::InvalidArgument {
        what,
        reason: "it contains a NUL byte, which the system cannot pass to a program".into(),
    };
    for (key, value) in &options.env {
        if key.is_empty() || key.contains(['=', '\0']) {
            return Err(TermError::InvalidEnvName(names::display(key)));
        }
        if value.contains('\0') {
            return Err(nul(format!("the value of environment variable `{key}`")));
        }
    }
    let program = match &options.program {
        Program::Command(argv) => argv.as_slice(),
        Program::Shell(shell) => shell.as_slice(),
        Program::Remote { connect, .. } => connect.as_slice(),
    };
    if let Some(i) = program.iter().position(|a| a.contains('\0')) {
        return Err(nul(match i {
            0 => "the program".to_string(),
            i => format!("argument {i} of the command"),
        }));
    }
    if options
        .cwd
        .as_ref()
        .is_some_and(|c| c.as_os_str().as_encoded_bytes().contains(&0))
    {
        return Err(nul("the working directory".into()));
    }
    Ok(())
}

/// Session names: 1 to 64 of `A-Z a-z 0-9 _ . -`, not starting with `-` or `.`.
pub fn is_valid_session_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && !name.starts_with(['-', '.'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

mod names {
    /// An id as given, made safe to print (it may come from an agent).
    pub fn display(id: &str) -> String {
        id.chars().take(128).flat_map(char::escape_debug).collect()
    }
}
