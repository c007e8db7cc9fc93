//! Who is here and what they look at: the front ends attached to the engine (studios and
//! agents, each told as it comes and goes), the terminals studios show, and when anyone last
//! looked at each terminal. The policy on what nobody watches reads it: a terminal an agent
//! opened, whose agent has gone and that nobody has looked at for
//! [`super::EngineConfig::close_abandoned_after`], is closed and written down in the audit log
//! (abandoned.rs). Without it, an agent that disconnects leaves its shells to a server that
//! never ends.

use super::{Actor, Change, Engine};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Instant;

/// The engine's record of who is here and what they look at.
#[derive(Debug, Default)]
pub(super) struct Watching {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    /// Front ends attached, in the order they came.
    present: BTreeMap<u64, Actor>,
    /// The sessions each studio shows now.
    shown: HashMap<u64, HashSet<String>>,
    /// When someone last looked at a session (a studio stopped showing it, a tool call read
    /// or wrote it, its agent left).
    looked: HashMap<String, Instant>,
}

impl Watching {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Maps with no invariant across them that a panic could break half-way.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether a studio shows the session now.
    pub(super) fn shown(&self, session_id: &str) -> bool {
        self.lock().shown.values().any(|s| s.contains(session_id))
    }

    /// When someone last looked at the session; the first time it is asked, now.
    pub(super) fn last_looked(&self, session_id: &str) -> Instant {
        *self
            .lock()
            .looked
            .entry(session_id.to_string())
            .or_insert_with(Instant::now)
    }

    fn look(&self, session_id: &str) {
        self.lock()
            .looked
            .insert(session_id.to_string(), Instant::now());
    }

    /// Whether the agent's connection is attached.
    pub(super) fn connected(&self, connection: &str) -> bool {
        self.lock()
            .present
            .values()
            .any(|a| matches!(a, Actor::Agent { connection: c, .. } if c == connection))
    }

    pub(super) fn forget(&self, session_id: &str) {
        self.lock().looked.remove(session_id);
    }

    /// Forgets the sessions that are no longer open (closed by anyone).
    pub(super) fn keep_only(&self, open: &HashSet<&str>) {
        self.lock()
            .looked
            .retain(|id, _| open.contains(id.as_str()));
    }
}

/// A front end attached to the engine (a studio's person, an agent's connection) until it is
/// dropped: it is then told to have left, with how many terminals it opened stay.
#[derive(Debug)]
pub struct Presence {
    engine: Weak<Engine>,
    id: u64,
}

/// A studio's view of the engine's terminals: the sessions it shows count as looked at while
/// they are shown, and until a long while after.
#[derive(Debug)]
pub struct Viewer {
    engine: Weak<Engine>,
    id: u64,
}

impl Engine {
    /// `who` (a person's studio, an agent's connection) is attached until the returned
    /// [`Presence`] is dropped; both are told as events ([`Change::Attached`],
    /// [`Change::Detached`]).
    pub fn arrive(self: &Arc<Self>, who: Actor) -> Presence {
        let id = {
            let mut inner = self.presence.lock();
            inner.next += 1;
            let id = inner.next;
            inner.present.insert(id, who.clone());
            id
        };
        self.publish(who, Change::Attached {});
        Presence {
            engine: Arc::downgrade(self),
            id,
        }
    }

    /// The front ends attached, in the order they came.
    pub fn attached(&self) -> Vec<Actor> {
        self.presence.lock().present.values().cloned().collect()
    }

    /// A studio's view of the terminals, shown with [`Viewer::show`].
    pub fn viewer(self: &Arc<Self>) -> Viewer {
        let mut inner = self.presence.lock();
        inner.next += 1;
        Viewer {
            engine: Arc::downgrade(self),
            id: inner.next,
        }
    }

    /// Someone read or wrote the session (a tool call): it is being looked at.
    pub fn looked_at(&self, session: &str) {
        if let Ok(s) = self.terminals().get(session) {
            self.presence.look(s.id());
        }
    }

    /// The sessions `who` opened that are still open.
    fn opened_by(&self, who: &Actor) -> Vec<String> {
        self.terminals()
            .list()
            .into_iter()
            .filter(|s| {
                s.opened_by
                    .as_ref()
                    .is_some_and(|by| same_front_end(by, who))
            })
            .map(|s| s.session_id)
            .collect()
    }
}

/// Whether two actors are one front end: an agent is its connection (its client's name may
/// be shared by several), a person their terminal.
fn same_front_end(a: &Actor, b: &Actor) -> bool {
    match (a, b) {
        (Actor::Agent { connection: x, .. }, Actor::Agent { connection: y, .. }) => x == y,
        _ => a == b,
    }
}

impl Drop for Presence {
    fn drop(&mut self) {
        let Some(engine) = self.engine.upgrade() else {
            return;
        };
        let Some(who) = engine.presence.lock().present.remove(&self.id) else {
            return;
        };
        // What it leaves behind has been looked at until now: nobody's watch starts here.
        let kept = engine.opened_by(&who);
        for session in &kept {
            engine.presence.look(session);
        }
        engine.publish(
            who,
            Change::Detached {
                terminals: kept.len(),
            },
        );
    }
}

impl Viewer {
    /// The sessions the studio shows now (it shows none of the others).
    pub fn show(&self, sessions: &HashSet<String>) {
        let Some(engine) = self.engine.upgrade() else {
            return;
        };
        let mut inner = engine.presence.lock();
        let now = Instant::now();
        let before = inner.shown.insert(self.id, sessions.clone());
        // Those no longer shown were looked at until now.
        for id in before.iter().flatten().chain(sessions) {
            inner.looked.insert(id.clone(), now);
        }
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        let Some(engine) = self.engine.upgrade() else {
            return;
        };
        let mut inner = engine.presence.lock();
        let now = Instant::now();
        for id in inner.shown.remove(&self.id).into_iter().flatten() {
            inner.looked.insert(id, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_front_end_is_told_arriving_and_leaving_with_the_terminals_it_leaves() {
        let dir = tempfile::tempdir().expect("a temp folder");
        let config = super::super::EngineConfig {
            watch: false,
            ..Default::default()
        };
        let engine = Engine::open(dir.path(), config).expect("an engine");
        let mut events = engine.subscribe();
        let agent = Actor::Agent {
            client: "claude-code".into(),
            connection: "c1".into(),
        };
        let presence = engine.arrive(agent.clone());
        assert_eq!(engine.attached(), vec![agent.clone()]);
        let told = events.recv().await.expect("an event");
        assert!(matches!(told.change, Change::Attached {}) && told.actor == agent);
        drop(presence);
        assert!(engine.attached().is_empty());
        let told = events.recv().await.expect("an event");
        assert!(
            matches!(told.change, Change::Detached { terminals: 0 }) && told.actor == agent,
            "{told:?}"
        );
    }
}
