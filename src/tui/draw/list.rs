//! The workflow list: each workflow with its state, filtered as the person types.

use super::text::{ago, clean};
use super::{Ctx, block};
use crate::engine::authoring::WorkflowSummary;
use crate::engine::{FinalState, WorkflowStatus};
use crate::tui::keymap::Mode;
use crate::tui::state::{App, RunView, View};
use crate::tui::theme::Theme;
use chrono::{DateTime, Utc};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{List, ListItem, ListState};

pub fn draw(frame: &mut Frame, area: Rect, cx: &Ctx) {
    let app = cx.app;
    let t = cx.theme;
    let visible = app.visible();
    let mut title = format!(" Workflows ({}) ", app.workflows.len());
    if app.mode == Mode::Filter || !app.filter.is_empty() {
        title.push_str(&format!("/{} ", clean(&app.filter)));
    }
    let now = Utc::now();
    let labels: Vec<(String, Color)> = visible
        .iter()
        .map(|w| match app.active_run_of(&w.name) {
            Some(run) => run_label(run, t),
            None => status_label(w, now, t),
        })
        .collect();
    let items = items(cx, area, &visible, labels);
    let empty = items.is_empty();
    let list = List::new(items)
        .block(block(title, app.view == View::List, t))
        .highlight_style(t.selection())
        .highlight_symbol("▶ ");
    let mut state = ListState::default().with_selected((!empty).then_some(app.selected));
    frame.render_stateful_widget(list, area, &mut state);
    if empty {
        frame.render_widget(
            ratatui::widgets::Paragraph::new(nothing_listed(app, t))
                .wrap(ratatui::widgets::Wrap { trim: true }),
            area.inner(ratatui::layout::Margin::new(2, 1)),
        );
    }
}

/// The label of a workflow with a run going: whose run, or that it waits for approval.
fn run_label(run: &RunView, t: &Theme) -> (String, Color) {
    match &run.actor {
        _ if run.phase == crate::engine::Phase::AwaitingApproval => {
            ("? approve".to_string(), t.warning)
        }
        // Whose run it is comes first: a narrow list cuts the end of a label.
        Some(agent @ crate::engine::Actor::Agent { .. }) => {
            (format!("● {}", clean(&agent.label())), t.running)
        }
        _ => ("● running".to_string(), t.running),
    }
}

/// The label of a workflow at rest: its problems, or how its last run ended and when.
fn status_label(w: &WorkflowSummary, now: DateTime<Utc>, t: &Theme) -> (String, Color) {
    match w.status {
        WorkflowStatus::Invalid => (
            format!(
                "✗ {} error{}",
                w.errors,
                if w.errors == 1 { "" } else { "s" }
            ),
            t.error,
        ),
        WorkflowStatus::Warnings => (
            format!(
                "! {} warning{}",
                w.warnings,
                if w.warnings == 1 { "" } else { "s" }
            ),
            t.warning,
        ),
        WorkflowStatus::Valid => {
            // When the last run ended, as an age: `3m`, `2h`, `5d`.
            let when = w
                .last_run_at
                .as_deref()
                .and_then(|at| ago(at, now))
                .map(|a| format!(" · {a}"))
                .unwrap_or_default();
            match &w.last_result {
                // Only a run that completed earns the tick: a last run that
                // failed, timed out or was cancelled is marked as such.
                Some(last) if *last == FinalState::Completed => {
                    (format!("✓ {}{when}", clean(last.as_str())), t.valid)
                }
                Some(last) => (format!("✗ {}{when}", clean(last.as_str())), t.error),
                None => ("valid".to_string(), t.valid),
            }
        }
    }
}

/// The list's rows: each name with its label, and under the selected broken one, its first
/// error.
fn items<'a>(
    cx: &Ctx,
    area: Rect,
    visible: &[&WorkflowSummary],
    labels: Vec<(String, Color)>,
) -> Vec<ListItem<'a>> {
    let (app, t) = (cx.app, cx.theme);
    // Inside the border and the selection mark: the names first, then a space and the state
    // labels in what is left. A narrow list keeps at least a short label (`✓ completed`) and
    // cuts the rest of it (its age) before it cuts names.
    let room = usize::from(area.width).saturating_sub(2 + 2);
    let label_width = labels
        .iter()
        .map(|l| l.0.chars().count())
        .max()
        .unwrap_or(0);
    let name_width = visible
        .iter()
        .map(|w| w.name.chars().count())
        .max()
        .unwrap_or(0)
        .min(room.saturating_sub(1 + label_width.min(11)))
        .max(4);
    let label_room = room.saturating_sub(name_width + 1);
    visible
        .iter()
        .zip(labels)
        .enumerate()
        .map(|(at, (w, (label, colour)))| {
            let mut lines = vec![Line::from(vec![
                Span::styled(
                    format!("{} ", fit(&clean(&w.name), name_width)),
                    Style::default().fg(t.foreground),
                ),
                Span::styled(
                    fit(&label, label_room).trim_end().to_string(),
                    Style::default().fg(colour),
                ),
            ])];
            // The selected broken file says what is wrong first, without `e`: a file that
            // broke while it was open should not look merely "invalid".
            if at == app.selected
                && let Some(error) = &w.first_error
            {
                let width = usize::from(area.width.saturating_sub(4));
                lines.push(Line::styled(
                    fit(&clean(error), width),
                    Style::default().fg(t.error),
                ));
            }
            ListItem::new(lines)
        })
        .collect()
}

/// What an empty list says: why the folder cannot be read, that it holds no workflows, or
/// that none matches the filter.
fn nothing_listed<'a>(app: &App, t: &Theme) -> Vec<Line<'a>> {
    let missing = app
        .folder_problem
        .as_ref()
        .is_some_and(|p| p.kind == crate::engine::FolderProblemKind::Missing);
    if missing {
        // Not a fault: a studio started where no workflows are yet (a binary just
        // installed). `A` makes the folder with the first workflow (engine/editing.rs).
        vec![
            Line::styled(
                format!("{} does not exist yet", clean(&app.folder)),
                Style::default().fg(t.foreground),
            ),
            Line::styled(
                "A creates it and your first workflow from a template",
                Style::default().fg(t.foreground),
            ),
            Line::styled(
                "or start flowdeck with --workflows DIR · t opens a shell",
                Style::default().fg(t.muted),
            ),
        ]
    } else if let Some(problem) = &app.folder_problem {
        // What is wrong, the OS's words, what to do, and that nothing more is needed
        // once it is done: the engine follows the folder.
        vec![
            Line::styled(clean(&problem.message()), Style::default().fg(t.error)),
            Line::styled(clean(&problem.remedy()), Style::default().fg(t.foreground)),
            Line::styled(
                "or start flowdeck with --workflows DIR",
                Style::default().fg(t.foreground),
            ),
            Line::styled(
                "the list follows when it is fixed · t opens a shell meanwhile",
                Style::default().fg(t.muted),
            ),
        ]
    } else if app.workflows.is_empty() {
        vec![
            Line::styled(
                format!("no workflows in {} yet", clean(&app.folder)),
                Style::default().fg(t.muted),
            ),
            Line::styled(
                "A creates your first workflow from a template",
                Style::default().fg(t.foreground),
            ),
            Line::styled(
                "or put a NAME.yaml manifest there: it shows up here at once",
                Style::default().fg(t.muted),
            ),
        ]
    } else {
        vec![Line::styled(
            "nothing matches the filter",
            Style::default().fg(t.muted),
        )]
    }
}

/// `text` cut or padded to `width` characters, with `…` where it was cut.
fn fit(text: &str, width: usize) -> String {
    let count = text.chars().count();
    if count <= width {
        format!("{text:<width$}")
    } else {
        let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// The workflow drawn on row `row` (0 = the first row inside the box) of a list `height`
/// rows high, as `draw` lays it out: one row a workflow, two for a selected broken one (its
/// first error), scrolled only as far as the selected one needs (ratatui's `List`).
pub fn workflow_at_row(app: &App, height: usize, row: usize) -> Option<usize> {
    let heights: Vec<usize> = app
        .visible()
        .iter()
        .enumerate()
        .map(|(at, w)| 1 + usize::from(at == app.selected && w.first_error.is_some()))
        .collect();
    let selected = app.selected.min(heights.len().checked_sub(1)?);
    let mut first = 0;
    while first < selected && heights[first..=selected].iter().sum::<usize>() > height {
        first += 1;
    }
    let mut top = 0;
    for (at, h) in heights.iter().enumerate().skip(first) {
        if row < top + h {
            return Some(at);
        }
        top += h;
    }
    None
}
