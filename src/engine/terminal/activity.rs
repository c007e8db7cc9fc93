//! Telling front ends what a session's output is doing: an activity event per frame (quicker
//! for the echo of a typed key), a failure, the exit. One watcher task per session, started
//! when it opens.

use crate::engine::Engine;
use crate::engine::events::{Actor, Change};
use std::time::Duration;

/// The shortest time between two activity events of one session: a frame at 120 Hz.
const ACTIVITY_FRAME: Duration = Duration::from_millis(8);
/// How long after a key typed into a session its output is told at a quicker pace: the echo.
const ECHO_WINDOW: Duration = Duration::from_millis(100);
/// That quicker pace: a flood typed into costs at most 100 more events a key.
const ECHO_PAUSE: Duration = Duration::from_millis(1);

impl Engine {
    /// Publishes a session's output activity (at most one event per frame, however fast the
    /// output, but for the echo of each key typed) and its exit, for front ends that redraw
    /// it.
    pub(super) fn follow_activity(&self, session: &std::sync::Arc<crate::term::Session>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let hub = self.events.clone();
        let id = session.id().to_string();
        // Weak: the watcher must not keep a closed session alive.
        let weak = std::sync::Arc::downgrade(session);
        let mut activity = session.activity();
        let mut typed = session.typed();
        runtime.spawn(async move {
            let mut told_failure = false;
            let mut last_typed: Option<tokio::time::Instant> = None;
            while activity.changed().await.is_ok() {
                if typed.has_changed().unwrap_or(false) {
                    typed.borrow_and_update();
                    last_typed = Some(tokio::time::Instant::now());
                }
                let now = *activity.borrow_and_update();
                hub.publish(
                    Actor::System,
                    Change::SessionActivity {
                        session_id: id.clone(),
                        bytes: now.bytes,
                    },
                );
                if now.failed
                    && !told_failure
                    && let Some(reason) = weak.upgrade().and_then(|s| s.failure())
                {
                    told_failure = true;
                    hub.publish(
                        Actor::System,
                        Change::SessionFailed {
                            session_id: id.clone(),
                            reason,
                        },
                    );
                }
                if now.exited {
                    if let Some(exit) = weak.upgrade().and_then(|s| s.exit()) {
                        hub.publish(
                            Actor::System,
                            Change::SessionExited {
                                session_id: id.clone(),
                                exit,
                            },
                        );
                    }
                    break;
                }
                // A frame's pause, but a short one while a key was typed a moment ago, and
                // cut short by a key typed meanwhile: its echo is published as it comes, not
                // up to a frame later. A window, not "the next change": output already on its
                // way when the key was typed would use the exemption up. A flood that nobody
                // types into keeps its frames.
                let pause = if last_typed.is_some_and(|at| at.elapsed() < ECHO_WINDOW) {
                    ECHO_PAUSE
                } else {
                    ACTIVITY_FRAME
                };
                tokio::select! {
                    () = tokio::time::sleep(pause) => {}
                    Ok(()) = typed.changed() => {
                        typed.borrow_and_update();
                        last_typed = Some(tokio::time::Instant::now());
                    }
                }
            }
        });
    }
}
