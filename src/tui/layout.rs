//! Where each view goes on the screen: one function shared by drawing and by the update that
//! resizes a pane's PTY, so the program in a pane always has the size it is drawn at.

use ratatui::layout::{Constraint, Direction, Layout, Rect};

/// The studio's areas for one terminal size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    pub list: Rect,
    pub plan: Rect,
    pub panes: Rect,
    pub status: Rect,
}

/// Below this the studio shows a "too small" message instead of its views.
pub const MIN_COLS: u16 = 40;
pub const MIN_ROWS: u16 = 12;

pub fn too_small(area: Rect) -> bool {
    area.width < MIN_COLS || area.height < MIN_ROWS
}

pub fn areas(area: Rect) -> Areas {
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Percentage(45),
            Constraint::Min(5),
            Constraint::Length(1),
        ])
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

/// The cells a pane's program gets: the pane area inside its border.
pub fn pane_size(cols: u16, rows: u16) -> (u16, u16) {
    let panes = areas(Rect::new(0, 0, cols, rows)).panes;
    (
        panes.width.saturating_sub(2).max(2),
        panes.height.saturating_sub(2).max(2),
    )
}
