//! What `flowdeck serve` says after its first line: one short, timestamped line per event a
//! person running a server wants to see (a studio or an agent attaching or leaving, a run
//! starting or ending, a terminal opened or closed, an abandoned terminal closed), read from
//! the engine's event stream. In the foreground on stderr, beside the first line; in the
//! background in the server's log.

use crate::engine::{Actor, Change, EngineEvent, RunEvent};
use crate::workflow::names::sanitize;
use std::collections::HashMap;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio_util::sync::CancellationToken;

/// What the lines need to remember: who started each run, what each terminal is called.
#[derive(Debug, Default)]
pub(super) struct Narrator {
    runs: HashMap<String, (String, String)>,
    terminals: HashMap<String, String>,
}

/// Tells each event as a line through `say` until `done`, then tells what was already
/// published (the ends of the runs and terminals shutdown closed) and returns.
pub(super) async fn tell(
    mut events: tokio::sync::broadcast::Receiver<EngineEvent>,
    done: CancellationToken,
    say: impl Fn(&str),
) {
    let mut narrator = Narrator::default();
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Ok(event) => narrator.say(&event, &say),
                Err(RecvError::Lagged(n)) => say(&format!("({n} events not told: too many at once)")),
                Err(RecvError::Closed) => return,
            },
            () = done.cancelled() => break,
        }
    }
    loop {
        match events.try_recv() {
            Ok(event) => narrator.say(&event, &say),
            Err(TryRecvError::Lagged(_)) => {}
            Err(_) => return,
        }
    }
}

impl Narrator {
    fn say(&mut self, event: &EngineEvent, say: &impl Fn(&str)) {
        if let Some(line) = self.line(event) {
            say(&format!("{} {line}", clock(&event.at)));
        }
    }

    /// The line for an event, if it is one to tell.
    pub(super) fn line(&mut self, event: &EngineEvent) -> Option<String> {
        let who = || who(&event.actor);
        Some(match &event.change {
            Change::Attached {} => format!("{} attached", who()),
            Change::Detached { terminals } => {
                let kept = match terminals {
                    0 => String::new(),
                    1 => "; its terminal stays".into(),
                    n => format!("; its {n} terminals stay"),
                };
                format!("{} left{kept}", who())
            }
            Change::SessionOpened { session } => {
                let id = sanitize(&session.session_id);
                let named = match &session.name {
                    Some(name) => format!("{id} ({})", sanitize(name)),
                    None => id,
                };
                self.terminals
                    .insert(session.session_id.clone(), named.clone());
                let by = session.opened_by.as_ref().unwrap_or(&event.actor);
                format!("terminal {named} opened by {}", who_of(by))
            }
            Change::SessionClosed { session_id } => {
                let named = self
                    .terminals
                    .remove(session_id)
                    .unwrap_or_else(|| sanitize(session_id));
                format!("terminal {named} closed")
            }
            Change::SessionAbandoned {
                session_id,
                agent,
                unwatched_ms,
                ..
            } => format!(
                "closing terminal {} of agent {}: it left and nobody looked at it for {}",
                self.terminals
                    .get(session_id)
                    .cloned()
                    .unwrap_or_else(|| sanitize(session_id)),
                sanitize(agent),
                super::words::lasting(std::time::Duration::from_millis(*unwatched_ms))
            ),
            Change::Run { run_id, line, .. } => self.run_line(run_id, line, &event.actor)?,
            _ => return None,
        })
    }

    fn run_line(&mut self, run_id: &str, line: &RunEvent, actor: &Actor) -> Option<String> {
        match line {
            RunEvent::RunStarted {
                workflow,
                actor: started_by,
                ..
            } => {
                let by = who_of(started_by.as_ref().unwrap_or(actor));
                let workflow = sanitize(workflow);
                let said = format!("run {} of {workflow} started by {by}", sanitize(run_id));
                self.runs.insert(run_id.to_string(), (workflow, by));
                Some(said)
            }
            RunEvent::RunFinished {
                final_state,
                success,
                duration_ms,
                error,
                ..
            } => {
                let (workflow, by) = self
                    .runs
                    .remove(run_id)
                    .unwrap_or_else(|| ("a workflow".into(), "someone".into()));
                let mark = if *success { "✓" } else { "✗" };
                let why = error
                    .as_deref()
                    .filter(|_| !success)
                    .map(|e| format!(": {}", sanitize(e)))
                    .unwrap_or_default();
                Some(format!(
                    "run {} of {workflow} by {by} ended {mark} {} in {}{why}",
                    sanitize(run_id),
                    final_state.as_str(),
                    super::words::lasting(std::time::Duration::from_millis(*duration_ms as u64))
                ))
            }
            _ => None,
        }
    }
}

/// Who, for a line: `agent claude-code`, `the studio at pts/3`, `flowdeck run`.
fn who(actor: &Actor) -> String {
    match actor {
        Actor::Person { at } if at.is_empty() => "a studio".into(),
        Actor::Person { at } => format!("the studio at {}", sanitize(at)),
        other => who_of(other),
    }
}

/// Who did something: `agent claude-code`, `the person at pts/3`, `flowdeck run`.
fn who_of(actor: &Actor) -> String {
    match actor {
        Actor::Person { at } if at.is_empty() => "a person".into(),
        Actor::Person { at } => format!("the person at {}", sanitize(at)),
        Actor::Agent { client, .. } => format!("agent {}", sanitize(client)),
        Actor::Cli => "flowdeck run".into(),
        Actor::Run { run_id } => format!("run {}", sanitize(run_id)),
        Actor::System => "flowdeck".into(),
    }
}

/// `14:03:27` of an event's RFC 3339 time, in local time.
fn clock(at: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(at)
        .map(|t| {
            t.with_timezone(&chrono::Local)
                .format("%H:%M:%S")
                .to_string()
        })
        .unwrap_or_else(|_| at.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(actor: Actor, change: Change) -> EngineEvent {
        EngineEvent {
            seq: 1,
            at: "2026-11-27T10:00:00.000Z".into(),
            actor,
            change,
        }
    }

    #[test]
    fn an_agent_leaving_says_what_it_leaves_and_others_events_say_nothing() {
        let mut narrator = Narrator::default();
        let agent = Actor::Agent {
            client: "claude-code".into(),
            connection: "c1".into(),
        };
        let left = event(agent.clone(), Change::Detached { terminals: 2 });
        assert_eq!(
            narrator.line(&left).as_deref(),
            Some("agent claude-code left; its 2 terminals stay")
        );
        let studio = event(Actor::Person { at: "pts/3".into() }, Change::Attached {});
        assert_eq!(
            narrator.line(&studio).as_deref(),
            Some("the studio at pts/3 attached")
        );
        let quiet = event(
            agent,
            Change::SessionActivity {
                session_id: "s1".into(),
                bytes: 3,
            },
        );
        assert_eq!(narrator.line(&quiet), None);
    }
}
