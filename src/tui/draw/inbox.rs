//! The inbox (`!`): every run and terminal with what it asks of the person, most pressing
//! first; and the colours the status line, the list and the pane tabs mark the same states
//! in.

use super::Ctx;
use super::boxes::{boxed, centered};
use crate::engine::attention::{AttentionItem, AttentionState, ItemKind};
use crate::tui::text::{ago, cells, clean, shorten};
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

pub fn colour(state: AttentionState, t: &Theme) -> Color {
    match state {
        AttentionState::NeedsYou => t.warning,
        AttentionState::Failed => t.error,
        AttentionState::Done => t.valid,
        AttentionState::Quiet => t.muted,
        AttentionState::Running => t.running,
    }
}

pub fn draw(frame: &mut Frame, cx: &Ctx, selected: usize) {
    let t = cx.theme;
    let items = &cx.app.inbox.items;
    let area = centered(
        frame.area(),
        100,
        (items.len() as u16 + 2).min(frame.area().height.saturating_sub(2)),
    );
    let width = usize::from(area.width.saturating_sub(2));
    let shown = usize::from(area.height.saturating_sub(2));
    // The chosen line stays in view.
    let top = selected.saturating_sub(shown.saturating_sub(1));
    let now = chrono::Utc::now();
    let lines: Vec<Line> = items
        .iter()
        .enumerate()
        .skip(top)
        .take(shown)
        .map(|(i, item)| row(item, i == selected, width, now, t))
        .collect();
    let counts = cx.app.inbox.counts.summary();
    let title = if counts.is_empty() {
        " Inbox · Enter goes to it · Esc ".to_string()
    } else {
        format!(" Inbox · {counts} · Enter goes to it · x clears · Esc ")
    };
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(boxed(title, cx)), area);
}

/// One item: its mark and state, what it is, why, and since when.
fn row<'a>(
    item: &AttentionItem,
    chosen: bool,
    width: usize,
    now: chrono::DateTime<chrono::Utc>,
    t: &Theme,
) -> Line<'a> {
    let base = if chosen {
        t.selection()
    } else {
        Style::default().fg(t.foreground)
    };
    let state = format!(" {} {:<9} ", item.state.mark(), item.state.words());
    let kind = match item.kind {
        ItemKind::Run => "run",
        ItemKind::Terminal => "terminal",
    };
    let what = format!("{:<18} ", shorten(&clean(&item.title()), 18));
    let since = ago(&item.since, now).map_or(String::new(), |a| format!(" {a}"));
    let used = cells(&state) + cells(&what) + kind.len() + 1 + cells(&since);
    let reason = shorten(&clean(&item.reason), width.saturating_sub(used + 1));
    let pad = width.saturating_sub(used + cells(&reason));
    let mut state_style = base.fg(colour(item.state, t));
    if matches!(
        item.state,
        AttentionState::NeedsYou | AttentionState::Failed
    ) {
        state_style = state_style.add_modifier(Modifier::BOLD);
    }
    Line::from(vec![
        Span::styled(state, state_style),
        Span::styled(what, base.add_modifier(Modifier::BOLD)),
        Span::styled(format!("{kind} "), base.fg(t.muted)),
        Span::styled(format!("{reason}{}", " ".repeat(pad)), base),
        Span::styled(since, base.fg(t.muted)),
    ])
}
