//! The first exchange on the folder's socket, versioned. A front end's first line says which
//! protocol and which flowdeck it speaks and what kind of client it is (an agent's
//! `flowdeck mcp`, with the options of its command line); the server answers with a line of
//! its own: its version and process, or why it refuses. A client and a server of different
//! versions (the binary was rebuilt under a running server) never speak past each other: the
//! server refuses, naming both versions and how to end the old server, and the client says so.
//!
//! A first line wrapped as a hello that the server cannot take (a client kind it does not
//! know, a shape it cannot read) is refused with a welcome saying what was not understood and
//! which kinds there are. A connection that begins with anything else (an MCP client on the
//! socket directly) gets no answer line: it is served MCP with the server's options, its first
//! line passed on untouched.

use crate::mcp::options::AgentOptions;
use serde::{Deserialize, Serialize};
use std::io::Cursor;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

/// The protocol between front ends and the server. Raised whenever a message changes shape.
pub const PROTOCOL: u32 = 1;

/// A first line longer than this is no hello: it is passed on as MCP.
const MAX_HELLO: u64 = 64 * 1024;

/// The kinds of client a hello may name (`client`), as the refusal of an unknown one lists
/// them.
pub const KINDS: [&str; 5] = ["mcp", "studio", "cli", "approve", "status"];

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
    /// `flowdeck ls` and `flowdeck stop`: the server answers with what it holds, one
    /// [`State`](super::status::State) line, and closes.
    Status {},
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
        Welcome::refused(another_version(
            u64::from(hello.protocol),
            &hello.version,
            folder,
        ))
    }

    /// The refusal of a hello this server cannot take: of another version (whose hello may
    /// have another shape), else saying what was not understood.
    pub fn not_understood(hello: &Unknown, folder: &std::path::Path) -> Self {
        let of_another_version = match (hello.protocol, &hello.version) {
            (Some(protocol), Some(version)) => another_version(protocol, version, folder),
            _ => None,
        };
        Welcome::refused(of_another_version.or_else(|| Some(hello.what.clone())))
    }

    fn refused(refused: Option<String>) -> Self {
        Welcome {
            protocol: PROTOCOL,
            version: version(),
            pid: std::process::id(),
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

/// Why a client of `protocol` and `version` is refused, if they are not this server's.
fn another_version(protocol: u64, version: &str, folder: &std::path::Path) -> Option<String> {
    let (ours, pid) = (self::version(), std::process::id());
    (protocol != u64::from(PROTOCOL) || version != ours).then(|| {
        format!(
            "this flowdeck is version {version} (protocol {protocol}), but the server of {} is version {ours} (protocol {PROTOCOL}, process {pid}): end the old server (`kill {pid}`) and start again; the next front end starts a server of its own version",
            folder.display()
        )
    })
}

/// The stream a connection's protocol is read from once its hello (if any) was taken.
pub type Rest<R> = tokio::io::Chain<Cursor<Vec<u8>>, BufReader<R>>;

/// What a connection's first line is.
#[derive(Debug, Clone, PartialEq)]
pub enum First {
    /// A front end's hello.
    Hello(Hello),
    /// A hello (`{"flowdeck": ...}`) this server cannot take.
    Unknown(Unknown),
    /// Anything else: MCP, whose first line is read again from the rest of the stream.
    Other,
}

/// A hello this server cannot take: the protocol and version it says, when it says them,
/// and what was not understood.
#[derive(Debug, Clone, PartialEq)]
pub struct Unknown {
    pub protocol: Option<u64>,
    pub version: Option<String>,
    pub what: String,
}

/// Reads a connection's first line: what it is, and the stream to go on reading from (holding
/// the first line again when it was neither a hello nor meant as one).
pub async fn read<R: AsyncRead + Unpin>(read: R) -> (First, Rest<R>) {
    let mut reader = BufReader::new(read);
    let mut first = Vec::new();
    // An error or an early end is for the protocol that follows to meet and report.
    let _ = (&mut reader)
        .take(MAX_HELLO)
        .read_until(b'\n', &mut first)
        .await;
    match what_first(&first) {
        First::Other => (First::Other, Cursor::new(first).chain(reader)),
        taken => (taken, Cursor::new(Vec::new()).chain(reader)),
    }
}

fn what_first(line: &[u8]) -> First {
    let error = match serde_json::from_slice::<Envelope<Hello>>(line) {
        Ok(hello) => return First::Hello(hello.flowdeck),
        Err(error) => error,
    };
    // Meant as a hello: an object with the envelope's key, which no JSON-RPC message has.
    let Ok(Envelope { flowdeck }) = serde_json::from_slice::<Envelope<serde_json::Value>>(line)
    else {
        return First::Other;
    };
    let kinds = KINDS.join(", ");
    let what = match flowdeck.get("client") {
        _ if !flowdeck.is_object() => format!(
            "this flowdeck server did not understand the hello: `flowdeck` must hold an object with protocol, version and client (one of {kinds})"
        ),
        None => format!("the hello names no client kind: `client` must be one of {kinds}"),
        Some(serde_json::Value::String(kind)) if !KINDS.contains(&kind.as_str()) => format!(
            "this flowdeck server does not know the client kind {kind:?}: the kinds are {kinds}"
        ),
        Some(_) => format!(
            "this flowdeck server did not understand the hello ({error}); the client kinds are {kinds}"
        ),
    };
    First::Unknown(Unknown {
        protocol: flowdeck.get("protocol").and_then(serde_json::Value::as_u64),
        version: flowdeck
            .get("version")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned),
        what,
    })
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
        assert_eq!(read_back, First::Hello(hello));
        assert_eq!(rest_of(rest).await, "{\"jsonrpc\":\"2.0\"}\n");

        let direct = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n{\"x\":1}\n";
        let (hello, rest) = read(direct.as_bytes()).await;
        assert_eq!(hello, First::Other);
        assert_eq!(rest_of(rest).await, direct);

        let long = "x".repeat(200 * 1024);
        let (hello, rest) = read(long.as_bytes()).await;
        assert_eq!(hello, First::Other);
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

    #[tokio::test]
    async fn a_hello_not_understood_says_what_and_which_kinds_there_are() {
        let folder = std::path::Path::new("/src/app/workflows");
        let refusal = |line: &str| match what_first(line.as_bytes()) {
            First::Unknown(unknown) => Welcome::not_understood(&unknown, folder)
                .refused
                .unwrap_or_default(),
            other => panic!("{line} read as {other:?}"),
        };
        let ours = format!(r#""protocol":{PROTOCOL},"version":"{}""#, version());
        for (line, named) in [
            (
                format!(r#"{{"flowdeck":{{{ours},"client":"robot"}}}}"#),
                "\"robot\"",
            ),
            (format!(r#"{{"flowdeck":{{{ours}}}}}"#), "no client kind"),
            (r#"{"flowdeck":7}"#.to_string(), "must hold an object"),
            (
                format!(r#"{{"flowdeck":{{{ours},"client":"approve"}}}}"#),
                "workflows",
            ),
        ] {
            let refused = refusal(&line);
            for part in KINDS.iter().chain([&named]) {
                assert!(refused.contains(part), "{part} in {refused}");
            }
        }
        // Another version's hello, whatever its shape, is refused as another version.
        let old = refusal(r#"{"flowdeck":{"protocol":0,"version":"0.0.1-old","client":"x"}}"#);
        assert!(old.contains("0.0.1-old") && old.contains("kill "), "{old}");
        // Every kind a hello can name is listed.
        let every = [
            Client::Mcp {
                options: AgentOptions::of(&McpOptions::default()),
            },
            Client::Studio {
                approve_agent_runs: false,
            },
            Client::Cli {},
            Client::Approve { workflows: vec![] },
            Client::Status {},
        ];
        for client in every {
            // A kind added to `Client` must be added here, and to KINDS.
            match &client {
                Client::Mcp { .. }
                | Client::Studio { .. }
                | Client::Cli {}
                | Client::Approve { .. }
                | Client::Status {} => {}
            }
            let tag = serde_json::to_value(Hello::new(client)).expect("a hello")["client"].clone();
            assert!(KINDS.iter().any(|k| tag == *k), "{tag} in {KINDS:?}");
        }
    }
}
