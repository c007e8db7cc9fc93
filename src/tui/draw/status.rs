//! The status line: the keys of the current mode (from the keymap) and the last message.

use super::Ctx;
use crate::tui::command::Command;
use crate::tui::keymap::{self};
use crate::tui::mode::Mode;
use crate::tui::overlay::Overlay;
use crate::tui::text::{cells, clean, shorten_words};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn draw(frame: &mut Frame, area: Rect, cx: &Ctx) {
    let t = cx.theme;
    // A question's answers: only those it takes.
    let asked = cx.app.editor.as_ref().and_then(|e| e.ask);
    let mut hints: Vec<String> = keymap::hints_with_commands(cx.app.mode(), cx.app.view)
        .into_iter()
        .filter(|(_, _, command)| match (command, asked) {
            (Command::Choose(c), Some(ask)) => crate::tui::editor::choices(ask).contains(c),
            _ => true,
        })
        .map(|(key, what, command)| match (command, asked) {
            (Command::Choose(c), Some(ask)) => {
                let said = crate::tui::editor::answer_label(ask, c).unwrap_or(what);
                format!("{key} {said}")
            }
            _ => format!("{key} {what}"),
        })
        .collect();
    // On a narrow terminal, or beside a message, the middle hints give way first: the first
    // ones (run, shell, focus) and the last ones (palette, help, quit) are how a person finds
    // everything else. A message can take all but the last two.
    let message = cx.app.message.as_deref().map(clean);
    // What needs the person comes first, whatever else gives way; beside a message that would
    // not fit with it, in its short form (`◉1 ✗1`), so that the message is read whole.
    let said = message.as_ref().map_or(0, |m| m.chars().count() + 5);
    let notice = attention(cx, false).map(|full| {
        if said > 0 && cells(&full.content) + said + LAST_HINTS > usize::from(area.width) {
            attention(cx, true).unwrap_or(full)
        } else {
            full
        }
    });
    let room = usize::from(area.width)
        .saturating_sub(message.as_ref().map_or(0, |m| m.chars().count() + 5))
        .saturating_sub(notice.as_ref().map_or(0, |s| cells(&s.content)));
    let fits = |hints: &[String]| hints.join(" · ").chars().count() < room;
    while !fits(&hints) && hints.len() > 2 {
        let at = if hints.len() > 6 { hints.len() - 4 } else { 0 };
        hints.remove(at);
    }
    let mut spans: Vec<Span> = notice.into_iter().collect();
    if cx.app.mode() == Mode::EditFind {
        let typed = cx.app.editor.as_ref().map_or("", |e| e.find.as_str());
        spans.push(Span::styled(
            format!(" find {}▏ ", clean(typed)),
            Style::default().fg(t.accent).add_modifier(Modifier::BOLD),
        ));
    }
    if let Some(Overlay::Search(typed)) = &cx.app.overlay {
        // The search box: what is typed, then its keys.
        spans.push(Span::styled(
            format!(" search /{}▏ ", clean(typed)),
            Style::default().fg(t.accent).add_modifier(Modifier::BOLD),
        ));
    }
    spans.push(Span::styled(
        format!(" {}", hints.join(" · ")),
        Style::default().fg(t.muted),
    ));
    if let Some(message) = message {
        // What the hints leave: a message cut ends between words, never mid-word.
        let used: usize = spans.iter().map(|s| cells(&s.content)).sum::<usize>() + 4;
        let message = shorten_words(&message, usize::from(area.width).saturating_sub(used));
        spans.push(Span::styled(
            format!("  │ {message}"),
            Style::default().fg(t.warning),
        ));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The room the last two hints take (`? help · q quit`), which a message leaves.
const LAST_HINTS: usize = 16;

/// The count of what asks for the person (`◉ 1 needs you · 1 failed (!)`, or `short`: `◉1 ✗1`),
/// marked and coloured by the most pressing; `None` when nothing does.
fn attention<'a>(cx: &Ctx, short: bool) -> Option<Span<'a>> {
    use crate::engine::attention::AttentionState as S;
    let inbox = &cx.app.inbox;
    let summary = inbox.counts.summary();
    let most = inbox
        .items
        .iter()
        .map(|i| i.state)
        .min()
        .filter(|_| !summary.is_empty())?;
    let c = &inbox.counts;
    let text = if short {
        let each = [
            (S::NeedsYou, c.needs_you),
            (S::Failed, c.failed),
            (S::Quiet, c.quiet),
            (S::Done, c.done),
        ];
        let parts: Vec<String> = each
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(s, n)| format!("{}{n}", s.mark()))
            .collect();
        format!(" {} ", parts.join(" "))
    } else {
        format!(" {} {summary} (!) ", most.mark())
    };
    Some(Span::styled(
        text,
        Style::default()
            .fg(super::inbox::colour(most, cx.theme))
            .add_modifier(Modifier::BOLD),
    ))
}
