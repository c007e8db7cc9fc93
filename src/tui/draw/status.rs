//! The status line: the keys of the current mode (from the keymap) and the last message.

use super::Ctx;
use super::text::clean;
use crate::tui::keymap::{self, Mode};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn draw(frame: &mut Frame, area: Rect, cx: &Ctx) {
    let t = cx.theme;
    let mut hints: Vec<String> = keymap::hints(cx.app.mode, cx.app.view)
        .into_iter()
        .map(|(key, what)| format!("{key} {what}"))
        .collect();
    // On a narrow terminal the middle hints give way: the first ones (run, shell, focus) and
    // the last ones (palette, help, quit) are how a person finds everything else.
    let fits = |hints: &[String]| hints.join(" · ").chars().count() < usize::from(area.width);
    while !fits(&hints) && hints.len() > 6 {
        hints.remove(hints.len() - 4);
    }
    let mut spans = Vec::new();
    if cx.app.mode == Mode::Search {
        // The search box: what is typed, then its keys.
        spans.push(Span::styled(
            format!(" search /{}▏ ", clean(&cx.app.search_input)),
            Style::default().fg(t.accent).add_modifier(Modifier::BOLD),
        ));
    }
    spans.push(Span::styled(
        format!(" {}", hints.join(" · ")),
        Style::default().fg(t.muted),
    ));
    if let Some(message) = &cx.app.message {
        spans.push(Span::styled(
            format!("  │ {}", clean(message)),
            Style::default().fg(t.warning),
        ));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
