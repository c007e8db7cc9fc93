//! Terminal panes, drawn cell by cell from the session's vt100 grid (colours, attributes,
//! wide characters, cursor). The program's bytes never reach the person's terminal: only
//! the grid's characters do, and controls among them are replaced.

use super::text::clean;
use super::{Ctx, block};
use crate::engine::Engine;
use crate::tui::keymap::Mode;
use crate::tui::state::View;
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Paragraph;

/// Where the panes' screens come from: the engine, lent for one frame.
pub trait Screens {
    /// Runs `draw` on the session's screen; false when there is no such session.
    fn with_screen(&self, session_id: &str, draw: &mut dyn FnMut(&vt100::Screen)) -> bool;
}

impl Screens for Engine {
    fn with_screen(&self, session_id: &str, draw: &mut dyn FnMut(&vt100::Screen)) -> bool {
        self.with_session_screen(session_id, |s| draw(s)).is_ok()
    }
}

pub fn draw(frame: &mut Frame, area: Rect, cx: &Ctx) {
    let app = cx.app;
    let t = cx.theme;
    let focused = app.view == View::Panes || app.mode == Mode::Focus;
    if app.panes.is_empty() {
        frame.render_widget(
            Paragraph::new("no terminal yet: t opens a shell, r runs the selected workflow")
                .style(Style::default().fg(t.muted))
                .block(block(" Terminal ".into(), focused, t)),
            area,
        );
        return;
    }
    let tabs: Vec<String> = app
        .panes
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let who = app
                .runs
                .values()
                .find(|r| r.session_id.as_deref() == Some(p.session_id.as_str()))
                .map(|r| r.workflow.clone())
                .or_else(|| p.name.clone())
                .or_else(|| p.command.first().cloned())
                .unwrap_or_default();
            let state = match (&p.exit, &p.failed) {
                (_, Some(_)) => " failed".to_string(),
                (Some(exit), None) => format!(" {exit}"),
                _ => String::new(),
            };
            let text = format!(
                "{} · {}{}",
                clean(&p.session_id),
                clean(&who),
                clean(&state)
            );
            if i == app.pane {
                format!("[{text}]")
            } else {
                text
            }
        })
        .collect();
    let mut title = format!(" {} ", tabs.join(" │ "));
    if app.mode == Mode::Focus {
        title.push_str("· FOCUS (Ctrl-g leaves) ");
    }
    let b = block(title, focused, t);
    let inner = b.inner(area);
    frame.render_widget(b, area);
    let Some(pane) = app.focused_pane() else {
        return;
    };
    let mut cursor = None;
    let buf = frame.buffer_mut();
    cx.screens.with_screen(&pane.session_id, &mut |screen| {
        cursor = render_screen(screen, inner, buf);
    });
    if app.mode == Mode::Focus
        && let Some(at) = cursor
    {
        frame.set_cursor_position(at);
    }
}

/// Copies the screen's cells into `buf`; returns where the cursor is, when it is shown and
/// inside `area`.
pub fn render_screen(screen: &vt100::Screen, area: Rect, buf: &mut Buffer) -> Option<Position> {
    let (rows, cols) = screen.size();
    let (rows, cols) = (rows.get(), cols.get());
    for row in 0..rows.min(area.height) {
        for col in 0..cols.min(area.width) {
            let Some(cell) = screen.cell(row, col) else {
                continue;
            };
            if cell.is_wide_continuation() {
                continue;
            }
            let at = Position::new(area.x + col, area.y + row);
            let Some(target) = buf.cell_mut(at) else {
                continue;
            };
            let text = cell.contents();
            if text.is_empty() {
                target.set_symbol(" ");
            } else if text.chars().any(crate::workflow::names::is_dangerous_char) {
                target.set_symbol("?");
            } else {
                target.set_symbol(text);
            }
            target.set_style(style_of(cell));
        }
    }
    let (row, col) = screen.cursor_position();
    (!screen.hide_cursor() && row < area.height && col < area.width)
        .then(|| Position::new(area.x + col, area.y + row))
}

fn style_of(cell: &vt100::Cell) -> Style {
    let mut style = Style::default()
        .fg(colour(cell.fgcolor()))
        .bg(colour(cell.bgcolor()));
    let mut modifiers = Modifier::empty();
    if cell.bold() {
        modifiers |= Modifier::BOLD;
    }
    if cell.dim() {
        modifiers |= Modifier::DIM;
    }
    if cell.italic() {
        modifiers |= Modifier::ITALIC;
    }
    if cell.underline() {
        modifiers |= Modifier::UNDERLINED;
    }
    if cell.inverse() {
        modifiers |= Modifier::REVERSED;
    }
    style = style.add_modifier(modifiers);
    style
}

fn colour(c: vt100::Color) -> Color {
    match c {
        vt100::Color::Default => Color::Reset,
        vt100::Color::Idx(i) => Color::Indexed(i),
        vt100::Color::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}
