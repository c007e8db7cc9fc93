//! A bounded stream of the folder's changes.
//!
//! A subscriber that stops reading must not make the store hold every change forever: each
//! subscription queues at most [`CAPACITY`] changes, and what does not fit is counted, not
//! kept. The subscriber learns how many it missed ([`Subscription::missed`]) and reads the
//! catalog again instead (the engine turns this into a resync event for front ends).

use super::Change;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::time::Duration;

/// Changes queued per subscriber.
pub const CAPACITY: usize = 4096;

/// The store's end of a subscription.
#[derive(Debug)]
pub(super) struct Subscriber {
    tx: SyncSender<Change>,
    missed: Arc<AtomicU64>,
}

impl Subscriber {
    /// Queues a change; false when the subscription is gone.
    pub(super) fn send(&self, change: &Change) -> bool {
        match self.tx.try_send(change.clone()) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                self.missed.fetch_add(1, Ordering::SeqCst);
                true
            }
            Err(TrySendError::Disconnected(_)) => false,
        }
    }
}

/// Every change of the folder from the moment of subscribing; dropping it unsubscribes.
#[derive(Debug)]
pub struct Subscription {
    rx: Receiver<Change>,
    missed: Arc<AtomicU64>,
}

pub(super) fn pair() -> (Subscriber, Subscription) {
    let (tx, rx) = sync_channel(CAPACITY);
    let missed = Arc::new(AtomicU64::new(0));
    (
        Subscriber {
            tx,
            missed: missed.clone(),
        },
        Subscription { rx, missed },
    )
}

impl Subscription {
    /// The next change; `None` once the store is gone.
    pub fn recv(&self) -> Option<Change> {
        self.rx.recv().ok()
    }

    pub fn recv_timeout(&self, timeout: Duration) -> Result<Change, RecvTimeoutError> {
        self.rx.recv_timeout(timeout)
    }

    /// Changes that did not fit since the last call (and so were never queued): when not
    /// zero, the subscriber's view is stale and the catalog must be read again.
    pub fn missed(&self) -> u64 {
        self.missed.swap(0, Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ChangeKind;

    #[test]
    fn a_subscriber_that_stops_reading_holds_a_bounded_queue_and_learns_what_it_missed() {
        let (subscriber, subscription) = pair();
        let change = Change {
            kind: ChangeKind::Changed,
            file_name: "a.yaml".into(),
            name: "a".into(),
            version: Some("v".into()),
            author: None,
        };
        for _ in 0..CAPACITY + 5 {
            assert!(subscriber.send(&change));
        }
        assert_eq!(subscription.missed(), 5);
        assert_eq!(subscription.missed(), 0, "told once");
        let queued = std::iter::from_fn(|| subscription.recv_timeout(Duration::ZERO).ok()).count();
        assert_eq!(queued, CAPACITY);
        drop(subscription);
        assert!(
            !subscriber.send(&change),
            "a dropped subscription unsubscribes"
        );
    }
}
