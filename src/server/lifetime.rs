//! How long a server started in the background lives: while a front end is attached, or a
//! terminal or a run lives, and a short grace after the last of them, so that a front end
//! that restarts (an agent host reconnecting, a person reopening the studio) finds it still
//! there. A folder that is gone (deleted, or a temporary one cleaned up) with nobody attached
//! ends it too, with whatever it still ran: nobody can reach that work any more. `flowdeck
//! serve` in the foreground stays until it is signalled.

use crate::engine::Engine;
use std::path::Path;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;
use tokio::time::Instant;

/// How long a background server waits, idle, before it ends.
pub const GRACE: Duration = Duration::from_secs(5);

/// How often a server nobody is attached to looks whether its folder is still there: a
/// folder removed whole (a temporary one cleaned up) does not always reach the watcher as an
/// event, and nothing else would wake the server to notice.
const FOLDER_CHECK: Duration = Duration::from_secs(1);

/// Returns once nobody has been attached, and nothing has lived or the folder has been gone,
/// for `grace`.
pub async fn until_idle(
    engine: &Engine,
    folder: &Path,
    mut clients: watch::Receiver<usize>,
    grace: Duration,
) {
    let mut events = engine.subscribe();
    let idle = |clients: usize| clients == 0 && (!engine.lives() || !folder.is_dir());
    // Since when it has been idle: events (a busy session's output) do not restart the grace.
    let mut since: Option<Instant> = None;
    loop {
        since = if idle(*clients.borrow_and_update()) {
            Some(since.unwrap_or_else(Instant::now))
        } else {
            None
        };
        let end = since.map(|at| at + grace);
        let unattached = *clients.borrow() == 0;
        tokio::select! {
            () = tokio::time::sleep(FOLDER_CHECK), if unattached && end.is_none() => {}
            () = tokio::time::sleep_until(end.unwrap_or_else(Instant::now)), if end.is_some() => {
                if idle(*clients.borrow()) {
                    return;
                }
            }
            changed = clients.changed() => if changed.is_err() {
                return;
            },
            event = events.recv() => if let Err(RecvError::Closed) = event {
                return;
            },
        }
    }
}

/// Two counts of attached front ends (the socket's clients, the HTTP sessions) as one. Ends,
/// closing its own, when either ends.
pub fn together(
    mut a: watch::Receiver<usize>,
    mut b: watch::Receiver<usize>,
) -> watch::Receiver<usize> {
    let (total, together) = watch::channel(*a.borrow_and_update() + *b.borrow_and_update());
    tokio::spawn(async move {
        loop {
            tokio::select! {
                changed = a.changed() => if changed.is_err() {
                    return;
                },
                changed = b.changed() => if changed.is_err() {
                    return;
                },
                () = total.closed() => return,
            }
            total.send_replace(*a.borrow_and_update() + *b.borrow_and_update());
        }
    });
    together
}
