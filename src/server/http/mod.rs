//! MCP over streamable HTTP (SPEC §4.5), beside the folder's socket and on the same engine:
//! for agents that cannot spawn `flowdeck mcp` (in a container, a browser-based client,
//! another machine through an ssh tunnel, hosts that speak only HTTP).
//!
//! The transport is rmcp's (`StreamableHttpService`: sessions, streams, both protocol eras,
//! the `Host` and `Origin` checks, the body limit); hyper serves it. What flowdeck adds is
//! what makes a local HTTP server safe to leave running, because whoever reaches it can type
//! into terminals as the user:
//! - a bearer token on every request (`token.rs`), compared in constant time (`guard.rs`);
//! - loopback only, unless `--http-allow-remote` says otherwise;
//! - `Host` must name this server on loopback (DNS rebinding), and a browser page's `Origin`
//!   must be a loopback one;
//! - bounds: a request body no larger than a stdio message, at most [`MOST_SESSIONS`]
//!   sessions, idle sessions ended after [`IDLE_SESSION`], headers that must arrive within
//!   [`HEADER_WAIT`] (slowloris), at most [`MOST_CONNECTIONS`] connections at once, and an
//!   unauthenticated connection closed after its 401, so that tokenless clients cannot hold
//!   those connections; accepting backs off when descriptors run out (`conn::accept`).

mod guard;
mod plain;
mod sessions;
mod token;
pub mod trouble;

use crate::engine::Engine;
use crate::mcp::{FlowdeckServer, McpOptions};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

pub use token::TOKEN_VARIABLE;

/// Sessions open at once, at most: an agent host holds one or a few; past this, a new one is
/// refused (503) until one ends or expires.
pub const MOST_SESSIONS: usize = 64;

/// A session nobody used for this long is ended (its terminals and runs go as a closed stdio
/// connection's do). Clients that stay connected keep theirs alive with their own requests.
pub const IDLE_SESSION: Duration = Duration::from_secs(30 * 60);

/// A connection must send its request's headers within this long, or it is closed: a client
/// that trickles bytes (slowloris) holds a connection for no longer.
pub const HEADER_WAIT: Duration = Duration::from_secs(10);

/// Connections served at once; more wait to be accepted.
pub const MOST_CONNECTIONS: usize = 256;

/// The path MCP is served at.
pub const PATH: &str = "/mcp";

/// `ADDR:PORT` as a person writes it: an IP address with its port, or a name
/// (`localhost:8080`) that resolves to one.
pub fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    use std::net::ToSocketAddrs;
    let mut found = text.to_socket_addrs().map_err(|e| {
        format!("{text:?} is not ADDR:PORT (for example 127.0.0.1:8808 or localhost:8808): {e}")
    })?;
    found
        .next()
        .ok_or_else(|| format!("{text:?} names no address"))
}

/// Where to serve, as `flowdeck serve --http` says.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// Serve on an address that is not loopback (the token still guards it).
    pub allow_remote: bool,
}

/// Why MCP over HTTP cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error(
        "{addr} is not a loopback address: whoever reaches flowdeck over HTTP can type into your terminals, so it serves this machine only unless --http-allow-remote is given. To reach it from another machine, an ssh tunnel keeps it local: ssh -N -L {port}:127.0.0.1:{port} THIS_HOST, then connect to http://127.0.0.1:{port}/mcp there",
        port = addr.port()
    )]
    Remote { addr: SocketAddr },
    #[error("cannot serve MCP over HTTP on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Token(#[from] token::TokenError),
}

/// MCP served over HTTP: where, where its token is, and how many sessions are open. Dropped,
/// it removes the token's file it made (serving stops with the token given to [`start`]).
#[derive(Debug)]
pub struct Serving {
    /// The address bound (a port of 0 asked for any free one).
    pub addr: SocketAddr,
    /// The token's file, when flowdeck made the token; `None` when it came from
    /// [`TOKEN_VARIABLE`].
    pub token_file: Option<PathBuf>,
    sessions: tokio::sync::watch::Receiver<usize>,
}

impl Serving {
    /// The URL clients connect to.
    pub fn url(&self) -> String {
        format!("http://{}{PATH}", self.addr)
    }

    /// How many MCP sessions are open over HTTP, as it changes: each is an attached front
    /// end for the server's lifetime.
    pub fn sessions(&self) -> tokio::sync::watch::Receiver<usize> {
        self.sessions.clone()
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        // A token nobody can use any more must not stay readable; the next server makes its
        // own.
        if let Some(file) = &self.token_file {
            let _ = std::fs::remove_file(file);
        }
    }
}

/// Starts serving MCP over HTTP for the folder's engine until `stop` is cancelled. `socket`
/// is the folder's socket: the token's file goes beside it, in the owner-only folder.
pub async fn start(
    engine: Arc<Engine>,
    socket: &Path,
    options: McpOptions,
    http: &HttpOptions,
    stop: CancellationToken,
) -> Result<Serving, HttpError> {
    if !http.addr.ip().is_loopback() && !http.allow_remote {
        return Err(HttpError::Remote { addr: http.addr });
    }
    let (token, token_file) = token::obtain(socket)?;
    let listener = TcpListener::bind(http.addr)
        .await
        .map_err(|source| HttpError::Bind {
            addr: http.addr,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| HttpError::Bind {
        addr: http.addr,
        source,
    })?;
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(IDLE_SESSION);
    let sessions = sessions::CountedSessions::new(sessions);
    let open = sessions.watch();
    let config = transport_config(addr, http.allow_remote, stop.child_token());
    let service = StreamableHttpService::new(
        move || Ok(FlowdeckServer::with_engine(engine.clone(), options.clone())),
        sessions.clone(),
        config,
    );
    let app = axum::Router::new()
        .nest_service(PATH, service)
        .layer(axum::middleware::from_fn(plain::answer))
        .layer(axum::middleware::from_fn_with_state(
            guard::Guard::new(token, sessions),
            guard::check,
        ));
    tokio::spawn(accept(listener, app, stop));
    Ok(Serving {
        addr,
        token_file,
        sessions: open,
    })
}

/// What rmcp checks for flowdeck: the `Host` a request names (this server on loopback,
/// unless serving remotely, where the token alone guards it), the `Origin` of a browser page
/// (loopback pages only, any port: a local inspector), and the body's size (a stdio
/// message's).
fn transport_config(
    addr: SocketAddr,
    allow_remote: bool,
    stop: CancellationToken,
) -> StreamableHttpServerConfig {
    let port = addr.port();
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop)
        .with_max_request_body_bytes(crate::mcp::wire::MAX_MESSAGE)
        .with_allowed_origins(loopback_origins())
        .enforce_origin_validation();
    if allow_remote && !addr.ip().is_loopback() {
        return config.disable_allowed_hosts();
    }
    let mut hosts = vec![
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
    ];
    let bound = match addr.ip() {
        IpAddr::V4(ip) => format!("{ip}:{port}"),
        IpAddr::V6(ip) => format!("[{ip}]:{port}"),
    };
    if !hosts.contains(&bound) {
        hosts.push(bound);
    }
    config.with_allowed_hosts(hosts)
}

fn loopback_origins() -> Vec<String> {
    ["http", "https"]
        .iter()
        .flat_map(|scheme| {
            ["localhost", "127.0.0.1", "[::1]"]
                .iter()
                .map(move |host| format!("{scheme}://{host}:*"))
        })
        .collect()
}

/// Accepts connections until `stop`, each served by hyper over HTTP/1.1 with the header
/// deadline, at most [`MOST_CONNECTIONS`] at once.
async fn accept(listener: TcpListener, app: axum::Router, stop: CancellationToken) {
    let slots = Arc::new(Semaphore::new(MOST_CONNECTIONS));
    let mut acceptor = crate::conn::accept::Acceptor::new("an HTTP client");
    loop {
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let stream = tokio::select! {
            (stream, _) = acceptor.next(|| listener.accept()) => stream,
            () = stop.cancelled() => return,
        };
        // Answers go out as soon as they are written: with Nagle's algorithm, an event
        // written after the headers waited for the client's delayed acknowledgement (40 ms a
        // call, measured in benches/http.rs).
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!("an HTTP connection keeps Nagle's algorithm: {e}");
        }
        let service = TowerToHyperService::new(app.clone());
        let stop = stop.clone();
        tokio::spawn(async move {
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_WAIT)
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            let served = tokio::select! {
                served = connection.as_mut() => served,
                () = stop.cancelled() => {
                    // The request in progress is answered; the connection is not kept.
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = served {
                tracing::debug!("an HTTP connection ended: {e}");
            }
            drop(slot);
        });
    }
}
