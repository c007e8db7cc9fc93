//! Where each view goes on the screen: one set of functions shared by drawing, by the update
//! that resizes the panes' PTYs and by mouse hit-testing, so the program in a pane always has
//! the size it is drawn at and a click lands on what the person sees.

use super::state::App;
use super::text::clean;
use crate::engine::attention::AttentionState;
use ratatui::layout::{Constraint, Direction, Layout, Rect};

/// The studio's areas for one terminal size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    /// Empty when the panes are zoomed.
    pub list: Rect,
    /// Empty when the panes are zoomed.
    pub plan: Rect,
    pub panes: Rect,
    pub status: Rect,
}

/// Below this the studio shows a "too small" message instead of its views.
pub const MIN_COLS: u16 = 40;
pub const MIN_ROWS: u16 = 12;

/// The smallest cells a pane's program gets in the grid: below this, fewer panes are shown at
/// once and the grid pages to the selected one.
const GRID_MIN_COLS: u16 = 20;
const GRID_MIN_ROWS: u16 = 4;

pub fn too_small(area: Rect) -> bool {
    area.width < MIN_COLS || area.height < MIN_ROWS
}

pub fn areas(area: Rect, zoom: bool) -> Areas {
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints(if zoom {
            [
                Constraint::Length(0),
                Constraint::Min(5),
                Constraint::Length(1),
            ]
        } else {
            [
                Constraint::Percentage(45),
                Constraint::Min(5),
                Constraint::Length(1),
            ]
        })
        .split(area);
    let top = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(34), Constraint::Percentage(66)])
        .split(rows[0]);
    Areas {
        list: top[0],
        plan: top[1],
        panes: rows[1],
        status: rows[2],
    }
}

/// The studio's areas for the app's terminal size and zoom.
pub fn app_areas(app: &App) -> Areas {
    areas(Rect::new(0, 0, app.size.0, app.size.1), app.zoom)
}

/// One pane on screen: which of `App::panes` it shows, its box and the cells inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub index: usize,
    pub outer: Rect,
    pub inner: Rect,
}

/// Where the panes go in `area`: the selected pane alone (tabs), or a grid of as many panes as
/// fit, the page of them that holds the selected one. Rows of the grid share the height; each
/// row shares its width among its panes, so a last row with fewer panes gets wider ones.
pub fn slots(area: Rect, count: usize, selected: usize, grid: bool) -> Vec<Slot> {
    if count == 0 {
        return Vec::new();
    }
    let selected = selected.min(count - 1);
    if !grid || count == 1 {
        return vec![slot(selected, area)];
    }
    let per_page = (1..=count)
        .rev()
        .find(|&n| {
            let (cols, rows) = grid_shape(n);
            area.width / cols >= GRID_MIN_COLS + 2 && area.height / rows >= GRID_MIN_ROWS + 2
        })
        .unwrap_or(1);
    let first = selected / per_page * per_page;
    let shown = per_page.min(count - first);
    let (cols, rows) = grid_shape(shown);
    let bands = Layout::default()
        .direction(Direction::Vertical)
        .constraints(vec![
            Constraint::Ratio(1, u32::from(rows));
            usize::from(rows)
        ])
        .split(area);
    let mut out = Vec::with_capacity(shown);
    for (r, band) in bands.iter().enumerate() {
        let start = r * usize::from(cols);
        let in_row = usize::from(cols).min(shown.saturating_sub(start));
        if in_row == 0 {
            break;
        }
        let cells = Layout::default()
            .direction(Direction::Horizontal)
            .constraints(vec![Constraint::Ratio(1, in_row as u32); in_row])
            .split(*band);
        out.extend(
            cells
                .iter()
                .enumerate()
                .map(|(c, rect)| slot(first + start + c, *rect)),
        );
    }
    out
}

/// Columns and rows of a grid of `n` panes: as square as it gets, wider than tall.
fn grid_shape(n: usize) -> (u16, u16) {
    let cols = (1..=n).find(|c| c * c >= n).unwrap_or(1);
    let rows = n.div_ceil(cols);
    (
        u16::try_from(cols).unwrap_or(u16::MAX),
        u16::try_from(rows).unwrap_or(u16::MAX),
    )
}

fn slot(index: usize, outer: Rect) -> Slot {
    Slot {
        index,
        outer,
        inner: inner(outer),
    }
}

/// A pane's cells: its box less the border.
fn inner(outer: Rect) -> Rect {
    Rect::new(
        outer.x.saturating_add(1),
        outer.y.saturating_add(1),
        outer.width.saturating_sub(2),
        outer.height.saturating_sub(2),
    )
}

/// The panes on screen for the app's state.
pub fn app_slots(app: &App) -> Vec<Slot> {
    slots(app_areas(app).panes, app.panes.len(), app.pane, app.grid)
}

/// The cells a PTY gets for a pane drawn in `inner` (at least 2x2: a program is never given
/// a zero size).
pub fn pty_size(inner: Rect) -> (u16, u16) {
    (inner.width.max(2), inner.height.max(2))
}

/// The size the selected pane is drawn at, or would be when there is none yet.
pub fn selected_pane_size(app: &App) -> (u16, u16) {
    let slots = app_slots(app);
    let inner = slots
        .iter()
        .find(|s| s.index == app.pane)
        .map_or_else(|| inner(app_areas(app).panes), |s| s.inner);
    pty_size(inner)
}

/// The size a new pane will be drawn at: in the grid it takes a place of its own.
pub fn new_pane_size(app: &App) -> (u16, u16) {
    let count = app.panes.len() + 1;
    let slots = slots(app_areas(app).panes, count, count - 1, app.grid);
    pty_size(slots.last().map_or(Rect::default(), |s| s.inner))
}

/// The editor's areas: it takes the screen but the status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EditorAreas {
    /// The box around the text.
    pub frame: Rect,
    /// The conflict banner's row, when there is a conflict.
    pub banner: Option<Rect>,
    /// The lines (gutter included).
    pub text: Rect,
    /// The row under the text: the problem on the cursor's line.
    pub note: Rect,
    /// Problems or the plan, beside the text on a wide terminal.
    pub panel: Option<Rect>,
}

/// Below this width the side panel is left out: the text needs the room.
const PANEL_MIN_COLS: u16 = 100;

pub fn editor_areas(app: &App) -> EditorAreas {
    let screen = app_areas(app);
    let whole = Rect::new(0, 0, app.size.0, screen.status.y);
    let editor = app.editor.as_ref();
    let panel_wanted = editor.is_some_and(|e| e.panel != super::editor::Panel::None)
        && whole.width >= PANEL_MIN_COLS;
    let (frame, panel) = if panel_wanted {
        let [text, panel] =
            Layout::horizontal([Constraint::Percentage(64), Constraint::Percentage(36)])
                .areas(whole);
        (text, Some(panel))
    } else {
        (whole, None)
    };
    let inner = inner(frame);
    let banner_rows = u16::from(editor.is_some_and(|e| e.conflict.is_some()));
    let [banner, text, note] = Layout::vertical([
        Constraint::Length(banner_rows),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(inner);
    EditorAreas {
        frame,
        banner: (banner_rows > 0).then_some(banner),
        text,
        note,
        panel,
    }
}

/// The editor's lines, gutter included.
pub fn editor_text(app: &App) -> Rect {
    editor_areas(app).text
}

/// The workflow drawn on row `row` (0 = the first row inside the box) of a list `height`
/// rows high, as `draw` lays it out: one row a workflow, two for a selected broken one (its
/// first error), scrolled only as far as the selected one needs (ratatui's `List`).
pub fn workflow_at_row(app: &App, height: usize, row: usize) -> Option<usize> {
    let heights: Vec<usize> = app
        .visible()
        .iter()
        .enumerate()
        .map(|(at, w)| 1 + usize::from(at == app.selected && w.first_error.is_some()))
        .collect();
    let selected = app.selected.min(heights.len().checked_sub(1)?);
    let mut first = 0;
    while first < selected && heights[first..=selected].iter().sum::<usize>() > height {
        first += 1;
    }
    let mut top = 0;
    for (at, h) in heights.iter().enumerate().skip(first) {
        if row < top + h {
            return Some(at);
        }
        top += h;
    }
    None
}

/// The label of each pane's tab: `s1 · git_health` (the run's workflow, the session's name or
/// its program), `@h1` for a shell on another machine, with its exit status once it ended.
pub fn tab_labels(app: &App) -> Vec<String> {
    app.panes
        .iter()
        .map(|p| {
            let run = app
                .runs
                .values()
                .find(|r| r.session_id.as_deref() == Some(p.session_id.as_str()));
            let who = run
                .map(|r| r.workflow.clone())
                .or_else(|| p.name.clone())
                .or_else(|| p.command.first().cloned())
                .unwrap_or_default();
            let state = match (&p.exit, &p.failed) {
                (_, Some(_)) => " failed".to_string(),
                (Some(exit), None) => format!(" {exit}"),
                _ => String::new(),
            };
            // What an agent opened, or a run an agent started, says whose it is.
            let by = match run.and_then(|r| r.actor.as_ref()).or(p.opened_by.as_ref()) {
                Some(actor @ crate::engine::Actor::Agent { .. }) => format!(" ({})", actor.label()),
                _ => String::new(),
            };
            // A shell on another machine says which.
            let place = p
                .host
                .as_ref()
                .map(|h| format!(" @{h}"))
                .unwrap_or_default();
            // What it asks of the person, marked as the inbox marks it.
            let mark = match app.inbox.state_of(&p.session_id) {
                Some(state) if state != AttentionState::Running => {
                    format!("{} ", state.mark())
                }
                _ => String::new(),
            };
            format!(
                "{mark}{} · {}{}{}{}",
                clean(&p.session_id),
                clean(&who),
                clean(&place),
                clean(&by),
                clean(&state)
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabs_show_the_selected_pane_in_the_whole_area() {
        let area = Rect::new(0, 10, 100, 20);
        assert_eq!(
            slots(area, 3, 1, false),
            vec![Slot {
                index: 1,
                outer: area,
                inner: Rect::new(1, 11, 98, 18)
            }]
        );
        assert!(slots(area, 0, 0, true).is_empty());
    }

    #[test]
    fn a_grid_of_three_is_two_over_one_and_covers_the_area() {
        let area = Rect::new(0, 0, 100, 30);
        let s = slots(area, 3, 0, true);
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].outer, Rect::new(0, 0, 50, 15));
        assert_eq!(s[1].outer, Rect::new(50, 0, 50, 15));
        // The last row's one pane takes the row's whole width.
        assert_eq!(s[2].outer, Rect::new(0, 15, 100, 15));
        let cells: u32 = s.iter().map(|s| s.outer.area()).sum();
        assert_eq!(cells, area.area());
    }

    #[test]
    fn a_grid_too_small_for_every_pane_pages_to_the_selected_one() {
        // 60x12 fits two panes of 20x4 cells side by side, not four.
        let area = Rect::new(0, 0, 60, 12);
        let first = slots(area, 5, 0, true);
        let indices: Vec<usize> = first.iter().map(|s| s.index).collect();
        assert!(indices.len() < 5 && indices.contains(&0), "{indices:?}");
        let last = slots(area, 5, 4, true);
        assert!(last.iter().any(|s| s.index == 4));
        for s in first.iter().chain(&last) {
            assert!(s.inner.width >= GRID_MIN_COLS && s.inner.height >= GRID_MIN_ROWS);
        }
    }

    #[test]
    fn zoom_gives_the_panes_everything_but_the_status_line() {
        let a = areas(Rect::new(0, 0, 80, 24), true);
        assert_eq!(a.panes, Rect::new(0, 0, 80, 23));
        assert_eq!(a.list.area(), 0);
        assert_eq!(a.status, Rect::new(0, 23, 80, 1));
    }
}
