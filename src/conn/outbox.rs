//! The lines queued for one client, and the writer that sends them.
//!
//! What a client costs while it does not read is bounded here: the lines queued for it count
//! their bytes and their number against [`Limits`], and the side that reads the client's
//! requests waits for [`Outbox::room`] before reading the next one. A client that writes and
//! never reads then fills its own socket buffer and blocks there, instead of growing the
//! server. Why stop reading rather than drop lines: every request must get its answer, so the
//! only cost that can be refused is the next request; not reading it leaves the bytes in the
//! client's own socket buffer and costs the server nothing.
//!
//! One writer sends the lines whole and in order ([`Queue`]). A client that takes nothing for
//! [`Limits::stall`] is given up (an agent's connection, whose session and handlers that frees);
//! a studio has no such limit: one stopped with Ctrl-Z is held up, not dropped, and reads its
//! answers when it resumes.

use std::io::ErrorKind;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{Notify, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// Bytes queued for a client and not yet taken by it, past which nothing more is read from
/// it. 4 MiB is thousands of ordinary answers and two dozen of the largest usual one (the
/// bundled folder's `tools/list`, every schema included, is 165 KB), so a client that reads
/// never meets it; one larger line still goes out whole (reading only waits until it is
/// written).
pub const MOST_UNSENT: usize = 4 * 1024 * 1024;

/// Lines queued for a client and not yet taken by it, past which nothing more is read from
/// it, however small they are: in rmcp each also costs a task and a channel, about 0.7 KB
/// measured per queued `ping` answer, ten times its bytes. A client that reads has its lines
/// written as they are made, never a thousand at once.
pub const MOST_UNSENT_LINES: usize = 1024;

/// What may wait for one client.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Bytes queued, past which reading waits.
    pub bytes: usize,
    /// Lines queued, past which reading waits.
    pub lines: usize,
    /// How long the client may take nothing while lines wait before it is given up; `None`:
    /// never (it is only held up).
    pub stall: Option<Duration>,
}

impl Limits {
    /// [`MOST_UNSENT`] and [`MOST_UNSENT_LINES`], with `stall`.
    pub fn with_stall(stall: Option<Duration>) -> Self {
        Limits {
            bytes: MOST_UNSENT,
            lines: MOST_UNSENT_LINES,
            stall,
        }
    }
}

/// A line to write, and who waits for it to be written.
#[derive(Debug)]
pub struct Line {
    bytes: Vec<u8>,
    /// What it counts against [`Limits::bytes`] (its allocation, not only its length).
    cost: usize,
    written: Option<oneshot::Sender<std::io::Result<()>>>,
}

/// What the queueing side and the writer of one connection share.
#[derive(Debug, Default)]
struct Budget {
    /// Bytes queued and not yet written.
    unsent: AtomicUsize,
    /// Lines queued and not yet written.
    lines: AtomicUsize,
    /// Told whenever a line was written, for a reader waiting on room.
    written: Notify,
    /// Cancelled when the connection is given up: a write failed, the client took nothing
    /// for too long, or the writer ended. Nothing more is queued, and reading should end.
    gone: CancellationToken,
}

impl Budget {
    fn release(&self, cost: usize) {
        self.unsent.fetch_sub(cost, Ordering::AcqRel);
        self.lines.fetch_sub(1, Ordering::AcqRel);
        self.written.notify_waiters();
    }
}

/// Where lines for one client are queued (cheap to clone: every task answering the client
/// holds one).
#[derive(Debug, Clone)]
pub struct Outbox {
    /// Unbounded as a channel, bounded by `budget`: the reader stops while too much waits.
    lines: mpsc::UnboundedSender<Line>,
    budget: Arc<Budget>,
    limits: Limits,
    /// Who is at the other end, for the log.
    peer: Arc<str>,
}

/// The writer's side of an [`Outbox`]: the lines in the order they were queued.
#[derive(Debug)]
pub struct Queue {
    lines: mpsc::UnboundedReceiver<Line>,
    budget: Arc<Budget>,
    stall: Option<Duration>,
    peer: Arc<str>,
}

impl Outbox {
    /// A connection's outbox and its queue, for its writer; `peer` names the client in the
    /// log.
    pub fn new(limits: Limits, peer: &str) -> (Outbox, Queue) {
        let (lines, queued) = mpsc::unbounded_channel();
        let budget = Arc::new(Budget::default());
        let peer: Arc<str> = Arc::from(peer);
        let queue = Queue {
            lines: queued,
            budget: budget.clone(),
            stall: limits.stall,
            peer: peer.clone(),
        };
        let outbox = Outbox {
            lines,
            budget,
            limits,
            peer,
        };
        (outbox, queue)
    }

    /// Queues a line (with its newline), counted against the limits until it is written. An
    /// error when the connection was given up.
    pub fn queue(&self, bytes: Vec<u8>) -> std::io::Result<()> {
        self.queue_told(bytes, None)
    }

    /// Queues a line, and gives what tells when it has been written (or why not).
    pub fn send(
        &self,
        bytes: Vec<u8>,
    ) -> impl Future<Output = std::io::Result<()>> + Send + 'static {
        let (written, done) = oneshot::channel();
        let queued = self.queue_told(bytes, Some(written));
        async move {
            queued?;
            done.await
                .map_err(|_| std::io::Error::from(ErrorKind::BrokenPipe))?
        }
    }

    fn queue_told(
        &self,
        bytes: Vec<u8>,
        written: Option<oneshot::Sender<std::io::Result<()>>>,
    ) -> std::io::Result<()> {
        if self.budget.gone.is_cancelled() {
            return Err(ErrorKind::BrokenPipe.into());
        }
        let cost = bytes.capacity();
        self.budget.unsent.fetch_add(cost, Ordering::AcqRel);
        self.budget.lines.fetch_add(1, Ordering::AcqRel);
        self.lines
            .send(Line {
                bytes,
                cost,
                written,
            })
            .map_err(|_| {
                self.budget.release(cost);
                std::io::Error::from(ErrorKind::BrokenPipe)
            })
    }

    /// Returns once the client may cost more (what waits for it is under the limits), or it
    /// was given up. Until then its caller reads nothing from it.
    pub async fn room(&self) {
        let mut told = false;
        loop {
            let written = self.budget.written.notified();
            let unsent = self.budget.unsent.load(Ordering::Acquire);
            let lines = self.budget.lines.load(Ordering::Acquire);
            if (unsent < self.limits.bytes && lines < self.limits.lines)
                || self.budget.gone.is_cancelled()
            {
                return;
            }
            if !told {
                told = true;
                tracing::debug!(
                    "holding off {}: {lines} lines ({unsent} bytes) wait for it to read them",
                    self.peer
                );
            }
            tokio::select! {
                () = written => {}
                () = self.budget.gone.cancelled() => return,
            }
        }
    }

    /// Cancelled once the connection is given up (a failed write, a stalled client, or its
    /// writer gone).
    pub fn gone(&self) -> CancellationToken {
        self.budget.gone.clone()
    }

    /// Bytes and lines waiting, for tests.
    pub fn waiting(&self) -> (usize, usize) {
        (
            self.budget.unsent.load(Ordering::Acquire),
            self.budget.lines.load(Ordering::Acquire),
        )
    }
}

impl Queue {
    /// The next line queued; `None` once every [`Outbox`] has gone.
    pub async fn next(&mut self) -> Option<Line> {
        self.lines.recv().await
    }

    /// Writes `line` whole, then tells who waits for it. The first failure (the client gone,
    /// or taking nothing for the stall limit) gives the connection up: every line still
    /// queued or queued later fails at once, its memory freed.
    pub async fn write<W: AsyncWrite + Unpin>(
        &mut self,
        write: &mut W,
        line: Line,
    ) -> std::io::Result<()> {
        let result = write_line(write, &line.bytes, self.stall).await;
        self.budget.release(line.cost);
        if let Err(e) = &result {
            self.fail(e, line.cost);
        }
        let failed = result.as_ref().err().map(std::io::Error::kind);
        if let Some(written) = line.written {
            let _ = written.send(result);
        }
        match failed {
            Some(kind) => Err(kind.into()),
            None => Ok(()),
        }
    }

    fn fail(&mut self, e: &std::io::Error, cost: usize) {
        let peer = &self.peer;
        match self.stall {
            Some(stall) if e.kind() == ErrorKind::TimedOut => tracing::warn!(
                "dropped {peer}: it has read nothing for {} s while {} lines ({} bytes) waited",
                stall.as_secs(),
                self.budget.lines.load(Ordering::Acquire) + 1,
                self.budget.unsent.load(Ordering::Acquire) + cost
            ),
            _ => tracing::info!("writing to {peer} failed ({e}): the connection ends"),
        }
        self.give_up();
    }

    /// Gives the connection up: reading ends, and every line queued fails.
    fn give_up(&mut self) {
        self.budget.gone.cancel();
        self.lines.close();
        while let Ok(left) = self.lines.try_recv() {
            self.budget.release(left.cost);
            if let Some(written) = left.written {
                let _ = written.send(Err(ErrorKind::BrokenPipe.into()));
            }
        }
    }

    /// The writer of a connection that writes only what is queued (an agent's): every line
    /// in order until every [`Outbox`] has gone (then the stream is shut down) or a write
    /// fails.
    pub async fn write_all<W: AsyncWrite + Unpin>(mut self, mut write: W) {
        while let Some(line) = self.next().await {
            if self.write(&mut write, line).await.is_err() {
                // Not shut down politely: a client that reads nothing would not see it, and
                // dropping the stream closes it.
                return;
            }
        }
        let _ = write.shutdown().await;
    }
}

impl Drop for Queue {
    /// A writer that ends, however it ends, gives the connection up: a reader waiting for
    /// room must not wait for a writer that is gone.
    fn drop(&mut self) {
        self.give_up();
    }
}

/// Writes one line whole and flushes it; `TimedOut` when the client takes none of it for
/// `stall` (`None`: waits as long as it takes).
pub async fn write_line<W: AsyncWrite + Unpin>(
    write: &mut W,
    mut bytes: &[u8],
    stall: Option<Duration>,
) -> std::io::Result<()> {
    let stalled = || std::io::Error::new(ErrorKind::TimedOut, "the client reads nothing");
    while !bytes.is_empty() {
        let wrote = match stall {
            Some(stall) => tokio::time::timeout(stall, write.write(bytes))
                .await
                .map_err(|_| stalled())?,
            None => write.write(bytes).await,
        };
        match wrote {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => bytes = bytes.get(n..).unwrap_or_default(),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    match stall {
        Some(stall) => tokio::time::timeout(stall, write.flush())
            .await
            .map_err(|_| stalled())?,
        None => write.flush().await,
    }
}
