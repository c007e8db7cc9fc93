//! The step plan of the selected workflow: states in run order with their actions and
//! transitions; during and after a run, where it is and how each executed state ended.

use super::{Ctx, block};
use crate::engine::{Phase, StepStatus};
use crate::tui::mode::View;
use crate::tui::state::RunView;
use crate::tui::text::{cells, clean, duration, shorten};
use crate::tui::theme::Theme;
use crate::workflow::plan::{Plan, PlanStep, PlanTransition};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn draw(frame: &mut Frame, area: Rect, cx: &Ctx) {
    let app = cx.app;
    let t = cx.theme;
    let Some(view) = &app.plan else {
        return no_plan(frame, area, cx);
    };
    let run = app.latest_run_of(&view.workflow);
    let mut title = format!(" Plan · {} ", clean(&view.workflow));
    if let Some(run) = run {
        title.push_str(&run_title(run));
        if let (true, Some(state)) = (run.active(), &run.current_state) {
            title.push_str(&format!("▸ {} ", clean(state)));
        }
    }
    // The run's outcome comes first: a long plan must not push it out of sight.
    let mut lines: Vec<Line> = run.map(|r| summary(r, t)).unwrap_or_default();
    match &view.plan {
        Err(e) => {
            // No plan to lay out: the reason, wrapped so all of it can be read.
            lines.push(Line::styled(clean(e), Style::default().fg(t.error)));
            lines.push(Line::styled(
                "e lists every problem with its file:line:col",
                Style::default().fg(t.muted),
            ));
            frame.render_widget(
                Paragraph::new(lines)
                    .wrap(ratatui::widgets::Wrap { trim: false })
                    .block(block(title, app.view == View::Plan, t)),
                area,
            );
        }
        Ok(plan) => {
            lines.extend(broken(cx, &view.workflow));
            let inner = usize::from(area.width.saturating_sub(2));
            let at = at_each_state(app, &view.workflow);
            lines.extend(steps(plan, run, &at, inner, t));
            frame.render_widget(
                Paragraph::new(lines).block(block(title, app.view == View::Plan, t)),
                area,
            );
        }
    }
}

/// The plan pane with no plan to show: the workflow that went away, why nothing can be
/// planned, or that nothing is selected.
fn no_plan(frame: &mut Frame, area: Rect, cx: &Ctx) {
    let app = cx.app;
    // A folder that went away takes its workflows with it: the folder is the news then,
    // unless the gone workflow has a run to tell of.
    if let Some(name) = &app.gone
        && (app.folder_problem.is_none() || app.latest_run_of(name).is_some())
    {
        return gone(frame, area, cx, name);
    }
    let missing = app
        .folder_problem
        .as_ref()
        .is_some_and(|p| p.kind == crate::engine::FolderProblemKind::Missing);
    let text = if missing || app.workflows.is_empty() && app.folder_problem.is_none() {
        // A newcomer's first screen: where to read how a manifest is written, with no
        // checkout at hand (the docs are in the binary).
        "nothing to plan yet: A creates a workflow from a template\n\nhow to write one: flowdeck docs workflows"
    } else if app.folder_problem.is_some() {
        "nothing to plan until the workflows folder can be read (the list says why)"
    } else {
        "select a workflow"
    };
    frame.render_widget(
        Paragraph::new(text)
            .wrap(ratatui::widgets::Wrap { trim: true })
            .block(block(" Plan ".into(), app.view == View::Plan, cx.theme)),
        area,
    );
}

/// A file that broke keeps its last good version for running (SPEC §8): the plan shown is
/// that version, and these lines say so, with the error that broke the file.
fn broken(cx: &Ctx, workflow: &str) -> Vec<Line<'static>> {
    let t = cx.theme;
    let Some(w) = cx
        .app
        .workflows
        .iter()
        .find(|w| w.name == workflow)
        .filter(|w| w.status == crate::engine::WorkflowStatus::Invalid)
    else {
        return Vec::new();
    };
    let mut lines = vec![Line::styled(
        "the file is broken: this is its last good version, the one that runs (e: problems)",
        Style::default().fg(t.warning),
    )];
    if let Some(error) = &w.first_error {
        lines.push(Line::styled(clean(error), Style::default().fg(t.error)));
    }
    lines
}

/// Where a workflow's runs in progress are, when more than one is (a fleet, one run per
/// host): each state with how many are at it, and whether they all run on hosts.
struct AtEachState {
    counts: std::collections::HashMap<String, usize>,
    on_hosts: bool,
}

fn at_each_state(app: &crate::tui::state::App, workflow: &str) -> AtEachState {
    let active: Vec<&RunView> = app
        .runs
        .values()
        .filter(|r| r.workflow == workflow && r.active())
        .collect();
    let mut counts = std::collections::HashMap::new();
    if active.len() > 1 {
        for run in &active {
            if let Some(state) = &run.current_state {
                *counts.entry(state.clone()).or_insert(0) += 1;
            }
        }
    }
    let on_hosts = active.iter().all(|r| {
        app.panes
            .iter()
            .any(|p| Some(&p.session_id) == r.session_id.as_ref() && p.host.is_some())
    });
    AtEachState { counts, on_hosts }
}

/// The plan's states in a pane `inner` cells wide, each marked with how the run got on in
/// it (and, for a fleet, how many hosts are at it), over its guard and transitions.
fn steps<'a>(
    plan: &Plan,
    run: Option<&RunView>,
    at: &AtEachState,
    inner: usize,
    t: &Theme,
) -> Vec<Line<'a>> {
    let width = plan
        .steps
        .iter()
        .map(|s| s.state.chars().count())
        .max()
        .unwrap_or(0)
        .min(20);
    let indent = rows_indent(width, inner);
    let room = inner.saturating_sub(indent);
    let mut lines = Vec::new();
    for step in &plan.steps {
        let mut line = step_line(step, run, width, inner, t);
        if let Some(n) = at.counts.get(&step.state) {
            let what = if at.on_hosts { "host" } else { "run" };
            line.spans.push(Span::styled(
                format!("  ▶ {n} {what}{}", if *n == 1 { "" } else { "s" }),
                Style::default().fg(t.running),
            ));
        }
        lines.push(line);
        for row in step_rows(step, room) {
            lines.push(Line::styled(
                format!("{:indent$}{row}", ""),
                Style::default().fg(t.muted),
            ));
        }
    }
    lines
}

/// A state's own line: its number, its mark (where the run is, or how the state ended),
/// its name padded to `width`, its action, and its status and duration once it ran.
fn step_line<'a>(
    step: &PlanStep,
    run: Option<&RunView>,
    width: usize,
    inner: usize,
    t: &Theme,
) -> Line<'a> {
    let current =
        run.is_some_and(|r| r.active() && r.current_state.as_deref() == Some(step.state.as_str()));
    let mark = run.and_then(|r| r.steps.get(&step.state));
    let (symbol, colour) = match mark {
        _ if current => ("▶", t.running),
        Some(m) if m.status == StepStatus::Success => ("✓", t.valid),
        Some(_) => ("✗", t.error),
        None => (" ", t.foreground),
    };
    let mut style = Style::default().fg(t.foreground);
    if current {
        style = style.patch(t.selection());
    }
    let name = format!("{:<width$}  ", clean(&step.state));
    let outcome = mark.map(|m| format!("  {} {}", m.status.as_str(), duration(m.elapsed_ms)));
    // The action is cut with `…` where the pane ends, before how the state went, which is
    // the news of a run.
    let taken = 5 + cells(&name) + outcome.as_deref().map_or(0, cells);
    let action = shorten(&clean(&step.action), inner.saturating_sub(taken));
    let mut spans = vec![
        Span::styled(format!("{:>2} ", step.number), Style::default().fg(t.muted)),
        Span::styled(format!("{symbol} "), Style::default().fg(colour)),
        Span::styled(name, style),
        Span::styled(action, Style::default().fg(t.foreground)),
    ];
    if let Some(outcome) = outcome {
        spans.push(Span::styled(outcome, Style::default().fg(t.muted)));
    }
    Line::from(spans)
}

/// The rows under a state, each at most `room` cells, as `flowdeck plan` words them: the
/// state's own guard (`only when …`), then its transitions in the order they are tried.
/// Transitions without a guard share a row (`success → a · failure → b`); one with a guard
/// gets a row of its own (`success if X > 3 → a`), since several arrows on one condition can
/// only be told apart by their guards. When a row is too long, a guard is cut before the
/// condition or the target is, those being what tells the rows apart.
fn step_rows(step: &PlanStep, room: usize) -> Vec<String> {
    let mut rows = Vec::new();
    if let Some(when) = &step.when {
        rows.push(shorten(&format!("only when {}", clean(when)), room));
    }
    let mut plain: Vec<String> = Vec::new();
    for tr in &step.transitions {
        match &tr.when {
            None => plain.push(format!(
                "{} → {}",
                clean(&tr.condition),
                clean(&tr.next_state)
            )),
            Some(when) => {
                if !plain.is_empty() {
                    rows.push(shorten(&plain.join(" · "), room));
                    plain.clear();
                }
                rows.push(guarded(tr, when, room));
            }
        }
    }
    if !plain.is_empty() {
        rows.push(shorten(&plain.join(" · "), room));
    }
    rows
}

/// Cells a transition row needs before it is worth aligning under the actions: below that,
/// two guards on one condition are cut to the same few characters and cannot be told apart.
const ALIGNED_ROOM: usize = 40;

/// Where the rows under a state start in a plan `inner` cells wide: under the actions (past
/// the state names, `width` cells) when that leaves them room, else under the state names.
fn rows_indent(width: usize, inner: usize) -> usize {
    let aligned = width + 6;
    if inner.saturating_sub(aligned) >= ALIGNED_ROOM {
        aligned
    } else {
        5
    }
}

/// `condition if guard → next` in `room` cells, the guard shortened first.
fn guarded(tr: &PlanTransition, when: &str, room: usize) -> String {
    let (condition, next) = (clean(&tr.condition), clean(&tr.next_state));
    let fixed = cells(&condition) + cells(" if ") + cells(" → ") + cells(&next);
    // Even a guard cut to `…` alone says that the arrow has one: without it the row would
    // read as an unconditional `success → next`.
    let guard = shorten(&clean(when), room.saturating_sub(fixed).max(1));
    shorten(&format!("{condition} if {guard} → {next}"), room)
}

/// The plan of a workflow whose file was removed while it was shown: it says so, under the
/// outcome of its latest run (which goes on with the version it started with).
fn gone(frame: &mut Frame, area: Rect, cx: &Ctx, name: &str) {
    let (app, t) = (cx.app, cx.theme);
    let run = app.latest_run_of(name);
    let mut lines: Vec<Line> = run.map(|r| summary(r, t)).unwrap_or_default();
    lines.push(Line::styled(
        format!(
            "{} is gone: its file was removed from the folder",
            clean(name)
        ),
        Style::default().fg(t.warning),
    ));
    if run.is_some_and(RunView::active) {
        lines.push(Line::styled(
            "its run goes on with the version it started with",
            Style::default().fg(t.muted),
        ));
    }
    let mut title = format!(" Plan · {} · gone ", clean(name));
    if let Some(run) = run {
        title.push_str(&run_title(run));
    }
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(ratatui::widgets::Wrap { trim: true })
            .block(block(title, app.view == View::Plan, t)),
        area,
    );
}

/// The run's result, or the question it waits on, in a few lines.
fn summary(run: &RunView, t: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    match (&run.finished, run.phase) {
        (Some(f), _) => {
            let colour = if f.success { t.valid } else { t.error };
            let mut text = format!(
                "result: {} in {}",
                clean(f.final_state.as_str()),
                duration(f.duration_ms)
            );
            let values: Vec<String> = f
                .return_values
                .iter()
                .map(|(k, v)| format!("{}={}", clean(k), clean(v)))
                .collect();
            if !values.is_empty() {
                text.push_str(&format!(" · {}", values.join(" ")));
            }
            lines.push(Line::styled(
                text,
                Style::default().fg(colour).add_modifier(Modifier::BOLD),
            ));
            if let Some(e) = &f.error {
                lines.push(Line::styled(clean(e), Style::default().fg(t.error)));
            }
        }
        (None, Phase::WaitingForInput) => lines.push(Line::styled(
            format!(
                "waiting for an answer: {} (a answers)",
                clean(run.prompt.as_deref().unwrap_or(""))
            ),
            Style::default().fg(t.warning),
        )),
        (None, Phase::AwaitingApproval) => lines.push(Line::styled(
            format!(
                "waiting for your approval: {} asks to run it (a answers)",
                clean(
                    &run.actor
                        .as_ref()
                        .map_or_else(|| "an agent".into(), |a| a.label())
                )
            ),
            Style::default().fg(t.warning),
        )),
        (None, _) => {}
    }
    lines
}

/// `· run r17… ` in a plan's title, with the agent that started it, if one did.
fn run_title(run: &RunView) -> String {
    match &run.actor {
        Some(agent @ crate::engine::Actor::Agent { .. }) => {
            format!("· run {} ({}) ", clean(&run.run_id), clean(&agent.label()))
        }
        _ => format!("· run {} ", clean(&run.run_id)),
    }
}
