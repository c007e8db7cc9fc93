//! The attention list in the studio: taken from the engine as it changes, rung for when
//! something starts needing the person, and the inbox (`!`) and the jump (`u`) that take
//! them to it. Going to a run or terminal that failed or finished is seeing it: the engine is
//! told, and every front end's list loses it.

use super::panes::show_pane;
use crate::engine::Phase;
use crate::engine::attention::{AttentionItem, AttentionList, AttentionState, ItemKind};
use crate::tui::effect::Effect;
use crate::tui::mode::View;
use crate::tui::overlay::Overlay;
use crate::tui::ring::Ring;
use crate::tui::state::App;
use crate::tui::text::clean;

/// The engine's list changed: kept, and the person called when something starts needing
/// them.
pub(super) fn changed(app: &mut App, list: AttentionList) -> Vec<Effect> {
    let before = std::mem::replace(&mut app.inbox, list);
    if let Some(Overlay::Inbox { selected }) = &mut app.overlay {
        *selected = (*selected).min(app.inbox.items.len().saturating_sub(1));
    }
    let new: Vec<&AttentionItem> = app
        .inbox
        .items
        .iter()
        .filter(|i| i.state == AttentionState::NeedsYou)
        .filter(|i| {
            before
                .get(&i.id)
                .is_none_or(|b| b.state != AttentionState::NeedsYou)
        })
        .collect();
    let Some(first) = new.first() else {
        return Vec::new();
    };
    let mut text = format!("{} needs you: {}", first.title(), first.reason);
    if new.len() > 1 {
        text.push_str(&format!(" (and {} more)", new.len() - 1));
    }
    let text = clean(&text);
    // The title says it until the terminal has the focus again.
    let title = !app.term_focused;
    if title {
        app.attention = Some(text.clone());
    }
    if app.ring == Ring::Off && !title {
        return Vec::new();
    }
    vec![Effect::Ring {
        how: app.ring,
        text,
        title,
    }]
}

/// `!`: the inbox, on its first item.
pub(super) fn open(app: &mut App) -> Vec<Effect> {
    if app.inbox.items.is_empty() {
        app.message = Some("nothing runs, waits, failed or finished unseen".into());
        return Vec::new();
    }
    app.open(Overlay::Inbox { selected: 0 });
    Vec::new()
}

pub(super) fn move_by(app: &mut App, delta: isize) {
    let last = app.inbox.items.len().saturating_sub(1);
    if let Some(Overlay::Inbox { selected }) = &mut app.overlay {
        *selected = selected.saturating_add_signed(delta).min(last);
    }
}

/// Enter in the inbox: to the item chosen.
pub(super) fn confirm(app: &mut App) -> Vec<Effect> {
    let Some(Overlay::Inbox { selected }) = app.overlay.take() else {
        return Vec::new();
    };
    match app.inbox.items.get(selected).cloned() {
        Some(item) => go_to(app, &item),
        None => Vec::new(),
    }
}

/// `x` in the inbox: the chosen item has been seen, without going to it.
pub(super) fn clear(app: &mut App) -> Vec<Effect> {
    let Some(Overlay::Inbox { selected }) = &app.overlay else {
        return Vec::new();
    };
    match app.inbox.items.get(*selected) {
        Some(item) if seen_clears(item) => vec![Effect::Acknowledge(vec![item.id.clone()])],
        Some(item) => {
            app.message = Some(format!(
                "{} is {}: only what failed or finished clears",
                clean(&item.title()),
                item.state.words()
            ));
            Vec::new()
        }
        None => Vec::new(),
    }
}

/// `u`: the next item that needs the person, after the one they were last taken to (from the
/// inbox too: it closes on the way).
pub(super) fn next_needing(app: &mut App) -> Vec<Effect> {
    if matches!(app.overlay, Some(Overlay::Inbox { .. })) {
        app.overlay = None;
    }
    let needing: Vec<AttentionItem> = app
        .inbox
        .items
        .iter()
        .filter(|i| i.state == AttentionState::NeedsYou)
        .cloned()
        .collect();
    if needing.is_empty() {
        app.message = Some("nothing needs you".into());
        return Vec::new();
    }
    let after = app
        .jumped_to
        .as_ref()
        .and_then(|id| needing.iter().position(|i| &i.id == id));
    let next = after.map_or(0, |at| (at + 1) % needing.len());
    go_to(app, &needing[next])
}

fn seen_clears(item: &AttentionItem) -> bool {
    matches!(item.state, AttentionState::Failed | AttentionState::Done)
}

/// Takes the person to an item: a question is opened to answer, a terminal (or a run's) is
/// brought to the front, a run without one has its workflow selected with its plan. What
/// failed or finished is then seen.
fn go_to(app: &mut App, item: &AttentionItem) -> Vec<Effect> {
    app.jumped_to = Some(item.id.clone());
    let mut effects = Vec::new();
    let pane = item
        .session_id
        .as_deref()
        .filter(|id| app.panes.iter().any(|p| &p.session_id == id));
    if let Some(session_id) = pane {
        effects.extend(show_pane(app, session_id));
    }
    if item.kind == ItemKind::Run {
        let phase = app.runs.get(&item.id).map(|r| r.phase);
        match (item.state, phase) {
            (AttentionState::NeedsYou, Some(Phase::AwaitingApproval)) => {
                crate::tui::approvals::reopen(app);
            }
            (AttentionState::NeedsYou, _) => app.open_prompt(item.id.clone()),
            _ if pane.is_none() => select_workflow(app, item, &mut effects),
            _ => {}
        }
    }
    app.message = Some(format!(
        "{} · {} · {}",
        clean(&item.title()),
        item.state.words(),
        clean(&item.reason)
    ));
    if seen_clears(item) {
        effects.push(Effect::Acknowledge(vec![item.id.clone()]));
    }
    effects
}

/// The run's workflow selected in the list, its plan (with the run's result) beside it.
fn select_workflow(app: &mut App, item: &AttentionItem, effects: &mut Vec<Effect>) {
    let Some(workflow) = &item.workflow else {
        return;
    };
    if !app.visible().iter().any(|w| &w.name == workflow) {
        app.filter.clear();
    }
    if let Some(at) = app.visible().iter().position(|w| &w.name == workflow) {
        app.selected = at;
        app.view = View::Plan;
        if app.plan.as_ref().is_none_or(|p| &p.workflow != workflow) {
            effects.push(Effect::LoadPlan(workflow.clone()));
        }
    }
}
