//! The run view: a workflow's past runs (newest first) over the selected run's journal,
//! one line an event. Every text from the journal goes through [`clean`].

use super::Ctx;
use super::overlay::{boxed, centered};
use super::text::{clean, duration};
use crate::engine::RunEvent;
use crate::engine::journal::{JournalEvent, RunSummary};
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

/// `HH:MM:SS` of an RFC 3339 time, or the text as it is.
fn clock(at: &str) -> String {
    clean(at.get(11..19).unwrap_or(at))
}

/// A past run, one line: id, started, final state, duration, feedback.
pub fn run_line(run: &RunSummary) -> String {
    let state = match (&run.final_state, run.success) {
        (Some(s), Some(true)) => format!("{} ✓", clean(s.as_str())),
        (Some(s), _) => format!("{} ✗", clean(s.as_str())),
        (None, _) => "in progress".to_string(),
    };
    let took = run.duration_ms.map_or_else(|| "–".to_string(), duration);
    let started = clean(&run.started_at.replace('T', " "));
    let started = started.get(..19).unwrap_or(&started);
    format!(
        "{}  {started}  {state}  {took}  feedback {}",
        clean(&run.run_id),
        run.feedback.len()
    )
}

/// What one journal line says, and how it is coloured.
#[expect(clippy::too_many_lines, reason = "issue 23 splits it by its jobs")]
pub fn event_text(event: &RunEvent, theme: &Theme) -> (String, Color) {
    let c = |s: &str| clean(s);
    match event {
        RunEvent::RunStarted { inputs, actor, .. } => {
            let by = actor
                .as_ref()
                .map(|a| format!(" by {}", c(&a.to_string())))
                .unwrap_or_default();
            let inputs: Vec<String> = inputs
                .iter()
                .map(|(k, v)| format!("{}={}", c(k), c(v)))
                .collect();
            let inputs = if inputs.is_empty() {
                String::new()
            } else {
                format!(" · {}", inputs.join(" "))
            };
            (format!("run started{by}{inputs}"), theme.accent)
        }
        RunEvent::ContractChecked { phase, valid, .. } => {
            let (word, colour) = if *valid {
                ("valid", theme.valid)
            } else {
                ("invalid", theme.error)
            };
            (format!("contract {}: {word}", phase.as_str()), colour)
        }
        RunEvent::StepStarted {
            step, state, tool, ..
        } => (
            format!("step {step} started: {} ({})", c(state), c(tool)),
            theme.foreground,
        ),
        RunEvent::StepFinished {
            step,
            state,
            tool,
            status,
            elapsed_ms,
            error,
            ..
        } => {
            let error = error
                .as_ref()
                .map(|e| format!(" · {}", c(e)))
                .unwrap_or_default();
            let colour = if error.is_empty() {
                theme.valid
            } else {
                theme.error
            };
            (
                format!(
                    "step {step} finished: {} ({}) {} in {}{error}",
                    c(state),
                    c(tool),
                    status.as_str(),
                    duration(*elapsed_ms)
                ),
                colour,
            )
        }
        RunEvent::Transition {
            from,
            to,
            condition,
        } => {
            let to = to.as_deref().map_or_else(|| "end".to_string(), c);
            let when = condition
                .as_deref()
                .map(|w| format!(" [{}]", c(w)))
                .unwrap_or_default();
            (format!("{} → {to}{when}", c(from)), theme.muted)
        }
        RunEvent::WaitingForInput { state, prompt } => (
            format!("prompt waiting in {}: {}", c(state), c(prompt)),
            theme.warning,
        ),
        RunEvent::PromptWithdrawn { state, reason } => (
            format!("prompt withdrawn in {}: {}", c(state), c(reason)),
            theme.warning,
        ),
        RunEvent::Answered {
            state,
            valid,
            issues,
            ..
        } => {
            let how = if *valid {
                String::new()
            } else {
                format!(" (invalid: {})", c(&issues.join("; ")))
            };
            (
                format!("prompt answered in {}{how}", c(state)),
                theme.foreground,
            )
        }
        RunEvent::RunFinished {
            final_state,
            success,
            error,
            duration_ms,
            return_values,
            ..
        } => {
            let mut error = error
                .as_ref()
                .map(|e| format!(" · {}", c(e)))
                .unwrap_or_default();
            // The values it returns (secrets are masked in journals).
            if !return_values.is_empty() {
                let values: Vec<String> = return_values
                    .iter()
                    .map(|(k, v)| format!("{}={}", c(k), c(v)))
                    .collect();
                error.push_str(&format!(" · {}", values.join(" ")));
            }
            let (word, colour) = if *success {
                ("success", theme.valid)
            } else {
                ("failed", theme.error)
            };
            (
                format!(
                    "run finished: {} ({word}) in {}{error}",
                    c(final_state.as_str()),
                    duration(*duration_ms)
                ),
                colour,
            )
        }
        RunEvent::Feedback { score, text, .. } => {
            let score = score.map(|s| format!(" {s}")).unwrap_or_default();
            let text = text
                .as_ref()
                .map(|t| format!(" {}", c(t)))
                .unwrap_or_default();
            (format!("feedback{score}{text}"), theme.muted)
        }
    }
}

/// A journal line as rows of at most `width` cells: a long one (an error, a prompt, return
/// values) wraps under its text rather than being cut.
fn journal_rows<'a>(event: &JournalEvent, theme: &Theme, width: usize) -> Vec<Line<'a>> {
    let (text, colour) = event_text(&event.body, theme);
    let prefix = format!("{:>3} {} ", event.seq, clock(&event.at));
    let indent = prefix.chars().count();
    let room = width.saturating_sub(indent).max(10);
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(room)
        .enumerate()
        .map(|(i, chunk)| {
            let head = if i == 0 {
                prefix.clone()
            } else {
                " ".repeat(indent)
            };
            Line::from(vec![
                Span::styled(head, Style::default().fg(theme.muted)),
                Span::styled(
                    chunk.iter().collect::<String>(),
                    Style::default().fg(colour),
                ),
            ])
        })
        .collect()
}

#[expect(clippy::too_many_lines, reason = "issue 23 splits it by its jobs")]
pub fn draw(frame: &mut Frame, cx: &Ctx) {
    let t = cx.theme;
    let Some(view) = &cx.app.runs_view else {
        return;
    };
    let area = centered(frame.area(), 110, frame.area().height.saturating_sub(2));
    frame.render_widget(Clear, area);
    let block = boxed(
        format!(
            " Runs · {} · {} · j/k run · PgUp/PgDn/End journal · Esc closes ",
            clean(&view.workflow),
            view.runs.len()
        ),
        cx,
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let list_rows = (view.runs.len().max(1) as u16).min(inner.height / 3).max(1);
    let [list_area, rule_area, journal_area] = Layout::vertical([
        Constraint::Length(list_rows),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(inner);
    // The run list, scrolled to keep the selection in view.
    let rows = usize::from(list_rows);
    let top = view.selected.saturating_sub(rows.saturating_sub(1));
    let lines: Vec<Line> = if view.runs.is_empty() {
        vec![Line::styled(
            "no runs yet: r runs it",
            Style::default().fg(t.muted),
        )]
    } else {
        view.runs
            .iter()
            .enumerate()
            .skip(top)
            .take(rows)
            .map(|(i, run)| {
                let style = if i == view.selected {
                    Style::default()
                        .bg(t.selection_bg)
                        .add_modifier(Modifier::BOLD | Modifier::REVERSED)
                } else {
                    Style::default().fg(t.foreground)
                };
                Line::styled(run_line(run), style)
            })
            .collect()
    };
    frame.render_widget(Paragraph::new(lines), list_area);
    let follow = if view.offset > 0 {
        format!(" journal −{} (End follows) ", view.offset)
    } else {
        " journal ".to_string()
    };
    frame.render_widget(
        Paragraph::new(Line::styled(
            format!("──{follow}{}", "─".repeat(usize::from(rule_area.width))),
            Style::default().fg(t.border),
        )),
        rule_area,
    );
    let height = usize::from(journal_area.height);
    let journal: Vec<Line> = if !view.loaded && view.journal.is_empty() {
        if view.run_id.is_some() {
            vec![Line::styled("reading…", Style::default().fg(t.muted))]
        } else {
            Vec::new()
        }
    } else {
        // The lines up to `offset` from the end, as many as their rows fill the view.
        let end = view.journal.len().saturating_sub(view.offset);
        let width = usize::from(journal_area.width);
        let mut rows: Vec<Line> = Vec::new();
        for event in view.journal[..end].iter().rev() {
            let mut lines = journal_rows(event, t, width);
            lines.append(&mut rows);
            rows = lines;
            if rows.len() >= height {
                break;
            }
        }
        let extra = rows.len().saturating_sub(height);
        rows.split_off(extra)
    };
    frame.render_widget(Paragraph::new(journal), journal_area);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::FinalState;

    #[test]
    fn a_long_journal_line_wraps_under_its_text_with_the_return_values() {
        let event = JournalEvent {
            seq: 7,
            at: "2026-11-23T10:00:00.000Z".into(),
            body: RunEvent::RunFinished {
                final_state: FinalState::Completed.into(),
                success: true,
                states_executed: 3,
                error: None,
                return_values: [("ARCHIVE_PATH".to_string(), "/tmp/x/".repeat(10))]
                    .into_iter()
                    .collect(),
                duration_ms: 12.0,
                cancelled_by: None,
            },
        };
        let rows = journal_rows(&event, &Theme::default(), 50);
        assert!(rows.len() > 1, "{rows:?}");
        let text: Vec<String> = rows
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert!(text.iter().all(|r| r.chars().count() <= 50), "{text:?}");
        let indent = text[0].find("run finished").unwrap_or(0);
        assert!(text[1][..indent].trim().is_empty(), "{text:?}");
        let joined: String = text.iter().map(|r| r[indent..].to_string()).collect();
        assert!(joined.contains(&format!("ARCHIVE_PATH={}", "/tmp/x/".repeat(10))));
    }
}
