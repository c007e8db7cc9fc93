//! `flowdeck mcp` beside a host: when the folder's socket answers, the agent's stdio is relayed
//! to it byte for byte in both directions (both protocol eras, notifications, progress,
//! cancellation and large messages alike: nothing is parsed), so the agent works on the same
//! engine as the person in the studio. Only the agent's own options go first, in a line of
//! their own (hello.rs), so that the host serves the agent no more than its command line
//! allows.

use super::socket;
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
    options: &super::McpOptions,
) -> anyhow::Result<()> {
    stream.set_nonblocking(true)?;
    let stream = tokio::net::UnixStream::from_std(stream)?;
    let (mut from_host, mut to_host) = stream.into_split();
    to_host
        .write_all(super::hello::line(options).as_bytes())
        .await?;
    let (mut input, mut output) = super::stdio::stdio_streams()?;
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
