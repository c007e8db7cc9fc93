//! The approval request (approval mode): who asks to run what, and the manifest's diff
//! against the content the person approved last, so that they judge the change, not the
//! whole file again.

use super::Ctx;
use super::boxes::{boxed, centered};
use crate::engine::approval::ApprovalRequest;
use crate::tui::state::approval_texts;
use crate::tui::text::clean;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

/// Lines above the diff: who asks, and what the diff is against.
const HEADER: usize = 3;

pub fn draw(frame: &mut Frame, cx: &Ctx) {
    let t = cx.theme;
    let app = cx.app;
    let Some(view) = app.approvals.first() else {
        return;
    };
    let request = &view.request;
    let area = centered(
        frame.area(),
        100,
        frame.area().height.saturating_sub(2).max(3),
    );
    let (before, now) = approval_texts(request);
    let rows = super::diff_rows(before, now, usize::from(area.width.saturating_sub(2)), t);
    let total = rows.last().map_or(0, |(at, _)| at + 1);
    let mut lines = header(request, app.approvals.len(), t);
    let room = usize::from(area.height.saturating_sub(2)).saturating_sub(HEADER);
    let top = view.top.min(total.saturating_sub(1));
    let shown: Vec<_> = rows
        .into_iter()
        .filter(|(at, _)| *at >= top)
        .take(room)
        .collect();
    let last = shown.last().map_or(top, |(at, _)| *at);
    lines.extend(shown.into_iter().map(|(_, row)| row));
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(boxed(question(app).to_string(), cx).title_bottom(format!(
            " j/k PgUp/PgDn scroll · lines {}–{} of {total} ",
            top + 1,
            last + 1
        ))),
        area,
    );
}

/// The question over the request: asked plainly, or, while the request has just taken the
/// place of another, marked new with its answers held (tui/settling.rs).
fn question(app: &crate::tui::state::App) -> &'static str {
    match &app.approval_shown {
        Some(shown) if shown.settling.is_some() => {
            " ⚠ New request · read it first: y and n wait a moment · Esc later "
        }
        _ => " Approve this run? · y approve · n deny · Esc later ",
    }
}

/// The `HEADER` lines: who asks to run what (and how many more wait), then what the diff
/// is against.
fn header(request: &ApprovalRequest, waiting: usize, t: &Theme) -> Vec<Line<'static>> {
    let waiting = match waiting {
        1 => String::new(),
        n => format!(" · 1 of {n} waiting"),
    };
    vec![
        Line::from(vec![
            Span::styled(
                clean(&request.agent.label()),
                Style::default().fg(t.accent).add_modifier(Modifier::BOLD),
            ),
            Span::styled(" asks to run ", Style::default().fg(t.foreground)),
            Span::styled(
                clean(&request.workflow),
                Style::default()
                    .fg(t.foreground)
                    .add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                format!(" (run {}){waiting}", clean(&request.run_id)),
                Style::default().fg(t.muted),
            ),
        ]),
        Line::styled(against(request), Style::default().fg(t.warning)),
        Line::raw(""),
    ]
}

/// What the diff is against: the content approved last, or nothing the person has seen.
fn against(request: &ApprovalRequest) -> String {
    match &request.last_approved {
        _ if request.inline => {
            "a manifest the agent wrote itself (not a file of the folder): all of it is new".into()
        }
        None => "never approved before: all of it is new to you".to_string(),
        Some(last) => format!(
            "changed since {} approved it on {}: - then, + now",
            clean(&last.by),
            clean(
                &last
                    .approved_at
                    .replace('T', " ")
                    .chars()
                    .take(16)
                    .collect::<String>()
            )
        ),
    }
}
