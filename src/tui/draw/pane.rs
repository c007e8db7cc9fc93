//! Terminal panes, drawn cell by cell from the session's vt100 grid (colours, attributes,
//! wide characters, cursor). The program's bytes never reach the person's terminal: only
//! the grid's characters do, and controls among them are replaced.

use super::{Ctx, block};
use crate::engine::Engine;
use crate::engine::panes::{Colour, Mirror};
use crate::engine::search::{Hit, Source};
use crate::tui::layout::{self, Slot};
use crate::tui::mode::{Mode, View};
use crate::tui::selection::{self, Bounds, Selection, Surface};
use crate::tui::state::{App, Scrollback};
use crate::tui::text::clean;
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Where the panes' screens come from: copies of the sessions' screens (mirrors), taken from
/// the engine in this process or sent by the folder's server.
pub trait Screens {
    /// Runs `draw` on the session's screen; false when there is no such session.
    fn with_screen(&self, session_id: &str, draw: &mut dyn FnMut(&Mirror)) -> bool;
}

impl Screens for Engine {
    fn with_screen(&self, session_id: &str, draw: &mut dyn FnMut(&Mirror)) -> bool {
        self.session_mirror(session_id).map(|m| draw(&m)).is_ok()
    }
}

pub fn draw(frame: &mut Frame, area: Rect, cx: &Ctx) {
    let app = cx.app;
    let t = cx.theme;
    let active = app.view == View::Panes || app.mode() == Mode::Focus;
    if app.panes.is_empty() {
        frame.render_widget(
            Paragraph::new("no terminal yet: t opens a shell, r runs the selected workflow")
                .style(Style::default().fg(t.muted))
                .block(block(" Terminal ".into(), active, t)),
            area,
        );
        return;
    }
    let labels = layout::tab_labels(app);
    let slots = layout::slots(area, app.panes.len(), app.pane, app.grid);
    for slot in &slots {
        let selected = slot.index == app.pane;
        let mut title = if app.grid {
            let label = labels.get(slot.index).cloned().unwrap_or_default();
            let page = if slots.len() < app.panes.len() {
                format!("{}/{} ", slot.index + 1, app.panes.len())
            } else {
                String::new()
            };
            if selected {
                format!(" {page}[{label}] ")
            } else {
                format!(" {page}{label} ")
            }
        } else {
            let tabs: Vec<String> = labels
                .iter()
                .enumerate()
                .map(|(i, l)| {
                    if i == app.pane {
                        format!("[{l}]")
                    } else {
                        l.clone()
                    }
                })
                .collect();
            format!(" {} ", tabs.join(" │ "))
        };
        if selected {
            title.push_str(&status_of_selected(app));
        }
        title.push_str(&sized_elsewhere(app, slot));
        draw_slot(frame, slot, title, active && selected, cx);
    }
}

/// With several studios attached, a pane keeps the size of the studio that last typed into it
/// or resized it: in the others it is drawn cropped (or with room to spare), and its title says
/// so until someone here types into it.
fn sized_elsewhere(app: &App, slot: &Slot) -> String {
    let Some(pane) = app.panes.get(slot.index) else {
        return String::new();
    };
    let here = layout::pty_size(slot.inner);
    if app.studios <= 1 || !pane.running || (pane.cols, pane.rows) == here {
        return String::new();
    }
    let how = if pane.cols > here.0 || pane.rows > here.1 {
        "cropped"
    } else {
        "smaller"
    };
    format!(
        "· {how}: {}x{}, sized by another studio (typing here fits it) ",
        pane.cols, pane.rows
    )
}

/// What the selected pane's title adds: focus and copy mode, the history, the search.
fn status_of_selected(app: &App) -> String {
    let mut title = String::new();
    match app.mode() {
        Mode::Focus => title.push_str("· FOCUS (Ctrl-g leaves) "),
        Mode::Copy => title.push_str("· COPY (v select · y copy · Esc) "),
        _ => {}
    }
    let Some(pane) = app.focused_pane() else {
        return title;
    };
    match app
        .scroll
        .as_ref()
        .filter(|s| s.session_id == pane.session_id)
    {
        Some(s) if s.lines.is_empty() => title.push_str("· history (reading…) "),
        Some(s) => title.push_str(&format!(
            "· history −{} · End leaves ",
            // While a read to the oldest line is under way, the offset is "as far as it goes".
            s.offset.min(s.lines.len())
        )),
        None => {}
    }
    if let Some(search) = app
        .search
        .as_ref()
        .filter(|s| s.session_id == pane.session_id)
    {
        title.push_str(&format!(
            "· /{} {} ",
            clean(&search.pattern),
            search.position()
        ));
    }
    title
}

/// One pane in its box: the live screen, or (the selected pane only) its history view, with
/// the search's hit, the selection and copy mode's cursor marked.
fn draw_slot(frame: &mut Frame, slot: &Slot, title: String, focused: bool, cx: &Ctx) {
    let app = cx.app;
    let t = cx.theme;
    let Some(pane) = app.panes.get(slot.index) else {
        return;
    };
    let b = block(title, focused, t);
    let inner = slot.inner;
    frame.render_widget(b, slot.outer);
    let selected = slot.index == app.pane;
    let scroll = app
        .scroll
        .as_ref()
        .filter(|s| selected && s.session_id == pane.session_id);
    let search = app
        .search
        .as_ref()
        .filter(|s| selected && s.session_id == pane.session_id);
    let selection = app
        .selection
        .as_ref()
        .filter(|s| s.session_id == pane.session_id);
    let hit = search.and_then(|s| s.hit());
    let copy_cursor = app
        .copy_cursor
        .filter(|_| selected && app.mode() == Mode::Copy);
    if let Some(scroll) = scroll.filter(|s| !s.lines.is_empty()) {
        frame.render_widget(history(scroll, hit, inner), inner);
        let top = scroll.top_line(usize::from(inner.height));
        if let Some(bounds) = selection
            .filter(|s| s.surface == Surface::History)
            .and_then(|s| history_bounds(app, s))
        {
            mark_selection(frame.buffer_mut(), inner, top, bounds);
        }
        if let Some(c) = copy_cursor
            && c.line >= top
            && c.line < top + u64::from(inner.height)
        {
            frame.set_cursor_position(Position::new(
                inner.x + c.col.min(inner.width.saturating_sub(1)),
                inner.y + (c.line - top) as u16,
            ));
        }
        return;
    }
    let mut cursor = None;
    let mut view = Viewport::default();
    let buf = frame.buffer_mut();
    cx.screens.with_screen(&pane.session_id, &mut |screen| {
        view = Viewport::following_cursor(screen, inner);
        cursor = render_screen(screen, inner, view, buf, t.colour);
        if let Some(sel) = selection.filter(|s| s.surface == Surface::Screen) {
            let mut line = |n: u64| screen.row_text(n);
            let bounds = selection::bounds(sel, &mut line);
            mark_selection(buf, inner, u64::from(view.top), bounds);
        }
    });
    // A hit on a full-screen program's screen is marked where it is.
    if let Some(hit) = hit.filter(|h| h.source == Source::Screen) {
        mark_screen_hit(frame.buffer_mut(), inner, view, hit);
    }
    if let Some(c) = copy_cursor {
        let row = c
            .line
            .saturating_sub(u64::from(view.top))
            .min(u64::from(u16::MAX)) as u16;
        let col = c.col.saturating_sub(view.left);
        if row < inner.height && col < inner.width {
            frame.set_cursor_position(Position::new(inner.x + col, inner.y + row));
        }
    } else if selected
        && app.mode() == Mode::Focus
        && let Some(at) = cursor
    {
        frame.set_cursor_position(at);
    }
}

/// Marks a search's hit on the screen in view, in reverse video.
fn mark_screen_hit(buf: &mut Buffer, inner: Rect, view: Viewport, hit: &Hit) {
    // Above the rows in view: not shown.
    let Some(line) = hit.line.saturating_sub(1).checked_sub(u64::from(view.top)) else {
        return;
    };
    let row = inner.y + line.min(u64::from(u16::MAX)) as u16;
    for col in hit.column..hit.column + hit.length.max(1) {
        let Some(col) = col.checked_sub(usize::from(view.left)) else {
            continue;
        };
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

/// Marks the selected cells of the rows in view (`top` is the content line of the first
/// row), in reverse video, which reads in every theme and without colours.
fn mark_selection(buf: &mut Buffer, inner: Rect, top: u64, bounds: Bounds) {
    for row in 0..inner.height {
        let Some((first, last)) = selection::cells_in_line(bounds, top + u64::from(row)) else {
            continue;
        };
        let last = last.min(inner.width.saturating_sub(1));
        for col in first..=last {
            if let Some(cell) = buf.cell_mut(Position::new(inner.x + col, inner.y + row)) {
                cell.modifier.insert(Modifier::REVERSED);
            }
        }
    }
}

/// The history lines in view (`offset` lines above the end), with the search's hit marked:
/// plain text, sanitized.
fn history(scroll: &Scrollback, hit: Option<&Hit>, area: Rect) -> Paragraph<'static> {
    let window = scroll.window(usize::from(area.height));
    let start = window.start;
    let first = scroll.first_line();
    let lines: Vec<Line> = scroll.lines[window]
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

/// Which part of a screen larger than its box is drawn: the first row and column in view.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Viewport {
    pub top: u16,
    pub left: u16,
}

impl Viewport {
    /// The part around the cursor, as tmux shows a window larger than its client: a screen
    /// sized by another studio shows its latest lines and its prompt, not its top rows. One
    /// that fits is drawn whole from its corner.
    pub fn following_cursor(screen: &Mirror, area: Rect) -> Viewport {
        let along = |size: u16, room: u16, cursor: u16| -> u16 {
            if size <= room || room == 0 {
                return 0;
            }
            cursor
                .saturating_add(1)
                .saturating_sub(room)
                .min(size - room)
        };
        Viewport {
            top: along(screen.rows, area.height, screen.cursor_row),
            left: along(screen.cols, area.width, screen.cursor_col),
        }
    }
}

/// Copies the screen's cells in `view` into `buf`; returns where the cursor is, when it is
/// shown and inside `area`. Without `colour` (`NO_COLOR`) the program's colours are dropped
/// and its attributes kept.
pub fn render_screen(
    screen: &Mirror,
    area: Rect,
    view: Viewport,
    buf: &mut Buffer,
    colour: bool,
) -> Option<Position> {
    let rows = screen.rows.saturating_sub(view.top).min(area.height);
    for row in 0..rows {
        for cell in screen.cells(view.top + row) {
            if cell.col < view.left {
                continue;
            }
            let col = cell.col - view.left;
            if col >= (screen.cols - view.left).min(area.width) {
                break;
            }
            let at = Position::new(area.x + col, area.y + row);
            let Some(target) = buf.cell_mut(at) else {
                continue;
            };
            if cell
                .text
                .chars()
                .any(crate::workflow::names::is_dangerous_char)
            {
                target.set_symbol("?");
            } else {
                target.set_symbol(cell.text);
            }
            target.set_style(style_of(cell.style, colour));
        }
    }
    let row = screen.cursor_row.checked_sub(view.top)?;
    let col = screen.cursor_col.checked_sub(view.left)?;
    (screen.cursor_visible && row < area.height && col < area.width)
        .then(|| Position::new(area.x + col, area.y + row))
}

fn style_of(cell: crate::engine::panes::Style, with_colour: bool) -> Style {
    let mut style = Style::default();
    if with_colour {
        style = style.fg(colour(cell.fg)).bg(colour(cell.bg));
    } else {
        style = style.fg(Color::Reset).bg(Color::Reset);
    }
    let mut modifiers = Modifier::empty();
    if cell.bold {
        modifiers |= Modifier::BOLD;
    }
    if cell.dim {
        modifiers |= Modifier::DIM;
    }
    if cell.italic {
        modifiers |= Modifier::ITALIC;
    }
    if cell.underline {
        modifiers |= Modifier::UNDERLINED;
    }
    if cell.inverse {
        modifiers |= Modifier::REVERSED;
    }
    style.add_modifier(modifiers)
}

fn colour(c: Colour) -> Color {
    match c {
        Colour::Default => Color::Reset,
        Colour::Indexed(i) => Color::Indexed(i),
        Colour::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}

/// The selection's reach on the history view, for drawing.
fn history_bounds(app: &App, selection: &Selection) -> Option<Bounds> {
    let scroll = app
        .scroll
        .as_ref()
        .filter(|s| s.session_id == selection.session_id)?;
    Some(selection::bounds(selection, &mut |n| scroll.line(n)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A screen whose rows say their number, with the cursor at `cursor`.
    fn mirror(rows: u16, cols: u16, cursor: (u16, u16)) -> Mirror {
        let size = |n: u16| std::num::NonZero::new(n).expect("a size above 0");
        let mut parser = vt100::Parser::new(size(rows), size(cols), 0);
        for row in 0..rows {
            parser.process(format!("\x1b[{};1Hrow-{row}", row + 1).as_bytes());
        }
        parser.process(format!("\x1b[{};{}H", cursor.0 + 1, cursor.1 + 1).as_bytes());
        Mirror::of(parser.screen())
    }

    #[test]
    fn a_screen_larger_than_its_box_shows_the_rows_and_columns_around_the_cursor() {
        let area = Rect::new(0, 0, 20, 10);
        // Fits: from the corner.
        let fits = mirror(10, 20, (9, 19));
        assert_eq!(Viewport::following_cursor(&fits, area), Viewport::default());
        // Taller, the cursor at the bottom: the last ten rows.
        let tall = mirror(30, 20, (29, 0));
        assert_eq!(
            Viewport::following_cursor(&tall, area),
            Viewport { top: 20, left: 0 }
        );
        // The cursor near the top: from the top.
        assert_eq!(
            Viewport::following_cursor(&mirror(30, 20, (3, 0)), area),
            Viewport::default()
        );
        // Wider, the cursor at column 50 of 80: the columns up to it.
        let wide = mirror(10, 80, (0, 50));
        assert_eq!(
            Viewport::following_cursor(&wide, area),
            Viewport { top: 0, left: 31 }
        );

        let mut buf = Buffer::empty(area);
        let at = render_screen(
            &tall,
            area,
            Viewport::following_cursor(&tall, area),
            &mut buf,
            true,
        );
        let first: String = (0..6).map(|x| buf[(x, 0)].symbol().to_string()).collect();
        assert_eq!(first, "row-20");
        assert_eq!(at, Some(Position::new(0, 9)));
    }
}
