//! Selecting a pane's text: copy mode's cursor (the keyboard) and the selection it and the
//! mouse make. Copy mode selects in the history view, frozen while the person reads it, or
//! on the live screen when a full-screen program (an editor, a pager) holds it. Copying turns
//! the selection into text here when it is history (the lines are in the state) and asks the
//! loop to read the screen otherwise.

use super::effect::Effect;
use super::history;
use super::mode::{BaseMode, View};
use super::selection;
use super::selection::{Point, Selection, Surface, Unit};
use super::state::App;

/// `v`: copy mode on the shown pane, once the engine said where its cursor is.
pub fn start(app: &mut App) -> Vec<Effect> {
    match app.focused_pane() {
        Some(pane) => vec![Effect::LocateCursor(pane.session_id.clone())],
        None => {
            app.message = Some("no pane to copy from: t opens a shell".into());
            Vec::new()
        }
    }
}

/// The pane's cursor is known: copy mode starts there (on the newest history line, or on the
/// screen of a full-screen program).
pub fn located(app: &mut App, session_id: &str, alternate: bool, cursor: Point) -> Vec<Effect> {
    if app.focused_pane().map(|p| p.session_id.as_str()) != Some(session_id) {
        return Vec::new();
    }
    app.base = BaseMode::Copy;
    app.view = View::Panes;
    app.selection = None;
    let mut effects = Vec::new();
    if alternate {
        history::leave(app);
        app.copy_cursor = Some(cursor);
    } else {
        if app
            .scroll
            .as_ref()
            .is_none_or(|s| s.session_id != session_id)
        {
            effects = history::open(app, session_id.to_string(), 0);
        }
        // The newest line, where the shell's prompt is; clamped once the lines are read.
        app.copy_cursor = Some(Point {
            line: u64::MAX,
            col: cursor.col,
        });
        clamp(app);
    }
    effects
}

/// What copy mode and the mouse select on in the shown pane: the history while it is shown.
pub fn surface(app: &App) -> Surface {
    match (&app.scroll, app.focused_pane()) {
        (Some(s), Some(p)) if s.session_id == p.session_id => Surface::History,
        _ => Surface::Screen,
    }
}

/// The lines (first, last) the cursor may stand on, and the width in cells.
fn extent(app: &App) -> Option<((u64, u64), u16)> {
    let pane = app.focused_pane()?;
    match surface(app) {
        Surface::History => {
            let s = app.scroll.as_ref()?;
            if s.lines.is_empty() {
                return None;
            }
            Some(((s.first_line(), s.last_line), pane.cols))
        }
        Surface::Screen => Some(((0, u64::from(pane.rows.saturating_sub(1))), pane.cols)),
    }
}

/// Keeps the cursor on the lines there are (after a read of the history).
pub fn clamp(app: &mut App) {
    if let (Some(cursor), Some((lines, width))) = (app.copy_cursor, extent(app)) {
        app.copy_cursor = Some(selection::moved(cursor, 0, 0, lines, width));
    }
}

/// Moves copy mode's cursor; the history view scrolls to keep it in sight, and a started
/// selection follows it.
pub fn move_cursor(app: &mut App, dx: i32, dy: i64) -> Vec<Effect> {
    let (Some(cursor), Some((lines, width))) = (app.copy_cursor, extent(app)) else {
        return Vec::new();
    };
    let to = selection::moved(cursor, dx, dy, lines, width);
    app.copy_cursor = Some(to);
    if let Some(sel) = &mut app.selection {
        sel.head = to;
    }
    let mut effects = Vec::new();
    if surface(app) == Surface::History {
        let rows = history::rows(app);
        if let Some(s) = &app.scroll {
            let top = s.top_line(rows);
            let bottom = top + rows as u64 - 1;
            let by = if to.line < top {
                (top - to.line) as isize
            } else if to.line > bottom {
                -((to.line - bottom) as isize)
            } else {
                0
            };
            if by != 0 {
                effects = history::scroll_lines(app, by);
            }
        }
    }
    effects
}

/// `PgUp`/`PgDn` in copy mode: the view scrolls a page and the cursor with it.
pub fn page(app: &mut App, pages: isize) -> Vec<Effect> {
    if surface(app) == Surface::Screen {
        return Vec::new();
    }
    let rows = history::rows(app).saturating_sub(1).max(1) as i64;
    move_cursor(app, 0, -(pages as i64) * rows)
}

/// `v` (or `V`, whole lines): a selection starts at the cursor; a second `v` drops it.
pub fn mark(app: &mut App, unit: Unit) {
    let (Some(cursor), Some(pane)) = (app.copy_cursor, app.focused_pane()) else {
        return;
    };
    if app.selection.as_ref().is_some_and(|s| s.unit == unit) {
        app.selection = None;
        return;
    }
    app.selection = Some(Selection {
        session_id: pane.session_id.clone(),
        surface: surface(app),
        anchor: cursor,
        head: cursor,
        unit,
        dragging: false,
    });
}

/// `y`: copies the selection (or the cursor's line when nothing is selected) and leaves copy
/// mode; the history view stays where it was.
pub fn copy(app: &mut App) -> Vec<Effect> {
    let selection = app.selection.take().or_else(|| {
        let cursor = app.copy_cursor?;
        Some(Selection {
            session_id: app.focused_pane()?.session_id.clone(),
            surface: surface(app),
            anchor: cursor,
            head: cursor,
            unit: Unit::Line,
            dragging: false,
        })
    });
    leave(app);
    selection
        .map(|s| copy_selection(app, s))
        .unwrap_or_default()
}

/// Esc: copy mode ends and its selection with it.
pub fn leave(app: &mut App) {
    app.base = BaseMode::Normal;
    app.copy_cursor = None;
    app.selection = None;
}

/// The effect that puts a selection on the clipboard: its text when it is history, a read of
/// the screen otherwise.
pub fn copy_selection(app: &App, selection: Selection) -> Vec<Effect> {
    match selection.surface {
        Surface::Screen => vec![Effect::CopyScreen(selection)],
        Surface::History => {
            let Some(scroll) = app
                .scroll
                .as_ref()
                .filter(|s| s.session_id == selection.session_id)
            else {
                return Vec::new();
            };
            let mut line = |n: u64| scroll.line(n);
            let bounds = selection::bounds(&selection, &mut line);
            vec![Effect::Clipboard(selection::text(
                bounds,
                &mut line,
                &|_| false,
            ))]
        }
    }
}
