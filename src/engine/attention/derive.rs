//! The attention list read from the engine's state: a pure function of the runs in progress,
//! the runs that ended unseen, and the terminals with how long each has been quiet.

use super::{AttentionItem, AttentionState, ItemKind};
use crate::engine::result::FinalState;
use crate::engine::{Actor, Phase, RunStatus, SessionInfo};
use chrono::{DateTime, Utc};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// The longest reason kept: a prompt's question can be a page.
const MOST_REASON: usize = 200;

/// A run that ended in this server's life.
#[derive(Debug, Clone)]
pub(in crate::engine) struct Ended {
    pub run_id: String,
    pub workflow: String,
    pub final_state: FinalState,
    pub error: Option<String>,
    pub session_id: Option<String>,
    pub by: Option<Actor>,
    pub at: DateTime<Utc>,
}

/// What the list is read from.
pub(super) struct Seen<'a> {
    /// Runs in progress.
    pub active: &'a [&'a RunStatus],
    pub ended: &'a HashMap<String, Ended>,
    /// Every open terminal, with how long its output has been still.
    pub sessions: &'a [(SessionInfo, Duration)],
    /// Terminals whose end someone saw.
    pub seen_exits: &'a HashSet<String>,
    pub quiet_after: Option<Duration>,
}

/// An item, and when it entered its state when that is known from the facts (an ending's
/// time, a terminal's last output); otherwise it is when the list first found it so.
pub(super) struct Found {
    pub item: AttentionItem,
    pub since: Option<DateTime<Utc>>,
}

pub(super) fn items(seen: &Seen) -> Vec<Found> {
    let quiet_for: HashMap<&str, Duration> = seen
        .sessions
        .iter()
        .filter(|(s, _)| s.running)
        .map(|(s, quiet)| (s.session_id.as_str(), *quiet))
        .collect();
    let mut found: Vec<Found> = seen
        .active
        .iter()
        .filter(|r| r.status != Phase::Finished)
        .map(|run| active_run(run, &quiet_for, seen.quiet_after))
        .collect();
    found.extend(seen.ended.values().map(ended_run));
    let active: HashSet<&str> = seen.active.iter().map(|r| r.run_id.as_str()).collect();
    let runs_sessions: HashSet<&str> = seen
        .active
        .iter()
        .filter_map(|r| r.session_id.as_deref())
        .collect();
    for (session, quiet) in seen.sessions {
        // A run's terminal is told as the run.
        let a_runs = runs_sessions.contains(session.session_id.as_str())
            || matches!(&session.opened_by, Some(Actor::Run { run_id }) if active.contains(run_id.as_str()));
        if a_runs {
            continue;
        }
        if let Some(item) = terminal(session, *quiet, seen) {
            found.push(item);
        }
    }
    found
}

fn active_run(
    run: &RunStatus,
    quiet_for: &HashMap<&str, Duration>,
    quiet_after: Option<Duration>,
) -> Found {
    let mut since = None;
    let (state, reason) = match run.status {
        Phase::AwaitingApproval => (
            AttentionState::NeedsYou,
            "waits for a person to approve its manifest".to_string(),
        ),
        Phase::WaitingForInput => (
            AttentionState::NeedsYou,
            match run.prompt.as_deref() {
                Some(question) => format!("asks: {}", short(question)),
                None => "waits for an answer".to_string(),
            },
        ),
        Phase::Running | Phase::Finished => {
            let quiet = run
                .session_id
                .as_deref()
                .and_then(|id| quiet_for.get(id))
                .copied();
            match (quiet, quiet_after) {
                (Some(quiet), Some(after)) if quiet >= after => {
                    since = went_quiet(quiet);
                    (AttentionState::Quiet, no_output(after))
                }
                _ => (
                    AttentionState::Running,
                    match &run.current_state {
                        Some(state) => format!("in state {state}"),
                        None => "starting".to_string(),
                    },
                ),
            }
        }
    };
    Found {
        item: AttentionItem {
            id: run.run_id.clone(),
            kind: ItemKind::Run,
            state,
            workflow: Some(run.workflow_name.clone()),
            session_id: run.session_id.clone(),
            name: None,
            reason,
            since: String::new(),
            by: run.started_by.clone(),
        },
        since,
    }
}

fn ended_run(ended: &Ended) -> Found {
    let (state, reason) = if ended.final_state == FinalState::Completed {
        (AttentionState::Done, "completed".to_string())
    } else {
        let how = ended.final_state.to_string();
        (
            AttentionState::Failed,
            match &ended.error {
                Some(error) => format!("{how}: {}", short(error)),
                None => how,
            },
        )
    };
    Found {
        item: AttentionItem {
            id: ended.run_id.clone(),
            kind: ItemKind::Run,
            state,
            workflow: Some(ended.workflow.clone()).filter(|w| !w.is_empty()),
            session_id: ended.session_id.clone(),
            name: None,
            reason,
            since: String::new(),
            by: ended.by.clone(),
        },
        since: Some(ended.at),
    }
}

/// A terminal of its own; `None` once its end was seen.
fn terminal(session: &SessionInfo, quiet: Duration, seen: &Seen) -> Option<Found> {
    let mut since = None;
    let ended = session.exit.is_some() || session.failed.is_some();
    if ended && seen.seen_exits.contains(&session.session_id) {
        return None;
    }
    let (state, reason) = match (&session.failed, &session.exit) {
        (Some(why), _) => (
            AttentionState::Failed,
            format!("its output cannot be read: {}", short(why)),
        ),
        (None, Some(exit)) if exit.code == Some(0) && exit.signal.is_none() => (
            AttentionState::Done,
            format!("{} exited with 0", program(session)),
        ),
        (None, Some(exit)) => (
            AttentionState::Failed,
            format!("{} ended: {exit}", program(session)),
        ),
        (None, None) => match seen.quiet_after {
            Some(after) if quiet >= after => {
                since = went_quiet(quiet);
                (AttentionState::Quiet, no_output(after))
            }
            _ => (
                AttentionState::Running,
                format!("running {}", program(session)),
            ),
        },
    };
    Some(Found {
        item: AttentionItem {
            id: session.session_id.clone(),
            kind: ItemKind::Terminal,
            state,
            workflow: None,
            session_id: Some(session.session_id.clone()),
            name: session.name.clone(),
            reason,
            since: String::new(),
            by: session.opened_by.clone(),
        },
        since,
    })
}

/// How long until the next running terminal turns quiet, if one can.
pub(super) fn next_quiet(
    sessions: &[(SessionInfo, Duration)],
    quiet_after: Option<Duration>,
) -> Option<Duration> {
    let after = quiet_after?;
    sessions
        .iter()
        .filter(|(s, quiet)| s.running && *quiet < after)
        .map(|(_, quiet)| after - *quiet)
        .min()
}

fn went_quiet(quiet: Duration) -> Option<DateTime<Utc>> {
    chrono::Duration::from_std(quiet)
        .ok()
        .and_then(|quiet| Utc::now().checked_sub_signed(quiet))
}

/// A reason that stays the same while the terminal stays quiet: the list changes when its
/// state does, not every second.
fn no_output(after: Duration) -> String {
    format!(
        "no output for {} or more",
        crate::engine::abandoned::words(after)
    )
}

fn program(session: &SessionInfo) -> String {
    let program = session
        .command
        .first()
        .map_or("its program", String::as_str);
    std::path::Path::new(program)
        .file_name()
        .map_or_else(|| program.to_string(), |n| n.to_string_lossy().into_owned())
}

/// The first line, at most [`MOST_REASON`] characters.
fn short(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let mut short: String = line.chars().take(MOST_REASON).collect();
    if short.len() < line.len() || text.trim().lines().count() > 1 {
        short.push('…');
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: &str, exit: Option<u32>) -> SessionInfo {
        SessionInfo {
            session_id: id.into(),
            name: None,
            command: vec!["/bin/bash".into()],
            pid: 1,
            cols: 80,
            rows: 24,
            created_at_ms: 0,
            running: exit.is_none(),
            exit: exit.map(|code| crate::engine::ExitInfo {
                code: Some(code),
                signal: None,
            }),
            failed: None,
            opened_by: Some(Actor::person()),
            output_bytes: 0,
            history_lines: 0,
            is_shell: true,
            host: None,
            title: String::new(),
        }
    }

    fn run(id: &str, phase: Phase, session: Option<&str>) -> RunStatus {
        RunStatus {
            run_id: id.into(),
            workflow_name: "deploy".into(),
            status: phase,
            session_id: session.map(str::to_string),
            current_state: Some("ask".into()),
            states_executed: 1,
            started_at: String::new(),
            started_by: None,
            prompt: Some("Ship it?\nIt goes to production.".into()),
            last_event: 0,
            result: None,
        }
    }

    fn states(seen: &Seen) -> Vec<(String, AttentionState, String)> {
        let mut found: Vec<_> = items(seen)
            .into_iter()
            .map(|f| (f.item.id, f.item.state, f.item.reason))
            .collect();
        found.sort();
        found
    }

    #[test]
    fn each_run_and_terminal_gets_the_state_its_facts_give() {
        let asking = run("r1", Phase::WaitingForInput, Some("s1"));
        let working = run("r2", Phase::Running, Some("s2"));
        let sessions = vec![
            (session("s1", None), Duration::from_secs(500)),
            (session("s2", None), Duration::from_secs(90)),
            (session("s3", None), Duration::from_secs(5)),
            (session("s4", Some(0)), Duration::ZERO),
            (session("s5", Some(2)), Duration::ZERO),
            (session("s6", Some(1)), Duration::ZERO),
        ];
        let mut ended = HashMap::new();
        ended.insert(
            "r0".to_string(),
            Ended {
                run_id: "r0".into(),
                workflow: "build".into(),
                final_state: FinalState::ReturnValidationFailed,
                error: Some("required return value `version` was not set".into()),
                session_id: None,
                by: None,
                at: Utc::now(),
            },
        );
        let seen_exits: HashSet<String> = ["s6".to_string()].into();
        let active = [&asking, &working];
        let seen = Seen {
            active: &active,
            ended: &ended,
            sessions: &sessions,
            seen_exits: &seen_exits,
            quiet_after: Some(Duration::from_secs(60)),
        };
        assert_eq!(
            states(&seen),
            vec![
                (
                    "r0".into(),
                    AttentionState::Failed,
                    "return_validation_failed: required return value `version` was not set".into()
                ),
                (
                    "r1".into(),
                    AttentionState::NeedsYou,
                    "asks: Ship it?…".into()
                ),
                (
                    "r2".into(),
                    AttentionState::Quiet,
                    "no output for 1m or more".into()
                ),
                ("s3".into(), AttentionState::Running, "running bash".into()),
                (
                    "s4".into(),
                    AttentionState::Done,
                    "bash exited with 0".into()
                ),
                (
                    "s5".into(),
                    AttentionState::Failed,
                    "bash ended: exit code 2".into()
                ),
            ],
            "a run's terminal is told as the run, and a seen end is gone"
        );
        assert_eq!(
            next_quiet(&sessions, Some(Duration::from_secs(60))),
            Some(Duration::from_secs(55)),
            "the next to turn quiet is the one that spoke last the longest ago"
        );
        let never = Seen {
            quiet_after: None,
            ..seen
        };
        assert!(
            states(&never)
                .iter()
                .all(|(_, state, _)| *state != AttentionState::Quiet),
            "with quiet off nothing is quiet"
        );
    }
}
