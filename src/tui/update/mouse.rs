//! The mouse, mapped onto what the keys do: a click selects a workflow, a view, a pane or a
//! pane's tab; the wheel moves the list or scrolls a pane's history (a few lines a notch); a
//! drag selects text inside one pane (double click: words, triple click: lines) and the
//! release copies it. The same state changes and commands as the keys, found by the same
//! layout the frame is drawn with. In focus mode, a pane whose program asked for the mouse
//! gets what happens inside it instead (mouse_report.rs).

use super::commands::run_command;
use super::moving::plan_follows_selection;
use super::panes::fit_panes;
use crate::tui::command::Command;
use crate::tui::copy;
use crate::tui::effect::Effect;
use crate::tui::history;
use crate::tui::layout::{self, Slot, tab_labels, workflow_at_row};
use crate::tui::mode::{Mode, View};
use crate::tui::mouse_report::{Reporting, encode};
use crate::tui::selection;
use crate::tui::selection::{Click, Point, Selection, Surface, Unit};
use crate::tui::state::App;
use crate::workflow::action::Key;
use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};
use unicode_width::UnicodeWidthStr;

/// Lines a wheel notch scrolls a pane's history.
const WHEEL_LINES: isize = 3;
/// Clicks closer together than this (at the same cell) make a double or triple click.
const MULTI_CLICK_MS: u64 = 400;

/// A mouse event at `at_ms` (milliseconds on the loop's clock, for double clicks);
/// `reporting`, in focus mode, is what the focused pane's program asked to be told.
pub fn on_mouse(
    app: &mut App,
    event: MouseEvent,
    at_ms: u64,
    reporting: Option<Reporting>,
) -> Vec<Effect> {
    if !app.mouse || layout::too_small(Rect::new(0, 0, app.size.0, app.size.1)) {
        return Vec::new();
    }
    let at = Position::new(event.column, event.row);
    if app.mode() == Mode::Focus
        && let Some(reporting) = reporting.filter(|r| r.wanted())
        && let Some(effects) = to_program(app, &event, at, reporting)
    {
        return effects;
    }
    match app.mode() {
        // Overlays: the wheel scrolls them; clicks are for their keys.
        Mode::Help | Mode::Problems | Mode::Runs | Mode::Palette | Mode::Audit | Mode::Approve => {
            return match event.kind {
                MouseEventKind::ScrollUp => run_command(app, Command::Up),
                MouseEventKind::ScrollDown => run_command(app, Command::Down),
                _ => Vec::new(),
            };
        }
        Mode::Form | Mode::Prompt | Mode::ConfirmQuit | Mode::ConfirmClose => return Vec::new(),
        _ => {}
    }
    match event.kind {
        MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
            let up = event.kind == MouseEventKind::ScrollUp;
            wheel(app, at, up)
        }
        MouseEventKind::Down(MouseButton::Left) => press(app, at, at_ms),
        MouseEventKind::Drag(MouseButton::Left) => {
            drag(app, at);
            Vec::new()
        }
        MouseEventKind::Up(MouseButton::Left) => release(app),
        _ => Vec::new(),
    }
}

/// An event inside the focused pane, for its program that asked for the mouse: reported as
/// it asked (nothing, for what its mode leaves out). `None` outside the pane: the studio's.
fn to_program(
    app: &App,
    event: &MouseEvent,
    at: Position,
    reporting: Reporting,
) -> Option<Vec<Effect>> {
    let pane = app.focused_pane()?;
    let slot = layout::app_slots(app)
        .into_iter()
        .find(|s| s.index == app.pane)?;
    if !slot.inner.contains(at) {
        return None;
    }
    let report = encode(
        reporting,
        event.kind,
        event.modifiers,
        at.x - slot.inner.x,
        at.y - slot.inner.y,
    );
    Some(
        report
            .map(|text| Effect::SendKeys {
                session_id: pane.session_id.clone(),
                keys: vec![Key::Text { text }],
            })
            .into_iter()
            .collect(),
    )
}

fn slot_at(app: &App, at: Position) -> Option<Slot> {
    layout::app_slots(app)
        .into_iter()
        .find(|s| s.outer.contains(at))
}

fn wheel(app: &mut App, at: Position, up: bool) -> Vec<Effect> {
    let areas = layout::app_areas(app);
    if areas.list.contains(at) {
        app.view = View::List;
        return run_command(app, if up { Command::Up } else { Command::Down });
    }
    let Some(slot) = slot_at(app, at) else {
        return Vec::new();
    };
    let mut effects = show(app, slot.index);
    let lines = if up { WHEEL_LINES } else { -WHEEL_LINES };
    effects.extend(if app.mode() == Mode::Copy {
        copy::move_cursor(app, 0, -(lines as i64))
    } else {
        history::scroll_lines(app, lines)
    });
    effects
}

/// Shows pane `index` (and makes the panes the active view); focus and copy mode end when
/// another pane is chosen.
fn show(app: &mut App, index: usize) -> Vec<Effect> {
    app.view = View::Panes;
    if index == app.pane {
        return Vec::new();
    }
    if matches!(app.mode(), Mode::Focus | Mode::Copy) {
        copy::leave(app);
    }
    app.pane = index;
    app.selection = None;
    history::leave(app);
    fit_panes(app)
}

fn press(app: &mut App, at: Position, at_ms: u64) -> Vec<Effect> {
    let count = match app.last_click {
        Some(c)
            if (c.x, c.y) == (at.x, at.y)
                && at_ms.saturating_sub(c.at_ms) <= MULTI_CLICK_MS
                && c.count < 3 =>
        {
            c.count + 1
        }
        _ => 1,
    };
    app.last_click = Some(Click {
        at_ms,
        x: at.x,
        y: at.y,
        count,
    });
    let areas = layout::app_areas(app);
    if areas.list.contains(at) {
        leave_pane_modes(app);
        app.view = View::List;
        let inner_rows = usize::from(areas.list.height.saturating_sub(2));
        if at.y > areas.list.y
            && let Some(index) =
                workflow_at_row(app, inner_rows, usize::from(at.y - areas.list.y - 1))
        {
            app.selected = index;
        }
        return plan_follows_selection(app, false);
    }
    if areas.plan.contains(at) {
        leave_pane_modes(app);
        app.view = View::Plan;
        return Vec::new();
    }
    let Some(slot) = slot_at(app, at) else {
        return Vec::new();
    };
    if at.y == slot.outer.y && !app.grid {
        // The title row of the tabs: the tab under the pointer.
        return match tab_at(app, slot.outer, at.x) {
            Some(index) => show(app, index),
            None => show(app, slot.index),
        };
    }
    let mut effects = show(app, slot.index);
    if !slot.inner.contains(at) {
        return effects;
    }
    let Some(pane) = app.focused_pane() else {
        return effects;
    };
    let session_id = pane.session_id.clone();
    let point = point_in(app, slot.inner, at);
    let unit = match count {
        1 => Unit::Char,
        2 => Unit::Word,
        _ => Unit::Line,
    };
    app.selection = Some(Selection {
        session_id,
        surface: copy::surface(app),
        anchor: point,
        head: point,
        unit,
        dragging: true,
    });
    if app.mode() == Mode::Copy {
        app.copy_cursor = Some(point);
    }
    if unit != Unit::Char {
        // A double or triple click is a whole selection: copied as it is made.
        effects.extend(release(app));
    }
    effects
}

/// A click outside the panes ends focus mode and copy mode, as `Ctrl-g` and `Esc` do.
fn leave_pane_modes(app: &mut App) {
    if matches!(app.mode(), Mode::Focus | Mode::Copy) {
        copy::leave(app);
    }
}

/// The pane's content under `at` (inside `inner`): a screen row, or a history line number.
fn point_in(app: &App, inner: Rect, at: Position) -> Point {
    let x = at.x.clamp(inner.x, inner.right().saturating_sub(1));
    let y = at.y.clamp(inner.y, inner.bottom().saturating_sub(1));
    let row = u64::from(y - inner.y);
    let line = match (copy::surface(app), &app.scroll) {
        (Surface::History, Some(s)) => s.top_line(usize::from(inner.height)) + row,
        _ => row,
    };
    Point {
        line,
        col: x - inner.x,
    }
}

/// A drag extends the selection, never past its pane's border.
fn drag(app: &mut App, at: Position) {
    let Some(slot) = layout::app_slots(app)
        .into_iter()
        .find(|s| s.index == app.pane)
    else {
        return;
    };
    if !app.selection.as_ref().is_some_and(|s| s.dragging) {
        return;
    }
    let point = point_in(app, slot.inner, at);
    if let Some(s) = &mut app.selection {
        s.head = point;
    }
    if app.mode() == Mode::Copy {
        app.copy_cursor = Some(point);
    }
}

/// The button is up: a drag (or a double or triple click) is copied; a plain click selects
/// nothing.
fn release(app: &mut App) -> Vec<Effect> {
    let Some(s) = &mut app.selection else {
        return Vec::new();
    };
    if !s.dragging {
        return Vec::new();
    }
    s.dragging = false;
    if selection::is_click(s) {
        app.selection = None;
        return Vec::new();
    }
    let selection = s.clone();
    copy::copy_selection(app, selection)
}

/// The tab whose label is under column `x` of the title row of a pane box at `outer`.
fn tab_at(app: &App, outer: Rect, x: u16) -> Option<usize> {
    // The title starts after the box's corner and a space; tabs are separated by " │ ".
    let mut start = outer.x + 2;
    for (i, label) in tab_labels(app).iter().enumerate() {
        let width = label.width() as u16;
        if x >= start && x < start + width {
            return Some(i);
        }
        start += width + 3;
    }
    None
}

#[cfg(test)]
#[path = "mouse_tests.rs"]
mod tests;
