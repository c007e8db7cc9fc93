//! What the person started that still lives, and what it means when they leave: the list the
//! quit question names (drawn in its box) and the line an attached studio leaves on the
//! terminal. Reads of the state only: quitting itself is quitting.rs.

use super::state::App;
use crate::engine::Actor;

/// The terminals and runs a person started that still live: what `y` ends.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PersonsWork {
    pub sessions: Vec<String>,
    pub runs: Vec<String>,
}

impl PersonsWork {
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty() && self.runs.is_empty()
    }

    /// `2 terminals and 1 run`, for the question.
    pub fn describe(&self) -> String {
        let count = |n: usize, one: &str, many: &str| match n {
            0 => None,
            1 => Some(format!("1 {one}")),
            n => Some(format!("{n} {many}")),
        };
        [
            count(self.sessions.len(), "terminal", "terminals"),
            count(self.runs.len(), "run", "runs"),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" and ")
    }
}

/// Whose a terminal is: who opened it, or for a run's own terminal (opened by the run), who
/// started that run; `None` when the studio does not know.
fn owner<'a>(app: &'a App, pane: &'a crate::engine::SessionInfo) -> Option<&'a Actor> {
    match pane.opened_by.as_ref()? {
        Actor::Run { run_id } => app.runs.get(run_id)?.actor.as_ref(),
        other => Some(other),
    }
}

/// What the person started and is still alive: their terminals whose program runs (a run's
/// own terminal goes with the run) and their runs in progress.
pub fn persons_work(app: &App) -> PersonsWork {
    let runs: Vec<&super::state::RunView> = app
        .runs
        .values()
        .filter(|r| r.active() && r.actor.as_ref().is_some_and(Actor::is_person))
        .collect();
    let sessions = app
        .panes
        .iter()
        .filter(|p| p.running && owner(app, p).is_some_and(Actor::is_person))
        .filter(|p| {
            !runs
                .iter()
                .any(|r| r.session_id.as_ref() == Some(&p.session_id))
        })
        .map(|p| p.session_id.clone())
        .collect();
    PersonsWork {
        sessions,
        runs: runs.iter().map(|r| r.run_id.clone()).collect(),
    }
}

/// What the question names, one line each: every terminal and run the person started that
/// would keep the folder's server alive, so that nobody quits past work they forgot (a
/// finished run's shell still lives until it is closed).
pub fn staying(app: &App) -> Vec<String> {
    let work = persons_work(app);
    let terminals = work.sessions.iter().filter_map(|id| {
        let pane = app.panes.iter().find(|p| &p.session_id == id)?;
        let program = pane
            .name
            .clone()
            .or_else(|| {
                // `bash`, not `/bin/bash`: the list names what runs, not where it lives.
                let program = std::path::Path::new(pane.command.first()?);
                Some(program.file_name()?.to_string_lossy().into_owned())
            })
            .unwrap_or_else(|| "a program".into());
        let place = pane
            .host
            .as_ref()
            .map(|h| format!(" on {h}"))
            .unwrap_or_default();
        // A run's own terminal outlives the run: say so, it is the one people forget.
        let after = app
            .runs
            .values()
            .find(|r| r.session_id.as_ref() == Some(id))
            .map(|r| format!(", left by the {} run", r.workflow))
            .unwrap_or_default();
        Some(format!("terminal {id}: {program}{place}{after}"))
    });
    let runs = work.runs.iter().filter_map(|id| {
        let run = app.runs.get(id)?;
        let at = match (&run.prompt, &run.current_state) {
            (Some(_), _) => ", waiting for an answer".to_string(),
            (None, Some(state)) => format!(", at {state}"),
            (None, None) => String::new(),
        };
        Some(format!("run of {} ({id}){at}", run.workflow))
    });
    terminals.chain(runs).collect()
}

/// The line the terminal keeps after an attached studio ends: what goes on in the folder's
/// server and how to come back or end it, so that no server lives on unseen. `reattach` is
/// the command that opens this folder's studio again.
pub fn farewell(app: &App, reattach: &str) -> Option<String> {
    if !app.attached {
        return None;
    }
    let terminals = app.panes.iter().filter(|p| p.running).count();
    let agents_terminals = app
        .panes
        .iter()
        .filter(|p| p.running && owner(app, p).is_some_and(|a| matches!(a, Actor::Agent { .. })))
        .count();
    let runs = app.runs.values().filter(|r| r.active()).count();
    let others = app.studios.saturating_sub(1);
    let count = |n: usize, one: &str| match n {
        0 => None,
        1 => Some(format!("1 {one}")),
        n => Some(format!("{n} {one}s")),
    };
    let mut live: Vec<String> = [count(terminals, "terminal"), count(runs, "run")]
        .into_iter()
        .flatten()
        .collect();
    if agents_terminals > 0 {
        let whose = match (agents_terminals == terminals, agents_terminals) {
            (true, 1) => "an agent's".to_string(),
            (true, _) => "agents'".to_string(),
            (false, 1) => "1 of them an agent's".to_string(),
            (false, n) => format!("{n} of them agents'"),
        };
        if let Some(first) = live.first_mut() {
            first.push_str(&format!(" ({whose})"));
        }
    }
    // Printed on the person's terminal: a folder name holds no escape sequence there either.
    let folder = crate::workflow::names::sanitize(&app.folder);
    if live.is_empty() && others == 0 {
        return Some(format!(
            "flowdeck: nothing left running in {folder}; its server ends once no agent uses it"
        ));
    }
    match others {
        0 => {}
        1 => live.push("1 other studio attached".into()),
        n => live.push(format!("{n} other studios attached")),
    }
    Some(format!(
        "flowdeck: the server of {folder} goes on with {}: `{reattach}` reattaches, `flowdeck stop` ends it",
        live.join(" and ")
    ))
}
