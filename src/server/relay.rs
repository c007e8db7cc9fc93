//! `flowdeck mcp` beside a host: when the folder's socket answers, the agent's stdio is relayed
//! to it byte for byte in both directions (both protocol eras, notifications, progress,
//! cancellation and large messages alike: nothing is parsed), so the agent works on the same
//! engine as the person in the studio. Only the hello goes first (hello.rs): this flowdeck's
//! version, so that a server of another version refuses rather than misunderstands, and the
//! agent's own options, so that the host serves the agent no more than its command line
//! allows; the server's welcome is read before the first byte of MCP is relayed.

use super::hello::{self, Client, Hello};
use super::socket;
use crate::mcp::options::AgentOptions;
use std::path::Path;
use tokio::io::{AsyncWriteExt, copy};

/// The folder's live host, if one answers on its socket.
pub fn connect(folder: &Path) -> Option<std::os::unix::net::UnixStream> {
    let path = socket::socket_path(folder).ok()?;
    std::os::unix::net::UnixStream::connect(path).ok()
}

/// Relays standard input to the host and the host's answers to standard output. The agent
/// closing its end ends the relay once the host has answered what it was sent; the host
/// ending first is an error for the agent (its requests in flight get no answer).
pub async fn relay(
    stream: std::os::unix::net::UnixStream,
    folder: &Path,
    options: &crate::mcp::McpOptions,
) -> anyhow::Result<()> {
    stream.set_nonblocking(true)?;
    let stream = tokio::net::UnixStream::from_std(stream)?;
    let (mut from_host, mut to_host) = stream.into_split();
    let hello = Hello::new(Client::Mcp {
        options: AgentOptions::of(options),
    });
    let welcome = hello::greet(&mut from_host, &mut to_host, &hello, folder).await?;
    tracing::info!(
        "relaying to the server of {} (flowdeck {}, process {})",
        folder.display(),
        welcome.version,
        welcome.pid
    );
    let (mut input, mut output) = crate::mcp::stdio::stdio_streams()?;
    let up = async {
        copy(&mut input, &mut to_host).await?;
        to_host.shutdown().await
    };
    let down = async {
        copy(&mut from_host, &mut output).await?;
        output.flush().await
    };
    tokio::pin!(up, down);
    tokio::select! {
        sent = &mut up => {
            sent?;
            down.await?;
            Ok(())
        }
        received = &mut down => {
            received?;
            anyhow::bail!(
                "the flowdeck hosting {} ended the connection (the studio or `flowdeck serve` stopped)",
                folder.display()
            )
        }
    }
}
