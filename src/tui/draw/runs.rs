//! The run view: a workflow's past runs (newest first) over the selected run's journal,
//! one line an event. Every text from the journal goes through [`clean`].

use super::Ctx;
use super::boxes::{boxed, centered};
use crate::engine::RunEvent;
use crate::engine::journal::{JournalEvent, RunSummary};
use crate::tui::overlay::RunsView;
use crate::tui::state::App;
use crate::tui::text::{clean, duration};
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

/// `HH:MM:SS` of an RFC 3339 time, or the text as it is.
fn clock(at: &str) -> String {
    clean(at.get(11..19).unwrap_or(at))
}

/// A past run, one line: id, who started it, started, final state, duration, feedback.
pub fn run_line(run: &RunSummary, who: &str) -> String {
    let state = match (&run.final_state, run.success) {
        (Some(s), Some(true)) => format!("{} ✓", clean(s.as_str())),
        (Some(s), _) => format!("{} ✗", clean(s.as_str())),
        (None, _) => "in progress".to_string(),
    };
    let took = run.duration_ms.map_or_else(|| "–".to_string(), duration);
    let started = clean(&run.started_at.replace('T', " "));
    let started = started.get(..19).unwrap_or(&started);
    format!(
        "{}  {}  {started}  {state}  {took}  feedback {}{}",
        clean(&run.run_id),
        clean(who),
        run.feedback.len(),
        if run.recorded { "  recorded" } else { "" }
    )
}

/// What one journal line says, and how it is coloured.
/// `who` names an actor as the studio does (`you` for its person).
pub fn event_text(
    event: &RunEvent,
    theme: &Theme,
    who: &dyn Fn(&crate::engine::Actor) -> String,
) -> (String, Color) {
    (event_words(event, who), event_colour(event, theme))
}

/// A journal line's colour: how a run, a step or a contract check went, or what waits.
fn event_colour(event: &RunEvent, theme: &Theme) -> Color {
    match event {
        RunEvent::RunStarted { .. } => theme.accent,
        RunEvent::ContractChecked { valid, .. } => outcome(*valid, theme),
        RunEvent::StepFinished { error, .. } => outcome(error.is_none(), theme),
        RunEvent::RunFinished { success, .. } => outcome(*success, theme),
        RunEvent::WaitingForInput { .. } | RunEvent::PromptWithdrawn { .. } => theme.warning,
        RunEvent::StepStarted { .. } | RunEvent::Answered { .. } => theme.foreground,
        RunEvent::Transition { .. } | RunEvent::Feedback { .. } => theme.muted,
    }
}

/// What a journal line says.
fn event_words(event: &RunEvent, who: &dyn Fn(&crate::engine::Actor) -> String) -> String {
    let c = |s: &str| clean(s);
    match event {
        RunEvent::RunStarted { inputs, actor, .. } => {
            let by = actor
                .as_ref()
                .map(|a| format!(" by {}", c(&who(a))))
                .unwrap_or_default();
            format!("run started{by}{}", pairs(inputs))
        }
        RunEvent::ContractChecked { phase, valid, .. } => {
            let word = if *valid { "valid" } else { "invalid" };
            format!("contract {}: {word}", phase.as_str())
        }
        RunEvent::StepStarted {
            step, state, tool, ..
        } => format!("step {step} started: {}", step_of(state, tool)),
        RunEvent::StepFinished {
            step,
            state,
            tool,
            status,
            elapsed_ms,
            error,
            ..
        } => format!(
            "step {step} finished: {} {} in {}{}",
            step_of(state, tool),
            status.as_str(),
            duration(*elapsed_ms),
            dotted(error.as_deref())
        ),
        RunEvent::Transition {
            from,
            to,
            condition,
        } => transition_text(from, to.as_deref(), condition.as_deref()),
        RunEvent::WaitingForInput { state, prompt } => {
            format!("prompt waiting in {}: {}", c(state), c(prompt))
        }
        RunEvent::PromptWithdrawn { state, reason } => {
            format!("prompt withdrawn in {}: {}", c(state), c(reason))
        }
        RunEvent::Answered {
            state,
            valid,
            issues,
            ..
        } => answered_text(state, *valid, issues),
        RunEvent::RunFinished {
            final_state,
            success,
            error,
            duration_ms,
            return_values,
            ..
        } => {
            let word = if *success { "success" } else { "failed" };
            format!(
                "run finished: {} ({word}) in {}{}{}",
                c(final_state.as_str()),
                duration(*duration_ms),
                dotted(error.as_deref()),
                pairs(return_values)
            )
        }
        RunEvent::Feedback { score, text, .. } => feedback_text(*score, text.as_deref()),
    }
}

/// The colour of a good or a bad outcome.
fn outcome(good: bool, theme: &Theme) -> Color {
    if good { theme.valid } else { theme.error }
}

/// `state (tool)` of a step.
fn step_of(state: &str, tool: &str) -> String {
    format!("{} ({})", clean(state), clean(tool))
}

/// ` · text`, or nothing without a text.
fn dotted(text: Option<&str>) -> String {
    text.map(|t| format!(" · {}", clean(t))).unwrap_or_default()
}

/// ` · name=value …` of a run's inputs or return values (secrets are masked in journals), or
/// nothing when it has none.
fn pairs<'a>(values: impl IntoIterator<Item = (&'a String, &'a String)>) -> String {
    let pairs: Vec<String> = values
        .into_iter()
        .map(|(k, v)| format!("{}={}", clean(k), clean(v)))
        .collect();
    if pairs.is_empty() {
        String::new()
    } else {
        format!(" · {}", pairs.join(" "))
    }
}

/// `from → to [condition]`, `end` when the run stops there.
fn transition_text(from: &str, to: Option<&str>, condition: Option<&str>) -> String {
    let to = to.map_or_else(|| "end".to_string(), clean);
    let when = condition
        .map(|w| format!(" [{}]", clean(w)))
        .unwrap_or_default();
    format!("{} → {to}{when}", clean(from))
}

/// An answer, with what was wrong with it when it was refused.
fn answered_text(state: &str, valid: bool, issues: &[String]) -> String {
    let how = if valid {
        String::new()
    } else {
        format!(" (invalid: {})", clean(&issues.join("; ")))
    };
    format!("prompt answered in {}{how}", clean(state))
}

/// Feedback given on the run: its score and its words, either of which may be missing.
fn feedback_text(score: Option<f64>, text: Option<&str>) -> String {
    let score = score.map(|s| format!(" {s}")).unwrap_or_default();
    let text = text.map(|t| format!(" {}", clean(t))).unwrap_or_default();
    format!("feedback{score}{text}")
}

/// A journal line as rows of at most `width` cells: a long one (an error, a prompt, return
/// values) wraps under its text rather than being cut.
fn journal_rows<'a>(app: &App, event: &JournalEvent, theme: &Theme, width: usize) -> Vec<Line<'a>> {
    let (text, colour) = event_text(&event.body, theme, &|actor| app.who(actor));
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

pub fn draw(frame: &mut Frame, cx: &Ctx, view: &RunsView) {
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
    let t = cx.theme;
    frame.render_widget(
        Paragraph::new(run_list(cx.app, view, usize::from(list_rows), t)),
        list_area,
    );
    frame.render_widget(
        Paragraph::new(journal_rule(view, rule_area.width, t)),
        rule_area,
    );
    let journal = journal_lines(cx.app, view, journal_area, t);
    frame.render_widget(Paragraph::new(journal), journal_area);
}

/// The runs, `rows` of them, scrolled to keep the selection in view.
fn run_list<'a>(app: &App, view: &RunsView, rows: usize, t: &Theme) -> Vec<Line<'a>> {
    if view.runs.is_empty() {
        return vec![Line::styled(
            "no runs yet: r runs it",
            Style::default().fg(t.muted),
        )];
    }
    let top = view.selected.saturating_sub(rows.saturating_sub(1));
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
            // `you`, `agent claude-code`, `cli`: whose run it was, as the journal says.
            let who = run
                .started_by
                .as_ref()
                .map_or_else(|| "-".to_string(), |actor| app.who(actor));
            Line::styled(run_line(run, &who), style)
        })
        .collect()
}

/// The rule over the journal, saying how far back it is scrolled.
fn journal_rule<'a>(view: &RunsView, width: u16, t: &Theme) -> Line<'a> {
    let follow = if view.offset > 0 {
        format!(" journal −{} (End follows) ", view.offset)
    } else {
        " journal ".to_string()
    };
    Line::styled(
        format!("──{follow}{}", "─".repeat(usize::from(width))),
        Style::default().fg(t.border),
    )
}

/// The journal's lines up to `offset` from the end, as many as their rows fill `area`.
fn journal_lines<'a>(app: &App, view: &RunsView, area: Rect, t: &Theme) -> Vec<Line<'a>> {
    if !view.loaded && view.journal.is_empty() {
        return if view.run_id.is_some() {
            vec![Line::styled("reading…", Style::default().fg(t.muted))]
        } else {
            Vec::new()
        };
    }
    let height = usize::from(area.height);
    let end = view.journal.len().saturating_sub(view.offset);
    let width = usize::from(area.width);
    let mut rows: Vec<Line> = Vec::new();
    for event in view.journal[..end].iter().rev() {
        let mut lines = journal_rows(app, event, t, width);
        lines.append(&mut rows);
        rows = lines;
        if rows.len() >= height {
            break;
        }
    }
    let extra = rows.len().saturating_sub(height);
    rows.split_off(extra)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Actor, FinalState};

    #[test]
    fn each_run_says_who_started_it() {
        let run = |id: &str, by: Option<Actor>| RunSummary {
            started_by: by,
            ..RunSummary::started(
                id.into(),
                "build".into(),
                "2026-11-23T10:00:00.000Z".into(),
                None,
                None,
            )
        };
        let mut app = App::new("workflows".into());
        app.me = Some(Actor::Person { at: "pts/1".into() });
        let view = RunsView {
            workflow: "build".into(),
            runs: vec![
                run(
                    "r3",
                    Some(Actor::Agent {
                        client: "claude-code".into(),
                        connection: "c1".into(),
                    }),
                ),
                run("r2", Some(Actor::Person { at: "pts/1".into() })),
                run("r1", Some(Actor::Person { at: "pts/2".into() })),
                run("r0", None),
            ],
            ..RunsView::default()
        };
        let theme = Theme::default();
        let lines: Vec<String> = run_list(&app, &view, 10, &theme)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        let who: Vec<&str> = lines
            .iter()
            .map(|l| l.split("  ").nth(1).unwrap_or_default())
            .collect();
        assert_eq!(
            who,
            ["agent: claude-code", "you", "the person at pts/2", "-"],
            "{lines:#?}"
        );
    }

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
        let rows = journal_rows(&App::new("w".into()), &event, &Theme::default(), 50);
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
