//! The first exchange on the folder's socket, versioned. A front end's first line says which
//! protocol and which flowdeck it speaks and what kind of client it is (an agent's
//! `flowdeck mcp`, with the options of its command line); the server answers with a line of
//! its own: its version and process, or why it refuses. A client and a server of different
//! versions (the binary was rebuilt under a running server) never speak past each other: the
//! server refuses, naming both versions and how to end the old server, and the client says so.
//!
//! A connection that begins with anything else (an MCP client on the socket directly) gets no
//! answer line: it is served MCP with the server's options, its first line passed on untouched.

use crate::mcp::options::AgentOptions;
use serde::{Deserialize, Serialize};
use std::io::Cursor;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

/// The protocol between front ends and the server. Raised whenever a message changes shape.
pub const PROTOCOL: u32 = 1;

/// A first line longer than this is no hello: it is passed on as MCP.
const MAX_HELLO: u64 = 64 * 1024;

/// The version this binary says it is. Debug builds take `FLOWDECK_FAKE_VERSION` instead, so
/// that a test can play a rebuilt binary against a running server.
pub fn version() -> String {
    #[cfg(debug_assertions)]
    if let Some(fake) = std::env::var_os("FLOWDECK_FAKE_VERSION") {
        return fake.to_string_lossy().into_owned();
    }
    env!("CARGO_PKG_VERSION").to_string()
}

/// Every line of the exchange is wrapped in `{"flowdeck": ...}`, which no JSON-RPC message is.
#[derive(Debug, Serialize, Deserialize)]
struct Envelope<T> {
    flowdeck: T,
}

/// What a front end says first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    pub protocol: u32,
    pub version: String,
    #[serde(flatten)]
    pub client: Client,
}

/// Which front end connects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "client", rename_all = "snake_case")]
pub enum Client {
    /// An agent's `flowdeck mcp`: MCP follows, relayed byte for byte.
    Mcp { options: AgentOptions },
    /// A person's studio: the studio protocol follows (protocol.rs).
    Studio {
        /// The person asked for approval mode (`--approve agent-runs`): the server turns it
        /// on if it is not (never off).
        #[serde(default)]
        approve_agent_runs: bool,
    },
    /// `flowdeck run`: the studio protocol follows, as the command line. The runs it starts
    /// are cancelled if it goes away before they end, as a local `flowdeck run` cancels on
    /// Ctrl-C.
    Cli {},
    /// `flowdeck approve`: the workflows whose current content a person approves for agents'
    /// runs. One [`protocol::Approved`](super::protocol::Approved) line answers each.
    Approve { workflows: Vec<String> },
}

/// The server's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Welcome {
    pub protocol: u32,
    pub version: String,
    /// The server's process.
    pub pid: u32,
    /// Why the server will not serve this client (its connection ends after this line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// For a studio: why it may not answer approval requests (server/peer.rs); `None` when
    /// it may.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cannot_approve: Option<String>,
    /// For a studio: whether the server is in approval mode (after the studio's own ask).
    #[serde(default)]
    pub approval_mode: bool,
    /// For a studio: who its person is to the engine (a person at the terminal the studio
    /// runs in), so that it tells its own work from other people's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<crate::actor::Actor>,
    /// Why the server does not serve MCP over HTTP though it was asked to (a port another
    /// program holds): every front end says so where its person or agent looks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_trouble: Option<String>,
}

impl Hello {
    pub fn new(client: Client) -> Self {
        Hello {
            protocol: PROTOCOL,
            version: version(),
            client,
        }
    }

    /// The hello as its line (with the newline).
    pub fn line(&self) -> String {
        line(self)
    }
}

impl Welcome {
    /// The server's answer to `hello`: welcome, or refused when they speak different versions.
    pub fn to(hello: &Hello, folder: &std::path::Path) -> Self {
        let (protocol, version, pid) = (PROTOCOL, version(), std::process::id());
        let refused = (hello.protocol != protocol || hello.version != version).then(|| {
            format!(
                "this flowdeck is version {} (protocol {}), but the server of {} is version {version} (protocol {protocol}, process {pid}): end the old server (`kill {pid}`) and start again; the next front end starts a server of its own version",
                hello.version,
                hello.protocol,
                folder.display()
            )
        });
        Welcome {
            protocol,
            version,
            pid,
            refused,
            cannot_approve: None,
            approval_mode: false,
            person: None,
            http_trouble: super::http::trouble::get(),
        }
    }

    pub fn line(&self) -> String {
        line(self)
    }
}

fn line<T: Serialize>(message: &T) -> String {
    // Structs of strings, numbers and booleans always serialize.
    let mut text = serde_json::to_string(&Envelope { flowdeck: message }).unwrap_or_default();
    text.push('\n');
    text
}

/// The stream a connection's protocol is read from once its hello (if any) was taken.
pub type Rest<R> = tokio::io::Chain<Cursor<Vec<u8>>, BufReader<R>>;

/// Reads a connection's first line: the client's hello if it is one, and the stream to go on
/// reading from (holding the first line again when it was not a hello).
pub async fn read<R: AsyncRead + Unpin>(read: R) -> (Option<Hello>, Rest<R>) {
    let mut reader = BufReader::new(read);
    let mut first = Vec::new();
    // An error or an early end is for the protocol that follows to meet and report.
    let _ = (&mut reader)
        .take(MAX_HELLO)
        .read_until(b'\n', &mut first)
        .await;
    match serde_json::from_slice::<Envelope<Hello>>(&first) {
        Ok(hello) => (Some(hello.flowdeck), Cursor::new(Vec::new()).chain(reader)),
        Err(_) => (None, Cursor::new(first).chain(reader)),
    }
}

/// How long a client waits for the server's welcome: a server answers before anything else,
/// so only one that is stopped (or not a flowdeck) takes longer.
pub const WELCOME_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The connection ended before the server's welcome: the server was ending as this client
/// connected (it had accepted nothing more). Nothing was served, so the client may reach
/// the folder's server again, which starts a new one.
#[derive(Debug, thiserror::Error)]
#[error("the folder's server closed the connection before answering (it was ending): {0}")]
pub struct NotWelcomed(std::io::Error);

/// How many times a front end reaches the folder's server again after a server that was
/// ending closed its connection unanswered.
const REACH_AGAIN: usize = 3;

/// A front end's count of the times it reached the folder's server again.
#[derive(Debug, Default)]
pub struct ReachAgain(usize);

impl ReachAgain {
    /// Whether to reach the server again after `error`: the connection was closed before any
    /// welcome ([`NotWelcomed`]), at most [`REACH_AGAIN`] times.
    pub fn after(&mut self, error: &anyhow::Error) -> bool {
        if self.0 >= REACH_AGAIN || !error.chain().any(|e| e.is::<NotWelcomed>()) {
            return false;
        }
        self.0 += 1;
        tracing::info!("{error}: reaching the folder's server again");
        true
    }
}

/// A client's side of the first exchange: sends `hello`, and reads the server's welcome
/// within [`WELCOME_WAIT`]. A server that refuses (another version, a process that may not
/// approve) is an error saying why.
pub async fn greet<R, W>(
    read: &mut R,
    write: &mut W,
    hello: &Hello,
    folder: &std::path::Path,
) -> anyhow::Result<Welcome>
where
    R: AsyncRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    use tokio::io::AsyncWriteExt;
    write
        .write_all(hello.line().as_bytes())
        .await
        .map_err(NotWelcomed)?;
    let welcome = tokio::time::timeout(WELCOME_WAIT, read_welcome(read))
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "the flowdeck server of {} did not answer within {} s",
                folder.display(),
                WELCOME_WAIT.as_secs()
            )
        })?
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof
            | std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::BrokenPipe => anyhow::Error::new(NotWelcomed(e)),
            _ => anyhow::Error::new(e),
        })?;
    if let Some(why) = welcome.refused {
        anyhow::bail!("{why}");
    }
    Ok(welcome)
}

/// Reads the server's answer line from `read` (a client's side).
pub async fn read_welcome<R: AsyncRead + Unpin>(read: &mut R) -> std::io::Result<Welcome> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    // Byte by byte: nothing after the line may be taken from the stream it belongs to.
    while line.len() < MAX_HELLO as usize {
        if read.read(&mut byte).await? == 0 {
            if line.is_empty() {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            break;
        }
        if byte[0] == b'\n' {
            break;
        }
        line.push(byte[0]);
    }
    serde_json::from_slice::<Envelope<Welcome>>(&line)
        .map(|w| w.flowdeck)
        .map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "the folder's server did not answer as a flowdeck server ({e}): {}",
                    String::from_utf8_lossy(&line)
                ),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::McpOptions;

    async fn rest_of(rest: Rest<&[u8]>) -> String {
        let mut text = String::new();
        let mut rest = rest;
        rest.read_to_string(&mut text).await.expect("read");
        text
    }

    #[tokio::test]
    async fn a_hello_is_taken_and_anything_else_is_passed_on_whole() {
        let options = McpOptions {
            read_only: true,
            approve_agent_runs: true,
            ..McpOptions::default()
        };
        let hello = Hello::new(Client::Mcp {
            options: AgentOptions::of(&options),
        });
        let stream = format!("{}{{\"jsonrpc\":\"2.0\"}}\n", hello.line());
        let (read_back, rest) = read(stream.as_bytes()).await;
        assert_eq!(read_back, Some(hello));
        assert_eq!(rest_of(rest).await, "{\"jsonrpc\":\"2.0\"}\n");

        let direct = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n{\"x\":1}\n";
        let (hello, rest) = read(direct.as_bytes()).await;
        assert_eq!(hello, None);
        assert_eq!(rest_of(rest).await, direct);

        let long = "x".repeat(200 * 1024);
        let (hello, rest) = read(long.as_bytes()).await;
        assert_eq!(hello, None);
        assert_eq!(
            rest_of(rest).await,
            long,
            "an overlong first line is kept whole"
        );
    }

    #[tokio::test]
    async fn another_version_is_refused_naming_both_and_the_answer_leaves_the_rest_unread() {
        let mut hello = Hello::new(Client::Mcp {
            options: AgentOptions::of(&McpOptions::default()),
        });
        let folder = std::path::Path::new("/src/app/workflows");
        let welcome = Welcome::to(&hello, folder);
        assert_eq!(welcome.refused, None);
        hello.version = "0.0.1-old".into();
        let refused = Welcome::to(&hello, folder).refused.expect("refused");
        for part in ["0.0.1-old", &version(), "/src/app/workflows", "kill "] {
            assert!(refused.contains(part), "{part} in {refused}");
        }

        let stream = format!("{}{{\"jsonrpc\":\"2.0\"}}\n", welcome.line());
        let mut bytes = stream.as_bytes();
        assert_eq!(read_welcome(&mut bytes).await.expect("welcome"), welcome);
        assert_eq!(bytes, b"{\"jsonrpc\":\"2.0\"}\n", "the rest is left");
        let mut garbage: &[u8] = b"HTTP/1.1 400 Bad Request\r\n";
        let e = read_welcome(&mut garbage).await.expect_err("not a server");
        assert!(e.to_string().contains("HTTP/1.1"), "{e}");
    }
}
