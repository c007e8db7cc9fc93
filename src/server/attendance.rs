//! Who is attached to the server's socket now: each studio (with its person) and each
//! `flowdeck run`, for `flowdeck ls` to show (status.rs), and how many MCP sessions are open
//! over HTTP. A connection is present while the [`Present`] it was given lives, so it leaves
//! the list however it ends. Agents, on the socket or over HTTP, are the engine's to know
//! (engine/presence.rs: attached on `initialize`, by their clients' names); status.rs lists
//! them from there.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// One attached front end, as `flowdeck ls` names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Attendee {
    /// A person's studio: `at` is the terminal it runs in (`pts/3`), when known.
    Studio {
        #[serde(default, skip_serializing_if = "String::is_empty")]
        at: String,
    },
    /// An agent's MCP connection on the socket, by its client's name.
    Agent { name: String },
    /// `flowdeck run` following its run in the server.
    Cli,
}

/// The front ends attached now; cloned into every connection.
#[derive(Debug, Clone, Default)]
pub struct Attendance {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    present: BTreeMap<u64, Attendee>,
    /// How many agents' sessions MCP over HTTP holds, when it is served.
    http: Option<watch::Receiver<usize>>,
}

/// A front end's presence: it leaves the list when this is dropped.
#[derive(Debug)]
pub struct Present {
    attendance: Attendance,
    id: u64,
}

impl Attendance {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // The map holds no invariant a panic could break half-way.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `who` is attached until the returned [`Present`] is dropped.
    pub fn arrive(&self, who: Attendee) -> Present {
        let mut inner = self.lock();
        inner.next += 1;
        let id = inner.next;
        inner.present.insert(id, who);
        Present {
            attendance: self.clone(),
            id,
        }
    }

    /// Counts the sessions of MCP over HTTP as agents too.
    pub fn count_http(&self, sessions: watch::Receiver<usize>) {
        self.lock().http = Some(sessions);
    }

    /// Who is attached, in the order they came.
    pub fn now(&self) -> Vec<Attendee> {
        self.lock().present.values().cloned().collect()
    }

    /// How many agents' sessions MCP over HTTP holds.
    pub fn http_agents(&self) -> usize {
        self.lock().http.as_ref().map_or(0, |count| *count.borrow())
    }
}

impl Drop for Present {
    fn drop(&mut self) {
        self.attendance.lock().present.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_front_end_is_listed_while_present_and_gone_once_dropped() {
        let attendance = Attendance::default();
        let studio = attendance.arrive(Attendee::Studio { at: "pts/3".into() });
        let agent = attendance.arrive(Attendee::Agent {
            name: "claude-code".into(),
        });
        assert_eq!(
            attendance.now(),
            vec![
                Attendee::Studio { at: "pts/3".into() },
                Attendee::Agent {
                    name: "claude-code".into()
                }
            ]
        );
        drop(studio);
        assert_eq!(attendance.now().len(), 1);
        drop(agent);
        assert!(attendance.now().is_empty());
        let (count, sessions) = watch::channel(2);
        attendance.count_http(sessions);
        assert_eq!(attendance.http_agents(), 2);
        count.send_replace(0);
        assert_eq!(attendance.http_agents(), 0);
    }
}
