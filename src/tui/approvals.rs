//! Approval requests in the studio (approval mode): an agent's run waits until the person
//! approves or denies it, looking at the manifest's diff against what they approved before.
//!
//! The request opens by itself only when the person is doing nothing else (the normal mode,
//! no editor open): keys typed into a pane, a form or the editor must never answer it. Esc
//! puts it aside; `a` brings it back, as does the next request.
//!
//! `y` and `n` answer the request on screen, named by its run and fingerprint: the engine
//! decides nothing when its request is not that one. A request that takes the place of
//! another on screen (a new one, or the next after one was withdrawn) takes no answer for a
//! moment, marked `New request` (settling.rs): a key pressed then was meant for the other.

use super::effect::Effect;
use super::mode::Mode;
use super::overlay::Overlay;
use super::settling::Settling;
use super::state::{App, ApprovalShown, ApprovalView, RunView, approval_texts};
use crate::engine::approval::ApprovalRequest;
use crate::engine::{Actor, Phase};
use std::time::Instant;

/// Lines of context shown above the first change when a request opens.
const CONTEXT: usize = 3;

/// Rows of the screen the diff does not get: the overlay's margin and border, the header
/// above the diff (draw/approval.rs) and the status line.
const NOT_DIFF: u16 = 8;

/// The engine said a run waits for approval: its plan shows it waiting, the person is told,
/// and the requests are read again (the event carries no text).
pub fn requested(app: &mut App, actor: &Actor, run_id: &str, workflow: &str) -> Vec<Effect> {
    let view = app
        .runs
        .entry(run_id.to_string())
        .or_insert_with(|| RunView {
            actor: Some(actor.clone()),
            ..RunView::new(run_id, workflow, Phase::AwaitingApproval)
        });
    view.phase = Phase::AwaitingApproval;
    app.approvals_later = false;
    let what = format!(
        "{} asks to run {}: a answers",
        super::text::clean(&actor.label()),
        super::text::clean(workflow)
    );
    // The person is called by the attention list's change that follows (update/inbox.rs).
    app.message = Some(what);
    vec![Effect::LoadApprovals]
}

/// The requests waiting, as the engine has them now. Views of requests already shown keep
/// their scroll; a new one opens at its first change.
pub fn loaded(app: &mut App, pending: Vec<ApprovalRequest>, error: Option<String>) {
    let mut views = Vec::with_capacity(pending.len());
    for request in pending {
        let top = match app
            .approvals
            .iter()
            .find(|v| v.request.run_id == request.run_id)
        {
            Some(shown) => shown.top,
            None => opening_top(&request, app.size.1.saturating_sub(NOT_DIFF)),
        };
        let fingerprint = request.fingerprint();
        views.push(ApprovalView {
            request,
            fingerprint,
            top,
        });
    }
    app.approvals = views;
    if let Some(error) = error {
        app.message = Some(error);
    }
    if app.approvals.is_empty() && app.mode() == Mode::Approve {
        app.overlay = None;
    }
}

/// A request was answered (by the person, here or elsewhere) or withdrawn (the run was
/// cancelled, the agent went away).
pub fn settled(app: &mut App, by: &Actor, run_id: &str, workflow: &str, approved: bool) {
    app.approvals.retain(|v| v.request.run_id != run_id);
    if let Some(run) = app.runs.get_mut(run_id)
        && run.phase == Phase::AwaitingApproval
        && approved
    {
        run.phase = Phase::Running;
    }
    let workflow = super::text::clean(workflow);
    app.message = Some(match (approved, by) {
        (true, by) if by.is_person() && !app.is_me(by) => format!(
            "approved by {}: {workflow} runs",
            super::text::clean(&by.label())
        ),
        (true, _) => format!("approved: {workflow} runs"),
        (false, by) if app.is_me(by) => format!("denied: {workflow} does not run"),
        (false, by @ Actor::Person { .. }) => format!(
            "denied by {}: {workflow} does not run",
            super::text::clean(&by.label())
        ),
        (false, by) => format!(
            "the request to run {workflow} was withdrawn ({})",
            super::text::clean(&by.label())
        ),
    });
    if app.approvals.is_empty() && app.mode() == Mode::Approve {
        app.overlay = None;
    }
}

/// Answers the request shown, by its run and fingerprint. It stays on show until the engine
/// says it was settled (or says why it could not be). A request just shown in the place of
/// another takes no answer yet.
pub fn decide(app: &mut App, approve: bool) -> Vec<Effect> {
    match &app.approval_shown {
        Some(shown) if shown.settling.is_some() => {
            app.message = Some(
                "a new request took the place of the one you saw: read it, then answer".into(),
            );
            Vec::new()
        }
        Some(shown) => vec![Effect::DecideApproval {
            run_id: shown.run_id.clone(),
            fingerprint: shown.fingerprint.clone(),
            approve,
        }],
        None => {
            app.overlay = None;
            Vec::new()
        }
    }
}

/// Notes which request is on screen after an update at `now`: one that was not there
/// before (first shown, or in the place of another) settles before it takes answers.
/// Nothing is on screen outside approval mode, so a request shown again (`a`) settles too.
pub fn track(app: &mut App, now: Instant) {
    let on_screen = (app.mode() == Mode::Approve)
        .then(|| app.approvals.first())
        .flatten()
        .map(|view| (view.request.run_id.clone(), view.fingerprint.clone()));
    app.approval_shown = match (on_screen, app.approval_shown.take()) {
        (None, _) => None,
        (Some((run_id, fingerprint)), Some(shown))
            if shown.run_id == run_id && shown.fingerprint == fingerprint =>
        {
            Some(shown)
        }
        (Some((run_id, fingerprint)), _) => Some(ApprovalShown {
            run_id,
            fingerprint,
            settling: Some(Settling::from(now)),
        }),
    };
}

/// Scrolls the diff shown.
pub fn move_by(app: &mut App, delta: isize) {
    if let Some(view) = app.approvals.first_mut() {
        let last = lines(&view.request).saturating_sub(1);
        view.top = view.top.saturating_add_signed(delta).min(last);
    }
}

/// Esc: the requests wait, set aside, until `a` or the next request.
pub fn later(app: &mut App) {
    app.approvals_later = true;
    app.overlay = None;
    app.message = Some(match app.approvals.len() {
        1 => "1 run waits for your approval: a answers".into(),
        n => format!("{n} runs wait for your approval: a answers"),
    });
}

/// `a`: the requests again, if any wait.
pub fn reopen(app: &mut App) -> bool {
    if app.approvals.is_empty() {
        return false;
    }
    app.approvals_later = false;
    app.open(Overlay::Approve);
    true
}

/// Opens the first request when the person is free to answer it (see the module's note).
pub fn show_if_due(app: &mut App) {
    if app.mode() == Mode::Normal
        && app.editor.is_none()
        && !app.approvals_later
        && !app.approvals.is_empty()
    {
        app.open(Overlay::Approve);
    }
}

/// Where a request's diff opens: at the top when it fits in `rows`, else a little above its
/// first change.
fn opening_top(request: &ApprovalRequest, rows: u16) -> usize {
    let (before, now) = approval_texts(request);
    let lines = super::diff::unified(before, now);
    if lines.len() <= usize::from(rows) {
        return 0;
    }
    super::diff::first_change(&lines)
        .unwrap_or(0)
        .saturating_sub(CONTEXT)
}

fn lines(request: &ApprovalRequest) -> usize {
    let (before, now) = approval_texts(request);
    super::diff::unified(before, now).len()
}
