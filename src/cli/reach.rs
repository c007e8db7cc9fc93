//! Where a command's runs happen: in the folder's server when one answers (an open studio
//! shows them as they go, and a person or an agent there can follow them), else in an engine
//! of this process, which ends with the command; and what that engine tells.

use crate::engine::request::{Reply, Request};
use crate::engine::{Actor, Engine, EngineEvent};
use crate::server::client::{Inbound, Remote};
use crate::workflow::names::sanitize;
use anyhow::Result;
use std::path::Path;
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;

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
    Server(tokio::sync::mpsc::UnboundedReceiver<Inbound>),
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
        let mut again = crate::server::hello::ReachAgain::default();
        while let Some(stream) = crate::server::relay::connect(folder) {
            match Remote::attach(stream, folder, crate::server::hello::Client::Cli {}).await {
                Ok((remote, inbox)) => {
                    if std::env::var_os(super::RECORDINGS_ENV).is_some() {
                        eprintln!(
                            "flowdeck: the run happens in the folder's server, which records as it was started: {} set here does not change that",
                            super::RECORDINGS_ENV
                        );
                    }
                    return Ok((Host::Server(remote), Events::Server(inbox)));
                }
                Err(e) if again.after(&e) => {}
                Err(e) => return Err(e.context("cannot attach to the folder's server")),
            }
        }
        let engine = super::open_engine(folder, super::engine_config(false, false)?)?;
        let events = Events::Here(engine.subscribe());
        Ok((Host::Here(engine), events))
    }

    pub(super) async fn ask(&self, request: Request) -> Result<Reply> {
        let answer = match self {
            Host::Here(engine) => engine.handle(request, &Actor::Cli).await,
            Host::Server(remote) => remote.ask(request).await,
        };
        answer.map_err(|e| anyhow::anyhow!("{}", e.message))
    }

    pub(super) async fn cancel(&self, run_id: &str) {
        let _ = self
            .ask(Request::CancelRun {
                run_id: run_id.to_string(),
            })
            .await;
    }
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
