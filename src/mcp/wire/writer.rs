//! The connection's writer: queued lines written in order, each counted against the
//! connection's budget until it is written; a client that takes nothing for too long is
//! given up.

use super::{Budget, Outgoing};
// The 2025-era subscribe requests are still served, so their types are still checked.
use std::io::ErrorKind;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// Writes queued lines in order. The first failure (the client gone, or taking nothing for
/// `stall`) gives the connection up: reading ends, and every line still queued or sent later
/// fails at once, its memory freed.
pub(super) async fn write_lines<W: AsyncWrite + Unpin>(
    mut write: W,
    mut queue: mpsc::UnboundedReceiver<Outgoing>,
    budget: Arc<Budget>,
    stall: Duration,
    peer: Arc<str>,
) {
    while let Some(outgoing) = queue.recv().await {
        let result = write_line(&mut write, &outgoing.bytes, stall).await;
        budget.release(outgoing.cost);
        if let Err(e) = &result {
            if e.kind() == ErrorKind::TimedOut {
                tracing::warn!(
                    "dropped {peer}: it has read none of its answers for {} s while {} messages ({} bytes) waited",
                    stall.as_secs(),
                    budget.messages.load(Ordering::Acquire) + 1,
                    budget.unsent.load(Ordering::Acquire) + outgoing.cost
                );
            } else {
                tracing::info!("writing to {peer} failed ({e}): the connection ends");
            }
            budget.gone.cancel();
        }
        if let Some(written) = outgoing.written {
            let _ = written.send(result);
        }
        if budget.gone.is_cancelled() {
            queue.close();
            while let Ok(left) = queue.try_recv() {
                budget.release(left.cost);
                if let Some(written) = left.written {
                    let _ = written.send(Err(ErrorKind::BrokenPipe.into()));
                }
            }
            // Not shut down politely: a client that reads nothing would not see it, and
            // dropping the stream closes it.
            return;
        }
    }
    let _ = write.shutdown().await;
}

/// Writes one line whole; `TimedOut` when the client takes none of it for `stall`.
pub(super) async fn write_line<W: AsyncWrite + Unpin>(
    write: &mut W,
    mut bytes: &[u8],
    stall: Duration,
) -> std::io::Result<()> {
    let stalled = || std::io::Error::new(ErrorKind::TimedOut, "the client reads nothing");
    while !bytes.is_empty() {
        match tokio::time::timeout(stall, write.write(bytes)).await {
            Err(_) => return Err(stalled()),
            Ok(Ok(0)) => return Err(ErrorKind::WriteZero.into()),
            Ok(Ok(n)) => bytes = bytes.get(n..).unwrap_or_default(),
            Ok(Err(e)) if e.kind() == ErrorKind::Interrupted => {}
            Ok(Err(e)) => return Err(e),
        }
    }
    tokio::time::timeout(stall, write.flush())
        .await
        .map_err(|_| stalled())?
}
