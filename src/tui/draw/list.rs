//! The workflow list: each workflow with its state, filtered as the person types.

use super::inbox::colour;
use super::{Ctx, block};
use crate::engine::attention::{AttentionState, ItemKind};
use crate::engine::authoring::WorkflowSummary;
use crate::engine::{FinalState, WorkflowStatus};
use crate::tui::mode::{Mode, View};
use crate::tui::state::{App, RunView};
use crate::tui::text::{ago, cells, clean, shorten};
use crate::tui::theme::Theme;
use chrono::{DateTime, Utc};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{List, ListItem, ListState};

pub fn draw(frame: &mut Frame, area: Rect, cx: &Ctx) {
    let app = cx.app;
    let t = cx.theme;
    let visible = app.visible();
    let mut title = format!(" Workflows ({}) ", app.workflows.len());
    if app.mode() == Mode::Filter || !app.filter.is_empty() {
        title.push_str(&format!("/{} ", clean(&app.filter)));
    }
    let now = Utc::now();
    let labels: Vec<Label> = visible
        .iter()
        .map(|w| {
            let label = match app.active_run_of(&w.name) {
                Some(run) => run_label(run, t),
                None => status_label(w, now, t),
            };
            marked(label, app, &w.name, t)
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

/// A workflow's state as the list says it, longest first: the list shows the longest form
/// that fits beside the names, down to a glyph, so that a narrow list (80 columns) keeps
/// whole names and still tells a broken workflow from a running one at a glance.
struct Label {
    forms: Vec<String>,
    colour: Color,
    /// Something of it asks for the person: it stands out.
    bold: bool,
}

impl Label {
    fn new(colour: Color, forms: &[String]) -> Label {
        Label {
            forms: forms.to_vec(),
            colour,
            bold: false,
        }
    }

    /// The shortest form's width: what a name must leave room for.
    fn least(&self) -> usize {
        self.forms.last().map_or(0, |f| cells(f))
    }

    /// The longest form that fits in `room` cells (the shortest cut to it, if none does).
    fn within(&self, room: usize) -> String {
        self.forms
            .iter()
            .find(|f| cells(f) <= room)
            .cloned()
            .unwrap_or_else(|| shorten(self.forms.last().map_or("", String::as_str), room))
    }
}

/// The label as the attention list marks it: a run of the workflow that needs the person or
/// went quiet says so; one that failed or finished unseen makes the label stand out.
fn marked(label: Label, app: &App, workflow: &str, t: &Theme) -> Label {
    let most = app
        .inbox
        .items
        .iter()
        .filter(|i| i.kind == ItemKind::Run && i.workflow.as_deref() == Some(workflow))
        .map(|i| i.state)
        .min();
    let waits_for_approval = app
        .active_run_of(workflow)
        .is_some_and(|r| r.phase == crate::engine::Phase::AwaitingApproval);
    let mut label = match most {
        Some(AttentionState::NeedsYou) if !waits_for_approval => Label::new(
            colour(AttentionState::NeedsYou, t),
            &[
                format!("{} needs you", AttentionState::NeedsYou.mark()),
                AttentionState::NeedsYou.mark().into(),
            ],
        ),
        Some(AttentionState::Quiet) => Label::new(
            colour(AttentionState::Quiet, t),
            &[
                format!("{} quiet", AttentionState::Quiet.mark()),
                AttentionState::Quiet.mark().into(),
            ],
        ),
        _ => label,
    };
    label.bold = most.is_some_and(|s| s != AttentionState::Running);
    label
}

/// The label of a workflow with a run going: whose run, or that it waits for approval.
fn run_label(run: &RunView, t: &Theme) -> Label {
    match &run.actor {
        _ if run.phase == crate::engine::Phase::AwaitingApproval => {
            Label::new(t.warning, &["? approve".into(), "?".into()])
        }
        // Whose run it is comes first: a narrow list cuts the end of a label.
        Some(agent @ crate::engine::Actor::Agent { .. }) => Label::new(
            t.running,
            &[
                format!("● {}", clean(&agent.label())),
                "● agent".into(),
                "●".into(),
            ],
        ),
        _ => Label::new(t.running, &["● running".into(), "●".into()]),
    }
}

/// The label of a workflow at rest: its problems, or how its last run ended and when.
fn status_label(w: &WorkflowSummary, now: DateTime<Utc>, t: &Theme) -> Label {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    match w.status {
        WorkflowStatus::Invalid => Label::new(
            t.error,
            &[
                format!("✗ {} error{}", w.errors, plural(w.errors)),
                format!("✗ {}", w.errors),
                "✗".into(),
            ],
        ),
        WorkflowStatus::Warnings => Label::new(
            t.warning,
            &[
                format!("! {} warning{}", w.warnings, plural(w.warnings)),
                format!("! {}", w.warnings),
                "!".into(),
            ],
        ),
        WorkflowStatus::Valid => {
            // When the last run ended, as an age: `3m`, `2h`, `5d`.
            let when = w.last_run_at.as_deref().and_then(|at| ago(at, now));
            let dated = |text: String| match &when {
                Some(age) => vec![format!("{text} · {age}"), text],
                None => vec![text],
            };
            match &w.last_result {
                // Only a run that completed earns the tick: a last run that
                // failed, timed out or was cancelled is marked as such.
                Some(last) if *last == FinalState::Completed => {
                    let mut forms = dated(format!("✓ {}", clean(last.as_str())));
                    forms.push("✓".into());
                    Label::new(t.valid, &forms)
                }
                Some(last) => {
                    let mut forms = dated(format!("✗ {}", clean(last.as_str())));
                    forms.push("✗".into());
                    Label::new(t.error, &forms)
                }
                // Nothing to warn of and no run yet: a narrow list says nothing.
                None => Label::new(t.valid, &["valid".into(), String::new()]),
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
    labels: Vec<Label>,
) -> Vec<ListItem<'a>> {
    let (app, t) = (cx.app, cx.theme);
    // Inside the border and the selection mark: the names first, whole if the labels' least
    // forms leave room, then a space and each label in the longest form that fits.
    let room = usize::from(area.width).saturating_sub(2 + 2);
    let least = labels.iter().map(Label::least).max().unwrap_or(0);
    let name_width = visible
        .iter()
        .map(|w| cells(&clean(&w.name)))
        .max()
        .unwrap_or(0)
        .min(room.saturating_sub(1 + least))
        .max(4);
    let label_room = room.saturating_sub(name_width + 1);
    visible
        .iter()
        .zip(labels)
        .enumerate()
        .map(|(at, (w, label))| {
            let mut lines = vec![Line::from(vec![
                Span::styled(
                    format!("{} ", fit(&clean(&w.name), name_width)),
                    Style::default().fg(t.foreground),
                ),
                Span::styled(label.within(label_room), {
                    let style = Style::default().fg(label.colour);
                    if label.bold {
                        style.add_modifier(Modifier::BOLD)
                    } else {
                        style
                    }
                }),
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

/// `text` cut (with `…`) or padded to `width` cells.
fn fit(text: &str, width: usize) -> String {
    let cut = shorten(text, width);
    let pad = width.saturating_sub(cells(&cut));
    format!("{cut}{}", " ".repeat(pad))
}
