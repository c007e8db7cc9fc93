//! JSON-RPC over a byte stream, one message per line, where every message that cannot be
//! served gets an answer instead of silence:
//!
//! - a line over the size limit is skipped without being buffered, and answered with the
//!   limit and, when its top-level `id` could be read on the way past, that id;
//! - a line that is not JSON is a parse error (`id: null`), one that is JSON but not a valid
//!   request is an invalid request carrying the request's id when it has one (one that is no
//!   JSON-RPC message at all, `{"a":1}`, before the handshake too);
//! - `tools/call` whose `arguments` is not an object is invalid params;
//! - a request before the handshake is told to send `initialize` first (rmcp would otherwise
//!   end the connection on it).
//!
//! Notifications are never answered (JSON-RPC forbids it); unknown ones are ignored.
//!
//! What one connection may cost is bounded ([`Limits`]): at most [`MAX_IN_FLIGHT`] of its
//! requests are handled at once and at most about [`MAX_UNSENT`] bytes of answers wait for it
//! to read them; past either, nothing more is read from it until it catches up, so a client
//! that writes and never reads fills its own socket buffer and blocks there instead of growing
//! the server. One that takes none of its answers for [`STALL_LIMIT`] is dropped. The queue
//! and its writer are every connection's (`conn::outbox`); what is MCP's is here.

mod classify;
mod id_scan;

use crate::conn::outbox::{self, Outbox};
use crate::conn::throttle::Throttle;
use id_scan::IdScanner;

use rmcp::RoleServer;
use rmcp::model::GetExtensions;
// The 2025-era subscribe requests are still served, so their types are still checked.
#[allow(deprecated)]
use rmcp::model::{ErrorData, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The largest message accepted: 16 MiB, as rmcp's own line transports.
pub const MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// Requests of one connection handled at once; the next line is read when one of them is done.
/// Agents send a handful at a time (a call, a poll, a list), so 64 is never in their way, while
/// a client sending without waiting can start no more than 64 handlers, and hold no more than
/// 64 answers in the making. A long request (`subscriptions/listen`, a waiting `run_workflow`,
/// `run_events` waiting for news) counts for as long as it lasts.
pub const MAX_IN_FLIGHT: usize = 64;

/// Bytes of answers and notifications queued for a connection and not yet taken by it, past
/// which nothing more is read from it ([`outbox::MOST_UNSENT`]). With [`MAX_IN_FLIGHT`] it
/// bounds what a client that never reads holds: this, plus the answers to what it had sent
/// when reading stopped (measured: 37 `tools/list` answers, 9.7 MB, when such a client was
/// dropped).
pub const MAX_UNSENT: usize = outbox::MOST_UNSENT;

/// Messages queued for a connection and not yet taken by it, past which nothing more is read
/// from it, however small they are ([`outbox::MOST_UNSENT_LINES`]).
pub const MAX_UNSENT_MESSAGES: usize = outbox::MOST_UNSENT_LINES;

/// How long a connection may take none of its answers while they wait before it is dropped.
/// Its memory is already bounded by then; this frees its session and handlers. A working
/// client takes its answers within milliseconds, and the socket buffer absorbs a pause, so
/// only a client that has taken nothing for a minute with the buffer full (hung, stopped, or
/// never reading) is dropped.
pub const STALL_LIMIT: Duration = Duration::from_secs(60);

/// What one connection may cost; [`Limits::default`] gives the constants above.
#[derive(Debug, Clone)]
pub struct Limits {
    /// The largest message read.
    pub message: usize,
    /// Requests handled at once.
    pub in_flight: usize,
    /// Bytes queued for the client, past which reading waits.
    pub unsent: usize,
    /// Messages queued for the client, past which reading waits.
    pub unsent_messages: usize,
    /// How long the client may take nothing while answers wait.
    pub stall: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            message: MAX_MESSAGE,
            in_flight: MAX_IN_FLIGHT,
            unsent: MAX_UNSENT,
            unsent_messages: MAX_UNSENT_MESSAGES,
            stall: STALL_LIMIT,
        }
    }
}

/// Oversized messages refused, said at most once per 10 s: a client can send one a line.
static OVERSIZED: Throttle = Throttle::new(Duration::from_secs(10));

/// The key of a 2026-era request's inline protocol version, which stands in for `initialize`.
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// A request's share of [`Limits::in_flight`], carried in its extensions into its handler's
/// context: it is given back when the handler is done with the request, however it ends
/// (answered, cancelled, panicked, or dropped by rmcp).
#[derive(Debug, Clone)]
struct InFlight {
    _permit: Arc<OwnedSemaphorePermit>,
}

/// The server side of a line-delimited JSON-RPC connection.
#[derive(Debug)]
pub struct WireTransport<R> {
    read: BufReader<R>,
    /// The line read so far. It lives here, not in `receive`, because rmcp polls `receive`
    /// inside a `select!`: a cancelled read resumes where it stopped.
    line: Vec<u8>,
    /// The line being skipped because it is over the limit.
    skipping: Option<Skipped>,
    limits: Limits,
    /// Whether a lifecycle has begun (an `initialize`, or a request with inline metadata).
    started: bool,
    /// The answers waiting for the client; the reader stops while too much waits.
    out: Outbox,
    in_flight: Arc<Semaphore>,
    /// The share the next request read will carry, taken before reading it; kept here, like
    /// `line`, so that a cancelled `receive` loses nothing.
    permit: Option<OwnedSemaphorePermit>,
    /// Who is at the other end, for the log.
    peer: Arc<str>,
}

#[derive(Debug, Default)]
struct Skipped {
    size: usize,
    id: IdScanner,
}

impl<R: AsyncRead + Unpin + Send> WireTransport<R> {
    /// Serves over `read` and `write` with the default [`Limits`]; `peer` names the client in
    /// the log. Must be called inside a tokio runtime.
    pub fn new<W: AsyncWrite + Unpin + Send + 'static>(read: R, write: W, peer: &str) -> Self {
        Self::with_limits(read, write, peer, Limits::default())
    }

    /// [`Self::new`] with other limits (tests). A task owns the writer so that every line goes
    /// out whole and in order.
    pub fn with_limits<W: AsyncWrite + Unpin + Send + 'static>(
        read: R,
        write: W,
        peer: &str,
        limits: Limits,
    ) -> Self {
        let (out, queue) = Outbox::new(
            outbox::Limits {
                bytes: limits.unsent,
                lines: limits.unsent_messages,
                stall: Some(limits.stall),
            },
            peer,
        );
        tokio::spawn(queue.write_all(write));
        WireTransport {
            read: BufReader::with_capacity(64 * 1024, read),
            line: Vec::new(),
            skipping: None,
            in_flight: Arc::new(Semaphore::new(limits.in_flight.max(1))),
            limits,
            started: false,
            out,
            permit: None,
            peer: Arc::from(peer),
        }
    }

    /// Queues an error response; a failure to write shows up in the next send.
    fn answer(&self, id: Value, error: ErrorData) {
        let message = json!({"jsonrpc": "2.0", "id": id, "error": error});
        let mut bytes = message.to_string().into_bytes();
        bytes.push(b'\n');
        let _ = self.out.queue(bytes);
    }

    /// Waits until the connection may cost more: a share of the requests in flight for the
    /// next one, and room in the queue of answers. Until then nothing is read, and a client
    /// that keeps writing meets a full socket buffer.
    async fn wait_for_room(&mut self) {
        if self.permit.is_none() {
            // The semaphore is never closed, so this only waits.
            if let Ok(permit) = self.in_flight.clone().acquire_owned().await {
                self.permit = Some(permit);
            }
        }
        self.out.room().await;
    }

    /// The next message for the server, or `None` when the stream ends.
    async fn next_message(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            self.wait_for_room().await;
            let line = self.next_line().await?;
            let Some(mut message) = self.classify(&line) else {
                continue;
            };
            if let JsonRpcMessage::Request(request) = &mut message
                && let Some(permit) = self.permit.take()
            {
                request.request.extensions_mut().insert(InFlight {
                    _permit: Arc::new(permit),
                });
            }
            return Some(message);
        }
    }

    /// The next whole line (without its newline), or `None` at the end of the stream. A line
    /// over the limit is answered here and skipped.
    async fn next_line(&mut self) -> Option<Vec<u8>> {
        loop {
            let (consumed, ended) = {
                let available = match self.read.fill_buf().await {
                    Ok(available) => available,
                    Err(e) => {
                        tracing::warn!("reading the MCP stream failed: {e}");
                        return None;
                    }
                };
                if available.is_empty() {
                    return None;
                }
                let newline = available.iter().position(|b| *b == b'\n');
                let take = newline.map_or(available.len(), |i| i + 1);
                let chunk = &available[..take];
                if let Some(skipped) = self.skipping.as_mut() {
                    skipped.size += chunk.len();
                    skipped.id.feed(chunk);
                } else if self.line.len() + chunk.len() > self.limits.message {
                    let mut skipped = Skipped {
                        size: self.line.len() + chunk.len(),
                        id: IdScanner::default(),
                    };
                    skipped.id.feed(&self.line);
                    skipped.id.feed(chunk);
                    self.line = Vec::new();
                    self.skipping = Some(skipped);
                } else {
                    self.line.extend_from_slice(chunk);
                }
                (take, newline.is_some())
            };
            self.read.consume(consumed);
            if !ended {
                continue;
            }
            if let Some(skipped) = self.skipping.take() {
                let size = skipped.size.saturating_sub(1);
                if let Some(held) = OVERSIZED.allow() {
                    tracing::warn!(
                        "refused a {size}-byte message from {} (limit {}){held}",
                        self.peer,
                        self.limits.message
                    );
                }
                if !skipped.id.is_notification() {
                    self.answer(
                        skipped.id.id().unwrap_or(Value::Null),
                        ErrorData::invalid_request(
                            format!(
                                "message too large: {size} bytes, over the limit of {} bytes ({} MiB); send smaller content",
                                self.limits.message,
                                self.limits.message / (1024 * 1024)
                            ),
                            None,
                        ),
                    );
                }
                continue;
            }
            let mut line = std::mem::take(&mut self.line);
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Some(line);
        }
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for WireTransport<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = serde_json::to_vec(&item)
            .map_err(std::io::Error::other)
            .map(|mut bytes| {
                bytes.push(b'\n');
                self.out.send(bytes)
            });
        async move { sent?.await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let gone = self.out.gone();
        tokio::select! {
            biased;
            () = gone.cancelled() => None,
            message = self.next_message() => message,
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // The writer task flushes what is queued and shuts the stream down once every sender
        // is gone; ours goes with the transport.
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;
    use rmcp::model::RequestId;
    use std::io::ErrorKind;
    use tokio::io::AsyncReadExt;
    use tokio::io::AsyncWriteExt;

    /// Waits for `future`, failing with `what` after a deadline far beyond what it needs.
    async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
        tokio::time::timeout(Duration::from_secs(10), future)
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
    }

    /// Reads `lines` lines from the client's end; how many bytes they were.
    async fn read_lines(from_server: &mut tokio::io::DuplexStream, lines: usize) -> usize {
        let (mut read, mut seen) = (0, 0);
        let mut byte = [0u8; 1];
        while seen < lines {
            from_server.read_exact(&mut byte).await.unwrap();
            read += 1;
            if byte[0] == b'\n' {
                seen += 1;
            }
        }
        read
    }

    /// An error answer of about `size` bytes.
    fn answer_of(id: i64, size: usize) -> TxJsonRpcMessage<RoleServer> {
        JsonRpcMessage::error(
            ErrorData::internal_error("x".repeat(size), None),
            Some(RequestId::Number(id)),
        )
    }

    #[tokio::test]
    async fn a_client_that_reads_nothing_is_held_off_then_dropped_and_its_answers_freed() {
        let (mut to_server, server_in) = tokio::io::duplex(64 * 1024);
        // A small pipe back, so that answers the client does not read stay queued.
        let (server_out, mut from_server) = tokio::io::duplex(1024);
        let limits = Limits {
            message: MAX_MESSAGE,
            in_flight: 2,
            unsent: 8 * 1024,
            unsent_messages: 4,
            stall: Duration::from_millis(300),
        };
        let mut wire = WireTransport::with_limits(server_in, server_out, "the test client", limits);
        let pings: String = (1..=8)
            .map(|id| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n"))
            .collect();
        to_server.write_all(pings.as_bytes()).await.unwrap();

        // Two requests in flight: a third is not read until one of them is done, though it
        // is there to read.
        let first = within("a request", wire.receive()).await.unwrap();
        let second = within("a request", wire.receive()).await.unwrap();
        assert!(
            wire.receive().now_or_never().is_none(),
            "a third request was read while two were in flight"
        );
        drop(first);
        let third = within("a request once one is done", wire.receive())
            .await
            .unwrap();
        drop((second, third));

        // Answers the client does not read: past the cap, nothing more is read.
        let sent = wire.send(answer_of(1, 10 * 1024));
        assert!(
            wire.receive().now_or_never().is_none(),
            "a request was read while 10 KiB of answers waited"
        );
        // The client reads its answer: reading goes on.
        let answer = within("the answer", read_lines(&mut from_server, 1)).await;
        within("the answer written", sent).await.unwrap();
        assert!(answer > 10 * 1024);
        let fourth = within("a request once the answers were read", wire.receive()).await;
        assert!(fourth.is_some());
        drop(fourth);

        // Small answers count too: four waiting (one stuck in the pipe, three behind it) hold
        // reading off, however few bytes they are.
        let stuck = wire.send(answer_of(5, 2 * 1024));
        let small = [wire.send(answer_of(6, 10)), wire.send(answer_of(7, 10))];
        let fifth = wire.receive().now_or_never();
        assert!(
            matches!(fifth, Some(Some(_))),
            "three small answers waiting hold nothing off"
        );
        drop(fifth);
        let last = wire.send(answer_of(8, 10));
        assert!(
            wire.receive().now_or_never().is_none(),
            "a request was read while four answers waited"
        );
        within("the four answers read", read_lines(&mut from_server, 4)).await;
        within("the stuck answer written", stuck).await.unwrap();
        for sent in small {
            within("a small answer written", sent).await.unwrap();
        }
        within("the last answer written", last).await.unwrap();
        let sixth = within("a request once the answers were read", wire.receive()).await;
        assert!(sixth.is_some());
        drop(sixth);

        // The client stops reading for good: after the stall limit it is dropped, whatever
        // was queued for it is freed, and nothing more is queued.
        let stuck = wire.send(answer_of(9, 10 * 1024));
        let queued = wire.send(answer_of(10, 100));
        assert!(
            within("the connection dropped", wire.receive())
                .await
                .is_none(),
            "a connection that reads nothing is dropped"
        );
        let failed = within("the stuck answer", stuck).await.unwrap_err();
        assert_eq!(failed.kind(), ErrorKind::TimedOut, "{failed}");
        assert!(within("the queued answer", queued).await.is_err());
        let later = within("an answer after", wire.send(answer_of(11, 10))).await;
        assert_eq!(later.unwrap_err().kind(), ErrorKind::BrokenPipe);
        assert_eq!(wire.out.waiting(), (0, 0));
    }

    fn scan(text: &str, piece: usize) -> IdScanner {
        let mut scanner = IdScanner::default();
        for chunk in text.as_bytes().chunks(piece) {
            scanner.feed(chunk);
        }
        scanner
    }

    #[test]
    fn the_id_is_found_wherever_it_is_and_however_the_text_is_cut() {
        let cases = [
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"x","params":{"id":9}}"#,
                Some(json!(7)),
            ),
            (
                r#"{"params":{"id":9,"a":[1,{"id":3}]},"id":"a\"b","method":"x"}"#,
                Some(json!("a\"b")),
            ),
            (
                r#"{ "method" : "x" , "params" : "}\"id\":5" , "id" : 12 }"#,
                Some(json!(12)),
            ),
            (r#"{"id":{"x":1},"method":"x"}"#, None),
            (r#"{"id":null,"method":"x"}"#, None),
            (r#"[{"id":1}]"#, None),
            (r#"{"method":"x","params":{"id":4}"#, None),
        ];
        for (text, expected) in cases {
            for piece in [1, 2, 3, 7, 1000] {
                assert_eq!(
                    scan(text, piece).id(),
                    expected,
                    "{text} in pieces of {piece}"
                );
            }
        }
    }

    #[test]
    fn notifications_are_told_apart_from_requests() {
        assert!(
            scan(
                r#"{"jsonrpc":"2.0","method":"notifications/x","params":{"id":1}}"#,
                5
            )
            .is_notification()
        );
        assert!(!scan(r#"{"jsonrpc":"2.0","method":"x","id":1}"#, 5).is_notification());
    }
}
