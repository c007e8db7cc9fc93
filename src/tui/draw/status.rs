//! The status line: the keys of the current mode (from the keymap) and the last message.

use super::Ctx;
use super::text::clean;
use crate::tui::keymap;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn draw(frame: &mut Frame, area: Rect, cx: &Ctx) {
    let t = cx.theme;
    let hints: Vec<String> = keymap::hints(cx.app.mode)
        .into_iter()
        .map(|(key, what)| format!("{key} {what}"))
        .collect();
    let mut spans = vec![Span::styled(
        format!(" {}", hints.join(" · ")),
        Style::default().fg(t.muted),
    )];
    if let Some(message) = &cx.app.message {
        spans.push(Span::styled(
            format!("  │ {}", clean(message)),
            Style::default().fg(t.warning),
        ));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
