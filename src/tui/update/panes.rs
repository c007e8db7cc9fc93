//! The panes: opening, focusing, choosing and closing them, their layout, their history and
//! search, copy mode, and fitting each pane's terminal to the cells it is drawn in.

use super::super::command::Command;
use super::super::effect::Effect;
use super::super::mode::{BaseMode, Mode, View};
use super::super::overlay::{NameFor, Overlay};
use super::super::selection::Unit;
use super::super::state::App;
use super::super::{copy, editing, history, layout};
use super::paging::{help_page, page_rows, scroll_help};
use crate::engine::Actor;

/// Opening, focusing, choosing and closing panes, and their layout.
pub(super) fn panes(app: &mut App, command: Command) -> Vec<Effect> {
    match command {
        Command::NewShell => {
            let (cols, rows) = layout::new_pane_size(app);
            return vec![Effect::OpenShell { cols, rows }];
        }
        Command::Focus => match app.focused_pane() {
            Some(pane) if pane.running => {
                // Keys go to the live program: show its live screen.
                history::leave(app);
                app.base = BaseMode::Focus;
                app.view = View::Panes;
            }
            Some(_) => app.message = Some("the pane's program has ended".into()),
            None => app.message = Some("no pane to focus: t opens a shell".into()),
        },
        Command::LeaveFocus => app.base = BaseMode::Normal,
        Command::NextPane | Command::PrevPane => {
            let n = app.panes.len();
            if n > 0 {
                let step = if command == Command::NextPane {
                    1
                } else {
                    n - 1
                };
                app.pane = (app.pane + step) % n;
                app.selection = None;
                history::leave(app);
                return fit_panes(app);
            }
        }
        Command::ClosePane => {
            // A program that still runs (an agent's terminal, a build) dies with its pane:
            // asked first. One that has ended has nothing left to lose.
            if let Some(pane) = app.focused_pane() {
                let session_id = pane.session_id.clone();
                if pane.running {
                    app.open(Overlay::ConfirmClose(session_id));
                } else {
                    return vec![Effect::CloseSession(session_id)];
                }
            }
        }
        Command::DraftWorkflow => match app.focused_pane() {
            Some(pane) => {
                let session_id = pane.session_id.clone();
                super::super::naming::start(app, NameFor::Draft(session_id));
            }
            None => {
                app.message = Some(
                    "no pane to draft from: t opens a shell; do the procedure there, then W".into(),
                );
            }
        },
        Command::MarkPane => match app.focused_pane() {
            Some(pane) => {
                let session_id = pane.session_id.clone();
                app.message = Some(format!(
                    "{session_id} marked: a draft (W) holds what is typed from here"
                ));
                return vec![Effect::MarkSession(session_id)];
            }
            None => app.message = Some("no pane to mark: t opens a shell".into()),
        },
        Command::ToggleGrid => {
            app.grid = !app.grid;
            app.message = Some(if app.grid {
                "panes in a grid (g: tabs again)".into()
            } else {
                "panes as tabs (g: a grid)".into()
            });
            return fit_panes(app);
        }
        Command::Zoom => {
            app.zoom = !app.zoom;
            return fit_panes(app);
        }
        _ => {}
    }
    Vec::new()
}

/// A pane's history and search, and copy mode (pages scroll the overlay or the editor when
/// one of them is open).
pub(super) fn history_and_copy(app: &mut App, command: Command) -> Vec<Effect> {
    match command {
        Command::ScrollUp if app.mode() == Mode::Help => {
            scroll_help(app, -help_page(app));
        }
        Command::ScrollDown if app.mode() == Mode::Help => {
            scroll_help(app, help_page(app));
        }
        Command::ScrollTop if app.mode() == Mode::Help => {
            scroll_help(app, isize::MIN / 2);
        }
        Command::ScrollLive if app.mode() == Mode::Help => {
            scroll_help(app, isize::MAX / 2);
        }
        Command::ScrollUp if app.mode() == Mode::Approve => {
            super::super::approvals::move_by(app, -page_rows(app));
        }
        Command::ScrollDown if app.mode() == Mode::Approve => {
            super::super::approvals::move_by(app, page_rows(app));
        }
        Command::ScrollUp if app.mode() == Mode::Edit => editing::page(app, -1),
        Command::ScrollDown if app.mode() == Mode::Edit => editing::page(app, 1),
        Command::ScrollUp if app.mode() == Mode::Copy => return copy::page(app, 1),
        Command::ScrollDown if app.mode() == Mode::Copy => return copy::page(app, -1),
        Command::ScrollUp => return history::scroll(app, 1),
        Command::ScrollDown => return history::scroll(app, -1),
        Command::ScrollTop => return history::top(app),
        Command::ScrollLive => history::leave(app),
        Command::Search => match app.focused_pane() {
            Some(_) => {
                app.open(Overlay::Search(String::new()));
                app.view = View::Panes;
            }
            None => app.message = Some("no pane to search: t opens a shell".into()),
        },
        Command::NextHit => return history::next_hit(app, 1),
        Command::PrevHit => return history::next_hit(app, -1),
        Command::CopyMode => return copy::start(app),
        Command::Left => return copy::move_cursor(app, -1, 0),
        Command::Right => return copy::move_cursor(app, 1, 0),
        Command::Mark => copy::mark(app, Unit::Char),
        Command::MarkLines => copy::mark(app, Unit::Line),
        Command::Copy => return copy::copy(app),
        _ => {}
    }
    Vec::new()
}

/// Shows a session in the pane area and gives its program the pane's size.
pub(in crate::tui) fn show_pane(app: &mut App, session_id: &str) -> Vec<Effect> {
    if let Some(at) = app.panes.iter().position(|p| p.session_id == session_id) {
        app.pane = at;
        app.view = View::Panes;
    }
    fit_panes(app)
}

/// The focused pane fitted to this studio, when another studio sized it otherwise (alone,
/// the studio fits its panes whenever its layout changes: nothing is left to fit).
pub(super) fn fit_focused(app: &App) -> Vec<Effect> {
    if app.studios <= 1 {
        return Vec::new();
    }
    let focused = app.focused_pane().map(|p| p.session_id.clone());
    fit_panes(app)
        .into_iter()
        .filter(|e| matches!(e, Effect::Resize { session_id, .. } if Some(session_id) == focused.as_ref()))
        .collect()
}

/// Fits the panes shown to this studio after something others did (a snapshot, a session
/// opened or closed): only while it is the one studio attached. With several, a pane keeps
/// the size of the studio that last typed into it or resized it, and the others draw it
/// cropped (draw/pane.rs says so).
pub(in crate::tui) fn fit_when_alone(app: &App) -> Vec<Effect> {
    if app.studios > 1 {
        return Vec::new();
    }
    fit_panes(app)
}

/// Resizes the PTY of each pane on screen to the cells it is drawn in, when they differ
/// (the person changed the layout, the terminal was resized, or they type into it).
pub(in crate::tui) fn fit_panes(app: &App) -> Vec<Effect> {
    layout::app_slots(app)
        .into_iter()
        .filter_map(|slot| {
            let p = app.panes.get(slot.index)?;
            let (cols, rows) = layout::pty_size(slot.inner);
            let own_window = app.inside.contains(&p.pid);
            (p.running && !own_window && (p.cols, p.rows) != (cols, rows)).then(|| Effect::Resize {
                session_id: p.session_id.clone(),
                cols,
                rows,
            })
        })
        .collect()
}

/// Whether what an actor started is the person's own (their run's session is shown at once).
pub(in crate::tui) fn is_persons(app: &App, actor: &Actor) -> bool {
    match actor {
        Actor::Person { .. } => app.is_me(actor),
        Actor::Run { run_id } => app
            .runs
            .get(run_id)
            .and_then(|r| r.actor.as_ref())
            .is_some_and(|a| app.is_me(a)),
        _ => false,
    }
}
