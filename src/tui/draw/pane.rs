//! Terminal panes, drawn cell by cell from the session's vt100 grid (colours, attributes,
//! wide characters, cursor). The program's bytes never reach the person's terminal: only
//! the grid's characters do, and controls among them are replaced.

use super::text::clean;
use super::{Ctx, block};
use crate::engine::Engine;
use crate::engine::search::{Hit, Source};
use crate::tui::keymap::Mode;
use crate::tui::state::{Scrollback, View};
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
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
    let Some(pane) = app.focused_pane() else {
        frame.render_widget(block(title, focused, t), area);
        return;
    };
    let scroll = app
        .scroll
        .as_ref()
        .filter(|s| s.session_id == pane.session_id);
    let search = app
        .search
        .as_ref()
        .filter(|s| s.session_id == pane.session_id);
    match scroll {
        Some(s) if s.lines.is_empty() => title.push_str("· history (reading…) "),
        Some(s) => title.push_str(&format!(
            "· history −{} · End leaves ",
            // While a read to the oldest line is under way, the offset is "as far as it goes".
            s.offset.min(s.lines.len())
        )),
        None => {}
    }
    if let Some(search) = search {
        title.push_str(&format!(
            "· /{} {} ",
            clean(&search.pattern),
            search.position()
        ));
    }
    let b = block(title, focused, t);
    let inner = b.inner(area);
    frame.render_widget(b, area);
    let hit = search.and_then(|s| s.hit());
    if let Some(scroll) = scroll.filter(|s| !s.lines.is_empty()) {
        frame.render_widget(history(scroll, hit, inner), inner);
        return;
    }
    let mut cursor = None;
    let buf = frame.buffer_mut();
    cx.screens.with_screen(&pane.session_id, &mut |screen| {
        cursor = render_screen(screen, inner, buf, t.colour);
    });
    // A hit on a full-screen program's screen is marked where it is.
    if let Some(hit) = hit.filter(|h| h.source == Source::Screen) {
        let row = inner.y + (hit.line.saturating_sub(1)).min(u64::from(u16::MAX)) as u16;
        for col in hit.column..hit.column + hit.length.max(1) {
            let x = inner
                .x
                .saturating_add(col.min(usize::from(u16::MAX)) as u16);
            if row < inner.bottom()
                && x < inner.right()
                && let Some(cell) = buf.cell_mut(Position::new(x, row))
            {
                cell.modifier.insert(Modifier::REVERSED | Modifier::BOLD);
            }
        }
    }
    if app.mode == Mode::Focus
        && let Some(at) = cursor
    {
        frame.set_cursor_position(at);
    }
}

/// The history lines in view (`offset` lines above the end), with the search's hit marked:
/// plain text, sanitized.
fn history(scroll: &Scrollback, hit: Option<&Hit>, area: Rect) -> Paragraph<'static> {
    let rows = usize::from(area.height);
    let end = scroll.lines.len().saturating_sub(scroll.offset);
    let start = end.saturating_sub(rows);
    let first = scroll.first_line();
    let lines: Vec<Line> = scroll.lines[start..end]
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let number = first + (start + i) as u64;
            match hit.filter(|h| h.source == Source::History && h.line == number) {
                Some(h) => marked(text, h.column, h.length),
                None => Line::raw(clean(text)),
            }
        })
        .collect();
    Paragraph::new(lines)
}

/// A line with `length` characters from `column` shown in reverse video.
fn marked(text: &str, column: usize, length: usize) -> Line<'static> {
    let chars: Vec<char> = text.chars().collect();
    let at = column.min(chars.len());
    let to = (column + length.max(1)).min(chars.len());
    let part = |a: usize, b: usize| clean(&chars[a..b].iter().collect::<String>());
    Line::from(vec![
        Span::raw(part(0, at)),
        Span::styled(
            part(at, to),
            Style::default().add_modifier(Modifier::REVERSED | Modifier::BOLD),
        ),
        Span::raw(part(to, chars.len())),
    ])
}

/// Copies the screen's cells into `buf`; returns where the cursor is, when it is shown and
/// inside `area`. Without `colour` (`NO_COLOR`) the program's colours are dropped and its
/// attributes kept.
pub fn render_screen(
    screen: &vt100::Screen,
    area: Rect,
    buf: &mut Buffer,
    colour: bool,
) -> Option<Position> {
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
            target.set_style(style_of(cell, colour));
        }
    }
    let (row, col) = screen.cursor_position();
    (!screen.hide_cursor() && row < area.height && col < area.width)
        .then(|| Position::new(area.x + col, area.y + row))
}

fn style_of(cell: &vt100::Cell, with_colour: bool) -> Style {
    let mut style = Style::default();
    if with_colour {
        style = style.fg(colour(cell.fgcolor())).bg(colour(cell.bgcolor()));
    } else {
        style = style.fg(Color::Reset).bg(Color::Reset);
    }
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
