//! Where a command's runs happen: in the folder's server when one answers (an open studio
//! shows them as they go, and a person or an agent there can follow them), else in an engine
//! of this process, which ends with the command; and what that engine tells.

use crate::engine::request::{Reply, Request};
use crate::engine::{Actor, Engine, EngineEvent};
use crate::server::client::{Inbound, Remote};
use crate::server::connect::{IfNone, connect};
use crate::server::hello::{Client, Hello};
use crate::workflow::names::sanitize;
use anyhow::{Context, Result};
use std::path::Path;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;

/// How long the command waits for the server's answer to one of its calls: each is quick
/// (a run started, a status, an answer to a question), so a longer wait means a server that
/// is stopped or wedged.
const ANSWER_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Where the run happens: in the folder's server when one answers (so that an open studio
/// shows it as it goes, and a person or an agent there can follow it), else in an engine of
/// this process, which ends with it.
pub(super) enum Host {
    Here(Arc<Engine>),
    Server(Arc<Remote>),
}

/// What the engine tells, from here or from the server.
pub(super) enum Events {
    Here(tokio::sync::broadcast::Receiver<EngineEvent>),
    Server(crate::server::inbound::Queue),
}

/// The next thing the engine tells.
pub(super) enum Told {
    Event(Box<EngineEvent>),
    /// Events were missed: ask where the run stands.
    Missed,
    /// No more events: the engine is going away.
    Gone,
}

impl Host {
    /// The folder's server, when one answers; else an engine here. Subscribed before the run
    /// starts: no event of it is missed.
    pub(super) async fn reach(folder: &Path) -> Result<(Host, Events)> {
        let hello = Hello::new(Client::Cli {});
        let reached = connect(folder, &hello, IfNone::Leave)
            .await
            .context("cannot attach to the folder's server")?;
        if let Some(connection) = reached {
            let (remote, inbox) = Remote::attach(connection, folder);
            for setting in [
                super::settings::RECORDINGS_ENV,
                super::settings::RECORDING_FORMAT_ENV,
            ] {
                if std::env::var_os(setting).is_some() {
                    eprintln!(
                        "flowdeck: the run happens in the folder's server, which records as it was started: {setting} set here does not change that",
                    );
                }
            }
            return Ok((Host::Server(remote), Events::Server(inbox)));
        }
        let engine = super::open_engine(folder, super::settings::engine_config(false, false)?)?;
        let events = Events::Here(engine.subscribe());
        Ok((Host::Here(engine), events))
    }

    pub(super) async fn ask(&self, request: Request) -> Result<Reply> {
        let answer = match self {
            Host::Here(engine) => engine.handle(request, &Actor::Cli).await,
            Host::Server(remote) => answered(remote, request).await,
        };
        answer.map_err(|e| anyhow::anyhow!("{}", e.message))
    }

    /// Asks for the run to be cancelled; an error only when a server does not answer within
    /// [`ANSWER_WAIT`] (stopped or wedged). A run that had ended already is no error.
    pub(super) async fn cancel(&self, run_id: &str) -> Result<()> {
        let request = Request::CancelRun {
            run_id: run_id.to_string(),
        };
        match self {
            Host::Here(engine) => {
                let _ = engine.handle(request, &Actor::Cli).await;
                Ok(())
            }
            Host::Server(remote) => match answered(remote, request).await {
                Err(e) if e.code == NO_ANSWER => Err(anyhow::anyhow!("{}", e.message)),
                _ => Ok(()),
            },
        }
    }
}

/// The error code of a call the server did not answer in time.
const NO_ANSWER: &str = "no_answer";

/// The server's answer, within [`ANSWER_WAIT`]: a server that does not answer (stopped,
/// wedged) must not hold the command.
async fn answered(remote: &Remote, request: Request) -> crate::engine::request::Answer {
    tokio::time::timeout(ANSWER_WAIT, remote.ask(request))
        .await
        .unwrap_or_else(|_| {
            Err(crate::engine::request::RequestError::new(
                NO_ANSWER,
                format!(
                    "{} did not answer within {} s",
                    remote.server,
                    ANSWER_WAIT.as_secs()
                ),
            ))
        })
}

impl Events {
    pub(super) async fn next(&mut self) -> Told {
        match self {
            Events::Here(events) => match events.recv().await {
                Ok(event) => Told::Event(Box::new(event)),
                Err(RecvError::Lagged(_)) => Told::Missed,
                Err(RecvError::Closed) => Told::Gone,
            },
            Events::Server(inbox) => loop {
                match inbox.recv().await {
                    Some(Inbound::Event(event)) => return Told::Event(event),
                    // A server sends a fresh state to one that fell behind.
                    Some(Inbound::Snapshot(_)) => return Told::Missed,
                    Some(Inbound::Gone(why)) => {
                        eprintln!("flowdeck: {}", sanitize(&why));
                        return Told::Gone;
                    }
                    Some(Inbound::ServerLog(Some(why))) => eprintln!(
                        "flowdeck: the folder's server cannot write its log, and goes on without it: {}",
                        sanitize(&why)
                    ),
                    Some(Inbound::Screen(_) | Inbound::Studios(_) | Inbound::ServerLog(None)) => {}
                    None => return Told::Gone,
                }
            },
        }
    }
}
