//! Moving: through the list, a form, an overlay, the panes; and what Enter confirms.

use super::super::command::Command;
use super::super::effect::Effect;
use super::super::mode::{BaseMode, Mode, View};
use super::super::overlay::Overlay;
use super::super::state::App;
use super::super::{copy, editing, history, naming, runs};
use super::paging::scroll_help;
use super::panes::panes;

/// Up and down, the views in turn, Enter, the filter and help.
pub(super) fn moving(app: &mut App, command: Command) -> Vec<Effect> {
    match command {
        Command::Up => return move_by(app, -1),
        Command::Down => return move_by(app, 1),
        Command::NextView | Command::PrevView => {
            let at = View::ALL.iter().position(|v| *v == app.view).unwrap_or(0);
            let step = if command == Command::NextView { 1 } else { 2 };
            app.view = View::ALL[(at + step) % View::ALL.len()];
        }
        Command::Confirm => return confirm(app),
        Command::Filter => {
            app.base = BaseMode::Filter;
            app.view = View::List;
        }
        Command::Help => {
            // From the palette, which has closed by now, the keys are those under it (the
            // editor's while one is open).
            let of = match &app.overlay {
                Some(Overlay::Help { of, .. }) => *of,
                _ => app.mode(),
            };
            app.open(Overlay::Help { of, top: 0 });
        }
        _ => {}
    }
    Vec::new()
}

fn move_by(app: &mut App, delta: isize) -> Vec<Effect> {
    match (app.mode(), app.view) {
        (Mode::Form, _) => {
            if let Some(form) = app.form_mut() {
                form.move_by(delta);
            }
            Vec::new()
        }
        (Mode::Help, _) => {
            scroll_help(app, delta);
            Vec::new()
        }
        (Mode::Problems, _) => {
            if let Some(Overlay::Problems(p)) = &mut app.overlay {
                let last = p.violations.len().saturating_sub(1);
                p.top = (p.top as isize + delta).clamp(0, last as isize) as usize;
            }
            Vec::new()
        }
        (Mode::Runs, _) => runs::move_by(app, delta),
        (Mode::Inbox, _) => {
            super::inbox::move_by(app, delta);
            Vec::new()
        }
        (Mode::Palette, _) => {
            let n = app.palette_matches().len();
            if let Some(Overlay::Palette(p)) = &mut app.overlay {
                p.selected =
                    (p.selected as isize + delta).clamp(0, n.saturating_sub(1) as isize) as usize;
            }
            Vec::new()
        }
        (Mode::Copy, _) => copy::move_cursor(app, 0, delta as i64),
        (Mode::Approve, _) => {
            super::super::approvals::move_by(app, delta);
            Vec::new()
        }
        (Mode::Audit, _) => {
            if let Some(Overlay::Audit { entries, top }) = &mut app.overlay {
                *top = top
                    .saturating_add_signed(delta)
                    .min(entries.len().saturating_sub(1));
            }
            Vec::new()
        }
        (Mode::Complete, _) => {
            editing::move_completion(app, delta);
            Vec::new()
        }
        (Mode::EditAsk, _) => {
            if let Some(diff) = app.editor.as_mut().and_then(|e| e.diff.as_mut()) {
                *diff = diff.saturating_add_signed(delta * 5);
            }
            Vec::new()
        }
        (Mode::Filter, _) | (_, View::List) => {
            let n = app.visible().len();
            if n > 0 {
                app.selected = (app.selected as isize + delta).clamp(0, n as isize - 1) as usize;
            }
            plan_follows_selection(app, false)
        }
        (_, View::Panes) => panes(
            app,
            if delta < 0 {
                Command::PrevPane
            } else {
                Command::NextPane
            },
        ),
        (_, View::Plan) => Vec::new(),
    }
}

fn confirm(app: &mut App) -> Vec<Effect> {
    match app.mode() {
        Mode::Filter => {
            app.base = BaseMode::Normal;
            Vec::new()
        }
        Mode::Form => {
            let Some(form) = app.form_mut() else {
                return Vec::new();
            };
            match form.submit() {
                Some(submitted) => {
                    let workflow = form.workflow.clone();
                    app.overlay = None;
                    vec![Effect::StartRun {
                        workflow,
                        inputs: submitted.inputs,
                        host: submitted.host,
                    }]
                }
                None => Vec::new(),
            }
        }
        Mode::Search => match app.overlay.take() {
            Some(Overlay::Search(pattern)) => history::start_search(app, pattern),
            _ => Vec::new(),
        },
        Mode::EditFind => {
            editing::find(app);
            Vec::new()
        }
        Mode::Name => naming::submit(app),
        Mode::Problems => open_problem(app),
        Mode::Inbox => super::inbox::confirm(app),
        Mode::Complete => editing::accept_completion(app),
        Mode::Prompt => match app.overlay.take() {
            Some(Overlay::Prompt { run_id, answer }) => {
                vec![Effect::AnswerPrompt { run_id, answer }]
            }
            _ => Vec::new(),
        },
        _ => match app.view {
            View::List => {
                app.view = View::Plan;
                Vec::new()
            }
            View::Panes => panes(app, Command::Focus),
            View::Plan => Vec::new(),
        },
    }
}

/// Enter in the problems view: the editor at the line of the problem on top.
fn open_problem(app: &mut App) -> Vec<Effect> {
    // The problem on top of the view: the editor at its line.
    let Some(Overlay::Problems(view)) = app.overlay.take() else {
        return Vec::new();
    };
    let at = view
        .violations
        .get(view.top)
        .and_then(|v| v.line.map(|l| (l, v.column)));
    match at {
        Some((line, column)) => editing::open_at(app, view.workflow, line, column.unwrap_or(1)),
        None => {
            app.message = Some("this problem has no line: the editor opens at the top".into());
            editing::open_at(app, view.workflow, 1, 1)
        }
    }
}

/// Loads the plan of the selected workflow when it is not the one shown (or always, when the
/// workflow itself changed).
pub(in crate::tui) fn plan_follows_selection(app: &mut App, changed: bool) -> Vec<Effect> {
    let Some(selected) = app.selected_workflow().map(|w| w.name.clone()) else {
        app.plan = None;
        return Vec::new();
    };
    let shown = app.plan.as_ref().map(|p| p.workflow.as_str());
    if changed || shown != Some(selected.as_str()) {
        vec![Effect::LoadPlan(selected)]
    } else {
        Vec::new()
    }
}
