//! Drawing: pure functions of the state (and of the panes' screens, lent by the engine) into
//! a ratatui frame. Nothing here changes state or calls the engine otherwise.

pub mod approval;
pub mod boxes;
pub mod editor;
pub mod form;
pub mod inbox;
pub mod list;
pub mod overlay;
pub mod pane;
pub mod plan;
pub mod runs;
pub mod status;

use super::layout;
use super::state::App;
use super::text;
use super::theme::Theme;
use pane::Screens;
use ratatui::Frame;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, BorderType, Borders, Paragraph, Wrap};

/// What every part of a frame reads.
pub struct Ctx<'a> {
    pub app: &'a App,
    pub theme: &'a Theme,
    pub screens: &'a dyn Screens,
}

impl std::fmt::Debug for Ctx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx").finish_non_exhaustive()
    }
}

/// A unified diff of `new` against `old`, drawn `width` cells wide: removed lines `- ` in the
/// error colour, added ones `+ ` in the valid colour, the rest muted. A line too long for the
/// width wraps, each of its rows marked like its first (so a change far to the right is seen,
/// colours or not). Each row comes with the index of the diff line it belongs to.
pub(crate) fn diff_rows(
    old: &str,
    new: &str,
    width: usize,
    t: &Theme,
) -> Vec<(usize, ratatui::text::Line<'static>)> {
    use crate::tui::diff::{Sign, unified};
    use unicode_width::UnicodeWidthChar;
    let room = width.saturating_sub(2).max(1);
    let mut rows = Vec::new();
    for (at, (sign, text)) in unified(old, new).into_iter().enumerate() {
        let (mark, colour) = match sign {
            Sign::Removed => ("- ", t.error),
            Sign::Added => ("+ ", t.valid),
            Sign::Same => ("  ", t.muted),
        };
        let style = Style::default().fg(colour);
        let mut row = String::new();
        let mut used = 0;
        for c in text::clean(&text).chars() {
            let w = c.width().unwrap_or(0);
            if used + w > room && !row.is_empty() {
                rows.push((
                    at,
                    ratatui::text::Line::styled(format!("{mark}{row}"), style),
                ));
                row.clear();
                used = 0;
            }
            row.push(c);
            used += w;
        }
        rows.push((
            at,
            ratatui::text::Line::styled(format!("{mark}{row}"), style),
        ));
    }
    rows
}

pub(crate) fn block<'a>(title: String, focused: bool, theme: &Theme) -> Block<'a> {
    let colour = if focused {
        theme.focus_border
    } else {
        theme.border
    };
    // Without colours a focused view's border is thick and bold instead of coloured.
    let (kind, style) = if focused && !theme.colour {
        (
            BorderType::Thick,
            Style::default().add_modifier(Modifier::BOLD),
        )
    } else {
        (BorderType::Rounded, Style::default().fg(colour))
    };
    Block::default()
        .borders(Borders::ALL)
        .border_type(kind)
        .border_style(style)
        .title(title)
}

/// Draws the whole studio, in the theme's own background when it has one.
pub fn draw(frame: &mut Frame, app: &App, theme: &Theme, screens: &dyn Screens) {
    views(frame, app, theme, screens);
    paint_defaults(frame.buffer_mut(), theme);
}

/// A theme with a background of its own (light's) paints every cell left in the terminal's
/// default colours, the panes' programs' included: its foreground is chosen for that
/// background, and would be unreadable on the terminal's own (dark text on a dark terminal).
fn paint_defaults(buf: &mut ratatui::buffer::Buffer, theme: &Theme) {
    if !theme.colour || theme.background == ratatui::style::Color::Reset {
        return;
    }
    for cell in &mut buf.content {
        if cell.bg == ratatui::style::Color::Reset {
            cell.bg = theme.background;
        }
        if cell.fg == ratatui::style::Color::Reset {
            cell.fg = theme.foreground;
        }
    }
}

fn views(frame: &mut Frame, app: &App, theme: &Theme, screens: &dyn Screens) {
    let cx = Ctx {
        app,
        theme,
        screens,
    };
    let area = frame.area();
    if layout::too_small(area) {
        frame.render_widget(
            Paragraph::new(format!(
                "the terminal is too small for the studio ({}x{}; at least {}x{}) · q quits",
                area.width,
                area.height,
                layout::MIN_COLS,
                layout::MIN_ROWS
            ))
            .wrap(Wrap { trim: true }),
            area,
        );
        return;
    }
    let areas = layout::areas(area, app.zoom);
    if app.editor.is_some() {
        // The editor takes the screen; overlays (palette, help, forms) still draw over it.
        editor::draw(frame, &cx);
        status::draw(frame, areas.status, &cx);
        overlay::draw(frame, &cx);
        return;
    }
    if !app.zoom {
        list::draw(frame, areas.list, &cx);
        plan::draw(frame, areas.plan, &cx);
    }
    pane::draw(frame, areas.panes, &cx);
    status::draw(frame, areas.status, &cx);
    overlay::draw(frame, &cx);
}

#[cfg(test)]
mod diff_rows_tests {
    use super::*;

    #[test]
    fn a_long_changed_line_wraps_each_row_marked_as_its_line() {
        let long = "b".repeat(25);
        let rows = diff_rows(
            "a\nsame\n",
            &format!("{long}\nsame\n"),
            12,
            &Theme::default(),
        );
        let text: Vec<(usize, String)> = rows
            .iter()
            .map(|(at, line)| (*at, line.to_string()))
            .collect();
        assert_eq!(
            text,
            vec![
                (0, "- a".to_string()),
                (1, format!("+ {}", &long[..10])),
                (1, format!("+ {}", &long[10..20])),
                (1, format!("+ {}", &long[20..])),
                (2, "  same".to_string()),
            ]
        );
    }
}
