//! The box every overlay is drawn in: centred over the views, framed in the focus colour. The
//! overlays' drawings (here, and form.rs, runs.rs, approval.rs, editor.rs's question) share it.

use super::Ctx;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::style::Style;
use ratatui::widgets::{Block, BorderType, Borders};

/// A `width` by `height` box in the middle of `area`, no larger than it.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let [row] = Layout::vertical([Constraint::Length(height.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [cell] = Layout::horizontal([Constraint::Length(width.min(area.width))])
        .flex(Flex::Center)
        .areas(row);
    cell
}

/// An overlay's frame and title.
pub fn boxed<'a>(title: String, cx: &Ctx) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(Style::default().fg(cx.theme.focus_border))
        .title(title)
}
