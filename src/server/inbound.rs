//! What the server told a studio (or `flowdeck run`), waiting for its loop: bounded, without
//! ever holding up the connection's reader. The reader must not wait for room: the answers to
//! the studio's calls come on the same connection, and a loop that waits for one of them
//! while its queue is full would wait forever. So past [`MOST_QUEUED`] the queue lets go of
//! the events and screen notes it holds, takes no more, and the reader asks the server to
//! start again from a snapshot (`ToServer::Resync`), which the server sends in order with its
//! events, as it does for a studio that fell behind its event stream. A studio whose loop
//! stalls (the person's editor open, a slow terminal) then costs a bounded queue, not the
//! whole stream since.

use crate::engine::{EngineEvent, Snapshot};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;

/// What the server told the studio, in order.
#[derive(Debug)]
pub enum Inbound {
    /// The engine's state to start from (again whenever the studio fell behind).
    Snapshot(Box<Snapshot>),
    Event(Box<EngineEvent>),
    /// How many studios the server has attached, this one included.
    Studios(usize),
    /// Why the server cannot write its log (`None`: it can again).
    ServerLog(Option<String>),
    /// A shown session's screen changed (its mirror is up to date).
    Screen(String),
    /// The server is gone, with why.
    Gone(String),
}

/// Messages waiting for the studio's loop, at most, before it is taken to have fallen behind.
pub const MOST_QUEUED: usize = 1024;

/// The studio loop's end: what the server told, in order.
#[derive(Debug)]
pub struct Queue(Arc<Shared>);

/// The reader's end.
#[derive(Debug)]
pub(super) struct Feed {
    shared: Arc<Shared>,
    /// Behind: events and screen notes are dropped until the snapshot asked for comes.
    lagging: bool,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    ready: Notify,
}

#[derive(Debug, Default)]
struct State {
    queue: VecDeque<Inbound>,
    /// The reader has gone: once the queue is empty, nothing more comes.
    closed: bool,
}

/// A queue and its reader's end.
pub(super) fn queue() -> (Feed, Queue) {
    let shared = Arc::new(Shared::default());
    (
        Feed {
            shared: shared.clone(),
            lagging: false,
        },
        Queue(shared),
    )
}

/// What became of a message fed to the queue.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Fed {
    Queued,
    /// Dropped, waiting for the snapshot asked for.
    Dropped,
    /// The queue has just fallen behind: ask the server for a snapshot.
    FellBehind,
}

/// Whether a message may be dropped once the studio is behind: a snapshot brings what it
/// said again (events are in its state, screens are all sent again after it).
fn replaced_by_a_snapshot(told: &Inbound) -> bool {
    matches!(
        told,
        Inbound::Event(_) | Inbound::Screen(_) | Inbound::Snapshot(_)
    )
}

impl Feed {
    pub(super) fn push(&mut self, told: Inbound) -> Fed {
        let fed = {
            let mut state = self.shared.lock();
            if self.lagging {
                if matches!(told, Inbound::Snapshot(_)) {
                    self.lagging = false;
                    state.queue.push_back(told);
                    Fed::Queued
                } else if replaced_by_a_snapshot(&told) {
                    Fed::Dropped
                } else {
                    state.queue.push_back(told);
                    Fed::Queued
                }
            } else if state.queue.len() >= MOST_QUEUED && replaced_by_a_snapshot(&told) {
                state.queue.retain(|t| !replaced_by_a_snapshot(t));
                self.lagging = true;
                Fed::FellBehind
            } else {
                state.queue.push_back(told);
                Fed::Queued
            }
        };
        self.shared.ready.notify_one();
        fed
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.ready.notify_one();
    }
}

impl Queue {
    /// The next message, or `None` once the reader has gone and everything was taken.
    pub async fn recv(&mut self) -> Option<Inbound> {
        loop {
            {
                let mut state = self.0.lock();
                if let Some(told) = state.queue.pop_front() {
                    return Some(told);
                }
                if state.closed {
                    return None;
                }
            }
            // One consumer: a notification given while nobody waited is kept for it.
            self.0.ready.notified().await;
        }
    }

    /// How many messages wait.
    pub fn len(&self) -> usize {
        self.0.lock().queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(n: usize) -> Inbound {
        Inbound::Screen(format!("s{n}"))
    }

    #[tokio::test]
    async fn a_queue_past_its_bound_drops_what_a_snapshot_replaces_until_the_snapshot() {
        let (mut feed, mut queue) = queue();
        for n in 0..MOST_QUEUED {
            assert_eq!(feed.push(screen(n)), Fed::Queued);
        }
        feed.push(Inbound::Studios(2));
        assert_eq!(
            feed.push(screen(0)),
            Fed::FellBehind,
            "the bound is reached"
        );
        assert_eq!(queue.len(), 1, "only what no snapshot replaces is kept");
        assert_eq!(feed.push(screen(1)), Fed::Dropped);
        assert_eq!(feed.push(Inbound::ServerLog(None)), Fed::Queued);
        let snapshot = Inbound::Snapshot(Box::new(crate::engine::Snapshot {
            seq: 7,
            workflows: Vec::new(),
            sessions: Vec::new(),
            runs: Vec::new(),
            folder_problem: None,
            approval_mode: false,
            last_runs: Vec::new(),
            attention: Default::default(),
        }));
        assert_eq!(feed.push(snapshot), Fed::Queued);
        assert_eq!(feed.push(screen(2)), Fed::Queued, "caught up");
        let mut taken = Vec::new();
        while !queue.is_empty() {
            let told = queue.recv().await.expect("queued");
            taken.push(format!("{told:?}").chars().take(12).collect::<String>());
        }
        assert_eq!(taken.len(), 4, "{taken:?}");
        assert!(taken[0].starts_with("Studios"), "{taken:?}");
        assert!(taken[2].starts_with("Snapshot"), "{taken:?}");
        drop(feed);
        assert!(queue.recv().await.is_none(), "ended once the reader went");
    }
}
