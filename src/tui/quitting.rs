//! Leaving the studio. Attached to the folder's server, `d` detaches (the studio exits and
//! everything goes on) and `q` quits: when this is the last studio and terminals or runs the
//! person started still live, it asks whether to end them (`y`), keep them running (`d`) or
//! stay (`n`). What agents started is never ended by a person's quit. A studio that hosts
//! the folder itself (no server could be started) ends everything when it goes, so it asks
//! whenever something still runs.

use super::effect::Effect;
use super::persons_work::persons_work;
use super::state::App;

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
        app.open(super::overlay::Overlay::ConfirmQuit);
    } else {
        app.quit = true;
    }
}

/// `y` to the question: attached, the person's terminals and runs are ended first and the
/// studio exits once they are; hosting, everything ends with the studio.
pub fn end_and_quit(app: &mut App) -> Vec<Effect> {
    app.overlay = None;
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
        app.overlay = None;
        app.message = Some(
            "cannot detach: this studio hosts the folder itself (no server could be started), so its terminals and runs end with it"
                .into(),
        );
    }
}
