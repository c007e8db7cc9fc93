//! The studio's way to the engine: the engine in this process, or the folder's server reached
//! over its socket (server/client.rs). Both take the same [`Request`]s and give the same
//! answers, events and screens, so the studio's update and draw code never knows which.

use super::draw::pane::Screens;
use crate::engine::approval::Approver;
use crate::engine::panes::Mirror;
use crate::engine::request::{Answer, Reply, Request, RequestError};
use crate::engine::{Actor, Engine, EngineEvent, Snapshot};
use crate::server::client::{Inbound, Remote};
use std::sync::Arc;
use tokio::sync::broadcast;

/// Where the engine is.
#[derive(Debug, Clone)]
pub enum Link {
    /// In this process, with the person's right to answer approval requests.
    Local {
        engine: Arc<Engine>,
        approver: Arc<Approver>,
    },
    /// In the folder's server.
    Remote(Arc<Remote>),
}

/// What the engine tells the studio, in order.
#[derive(Debug)]
pub enum Inbox {
    Local {
        events: broadcast::Receiver<EngineEvent>,
        engine: Arc<Engine>,
    },
    Remote(crate::server::inbound::Queue),
}

/// Something asked of an engine, wherever it is: the studio's reads are written once against
/// this.
pub trait Ask {
    fn ask(&self, request: Request) -> impl Future<Output = Answer> + Send;
    /// A copy of a session's screen.
    fn mirror(&self, session_id: &str) -> Result<Mirror, String>;
}

/// The engine in this process answers on the calling thread: every future it gives is ready
/// at once (the studio's reads, and tests, rely on that).
impl Ask for Engine {
    fn ask(&self, request: Request) -> impl Future<Output = Answer> + Send {
        std::future::ready(self.handle_sync(request, &Actor::person()))
    }

    fn mirror(&self, session_id: &str) -> Result<Mirror, String> {
        self.session_mirror(session_id).map_err(|e| e.to_string())
    }
}

/// The engine in this process, shared: what waits on a run or a process is awaited, the rest
/// answered on the calling thread.
impl Ask for Arc<Engine> {
    fn ask(&self, request: Request) -> impl Future<Output = Answer> + Send {
        let engine = self.clone();
        async move {
            if request.waits() {
                engine.handle(request, &Actor::person()).await
            } else {
                engine.handle_sync(request, &Actor::person())
            }
        }
    }

    fn mirror(&self, session_id: &str) -> Result<Mirror, String> {
        self.as_ref().mirror(session_id)
    }
}

impl Ask for Link {
    fn ask(&self, request: Request) -> impl Future<Output = Answer> + Send {
        self.call(request)
    }

    fn mirror(&self, session_id: &str) -> Result<Mirror, String> {
        match self {
            Link::Local { engine, .. } => engine.mirror(session_id),
            Link::Remote(remote) => remote
                .with_mirror(session_id, Mirror::clone)
                .ok_or_else(|| format!("no screen of session {session_id} has arrived yet")),
        }
    }
}

impl Link {
    /// Asks the engine. A call to a server is sent when this is called, not when the answer
    /// is awaited: calls keep the order they were made in (a person's keys, above all). The
    /// future borrows nothing, so a task may await it.
    pub fn call(&self, request: Request) -> impl Future<Output = Answer> + Send + use<> {
        let asked = match self {
            Link::Local { engine, .. } => Err((engine.clone(), request)),
            Link::Remote(remote) => Ok(remote.send(request)),
        };
        async move {
            match asked {
                Err((engine, request)) => engine.handle(request, &Actor::person()).await,
                Ok(sent) => sent.answer().await,
            }
        }
    }

    /// The answer at once when the engine is here and the request is quick; `None` when it
    /// must be waited for.
    pub fn ask_now(&self, request: &Request) -> Option<Answer> {
        match self {
            Link::Local { engine, .. } if request.is_quick() => {
                Some(engine.handle_now(request.clone(), &Actor::person()))
            }
            _ => None,
        }
    }

    /// The engine itself, when it is in this process.
    pub fn local(&self) -> Option<&Arc<Engine>> {
        match self {
            Link::Local { engine, .. } => Some(engine),
            Link::Remote(_) => None,
        }
    }

    /// Answers an agent's run waiting for approval, as the person at this studio: the
    /// request shown, by its fingerprint.
    pub async fn decide(
        &self,
        run_id: &str,
        fingerprint: &str,
        approve: bool,
    ) -> Result<(), String> {
        match self {
            Link::Local { approver, .. } => approver
                .decide(run_id, fingerprint, approve, &Actor::person())
                .map(|_| ())
                .map_err(|e| e.to_string()),
            Link::Remote(remote) => match remote.decide(run_id, fingerprint, approve).await {
                Ok(_) => Ok(()),
                Err(e) => Err(e.message),
            },
        }
    }

    /// Tells the engine which sessions' screens are shown (the server sends only theirs).
    pub fn watch(&self, sessions: Vec<String>) {
        if let Link::Remote(remote) = self {
            remote.watch(sessions);
        }
    }

    pub fn screens(&self) -> &dyn Screens {
        match self {
            Link::Local { engine, .. } => engine.as_ref(),
            Link::Remote(remote) => remote.as_ref(),
        }
    }

    /// Where the studio reads the engine's snapshot and events from.
    pub fn inbox(&self, remote: Option<crate::server::inbound::Queue>) -> Option<Inbox> {
        match (self, remote) {
            (Link::Local { engine, .. }, _) => Some(Inbox::Local {
                events: engine.subscribe(),
                engine: engine.clone(),
            }),
            (Link::Remote(_), Some(inbound)) => Some(Inbox::Remote(inbound)),
            (Link::Remote(_), None) => None,
        }
    }
}

impl Screens for Remote {
    fn with_screen(&self, session_id: &str, draw: &mut dyn FnMut(&Mirror)) -> bool {
        self.with_mirror(session_id, |m| draw(m)).is_some()
    }
}

impl Inbox {
    /// The next thing the engine tells. A local engine's stream starts with its snapshot
    /// (taken by the caller after subscribing), so this only follows it.
    pub async fn recv(&mut self) -> Inbound {
        match self {
            Inbox::Local { events, engine } => match events.recv().await {
                Ok(event) => Inbound::Event(Box::new(event)),
                // Behind the stream: start again from a fresh snapshot, as the contract says.
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    Inbound::Snapshot(Box::new(engine.snapshot()))
                }
                Err(broadcast::error::RecvError::Closed) => {
                    Inbound::Gone("the engine ended".into())
                }
            },
            Inbox::Remote(inbound) => inbound
                .recv()
                .await
                .unwrap_or_else(|| Inbound::Gone("the connection to the server ended".into())),
        }
    }
}

/// The snapshot to start from, for an engine in this process (a server sends its own first).
pub fn first_snapshot(link: &Link) -> Option<Box<Snapshot>> {
    link.local().map(|engine| Box::new(engine.snapshot()))
}

/// An answer that is not the one asked for, as a message.
pub fn message(answer: Answer) -> String {
    match answer {
        Ok(reply) => RequestError::unexpected(&reply).message,
        Err(e) => e.message,
    }
}

/// Whether an answer is a plain "done".
pub fn is_done(answer: &Answer) -> bool {
    matches!(answer, Ok(Reply::Done))
}
