//! A studio's side of the folder's server: its engine calls sent and their answers matched,
//! the snapshot and events handed to the studio's loop in order, and the screens it shows kept
//! as mirrors brought up to date by the rows the server sends.
//!
//! What waits to be written to the server is bounded: at most [`MOST_UNSENT`] calls (past it
//! the server has read nothing for a long while, and a call is answered at once with why),
//! and only the latest of the sessions shown.

use super::connect::Connection;
pub use super::inbound::Inbound;
use super::protocol::{self, ToServer, ToStudio};
use crate::engine::Change;
use crate::engine::request::{Answer, Request, RequestError};
use crate::term::mirror::Mirror;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{mpsc, oneshot, watch};

/// Calls (and answers to approval requests) waiting to be written to the server, at most.
/// A person never comes near it: each key is a call, written as soon as it is made, and the
/// server reads a studio's calls as they come. Only a server that has read none of them for a
/// long while (stopped, or holding this studio up) fills it; a call past it is answered at
/// once with why, rather than queued without end.
pub const MOST_UNSENT: usize = 4096;

/// The server, as a studio reaches it.
#[derive(Debug)]
pub struct Remote {
    to_server: mpsc::Sender<ToServer>,
    /// The sessions shown, the latest only: a server that is behind is told where the studio
    /// is now, not every change on the way.
    shown: watch::Sender<Option<Vec<String>>>,
    pending: Mutex<HashMap<u64, oneshot::Sender<Answer>>>,
    next_id: AtomicU64,
    mirrors: Mutex<HashMap<String, Mirror>>,
    /// The server's version and process, for messages.
    pub server: String,
    /// Whether the server is in approval mode, and why this studio may not answer its
    /// requests when it may not (server/peer.rs).
    pub approval_mode: bool,
    pub cannot_approve: Option<String>,
    /// Who the studio's person is to the engine.
    pub person: Option<crate::actor::Actor>,
    /// Why the server does not serve MCP over HTTP though it was asked to.
    pub http_trouble: Option<String>,
}

impl Remote {
    /// Attaches to the folder's server through a connection connect.rs made (checked, and
    /// greeted as a studio or the command line): the studio protocol follows. The studio's
    /// loop reads what the server tells from the receiver.
    pub fn attach(connection: Connection, folder: &Path) -> (Arc<Remote>, super::inbound::Queue) {
        let (mut read, write, welcome) = connection.into_parts();
        let (to_server, outgoing) = mpsc::channel::<ToServer>(MOST_UNSENT);
        let (shown, watched) = watch::channel(None);
        let (resync, resyncs) = watch::channel(0u64);
        let remote = Arc::new(Remote {
            to_server,
            shown,
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            mirrors: Mutex::new(HashMap::new()),
            server: format!(
                "the flowdeck server of {} (version {}, process {})",
                folder.display(),
                welcome.version,
                welcome.pid
            ),
            approval_mode: welcome.approval_mode,
            cannot_approve: welcome.cannot_approve,
            person: welcome.person,
            http_trouble: welcome.http_trouble,
        });
        tokio::spawn(write_loop(write, outgoing, watched, resyncs));
        let (mut feed, inbox) = super::inbound::queue();
        let reader = remote.clone();
        tokio::spawn(async move {
            let why = reader.read_loop(&mut read, &mut feed, &resync).await;
            reader.fail_pending(&why);
            feed.push(Inbound::Gone(why));
        });
        (remote, inbox)
    }

    /// Reads the server's messages until it is gone; why it ended.
    async fn read_loop(
        &self,
        read: &mut BufReader<tokio::net::unix::OwnedReadHalf>,
        feed: &mut super::inbound::Feed,
        resync: &watch::Sender<u64>,
    ) -> String {
        let mut line = Vec::new();
        loop {
            match protocol::read_line(read, &mut line).await {
                Ok(true) => {}
                Ok(false) => return format!("{} ended", self.server),
                Err(e) => return format!("{}: {e}", self.server),
            }
            let message = match serde_json::from_slice::<ToStudio>(&line) {
                Ok(message) => message,
                Err(e) => return format!("{} sent what this studio cannot read: {e}", self.server),
            };
            let told = match message {
                ToStudio::Answer { id, answer } => {
                    if let Some(waiting) = lock(&self.pending).remove(&id) {
                        let _ = waiting.send(answer);
                    }
                    continue;
                }
                ToStudio::Screen {
                    session_id,
                    changes,
                } => {
                    lock(&self.mirrors)
                        .entry(session_id.clone())
                        .or_default()
                        .apply(changes);
                    Inbound::Screen(session_id)
                }
                ToStudio::Studios { attached } => Inbound::Studios(attached),
                ToStudio::ServerLog { trouble } => Inbound::ServerLog(trouble),
                ToStudio::Snapshot(snapshot) => {
                    // Sessions that are gone take their screens with them.
                    lock(&self.mirrors)
                        .retain(|id, _| snapshot.sessions.iter().any(|s| &s.session_id == id));
                    Inbound::Snapshot(snapshot)
                }
                ToStudio::Event(event) => {
                    if let Change::SessionClosed { session_id } = &event.change {
                        lock(&self.mirrors).remove(session_id);
                    }
                    Inbound::Event(event)
                }
            };
            if feed.push(told) == super::inbound::Fed::FellBehind {
                tracing::info!(
                    "the studio fell {} messages behind {}: starting again from a snapshot",
                    super::inbound::MOST_QUEUED,
                    self.server
                );
                resync.send_modify(|asked| *asked += 1);
            }
        }
    }

    /// Every call still waiting gets the reason the server went away.
    fn fail_pending(&self, why: &str) {
        for (_, waiting) in lock(&self.pending).drain() {
            let _ = waiting.send(Err(RequestError::new("disconnected", why)));
        }
    }

    /// Sends an engine call at once (calls reach the server in the order they are sent: a
    /// person's keys stay in order) and gives what waits for its answer.
    pub fn send(&self, request: Request) -> Sent {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (answer, answered) = oneshot::channel();
        lock(&self.pending).insert(id, answer);
        self.queue(id, ToServer::Call { id, request });
        Sent {
            answered,
            server: self.server.clone(),
        }
    }

    /// Queues message `id` for the server; when it cannot be queued, what waits for its
    /// answer is told why (a server gone, or one that has read nothing for a long while).
    fn queue(&self, id: u64, message: ToServer) {
        let full = match self.to_server.try_send(message) {
            Ok(()) => return,
            Err(TrySendError::Full(_)) => true,
            Err(TrySendError::Closed(_)) => false,
        };
        let Some(waiting) = lock(&self.pending).remove(&id) else {
            return;
        };
        if full {
            let _ = waiting.send(Err(RequestError::new(
                "server_busy",
                format!(
                    "{} has read none of this studio's last {MOST_UNSENT} calls: it is stopped or overloaded",
                    self.server
                ),
            )));
        }
    }

    /// Sends an engine call and waits for its answer.
    pub async fn ask(&self, request: Request) -> Answer {
        self.send(request).answer().await
    }

    /// Answers an agent's run waiting for approval: the request shown, by its fingerprint.
    pub async fn decide(&self, run_id: &str, fingerprint: &str, approve: bool) -> Answer {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (answer, answered) = oneshot::channel();
        lock(&self.pending).insert(id, answer);
        let message = ToServer::Decide {
            id,
            run_id: run_id.to_string(),
            fingerprint: fingerprint.to_string(),
            approve,
        };
        self.queue(id, message);
        answered.await.unwrap_or_else(|_| {
            Err(RequestError::new(
                "disconnected",
                format!("{} is gone", self.server),
            ))
        })
    }

    /// Tells the server which sessions' screens the studio shows now.
    pub fn watch(&self, sessions: Vec<String>) {
        self.shown.send_replace(Some(sessions));
    }

    /// Runs `draw` on the latest copy of a shown session's screen; false when there is none
    /// (yet).
    pub fn with_mirror<R>(&self, session_id: &str, draw: impl FnOnce(&Mirror) -> R) -> Option<R> {
        lock(&self.mirrors).get(session_id).map(draw)
    }
}

/// Writes the studio's messages to the server: its calls in the order they were made, and the
/// sessions it shows whenever they change (first when both wait, as they were most likely
/// said first), until the studio or the connection goes.
async fn write_loop(
    mut write: tokio::net::unix::OwnedWriteHalf,
    mut outgoing: mpsc::Receiver<ToServer>,
    mut shown: watch::Receiver<Option<Vec<String>>>,
    mut resyncs: watch::Receiver<u64>,
) {
    loop {
        let message = tokio::select! {
            biased;
            changed = resyncs.changed() => {
                let Ok(()) = changed else { return };
                ToServer::Resync
            }
            changed = shown.changed() => {
                let Ok(()) = changed else { return };
                let Some(sessions) = shown.borrow_and_update().clone() else {
                    continue;
                };
                ToServer::Watch { sessions }
            }
            message = outgoing.recv() => match message {
                Some(message) => message,
                None => return,
            },
        };
        let Ok(line) = protocol::line(&message) else {
            continue;
        };
        if write.write_all(&line).await.is_err() {
            return;
        }
    }
}

/// An engine call sent, waiting for its answer.
#[derive(Debug)]
pub struct Sent {
    answered: oneshot::Receiver<Answer>,
    server: String,
}

impl Sent {
    pub async fn answer(self) -> Answer {
        self.answered.await.unwrap_or_else(|_| {
            Err(RequestError::new(
                "disconnected",
                format!("{} is gone", self.server),
            ))
        })
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
