//! What a server holds, asked over its socket: `flowdeck ls` and `flowdeck stop` say `status`
//! in their hello, and the server answers with one line (its folder, process, version and
//! start, who is attached, the terminals and runs it holds) and closes. One exchange, so that
//! a front end learns all of it from the server itself, after connect.rs's checks, and never
//! from files another process could have written.

use super::attendance::{Attendance, Attendee};
use super::connect::{self, Connection, IfNone};
use super::hello::{self, Client, Hello, NotWelcomed};
use super::protocol;
use crate::actor::Actor;
use crate::engine::Engine;
use crate::engine::run::Phase;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// How long the server may take to send its state once it has welcomed the client: it reads
/// it from memory, so only a stopped server takes longer.
pub const ANSWER_WAIT: Duration = Duration::from_secs(5);

/// A server's state, as `flowdeck ls --json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// The workflows folder it serves (canonical).
    pub folder: PathBuf,
    pub pid: u32,
    pub version: String,
    /// When it began serving: RFC 3339, UTC.
    pub started_at: String,
    pub uptime_s: u64,
    /// The studios, agents and `flowdeck run`s on its socket, in the order they came.
    pub attached: Vec<Attendee>,
    /// Agents' sessions of MCP over HTTP (not named: rmcp holds them).
    pub http_agents: usize,
    /// Its terminal sessions, open (their program running) or ended and not yet closed.
    pub terminals: Vec<Terminal>,
    /// Its runs in progress.
    pub runs: Vec<Run>,
    /// Runs of agents waiting for a person's approval.
    pub approvals_pending: usize,
    /// How many runs and terminals need a person, failed, finished unseen, went quiet or run
    /// (engine/attention/).
    #[serde(default)]
    pub attention: crate::engine::attention::AttentionCounts,
}

/// A terminal a server holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Terminal {
    pub session_id: String,
    pub name: Option<String>,
    /// Its program still runs (else it ended and the session is not closed yet).
    pub running: bool,
    pub opened_by: Option<Actor>,
    /// Set when its agent has gone and nobody looks at it: it will be closed (the engine's
    /// policy on what nobody watches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abandoned: Option<Abandoned>,
}

/// A terminal nobody watches, until it is closed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Abandoned {
    /// The agent that opened it and has gone, by its client's name.
    pub agent: String,
    /// In how many seconds it is closed, unless someone looks at it meanwhile.
    pub closes_in_s: u64,
}

/// A run a server holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub run_id: String,
    pub workflow: String,
    pub status: Phase,
    pub started_by: Option<Actor>,
}

impl State {
    /// Whether stopping the server ends something: a terminal or a run.
    pub fn holds_anything(&self) -> bool {
        !self.terminals.is_empty() || !self.runs.is_empty()
    }
}

/// What the server knows of itself beyond its engine.
#[derive(Debug, Clone)]
pub struct Facts {
    pub folder: PathBuf,
    pub started: SystemTime,
    pub attendance: Attendance,
}

/// The server's side: its state, one line, then the end of the connection.
pub async fn serve<W: AsyncWrite + Unpin>(engine: &Arc<Engine>, facts: &Facts, write: &mut W) {
    let engine = engine.clone();
    // The snapshot reads the workflows' run counts from the folder's state file.
    let snapshot = tokio::task::spawn_blocking(move || {
        let approvals = engine.approvals_pending().len();
        (
            engine.snapshot(),
            approvals,
            engine.attached(),
            engine.abandoned(),
        )
    })
    .await;
    let Ok((snapshot, approvals_pending, engine_attached, abandoned)) = snapshot else {
        return;
    };
    let state = State {
        folder: facts
            .folder
            .canonicalize()
            .unwrap_or_else(|_| facts.folder.clone()),
        pid: std::process::id(),
        version: hello::version(),
        started_at: chrono::DateTime::<chrono::Utc>::from(facts.started)
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        uptime_s: facts.started.elapsed().map_or(0, |d| d.as_secs()),
        attached: attached(&engine_attached, facts),
        http_agents: facts.attendance.http_agents(),
        terminals: snapshot
            .sessions
            .into_iter()
            .map(|s| Terminal {
                session_id: s.session_id.clone(),
                name: s.name,
                running: s.running,
                abandoned: abandoned
                    .iter()
                    .find(|a| a.session_id == s.session_id)
                    .map(|a| Abandoned {
                        agent: a.agent.clone(),
                        closes_in_s: a.closes_in_ms.div_ceil(1000),
                    }),
                opened_by: s.opened_by,
            })
            .collect(),
        runs: snapshot
            .runs
            .into_iter()
            .map(|r| Run {
                run_id: r.run_id,
                workflow: r.workflow_name,
                status: r.status,
                started_by: r.started_by,
            })
            .collect(),
        approvals_pending,
        attention: snapshot.attention.counts,
    };
    if let Ok(line) = protocol::line(&state) {
        let _ = crate::conn::outbox::write_line(write, &line, Some(ANSWER_WAIT)).await;
    }
    let _ = write.shutdown().await;
}

/// Who is attached: the studios and `flowdeck run`s on the socket, then the agents the
/// engine knows (on the socket or over HTTP), by their clients' names.
fn attached(engine_attached: &[Actor], facts: &Facts) -> Vec<Attendee> {
    let mut attached: Vec<Attendee> = facts
        .attendance
        .now()
        .into_iter()
        .filter(|a| !matches!(a, Attendee::Agent { .. }))
        .collect();
    attached.extend(engine_attached.iter().filter_map(|a| match a {
        Actor::Agent { client, .. } => Some(Attendee::Agent {
            name: crate::workflow::names::sanitize(client),
        }),
        _ => None,
    }));
    attached
}

/// Why a server's answer is not taken.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error("the flowdeck server on {} did not say what it holds within {} s", .at.display(), ANSWER_WAIT.as_secs())]
    Silent { at: PathBuf },
    #[error("the flowdeck server on {} closed the connection without saying what it holds", .at.display())]
    Closed { at: PathBuf },
    #[error("the flowdeck server on {} answered what flowdeck cannot read: {why}", .at.display())]
    Unreadable { at: PathBuf, why: String },
    #[error(
        "the flowdeck server on {} says it is process {said}, but the kernel says process {listener} listens there: not trusted",
        .at.display()
    )]
    NotItself {
        at: PathBuf,
        said: u32,
        listener: i64,
    },
}

/// Asks the folder's server (found as every front end finds it: connect.rs) what it holds;
/// `None` when no server answers for the folder. Never starts one.
pub async fn of_folder(folder: &Path) -> anyhow::Result<Option<State>> {
    let hello = Hello::new(Client::Status {});
    let connection = match connect::connect(folder, &hello, IfNone::Leave).await {
        Ok(Some(connection)) => connection,
        Ok(None) => return Ok(None),
        Err(e) if ended(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(Some(read_state(connection, folder).await?))
}

/// Asks the server listening on `socket` what it holds, after connect.rs's checks; `None`
/// when nothing listens there (a server that died left it) or it ended as it was asked.
pub async fn at_socket(socket: &Path) -> anyhow::Result<Option<State>> {
    let hello = Hello::new(Client::Status {});
    let connection = match connect::connect_at(socket, &hello).await {
        Ok(Some(connection)) => connection,
        Ok(None) => return Ok(None),
        Err(e) if ended(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(Some(read_state(connection, socket).await?))
}

/// A server that closed the connection before its welcome was ending: it holds nothing.
fn ended(error: &anyhow::Error) -> bool {
    error.chain().any(|e| e.is::<NotWelcomed>())
}

/// The state line after the welcome, within [`ANSWER_WAIT`], from a server that is the
/// process the kernel says listens: the pid it reports is what `flowdeck stop` signals.
async fn read_state(connection: Connection, at: &Path) -> Result<State, StatusError> {
    let listener = connection.peer_pid();
    let (mut read, _write, welcome) = connection.into_parts();
    let mut line = Vec::new();
    let at = at.to_path_buf();
    let more = tokio::time::timeout(ANSWER_WAIT, protocol::read_line(&mut read, &mut line))
        .await
        .map_err(|_| StatusError::Silent { at: at.clone() })?
        .map_err(|e| StatusError::Unreadable {
            at: at.clone(),
            why: e.to_string(),
        })?;
    if !more {
        return Err(StatusError::Closed { at });
    }
    let state: State = serde_json::from_slice(&line).map_err(|e| StatusError::Unreadable {
        at: at.clone(),
        why: e.to_string(),
    })?;
    let listener = listener.map(i64::from);
    let said = i64::from(state.pid);
    // Without the kernel's word for who listens, the server's own word proves nothing.
    if state.pid != welcome.pid || listener != Some(said) {
        return Err(StatusError::NotItself {
            at,
            said: state.pid,
            listener: listener.unwrap_or(i64::from(welcome.pid)),
        });
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_state_is_one_line_that_reads_back_whole() {
        let folder = tempfile::tempdir().expect("a temp folder");
        let engine =
            Engine::open(folder.path(), crate::engine::EngineConfig::default()).expect("an engine");
        let attendance = Attendance::default();
        let _agent = engine.arrive(Actor::Agent {
            client: "claude-code".into(),
            connection: "c1".into(),
        });
        let facts = Facts {
            folder: folder.path().to_path_buf(),
            started: SystemTime::now() - Duration::from_secs(90),
            attendance,
        };
        let mut written = Vec::new();
        serve(&engine, &facts, &mut written).await;
        assert_eq!(written.iter().filter(|&&b| b == b'\n').count(), 1);
        let state: State = serde_json::from_slice(&written).expect("a state");
        assert_eq!(state.pid, std::process::id());
        assert_eq!(
            state.folder,
            folder.path().canonicalize().expect("canonical")
        );
        assert!(state.uptime_s >= 90, "{state:?}");
        assert_eq!(
            state.attached,
            vec![Attendee::Agent {
                name: "claude-code".into()
            }]
        );
        assert!(!state.holds_anything());
        engine.shutdown().await;
    }
}
