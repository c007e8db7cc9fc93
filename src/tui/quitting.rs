//! Leaving the studio. Attached to the folder's server, `d` detaches (the studio exits and
//! everything goes on) and `q` quits: when this is the last studio and terminals or runs the
//! person started still live, it asks whether to end them (`y`), keep them running (`d`) or
//! stay (`n`). What agents started is never ended by a person's quit. A studio that hosts
//! the folder itself (no server could be started) ends everything when it goes, so it asks
//! whenever something still runs.

use super::effect::Effect;
use super::keymap::Mode;
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
        .filter(|p| p.running && p.opened_by.as_ref().is_some_and(Actor::is_person))
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

/// Everything that still runs, for a studio that hosts the folder (its quit ends it all).
fn anything_runs(app: &App) -> bool {
    app.any_run_active() || app.panes.iter().any(|p| p.running)
}

/// `q`: quits, or asks first when quitting would end or leave behind what the person started.
pub fn quit(app: &mut App) {
    let ask = if app.attached {
        app.studios <= 1 && !persons_work(app).is_empty()
    } else {
        anything_runs(app)
    };
    if ask {
        app.mode = Mode::ConfirmQuit;
    } else {
        app.quit = true;
    }
}

/// `y` to the question: attached, the person's terminals and runs are ended first and the
/// studio exits once they are; hosting, everything ends with the studio.
pub fn end_and_quit(app: &mut App) -> Vec<Effect> {
    app.mode = super::keymap::Mode::Normal;
    if !app.attached {
        app.quit = true;
        return Vec::new();
    }
    let work = persons_work(app);
    if work.is_empty() {
        app.quit = true;
        return Vec::new();
    }
    app.message = Some(format!("ending {}…", work.describe()));
    vec![Effect::EndAndQuit {
        sessions: work.sessions,
        runs: work.runs,
    }]
}

/// `d`: the studio exits and everything goes on in the folder's server.
pub fn detach(app: &mut App) {
    if app.attached {
        app.quit = true;
    } else {
        app.mode = Mode::Normal;
        app.message = Some(
            "cannot detach: this studio hosts the folder itself (no server could be started), so its terminals and runs end with it"
                .into(),
        );
    }
}
