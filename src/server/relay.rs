//! `flowdeck mcp` beside a host: when the folder's server answers, the agent's stdio is relayed
//! to it byte for byte in both directions (both protocol eras, notifications, progress,
//! cancellation and large messages alike: nothing is changed). Only the hello goes first
//! (connect.rs, hello.rs): this flowdeck's version, so that a server of another version
//! refuses rather than misunderstands, and the agent's own options, so that the host serves
//! the agent no more than its command line allows.
//!
//! The relay notes the ids of the requests it passes up and of the answers it passes down, so
//! that once the agent has closed its input the relay ends as soon as every answer it owes
//! was written, whatever the host does with its side of the connection.

use super::connect::Connection;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// A line longer than this is passed on without being looked at (its id is not noted).
const MAX_NOTED_LINE: usize = 1024 * 1024;

/// Relays standard input to the host and the host's answers to standard output. The agent
/// closing its end ends the relay once the host has answered what it was sent; the host
/// ending first is an error for the agent (its requests in flight get no answer).
pub async fn relay(connection: Connection, folder: &Path) -> anyhow::Result<()> {
    let streams = crate::mcp::stdio::stdio_streams()?;
    let mut output = streams.output;
    let relayed = relay_streams(connection, folder, streams.input, &mut output).await;
    // What was relayed is on standard output before the process ends: its thread writes what
    // the pipe still holds once the pipe is closed (an agent that reads nothing more is not
    // waited for past the deadline).
    let _ = output.shutdown().await;
    drop(output);
    let _ = tokio::time::timeout(FLUSH_WAIT, streams.written).await;
    relayed
}

/// How long a relay that ends waits for its last answers to reach standard output.
const FLUSH_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// [`relay`] between any agent-side streams.
pub async fn relay_streams<I, O>(
    connection: Connection,
    folder: &Path,
    mut input: I,
    mut output: O,
) -> anyhow::Result<()>
where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin,
{
    let (mut from_host, mut to_host, welcome) = connection.into_parts();
    tracing::info!(
        "relaying to the server of {} (flowdeck {}, process {})",
        folder.display(),
        welcome.version,
        welcome.pid
    );
    let owed = Owed::default();
    let (all_answered, mut answered) = tokio::sync::watch::channel(0usize);
    let up = async {
        let mut lines = Lines::default();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = input.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            // Noted before it is sent: its answer may come back before the write returns.
            lines.feed(&buf[..n], |line| owed.asked(line));
            all_answered.send_replace(owed.count());
            to_host.write_all(&buf[..n]).await?;
        }
        to_host.shutdown().await
    };
    let down = async {
        let mut lines = Lines::default();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = from_host.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            output.write_all(&buf[..n]).await?;
            output.flush().await?;
            lines.feed(&buf[..n], |line| owed.answered(line));
            all_answered.send_replace(owed.count());
        }
        std::io::Result::Ok(())
    };
    tokio::pin!(up, down);
    tokio::select! {
        sent = &mut up => {
            sent?;
            tokio::select! {
                received = &mut down => received?,
                // Every answer owed was written: the host's side no longer matters.
                _ = answered.wait_for(|owed| *owed == 0) => {}
            }
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

/// The requests passed up whose answers have not yet been passed down, by id.
#[derive(Debug, Default)]
struct Owed(Mutex<HashMap<String, usize>>);

/// What the relay looks at in a message: whether it has a method and an id.
#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    method: Option<serde::de::IgnoredAny>,
}

fn head(line: &[u8]) -> Option<(String, bool)> {
    let head = serde_json::from_slice::<Head>(line).ok()?;
    let id = head.id.filter(|id| id.is_string() || id.is_number())?;
    Some((id.to_string(), head.method.is_some()))
}

impl Owed {
    /// A message from the agent: a request is owed an answer.
    fn asked(&self, line: &[u8]) {
        if let Some((id, true)) = head(line) {
            *self.lock().entry(id).or_default() += 1;
        }
    }

    /// A message from the host: an answer (an id and no method) settles its request.
    fn answered(&self, line: &[u8]) {
        if let Some((id, false)) = head(line) {
            let mut owed = self.lock();
            if let Some(count) = owed.get_mut(&id) {
                *count -= 1;
                if *count == 0 {
                    owed.remove(&id);
                }
            }
        }
    }

    fn count(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Whole lines out of a stream fed in pieces.
#[derive(Debug, Default)]
struct Lines {
    partial: Vec<u8>,
    /// The current line outgrew [`MAX_NOTED_LINE`]: skipped to its end.
    skipping: bool,
}

impl Lines {
    fn feed(&mut self, mut bytes: &[u8], mut each: impl FnMut(&[u8])) {
        while let Some(end) = bytes.iter().position(|&b| b == b'\n') {
            if !self.skipping {
                if self.partial.is_empty() {
                    each(&bytes[..end]);
                } else {
                    self.partial.extend_from_slice(&bytes[..end]);
                    each(&self.partial);
                }
            }
            self.partial.clear();
            self.skipping = false;
            bytes = &bytes[end + 1..];
        }
        if self.skipping {
            return;
        }
        if self.partial.len() + bytes.len() > MAX_NOTED_LINE {
            self.partial = Vec::new();
            self.skipping = true;
        } else {
            self.partial.extend_from_slice(bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_owed_until_their_answers_pass_in_any_pieces() {
        let owed = Owed::default();
        let mut up = Lines::default();
        let sent = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"tools/list\"}\n";
        for piece in sent.chunks(7) {
            up.feed(piece, |line| owed.asked(line));
        }
        assert_eq!(owed.count(), 2, "two requests, a notification owes nothing");
        let mut down = Lines::default();
        // A request from the host (sampling) with the same id is no answer.
        down.feed(
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
            |line| owed.answered(line),
        );
        assert_eq!(owed.count(), 1);
        down.feed(b"{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"res", |line| {
            owed.answered(line)
        });
        assert_eq!(owed.count(), 1, "half an answer settles nothing");
        down.feed(b"ult\":{}}\n", |line| owed.answered(line));
        assert_eq!(owed.count(), 0);
    }

    #[test]
    fn an_overlong_line_is_passed_over_and_the_next_one_read() {
        let owed = Owed::default();
        let mut up = Lines::default();
        let big = vec![b'x'; MAX_NOTED_LINE + 10];
        up.feed(&big, |line| owed.asked(line));
        up.feed(b"\n{\"id\":2,\"method\":\"m\"}\n", |line| owed.asked(line));
        assert_eq!(owed.count(), 1);
    }
}
