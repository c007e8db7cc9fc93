//! What the answers of effects do (a list, a plan, a run started, a page of history...), and
//! the editor's and the folder server's events.

use super::super::effect::Effect;
use super::super::form::InputsForm;
use super::super::mode::{BaseMode, Mode};
use super::super::overlay::{Overlay, ProblemsView};
use super::super::state::{App, PlanView};
use super::super::{copy, editing, history, naming, runs};
use super::Event;
use super::moving::plan_follows_selection;
use super::panes::show_pane;
use crate::engine::audit_log::AuditEntry;
use crate::engine::authoring::InputSpec;
use crate::workflow::violation::Violation;

/// The answers of the effects that read or start something.
pub(super) fn answered(app: &mut App, event: Event) -> Vec<Effect> {
    match event {
        Event::List(workflows) => {
            app.workflows = workflows;
            app.clamp_selection();
            plan_follows_selection(app, false)
        }
        Event::Plan { workflow, plan } => {
            if app.selected_workflow().is_some_and(|w| w.name == workflow) {
                app.plan = Some(PlanView { workflow, plan });
            }
            Vec::new()
        }
        Event::Inputs {
            workflow,
            inputs,
            on_host,
        } => inputs_read(app, workflow, inputs, on_host),
        Event::RunStarted(result) => say(
            app,
            match result {
                Ok(run_id) => format!("run {run_id} started"),
                Err(e) => format!("the run did not start: {e}"),
            },
        ),
        Event::FleetEnded(result) => say(
            app,
            match result {
                Ok(fleet) => fleet_said(&fleet),
                Err(e) => format!("the run did not start: {e}"),
            },
        ),
        Event::ShellOpened(Ok(info)) => {
            let id = info.session_id.clone();
            // A replay is played with its keys: the pane takes the keyboard at once.
            let replay = info
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with(super::super::effect::REPLAY_PANE));
            if !app.panes.iter().any(|p| p.session_id == id) {
                app.panes.push(info);
            }
            let effects = show_pane(app, &id);
            if replay && app.focused_pane().is_some_and(|p| p.running) {
                history::leave(app);
                app.base = BaseMode::Focus;
            }
            effects
        }
        Event::ShellOpened(Err(e)) => say(app, format!("no shell: {e}")),
        Event::History { session_id, lines } => {
            match lines {
                Ok((lines, last)) => {
                    history::history_read(app, &session_id, lines, last);
                    copy::clamp(app);
                }
                Err(e) => {
                    history::leave(app);
                    app.message = Some(format!("cannot read the pane's history: {e}"));
                }
            }
            Vec::new()
        }
        Event::Found {
            session_id,
            pattern,
            more,
            found,
        } => history::search_found(app, session_id, pattern, more, found),
        Event::Problems { workflow, problems } => problems_read(app, workflow, problems),
        Event::Runs { workflow, runs } => runs::runs_read(app, workflow, runs),
        Event::RunEvents { run_id, events } => {
            runs::events_read(app, &run_id, events);
            Vec::new()
        }
        Event::Failed(e) => say(app, e),
        Event::Audit(entries) => audit_read(app, entries),
        other => views(app, other),
    }
}

/// The answers of the views and overlays.
fn views(app: &mut App, event: Event) -> Vec<Effect> {
    match event {
        Event::Named { purpose, result } => naming::named(app, purpose, result),
        Event::Nothing => Vec::new(),
        Event::Themes(names) => {
            app.themes = names;
            Vec::new()
        }
        Event::Theme { theme, warning } => {
            // NO_COLOR wins over any theme chosen later: the colours stay off.
            app.theme = if app.theme.colour {
                *theme
            } else {
                theme.without_colour()
            };
            let name = app.theme.name.clone();
            say(app, warning.unwrap_or_else(|| format!("theme {name}")))
        }
        Event::Approvals { pending, error } => {
            super::super::approvals::loaded(app, pending, error);
            Vec::new()
        }
        Event::Copied(chars) => {
            let mut message = format!("copied {chars} characters to the clipboard");
            if let Some(hint) = &app.clipboard_hint {
                message.push_str(&format!(" · {hint}"));
            }
            say(app, message)
        }
        Event::CursorLocated {
            session_id,
            alternate,
            cursor,
        } => copy::located(app, &session_id, alternate, cursor),
        other => edited(app, other),
    }
}

/// The editor's events: a document opened, checked, saved, changed on disk, recovered.
fn edited(app: &mut App, event: Event) -> Vec<Effect> {
    match event {
        Event::Document { workflow, document } => match document {
            Ok(document) => editing::opened(app, workflow, document),
            Err(e) => say(app, format!("cannot open {workflow}: {e}")),
        },
        Event::CheckDue(edits) => editing::check_due(app, edits),
        Event::Checked { edits, draft } => {
            editing::checked(app, edits, *draft);
            Vec::new()
        }
        Event::Saved { edits, result } => editing::saved(app, edits, result),
        Event::Disk { workflow, now } => editing::disk(app, &workflow, now),
        Event::Recovered(copies) => {
            if let Some(first) = copies.first() {
                app.message = Some(format!(
                    "unsaved edits of {}{} were kept from an editor that did not close: E on it opens them",
                    first.file,
                    match copies.len() {
                        1 => String::new(),
                        n => format!(" and {} more", n - 1),
                    }
                ));
            }
            app.recovered = copies;
            Vec::new()
        }
        Event::EditFile(path) => vec![Effect::ExternalEditor(path)],
        Event::ExternalDone(result) => {
            if let Err(e) = result {
                app.message = Some(e);
            }
            vec![Effect::ReloadList]
        }
        other => told(app, other),
    }
}

/// What the folder's server tells: how many studios, its log, a refused hold, what ended.
fn told(app: &mut App, event: Event) -> Vec<Effect> {
    match event {
        Event::Studios(n) => app.studios = n,
        Event::LogTrouble { server, trouble } => {
            let whose = if server {
                "the folder's server"
            } else {
                "this studio"
            };
            app.message = Some(match trouble {
                Some(why) => format!("{whose} cannot write its log, and goes on without it: {why}"),
                None => format!("{whose} writes its log again"),
            });
        }
        Event::HoldRefused(why) => {
            // Out of focus mode: the keys would be refused one by one.
            if app.mode() == Mode::Focus {
                app.base = BaseMode::Normal;
            }
            app.input_held = None;
            app.message = Some(why);
        }
        Event::Ended(failures) if failures.is_empty() => app.quit = true,
        // Something would not end: the person stays to see what, and decides again.
        Event::Ended(failures) => app.message = Some(failures.join("; ")),
        // Handled before this (`apply_event`, `answered`, `views`, `edited`).
        Event::Key(_)
        | Event::Mouse { .. }
        | Event::TermFocus(_)
        | Event::Paste(_)
        | Event::Resize(..)
        | Event::Engine(_)
        | Event::Snapshot(_)
        | Event::Tick(_)
        | Event::List(_)
        | Event::Plan { .. }
        | Event::Inputs { .. }
        | Event::RunStarted(_)
        | Event::FleetEnded(_)
        | Event::ShellOpened(_)
        | Event::History { .. }
        | Event::Found { .. }
        | Event::Problems { .. }
        | Event::Runs { .. }
        | Event::RunEvents { .. }
        | Event::Failed(_)
        | Event::Audit(_)
        | Event::Named { .. }
        | Event::Nothing
        | Event::Themes(_)
        | Event::Theme { .. }
        | Event::Approvals { .. }
        | Event::Copied(_)
        | Event::CursorLocated { .. }
        | Event::Document { .. }
        | Event::CheckDue(_)
        | Event::Checked { .. }
        | Event::Saved { .. }
        | Event::Disk { .. }
        | Event::Recovered(_)
        | Event::EditFile(_)
        | Event::ExternalDone(_) => {}
    }
    Vec::new()
}

/// A fleet's end in a line: how many hosts completed, and each one that did not, why.
pub(in crate::tui) fn fleet_said(fleet: &crate::engine::FleetResult) -> String {
    let failed: Vec<String> = fleet
        .runs
        .iter()
        .filter(|r| !r.success)
        .map(|r| match (&r.final_state, &r.error) {
            (_, Some(error)) => format!("{}: {error}", r.host),
            (Some(state), None) => format!("{}: {state}", r.host),
            (None, None) => format!("{}: not started", r.host),
        })
        .collect();
    let done = format!(
        "{} on {} of {} host{}: completed",
        fleet.workflow_name,
        fleet.completed,
        fleet.hosts,
        if fleet.hosts == 1 { "" } else { "s" }
    );
    if failed.is_empty() {
        done
    } else {
        format!("{done}; {}", failed.join("; "))
    }
}

fn say(app: &mut App, message: String) -> Vec<Effect> {
    app.message = Some(message);
    Vec::new()
}

fn inputs_read(
    app: &mut App,
    workflow: String,
    inputs: Result<Vec<InputSpec>, String>,
    on_host: bool,
) -> Vec<Effect> {
    match inputs {
        Ok(inputs) if inputs.is_empty() && !on_host => vec![Effect::StartRun {
            workflow,
            inputs: Default::default(),
            host: None,
        }],
        Ok(inputs) => {
            let mut form = InputsForm::new(workflow, inputs);
            if on_host {
                form.selected = form.fields.len() - 1;
            }
            app.open(Overlay::Form(form));
            Vec::new()
        }
        Err(e) => say(app, format!("cannot run {workflow}: {e}")),
    }
}

fn problems_read(
    app: &mut App,
    workflow: String,
    problems: Result<(String, Vec<Violation>), String>,
) -> Vec<Effect> {
    match problems {
        Ok((_, violations)) if violations.is_empty() => {
            say(app, format!("{workflow} has no problems"))
        }
        Ok((file, violations)) => {
            app.open(Overlay::Problems(ProblemsView {
                workflow,
                file,
                violations,
                top: 0,
            }));
            Vec::new()
        }
        Err(e) => say(app, format!("cannot read {workflow}: {e}")),
    }
}

fn audit_read(app: &mut App, entries: Vec<AuditEntry>) -> Vec<Effect> {
    if entries.is_empty() {
        return say(app, "no agent has called a tool on this folder yet".into());
    }
    // The newest at the bottom, in view.
    let top = entries
        .len()
        .saturating_sub(usize::from(app.size.1).saturating_sub(6));
    app.open(Overlay::Audit { entries, top });
    Vec::new()
}
