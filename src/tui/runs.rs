//! The run view: a workflow's past runs and the journal of the selected one, read through
//! effects and followed live from the engine's `Change::Run` events (never polled).

use super::effect::Effect;
use super::overlay::{Overlay, RunsView};
use super::state::App;
use crate::engine::RunEvent;
use crate::engine::journal::{JournalEvent, RunSummary};

/// Journal lines a page up or down moves.
pub const PAGE: usize = 10;

/// `h`: asks for the selected workflow's runs.
pub fn open(app: &mut App) -> Vec<Effect> {
    match app.selected_workflow() {
        Some(w) => vec![Effect::LoadRuns(w.name.clone())],
        None => {
            app.message = Some("no workflow selected".into());
            Vec::new()
        }
    }
}

/// The runs read: the view opens on the newest and asks for its journal.
pub fn runs_read(app: &mut App, workflow: String, runs: Vec<RunSummary>) -> Vec<Effect> {
    app.open(Overlay::Runs(RunsView {
        workflow,
        runs,
        ..RunsView::default()
    }));
    select(app, 0)
}

/// Selects the run at `at` and asks for its journal when it is not the one shown.
fn select(app: &mut App, at: usize) -> Vec<Effect> {
    let Some(view) = app.runs_view_mut() else {
        return Vec::new();
    };
    let Some(run) = view.runs.get(at) else {
        return Vec::new();
    };
    view.selected = at;
    if view.run_id.as_deref() == Some(run.run_id.as_str()) {
        return Vec::new();
    }
    let run_id = run.run_id.clone();
    view.run_id = Some(run_id.clone());
    view.journal.clear();
    view.loaded = false;
    view.offset = 0;
    // Its journal opened is the run seen: if it failed or finished unseen, that clears.
    let unseen = app.inbox.get(&run_id).is_some_and(|i| {
        matches!(
            i.state,
            crate::engine::attention::AttentionState::Failed
                | crate::engine::attention::AttentionState::Done
        )
    });
    let mut effects = vec![Effect::LoadRunEvents(run_id.clone())];
    if unseen {
        effects.push(Effect::Acknowledge(vec![run_id]));
    }
    effects
}

/// j/k: the next older (`delta` 1) or newer run.
pub fn move_by(app: &mut App, delta: isize) -> Vec<Effect> {
    let Some(view) = app.runs_view() else {
        return Vec::new();
    };
    let last = view.runs.len().saturating_sub(1) as isize;
    let at = (view.selected as isize + delta).clamp(0, last) as usize;
    select(app, at)
}

/// A run's journal read: lines that arrived live meanwhile stay after it.
pub fn events_read(app: &mut App, run_id: &str, events: Result<Vec<JournalEvent>, String>) {
    let Some(view) = app.runs_view_mut() else {
        return;
    };
    if view.run_id.as_deref() != Some(run_id) {
        return;
    }
    match events {
        Ok(events) => {
            let last = events.last().map_or(0, |e| e.seq);
            let live: Vec<JournalEvent> = view.journal.drain(..).filter(|e| e.seq > last).collect();
            view.journal = events;
            view.journal.extend(live);
            view.loaded = true;
        }
        Err(e) => app.message = Some(format!("cannot read the run's journal: {e}")),
    }
}

/// A journal line from the engine's events: appended when it belongs to the run shown.
pub fn live_line(app: &mut App, run_id: &str, seq: u64, line: &RunEvent) {
    let Some(view) = app.runs_view_mut() else {
        return;
    };
    // A new run of the workflow shown: listed at the top, the selection stays on its run.
    if let RunEvent::RunStarted {
        workflow,
        session_id,
        actor,
        ..
    } = line
        && *workflow == view.workflow
        && !view.runs.iter().any(|r| r.run_id == run_id)
    {
        view.runs.insert(
            0,
            RunSummary::started(
                run_id.to_string(),
                workflow.clone(),
                crate::engine::journal::now(),
                session_id.clone(),
                actor.clone(),
            ),
        );
        if view.run_id.is_some() {
            view.selected += 1;
        }
    }
    if view.run_id.as_deref() != Some(run_id) || seq <= view.last_seq() {
        return;
    }
    let at = crate::engine::journal::now();
    view.journal.push(JournalEvent {
        seq,
        at,
        body: line.clone(),
    });
    if let Some(run) = view.runs.iter_mut().find(|r| r.run_id == run_id) {
        run.ended_with(line);
    }
    // Scrolled up: what the person reads stays where it is.
    if view.offset > 0 {
        view.offset += 1;
    }
}

/// PgUp (`pages` 1) / PgDn (−1) in the journal; at the bottom it follows the end again.
pub fn scroll(app: &mut App, pages: isize) {
    if let Some(view) = app.runs_view_mut() {
        let max = view.journal.len().saturating_sub(1);
        view.offset = view
            .offset
            .saturating_add_signed(pages * PAGE as isize)
            .min(max);
    }
}

/// End: follow the journal's end.
pub fn follow(app: &mut App) {
    if let Some(view) = app.runs_view_mut() {
        view.offset = 0;
    }
}

/// `p`: the selected run's recording, played in a new pane (the view closes on it).
pub fn replay(app: &mut App) -> Vec<Effect> {
    if app.runs_view().is_none() {
        // From the palette: the runs to choose from first.
        app.message = Some("choose a run: p replays its recording".into());
        return open(app);
    }
    let Some(run_id) = app.runs_view().and_then(|v| v.run_id.clone()) else {
        app.message = Some("no run selected".into());
        return Vec::new();
    };
    close(app);
    let (cols, rows) = super::layout::new_pane_size(app);
    vec![Effect::Replay {
        run_id,
        folder: app.folder.clone(),
        cols,
        rows,
    }]
}

fn close(app: &mut App) {
    app.overlay = None;
}
