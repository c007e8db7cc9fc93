//! Drawing: pure functions of the state (and of the panes' screens, lent by the engine) into
//! a ratatui frame. Nothing here changes state or calls the engine otherwise.

pub mod approval;
pub mod editor;
pub mod list;
pub mod overlay;
pub mod pane;
pub mod plan;
pub mod runs;
pub mod status;
pub mod text;

use super::layout;
use super::state::App;
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

/// A unified diff of `new` against `old`, drawn: removed lines `- ` in the error colour,
/// added ones `+ ` in the valid colour, the rest muted.
pub(crate) fn diff_lines(old: &str, new: &str, t: &Theme) -> Vec<ratatui::text::Line<'static>> {
    use crate::tui::diff::{Sign, unified};
    unified(old, new)
        .into_iter()
        .map(|(sign, text)| {
            let (mark, colour) = match sign {
                Sign::Removed => ("- ", t.error),
                Sign::Added => ("+ ", t.valid),
                Sign::Same => ("  ", t.muted),
            };
            ratatui::text::Line::styled(
                format!("{mark}{}", text::clean(&text)),
                Style::default().fg(colour),
            )
        })
        .collect()
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

/// Draws the whole studio.
pub fn draw(frame: &mut Frame, app: &App, theme: &Theme, screens: &dyn Screens) {
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
