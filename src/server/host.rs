//! The folder's host: its Unix socket (socket.rs) served to any number of clients at once,
//! each greeted (hello.rs) and then served what it is: an agent's MCP session, a studio
//! (studio.rs) or `flowdeck approve`, all on the server's one engine.
//! Only the owner's processes are served: the peer's uid is checked on every connection, and a
//! stranger gets a JSON-RPC error saying why before the socket closes. Who may approve is the
//! kernel's word too (peer.rs).
//!
//! No client can starve the host (conn/): accepting backs off when descriptors run out, a
//! connection that says nothing within [`FIRST_LINE`] is closed, and the lines a client can
//! make repeat in the log are said at most once a period.

use super::attendance::{Attendance, Attendee};
use super::hello::{self, Client, First, Hello, Welcome};
use super::socket::{self, SocketError};
use super::status::Facts;
use crate::conn::FIRST_LINE;
use crate::conn::accept::Acceptor;
use crate::conn::throttle::Throttle;
use crate::engine::Engine;
use crate::mcp::{FlowdeckServer, McpOptions, wire};
use rmcp::ServiceExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

/// How often each log line a client can repeat by connecting is said, at most.
const SAY_EVERY: Duration = Duration::from_secs(10);

/// Connections refused: another user's, or one whose peer cannot be told.
static STRANGERS: Throttle = Throttle::new(SAY_EVERY);
/// Connections closed for saying nothing within [`FIRST_LINE`].
static SILENT: Throttle = Throttle::new(SAY_EVERY);
/// Hellos refused (another version, not understood, a process that may not approve).
static REFUSED: Throttle = Throttle::new(SAY_EVERY);
/// Connections that ended before an MCP handshake (a front end checking that the socket
/// answers ends one so each time).
static UNSHAKEN: Throttle = Throttle::new(SAY_EVERY);

/// A running host; dropping it (or [`Host::stop`]) stops serving and removes the socket.
#[derive(Debug)]
pub struct Host {
    socket: PathBuf,
    stop: CancellationToken,
    /// How many front ends are connected now.
    clients: tokio::sync::watch::Receiver<usize>,
    /// Asks the accept loop to stop accepting if nobody is connected (see [`Host::retire`]).
    retire: tokio::sync::mpsc::Sender<tokio::sync::oneshot::Sender<bool>>,
    task: Option<tokio::task::JoinHandle<()>>,
    attendance: Attendance,
}

impl Host {
    /// Who is attached (`flowdeck ls`): the agents of MCP over HTTP are counted in it too.
    pub fn attendance(&self) -> &Attendance {
        &self.attendance
    }

    /// The socket clients connect to.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// How many front ends are attached (a status question is none), as it changes.
    pub fn clients(&self) -> tokio::sync::watch::Receiver<usize> {
        self.clients.clone()
    }

    /// Stops accepting and removes the socket, if nobody is connected at that instant; false
    /// when someone is (or the loop has ended). Decided by the accept loop itself, between two
    /// accepts, so that a front end that connects as an idle server ends is either counted
    /// (and served: the server stays) or finds no socket (and starts a server of its own),
    /// never accepted and then dropped unanswered.
    pub async fn retire(&self) -> bool {
        let (answer, retired) = tokio::sync::oneshot::channel();
        if self.retire.send(answer).await.is_err() {
            return false;
        }
        retired.await.unwrap_or(false)
    }

    /// Stops accepting, ends every connection, and removes the socket.
    pub async fn stop(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        socket::unbind(&self.socket);
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.stop.cancel();
        socket::unbind(&self.socket);
    }
}

/// Binds the folder's socket and serves MCP on it over `engine`. Must be called inside a tokio
/// runtime.
pub fn start(engine: Arc<Engine>, folder: &Path, options: McpOptions) -> Result<Host, SocketError> {
    let (listener, socket) = socket::bind(folder)?;
    let stop = CancellationToken::new();
    let (count, clients) = tokio::sync::watch::channel(0);
    let (retire, retiring) = tokio::sync::mpsc::channel(1);
    let attendance = Attendance::default();
    let facts = Facts {
        folder: folder.to_path_buf(),
        started: std::time::SystemTime::now(),
        attendance: attendance.clone(),
    };
    let task = tokio::spawn(accept(
        Listening {
            listener,
            socket: socket.clone(),
            retiring,
        },
        facts,
        engine,
        options,
        stop.clone(),
        Counts {
            connected: Arc::new(tokio::sync::watch::channel(0).0),
            clients: Arc::new(count),
            studios: Arc::new(tokio::sync::watch::channel(0).0),
        },
    ));
    tracing::info!(
        "serving MCP for {} on {}",
        folder.display(),
        socket.display()
    );
    Ok(Host {
        socket,
        stop,
        clients,
        retire,
        task: Some(task),
        attendance,
    })
}

/// The socket being listened on, and the requests to stop listening when idle.
struct Listening {
    listener: tokio::net::UnixListener,
    socket: PathBuf,
    retiring: tokio::sync::mpsc::Receiver<tokio::sync::oneshot::Sender<bool>>,
}

async fn accept(
    listening: Listening,
    facts: Facts,
    engine: Arc<Engine>,
    options: McpOptions,
    stop: CancellationToken,
    counts: Counts,
) {
    let Listening {
        mut listener,
        socket,
        mut retiring,
    } = listening;
    let me = rustix::process::getuid().as_raw();
    let mut connections = 0u64;
    let mut acceptor = Acceptor::new("a client on the folder's socket");
    let mut kept = KeptSocket::new(&socket);
    loop {
        if kept.lost(&socket)
            && let Some(again) = kept.make_again(&socket)
        {
            listener = again;
        }
        let stream = tokio::select! {
            Some(answer) = retiring.recv() => {
                // Every connection counts here, one still greeting included: it is served,
                // never accepted and then dropped unanswered.
                if *counts.connected.borrow() == 0 {
                    // The socket goes first: from here a front end starts a server of its own.
                    socket::unbind(&socket);
                    let _ = answer.send(true);
                    return;
                }
                let _ = answer.send(false);
                continue;
            }
            (stream, _) = acceptor.next(|| listener.accept()) => stream,
            _ = kept.check.tick() => continue,
            () = stop.cancelled() => return,
        };
        match stream.peer_cred() {
            Ok(peer) if peer.uid() == me => {
                connections += 1;
                let who = match peer.pid() {
                    Some(pid) => format!("socket client {connections} (process {pid})"),
                    None => format!("socket client {connections}"),
                };
                let client = Connection {
                    who,
                    pid: peer.pid().and_then(|p| u32::try_from(p).ok()),
                    facts: facts.clone(),
                    engine: engine.clone(),
                    options: options.clone(),
                    stop: stop.clone(),
                    studios: counts.studios.clone(),
                    clients: counts.clients.clone(),
                };
                let connected = Attached::new(counts.connected.clone());
                tokio::spawn(async move {
                    client.serve(stream).await;
                    drop(connected);
                });
            }
            Ok(peer) => {
                if let Some(held) = STRANGERS.allow() {
                    tracing::warn!("refused a client of uid {}{held}", peer.uid());
                }
                tokio::spawn(refuse(
                    stream,
                    format!(
                        "flowdeck serves only its owner: this connection is from uid {}, the host runs as uid {me}",
                        peer.uid()
                    ),
                ));
            }
            Err(e) => {
                if let Some(held) = STRANGERS.allow() {
                    tracing::warn!("cannot tell who connected: {e}; refused{held}");
                }
            }
        }
    }
}

/// How often a server looks whether its socket file is still there.
const SOCKET_CHECK: std::time::Duration = std::time::Duration::from_secs(2);

/// The socket file a server listens on, watched: a /tmp cleaner or a person's `rm` may remove
/// it (or its folder) under a live server, and then no front end could reach it, though it
/// still holds the folder (engine/claim.rs). The server makes it again.
struct KeptSocket {
    check: tokio::time::Interval,
    /// The file bound, as [`socket::identity`] gives it.
    bound: Option<(u64, u64)>,
    said: Throttle,
}

impl KeptSocket {
    fn new(socket: &Path) -> Self {
        let mut check = tokio::time::interval(SOCKET_CHECK);
        check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        KeptSocket {
            check,
            bound: socket::identity(socket),
            said: Throttle::new(std::time::Duration::from_secs(60)),
        }
    }

    /// Whether the file at the socket's path is no longer the one bound.
    fn lost(&self, socket: &Path) -> bool {
        socket::identity(socket) != self.bound
    }

    /// A listener on the socket made again, or `None` (said in the log) when it cannot be.
    fn make_again(&mut self, socket: &Path) -> Option<tokio::net::UnixListener> {
        match socket::rebind(socket) {
            Ok(listener) => {
                self.bound = socket::identity(socket);
                tracing::warn!(
                    "the socket {} was removed while this server ran: made again",
                    socket.display()
                );
                Some(listener)
            }
            Err(e) => {
                if let Some(held) = self.said.allow() {
                    tracing::warn!(
                        "the socket {} was removed while this server ran, and cannot be made again ({e}): front ends cannot reach this server{held}",
                        socket.display()
                    );
                }
                None
            }
        }
    }
}

/// How many connections are open (an idle server retires only with none), how many of them
/// are front ends attached (what keeps a background server alive: not a `flowdeck ls` asking
/// what it holds), and how many of those are studios (each studio is told how many there
/// are: quitting asks about the person's work only in the last one).
struct Counts {
    connected: Arc<tokio::sync::watch::Sender<usize>>,
    clients: Arc<tokio::sync::watch::Sender<usize>>,
    studios: Arc<tokio::sync::watch::Sender<usize>>,
}

/// One front end counted as connected, for as long as this lives.
struct Attached(Arc<tokio::sync::watch::Sender<usize>>);

impl Attached {
    fn new(count: Arc<tokio::sync::watch::Sender<usize>>) -> Self {
        count.send_modify(|n| *n += 1);
        Attached(count)
    }
}

impl Drop for Attached {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// One connection, and what serving it needs.
struct Connection {
    /// The count of attached front ends, which this one joins once its hello says it is one.
    clients: Arc<tokio::sync::watch::Sender<usize>>,
    who: String,
    /// The connecting process, as the kernel says (for who may approve: peer.rs).
    pid: Option<u32>,
    facts: Facts,
    engine: Arc<Engine>,
    options: McpOptions,
    stop: CancellationToken,
    studios: Arc<tokio::sync::watch::Sender<usize>>,
}

impl Connection {
    /// Reads the client's hello, answers it, and serves it until it leaves or the host stops.
    async fn serve(self, stream: tokio::net::UnixStream) {
        let (read, mut write) = stream.into_split();
        let first = tokio::select! {
            first = tokio::time::timeout(FIRST_LINE, hello::read(read)) => first,
            () = self.stop.cancelled() => return,
        };
        let Ok((first, read)) = first else {
            if let Some(held) = SILENT.allow() {
                tracing::info!(
                    "closed {}: it said nothing within {} s{held}",
                    self.who,
                    FIRST_LINE.as_secs()
                );
            }
            return;
        };
        let hello = match first {
            First::Hello(hello) => hello,
            First::Unknown(unknown) => {
                let refusal = Welcome::not_understood(&unknown, &self.facts.folder);
                self.send_welcome(&mut write, &refusal).await;
                return;
            }
            // An MCP client on the socket directly says nothing of its options: it gets what
            // `flowdeck mcp` gives by default, of what this server offers.
            First::Other => {
                let _attached = Attached::new(self.clients.clone());
                let options = crate::mcp::options::merge(
                    &self.options,
                    &crate::mcp::options::AgentOptions::default(),
                );
                self.serve_mcp(read, write, options).await;
                return;
            }
        };
        // A front end keeps a background server alive while it is attached; `flowdeck ls`
        // asking what the server holds does not (a watch loop of it would keep it forever).
        let _attached = (!matches!(hello.client, Client::Status {}))
            .then(|| Attached::new(self.clients.clone()));
        let welcome = self.welcome(&hello).await;
        if !self.send_welcome(&mut write, &welcome).await {
            return;
        }
        match hello.client {
            // A relayed agent is served with the stricter of its options and ours.
            Client::Mcp { options } => {
                let options = crate::mcp::options::merge(&self.options, &options);
                self.serve_mcp(read, write, options).await;
            }
            Client::Studio { .. } => self.serve_studio(read, write, welcome).await,
            Client::Cli {} => self.serve_cli(read, write).await,
            Client::Approve { workflows } => {
                super::approve::serve(&self.engine, &workflows, &mut write).await;
            }
            Client::Status {} => super::status::serve(&self.engine, &self.facts, &mut write).await,
        }
    }

    /// The answer to a hello: refused, or welcomed with what this client may do here.
    async fn welcome(&self, hello: &Hello) -> Welcome {
        let mut welcome = Welcome::to(hello, &self.facts.folder);
        if welcome.refused.is_some() {
            return welcome;
        }
        match &hello.client {
            Client::Mcp { .. } | Client::Cli {} | Client::Status {} => {}
            Client::Studio { approve_agent_runs } => {
                if *approve_agent_runs {
                    self.engine.turn_on_approval_mode();
                }
                welcome.approval_mode = self.engine.approval_mode();
                welcome.person = Some(crate::actor::Actor::Person {
                    at: super::peer::terminal_name(self.pid),
                });
                welcome.cannot_approve = self.may_approve().await.err();
            }
            Client::Approve { .. } => {
                welcome.refused = self
                    .may_approve()
                    .await
                    .err()
                    .map(|why| format!("this process may not approve: {why}"));
            }
        }
        welcome
    }

    /// Sends the welcome; false when the client is served no further (refused, or gone).
    async fn send_welcome(
        &self,
        write: &mut tokio::net::unix::OwnedWriteHalf,
        welcome: &Welcome,
    ) -> bool {
        let answered = write.write_all(welcome.line().as_bytes()).await;
        if let Some(why) = &welcome.refused {
            if let Some(held) = REFUSED.allow() {
                tracing::warn!("{} refused: {why}{held}", self.who);
            }
            let _ = write.shutdown().await;
            return false;
        }
        if let Err(e) = answered {
            tracing::info!("{} left before its welcome: {e}", self.who);
            return false;
        }
        true
    }

    /// A studio, counted among the studios while it is attached.
    async fn serve_studio(
        self,
        read: hello::Rest<tokio::net::unix::OwnedReadHalf>,
        write: tokio::net::unix::OwnedWriteHalf,
        welcome: Welcome,
    ) {
        tracing::info!("{} attached a studio", self.who);
        // The right to answer approval requests, held while the studio is attached: runs wait
        // for it meanwhile (engine/approval.rs).
        let approver = match welcome.cannot_approve {
            None => Ok(self.engine.attach_approver()),
            Some(why) => Err(why),
        };
        let counted = Attached::new(self.studios.clone());
        let studios = self.studios.subscribe();
        let person = welcome.person.unwrap_or_else(crate::actor::Actor::person);
        let at = match &person {
            crate::actor::Actor::Person { at } => at.clone(),
            _ => String::new(),
        };
        let _present = self.facts.attendance.arrive(Attendee::Studio { at });
        let _told = self.engine.arrive(person.clone());
        self.serve_studio_protocol(read, write, (person, approver, studios), false)
            .await;
        drop(counted);
    }

    /// `flowdeck run`: the studio protocol, to a client that follows its runs.
    async fn serve_cli(
        self,
        read: hello::Rest<tokio::net::unix::OwnedReadHalf>,
        write: tokio::net::unix::OwnedWriteHalf,
    ) {
        tracing::info!("{} attached the command line", self.who);
        let _present = self.facts.attendance.arrive(Attendee::Cli);
        let refused = "the command line does not answer approval requests";
        // Not a studio: never counted as one.
        let studios = tokio::sync::watch::channel(0).1;
        let who = (crate::actor::Actor::Cli, Err(refused.into()), studios);
        self.serve_studio_protocol(read, write, who, true).await;
    }

    /// Serves an agent's MCP session until it leaves or the host stops.
    async fn serve_mcp(
        self,
        read: hello::Rest<tokio::net::unix::OwnedReadHalf>,
        write: tokio::net::unix::OwnedWriteHalf,
        options: McpOptions,
    ) {
        // Each connection bounded on its own (wire.rs): one client that never reads holds
        // itself up, not the host or the other clients.
        let transport = wire::WireTransport::new(read, write, &self.who);
        let server = FlowdeckServer::with_engine(self.engine.clone(), options);
        let leaving = server.clone();
        let who = self.who;
        let running = match server.serve(transport).await {
            Ok(running) => running,
            Err(e) => {
                if let Some(held) = UNSHAKEN.allow() {
                    tracing::info!("{who} left before the handshake: {e}{held}");
                }
                return;
            }
        };
        // Attached to the engine (named as its client named itself) by the server itself, on
        // `initialize`, so that agents over HTTP are too (mcp/server).
        let token = running.cancellation_token();
        tokio::select! {
            reason = running.waiting() => tracing::info!("{who} left: {reason:?}"),
            () = self.stop.cancelled() => token.cancel(),
        }
        leaving.leave();
    }
}

/// Who a studio-protocol client is to the server: its actor, its right to approve (or why
/// not), and the count of studios it is told.
type StudioSide = (
    crate::actor::Actor,
    Result<crate::engine::approval::Approver, String>,
    tokio::sync::watch::Receiver<usize>,
);

impl Connection {
    /// Serves the studio protocol (studio.rs) to a studio or to `flowdeck run`, which
    /// `follows_runs`: its runs are cancelled if it goes before they end.
    async fn serve_studio_protocol(
        self,
        read: hello::Rest<tokio::net::unix::OwnedReadHalf>,
        write: tokio::net::unix::OwnedWriteHalf,
        (person, approver, studios): StudioSide,
        follows_runs: bool,
    ) {
        let attached = super::studio::Attached {
            engine: self.engine,
            who: self.who,
            person,
            approver,
            studios,
            follows_runs,
        };
        super::studio::serve(read, write, attached, self.stop).await;
    }

    /// Whether the connected process may answer approval requests, or why not (peer.rs).
    async fn may_approve(&self) -> Result<(), String> {
        let (pid, leaders) = (self.pid, self.engine.session_leaders());
        let server = std::process::id();
        tokio::task::spawn_blocking(move || {
            super::peer::may_approve(pid, Some(server), &super::peer::ttys_of(&leaders))
        })
        .await
        .unwrap_or_else(|e| Err(format!("the check failed: {e}")))
    }
}

/// Tells a stranger why, as a JSON-RPC error, and closes.
async fn refuse(mut stream: tokio::net::UnixStream, why: String) {
    let message = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32001, "message": why},
    });
    let _ = stream.write_all(format!("{message}\n").as_bytes()).await;
    let _ = stream.shutdown().await;
}
