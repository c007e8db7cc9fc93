//! Engine events and snapshots applied to the studio's state: the engine's contract (subscribe,
//! snapshot, then every event numbered above it) followed to the letter.

use super::moving::plan_follows_selection;
use super::panes::{fit_when_alone, is_persons, show_pane};
use crate::engine::{Actor, Change, EngineEvent, ExitInfo, Phase, RunEvent, SessionInfo, Snapshot};
use crate::tui::attention::attention;
use crate::tui::effect::Effect;
use crate::tui::mode::{BaseMode, Mode};
use crate::tui::overlay::Overlay;
use crate::tui::state::{App, Finished, RunView, StepMark};

pub fn snapshot(app: &mut App, snapshot: Snapshot) -> Vec<Effect> {
    app.seq = snapshot.seq;
    app.workflows = snapshot.workflows;
    app.panes = snapshot.sessions;
    app.folder_problem = snapshot.folder_problem;
    // Not rung for: what needed the person before this studio saw the engine is on the
    // status line, and rung for only when it starts needing them.
    app.inbox = snapshot.attention;
    // Runs that ended stay on show (their results); the engine lists only those in progress.
    for run in app.runs.values_mut() {
        if run.active() && !snapshot.runs.iter().any(|r| r.run_id == run.run_id) {
            run.phase = Phase::Finished;
        }
    }
    // Runs that ended before this studio saw them: their results in their plans.
    for status in snapshot.last_runs {
        if app.runs.contains_key(&status.run_id) {
            continue;
        }
        let Some(finished) = status.result.as_ref().map(Finished::from_result) else {
            continue;
        };
        let mut view = RunView::from_status(&status);
        view.finished = Some(finished);
        // Its session may be of an earlier server, whose ids a session of this one reuses:
        // a pane is never labelled with a past run.
        view.session_id = None;
        // Older than every run the studio follows: the newest stays the one a plan shows.
        app.runs.shift_insert(0, status.run_id, view);
    }
    for status in &snapshot.runs {
        let view = app
            .runs
            .entry(status.run_id.clone())
            .or_insert_with(|| RunView::from_status(status));
        view.phase = status.status;
        view.current_state = status.current_state.clone();
        view.prompt = status.prompt.clone();
    }
    app.clamp_selection();
    let mut effects = plan_follows_selection(app, true);
    effects.extend(fit_when_alone(app));
    effects.push(Effect::ListRecovery);
    // Requests made while the studio was behind the event stream are in no event it saw.
    effects.push(Effect::LoadApprovals);
    if let Some(editor) = &app.editor {
        effects.push(Effect::LoadDisk(editor.workflow.clone()));
    }
    effects
}

pub fn engine_event(app: &mut App, event: EngineEvent) -> Vec<Effect> {
    // Already in the snapshot this state was built from.
    if event.seq <= app.seq {
        return Vec::new();
    }
    app.seq = event.seq;
    let actor = event.actor;
    match event.change {
        Change::WorkflowAdded { name, .. } | Change::WorkflowChanged { name, .. } => {
            workflow_changed(app, name)
        }
        Change::WorkflowRemoved { name, .. } => workflow_removed(app, name, &actor),
        Change::HistoryPurged { .. } => vec![Effect::ReloadList],
        Change::ApprovalRequested {
            run_id, workflow, ..
        } => crate::tui::approvals::requested(app, &actor, &run_id, &workflow),
        Change::ApprovalSettled {
            run_id,
            workflow,
            approved,
        } => {
            crate::tui::approvals::settled(app, &actor, &run_id, &workflow, approved);
            Vec::new()
        }
        Change::WorkflowFolder { problem } => {
            app.folder_problem = problem;
            vec![Effect::ReloadList]
        }
        Change::WorkflowsResync { .. } => vec![Effect::Resnapshot],
        Change::SessionOpened { session } => session_opened(app, session, &actor),
        Change::SessionResized {
            session_id,
            cols,
            rows,
        } => {
            if let Some(p) = app.panes.iter_mut().find(|p| p.session_id == session_id) {
                (p.cols, p.rows) = (cols, rows);
            }
            Vec::new()
        }
        Change::SessionActivity { .. } => Vec::new(),
        Change::SessionInputRejected { reason, .. } => {
            app.message = Some(reason);
            Vec::new()
        }
        Change::SessionExited { session_id, exit } => {
            session_exited(app, &session_id, exit);
            Vec::new()
        }
        Change::SessionFailed { session_id, reason } => {
            if let Some(p) = app.panes.iter_mut().find(|p| p.session_id == session_id) {
                p.failed = Some(reason);
            }
            Vec::new()
        }
        Change::SessionClosed { session_id } => session_closed(app, &session_id),
        Change::SessionAbandoned {
            session_id, agent, ..
        } => {
            app.message = Some(format!(
                "closed {session_id}: agent {agent} left it and nobody looked at it"
            ));
            Vec::new()
        }
        Change::AttentionChanged { attention } => super::inbox::changed(app, attention),
        Change::Attached {} => Vec::new(),
        Change::Detached { terminals } => agent_left(app, &actor, terminals),
        Change::Run {
            run_id,
            journal_seq,
            line,
        } => {
            crate::tui::runs::live_line(app, &run_id, journal_seq, &line);
            run_event(app, run_id, line, actor)
        }
    }
}

/// A workflow's file was added or changed: the list is read again, and so are the editor's
/// and the plan's copies of it when they show it.
fn workflow_changed(app: &mut App, name: String) -> Vec<Effect> {
    if app.gone.as_deref() == Some(name.as_str()) {
        app.gone = None;
    }
    let mut effects = vec![Effect::ReloadList];
    effects.extend(crate::tui::editing::changed_on_disk(app, &name));
    if app.plan.as_ref().is_some_and(|p| p.workflow == name) {
        effects.push(Effect::LoadPlan(name));
    }
    effects
}

/// A workflow's file was removed (or renamed away): the list is read again.
fn workflow_removed(app: &mut App, name: String, actor: &Actor) -> Vec<Effect> {
    let mut effects = crate::tui::editing::changed_on_disk(app, &name);
    // The list moves on; the plan says where this workflow went rather than fall
    // silent, since its run may still be going (the run keeps its version). A list
    // read since (newer than this event) may have emptied the plan already: with
    // nothing left to select, the plan had been this workflow's or none.
    let shown = app.plan.as_ref().map(|p| p.workflow.as_str());
    // The person's own rename or delete: the studio has said what happened.
    let theirs = !app.is_me(actor);
    if theirs && (shown == Some(name.as_str()) || (shown.is_none() && app.visible().is_empty())) {
        app.message = Some(format!(
            "{} was removed from the folder",
            crate::tui::text::clean(&name)
        ));
        app.gone = Some(name);
    }
    effects.push(Effect::ReloadList);
    effects
}

/// A terminal opened: the person's own comes to the front; an agent's may come into view.
fn session_opened(app: &mut App, session: SessionInfo, actor: &Actor) -> Vec<Effect> {
    let id = session.session_id.clone();
    if !app.panes.iter().any(|p| p.session_id == id) {
        app.panes.push(session);
    }
    if is_persons(app, actor) {
        show_pane(app, &id)
    } else {
        agents_pane_into_view(app, actor, &id)
    }
}

/// A terminal's program exited: its pane stays to show how; focus on it has nothing left to
/// type into.
fn session_exited(app: &mut App, session_id: &str, exit: ExitInfo) {
    if let Some(p) = app.panes.iter_mut().find(|p| p.session_id == session_id) {
        p.running = false;
        p.exit = Some(exit);
    }
    if app.mode() == Mode::Focus
        && app
            .focused_pane()
            .is_some_and(|p| p.session_id == session_id)
    {
        app.base = BaseMode::Normal;
    }
}

/// A terminal closed: its pane goes, and with it whatever the person was doing in it
/// (scrolling its history, searching it, selecting in it, typing into it).
fn session_closed(app: &mut App, session_id: &str) -> Vec<Effect> {
    app.panes.retain(|p| p.session_id != session_id);
    if app
        .scroll
        .as_ref()
        .is_some_and(|s| s.session_id == session_id)
    {
        app.scroll = None;
    }
    if app
        .search
        .as_ref()
        .is_some_and(|s| s.session_id == session_id)
    {
        app.search = None;
    }
    if app
        .selection
        .as_ref()
        .is_some_and(|s| s.session_id == session_id)
    {
        app.selection = None;
    }
    if matches!(app.mode(), Mode::Focus | Mode::Copy) {
        crate::tui::copy::leave(app);
    }
    app.clamp_selection();
    fit_when_alone(app)
}

fn run_event(app: &mut App, run_id: String, line: RunEvent, actor: Actor) -> Vec<Effect> {
    if let RunEvent::RunStarted {
        workflow,
        session_id,
        actor: started_by,
        ..
    } = &line
    {
        let by = started_by.clone().unwrap_or(actor);
        return run_started(app, &run_id, workflow, session_id.as_deref(), by);
    }
    let Some(run) = app.runs.get_mut(&run_id) else {
        return Vec::new();
    };
    match line {
        RunEvent::StepStarted { state, .. } => {
            run.current_state = Some(state);
            run.phase = Phase::Running;
        }
        RunEvent::StepFinished {
            state,
            status,
            elapsed_ms,
            ..
        } => {
            run.steps.insert(state, StepMark { status, elapsed_ms });
        }
        RunEvent::WaitingForInput { prompt, .. } => {
            run.phase = Phase::WaitingForInput;
            run.prompt = Some(prompt);
            let (workflow, by) = (run.workflow.clone(), run.actor.clone());
            return asked(app, run_id, &workflow, by);
        }
        RunEvent::Answered { .. } | RunEvent::PromptWithdrawn { .. } => {
            run.phase = Phase::Running;
            run.prompt = None;
            stop_answering(app, &run_id);
        }
        RunEvent::RunFinished {
            final_state,
            success,
            error,
            return_values,
            duration_ms,
            ..
        } => {
            let ended = finish(
                run,
                Finished {
                    final_state,
                    success,
                    error,
                    return_values,
                    duration_ms,
                },
            );
            return run_ended(app, &run_id, ended);
        }
        RunEvent::RunStarted { .. }
        | RunEvent::ContractChecked { .. }
        | RunEvent::Transition { .. }
        | RunEvent::Feedback { .. } => {}
    }
    Vec::new()
}

/// A run started: the studio follows it from here, and its terminal comes into view (the
/// person's own in front, an agent's unless the person is busy).
fn run_started(
    app: &mut App,
    run_id: &str,
    workflow: &str,
    session_id: Option<&str>,
    by: Actor,
) -> Vec<Effect> {
    let view = app
        .runs
        .entry(run_id.to_string())
        .or_insert_with(|| RunView::new(run_id, workflow, Phase::Running));
    view.actor = Some(by.clone());
    view.session_id = session_id.map(str::to_string);
    match (by, session_id) {
        (by, Some(id)) if app.is_me(&by) => show_pane(app, id),
        (by, Some(id)) => agents_pane_into_view(app, &by, id),
        _ => Vec::new(),
    }
}

/// A run waits for an answer: the person's own run asks them at once unless they are busy;
/// any other run's question waits for `a` (or `u`). The person is called by the attention
/// list's change that follows (inbox.rs), not here: once, however it started needing them.
fn asked(app: &mut App, run_id: String, workflow: &str, by: Option<Actor>) -> Vec<Effect> {
    let mine = by.is_some_and(|a| app.is_me(&a));
    if mine && app.mode() == Mode::Normal {
        app.open_prompt(run_id);
    } else {
        app.message = Some(format!("{workflow} waits for an answer: a answers"));
    }
    Vec::new()
}

/// A question the person was answering is settled: the prompt they typed into closes.
fn stop_answering(app: &mut App, run_id: &str) {
    if matches!(&app.overlay, Some(Overlay::Prompt { run_id: answering, .. }) if answering == run_id)
    {
        app.overlay = None;
    }
}

/// An agent left: the person is told, with what it leaves open (a person's studio leaving
/// is theirs to know).
fn agent_left(app: &mut App, actor: &Actor, terminals: usize) -> Vec<Effect> {
    let Actor::Agent { client, .. } = actor else {
        return Vec::new();
    };
    let kept = match terminals {
        0 => String::new(),
        1 => "; its terminal stays".into(),
        n => format!("; its {n} terminals stay"),
    };
    let left = format!("agent {client} left{kept}");
    app.message = Some(left.clone());
    attention(app, left)
}

/// The run's result kept for its plan; what the status line says of it: an agent's run by
/// the agent's name, so that it is never taken for the person's own.
fn finish(run: &mut RunView, finished: Finished) -> String {
    run.phase = Phase::Finished;
    run.prompt = None;
    let took = crate::tui::text::duration(finished.duration_ms);
    let ended = match &run.actor {
        Some(Actor::Agent { client, .. }) => format!(
            "agent {client}'s run of {} {} {} in {took}",
            run.workflow,
            if finished.success { "✓" } else { "✗" },
            finished.final_state,
        ),
        _ => format!("{} ended: {} in {took}", run.workflow, finished.final_state),
    };
    run.finished = Some(finished);
    ended
}

/// A run ended: the person is told, and the list (its last result) is read again.
fn run_ended(app: &mut App, run_id: &str, ended: String) -> Vec<Effect> {
    app.message = Some(ended.clone());
    stop_answering(app, run_id);
    let mut effects = vec![Effect::ReloadList];
    effects.extend(attention(app, ended));
    effects
}

/// What an agent opens or runs comes into view without a keypress (its tab in front, or its
/// place in the grid), unless the person is busy with the pane shown: typing into it, reading
/// its history, selecting in it, or in any overlay. Focus is never taken from them.
fn agents_pane_into_view(app: &mut App, actor: &Actor, session_id: &str) -> Vec<Effect> {
    let agents = match actor {
        Actor::Agent { .. } => true,
        Actor::Run { run_id } => app
            .runs
            .get(run_id)
            .is_some_and(|r| matches!(r.actor, Some(Actor::Agent { .. }))),
        _ => false,
    };
    let busy = app.mode() != Mode::Normal || app.scroll.is_some() || app.selection.is_some();
    if !agents || busy {
        return Vec::new();
    }
    match app.panes.iter().position(|p| p.session_id == session_id) {
        Some(at) => {
            app.pane = at;
            fit_when_alone(app)
        }
        None => Vec::new(),
    }
}
