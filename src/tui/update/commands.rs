//! What each command does: the dispatch, and the commands of the studio itself, of the
//! workflows and their runs, of the editor, and those that close or delete in whatever is
//! open (the panes' are in `panes.rs`, moving in `moving.rs`).

use super::super::command::Command;
use super::super::effect::Effect;
use super::super::mode::{BaseMode, Mode, View};
use super::super::overlay::{NameFor, Overlay, Palette};
use super::super::palette::Action;
use super::super::state::App;
use super::super::{approvals, copy, editing, history, naming, quitting, runs};
use super::moving::{moving, plan_follows_selection};
use super::panes::{history_and_copy, panes};
use crate::engine::Phase;

/// Carries out one command on the state.
pub fn run_command(app: &mut App, command: Command) -> Vec<Effect> {
    use Command as C;
    match command {
        C::Quit
        | C::Detach
        | C::Yes
        | C::No
        | C::Approve
        | C::Deny
        | C::Later
        | C::Palette
        | C::Audit
        | C::ToggleMouse => studio(app, command),
        C::Confirm if app.mode() == Mode::Palette => palette_chosen(app),
        C::Up | C::Down | C::NextView | C::PrevView | C::Confirm | C::Filter | C::Help => {
            moving(app, command)
        }
        C::Close => close(app),
        C::DeleteChar => delete_char(app),
        C::ChoicePrev | C::ChoiceNext => choose(app, command),
        C::Toggle => {
            if let Some(form) = app.form_mut() {
                form.type_char(' ');
            }
            Vec::new()
        }
        C::Run
        | C::RunOn
        | C::Cancel
        | C::Answer
        | C::Problems
        | C::Runs
        | C::JournalUp
        | C::JournalDown
        | C::JournalFollow
        | C::Replay
        | C::NewWorkflow
        | C::Duplicate
        | C::Rename
        | C::Delete => workflows(app, command),
        C::NewShell
        | C::Focus
        | C::LeaveFocus
        | C::NextPane
        | C::PrevPane
        | C::ClosePane
        | C::DraftWorkflow
        | C::MarkPane
        | C::ToggleGrid
        | C::Zoom => panes(app, command),
        C::ScrollUp
        | C::ScrollDown
        | C::ScrollTop
        | C::ScrollLive
        | C::Search
        | C::NextHit
        | C::PrevHit
        | C::CopyMode
        | C::Left
        | C::Right
        | C::Mark
        | C::MarkLines
        | C::Copy => history_and_copy(app, command),
        C::Edit
        | C::ExternalEdit
        | C::Save
        | C::Undo
        | C::Redo
        | C::Find
        | C::NextProblem
        | C::TogglePanel
        | C::Choose(_)
        | C::Complete => editing(app, command),
        C::Inbox => super::inbox::open(app),
        C::NextNeedsYou => super::inbox::next_needing(app),
        C::Clear => super::inbox::clear(app),
    }
}

/// Quitting and detaching, answering what the studio asks, the palette, the audit log and
/// the mouse.
fn studio(app: &mut App, command: Command) -> Vec<Effect> {
    match command {
        Command::Quit if editing::may_quit(app) => quitting::quit(app),
        Command::Detach if editing::may_quit(app) => quitting::detach(app),
        Command::Approve => return approvals::decide(app, true),
        Command::Deny => return approvals::decide(app, false),
        Command::Later => approvals::later(app),
        Command::Yes if app.mode() == Mode::ConfirmClose => {
            if let Some(Overlay::ConfirmClose(session_id)) = app.overlay.take() {
                return vec![Effect::CloseSession(session_id)];
            }
        }
        Command::Yes => return quitting::end_and_quit(app),
        Command::No => app.overlay = None,
        Command::Palette => {
            app.open(Overlay::Palette(Palette::default()));
            // The person's own themes, listed again: one added since shows up.
            return vec![Effect::ListThemes];
        }
        Command::Audit => return vec![Effect::LoadAudit],
        Command::ToggleMouse => {
            app.mouse = !app.mouse;
            app.message = Some(if app.mouse {
                "the studio takes the mouse again (m leaves it to your terminal)".into()
            } else {
                "mouse left to your terminal: its own selection and copy work (m takes it back)"
                    .into()
            });
            return vec![Effect::MouseCapture(app.mouse)];
        }
        _ => {}
    }
    Vec::new()
}

/// Enter in the palette: the chosen command runs as its key would, or the chosen theme loads.
fn palette_chosen(app: &mut App) -> Vec<Effect> {
    let selected = match &app.overlay {
        Some(Overlay::Palette(p)) => p.selected,
        _ => 0,
    };
    let chosen = app.palette_matches().into_iter().nth(selected);
    app.overlay = None;
    match chosen.map(|e| e.action) {
        Some(Action::Command(command)) => run_command(app, command),
        Some(Action::Theme(name)) => vec![Effect::LoadTheme(name)],
        None => Vec::new(),
    }
}

/// Esc: closes what is open, or leaves the mode.
fn close(app: &mut App) -> Vec<Effect> {
    // An overlay closes by being dropped; help also lets go of what the normal mode's Esc
    // does, as it always did, and leaves the editor under it alone.
    match app.overlay.take() {
        None => {}
        Some(Overlay::Help { .. }) => {
            let_go(app);
            return Vec::new();
        }
        Some(_) => return Vec::new(),
    }
    match app.mode() {
        Mode::Filter => {
            app.filter.clear();
            app.base = BaseMode::Normal;
            return plan_follows_selection(app, false);
        }
        Mode::Copy => {
            copy::leave(app);
            return Vec::new();
        }
        Mode::Edit => return editing::leave(app),
        Mode::Complete => {
            editing::close_completion(app);
            return Vec::new();
        }
        Mode::EditAsk => return editing::answer(app, 'n'),
        Mode::EditFind => {
            if let Some(editor) = &mut app.editor {
                editor.finding = false;
            }
            return Vec::new();
        }
        _ => let_go(app),
    }
    Vec::new()
}

/// Esc in the normal mode: the message and the selection go, and in the panes view the
/// history and the search.
fn let_go(app: &mut App) {
    if app.view == View::Panes && (app.scroll.is_some() || app.search.is_some()) {
        history::leave(app);
        app.search = None;
    }
    app.message = None;
    app.selection = None;
    app.base = BaseMode::Normal;
}

/// Backspace in the text being typed.
fn delete_char(app: &mut App) -> Vec<Effect> {
    match app.mode() {
        Mode::Filter => {
            app.filter.pop();
            return plan_follows_selection(app, false);
        }
        Mode::Form => {
            if let Some(form) = app.form_mut() {
                form.delete_char();
            }
        }
        Mode::Prompt => {
            if let Some(Overlay::Prompt { answer, .. }) = &mut app.overlay {
                answer.pop();
            }
        }
        Mode::Search => {
            if let Some(Overlay::Search(typed)) = &mut app.overlay {
                typed.pop();
            }
        }
        Mode::Palette => {
            if let Some(Overlay::Palette(p)) = &mut app.overlay {
                p.query.pop();
                p.selected = 0;
            }
        }
        Mode::EditFind => {
            if let Some(e) = &mut app.editor {
                e.find.pop();
            }
        }
        Mode::Name => {
            if let Some(Overlay::Naming(n)) = &mut app.overlay {
                n.name.pop();
            }
        }
        _ => {}
    }
    Vec::new()
}

/// The previous or next choice of a name being given or of a form's field.
fn choose(app: &mut App, command: Command) -> Vec<Effect> {
    let step = if command == Command::ChoicePrev {
        -1
    } else {
        1
    };
    if app.mode() == Mode::Name {
        naming::cycle(app, step);
    } else if let Some(form) = app.form_mut() {
        form.cycle_choice(step);
    }
    Vec::new()
}

/// The selected workflow: running it, its runs and problems, a prompt to answer, and
/// creating, duplicating, renaming or deleting workflows.
fn workflows(app: &mut App, command: Command) -> Vec<Effect> {
    let selected = app.selected_workflow().map(|w| w.name.clone());
    match (command, selected) {
        (Command::Run, Some(w)) => {
            return vec![Effect::LoadInputs {
                workflow: w,
                on_host: false,
            }];
        }
        (Command::RunOn, Some(w)) => {
            return vec![Effect::LoadInputs {
                workflow: w,
                on_host: true,
            }];
        }
        (Command::Problems, Some(w)) => return vec![Effect::LoadProblems(w)],
        (Command::Cancel, Some(w)) => match app.active_run_of(&w).map(|r| r.run_id.clone()) {
            Some(run_id) => return vec![Effect::CancelRun(run_id)],
            None => app.message = Some("the selected workflow has no run in progress".into()),
        },
        (Command::Cancel, None) => {
            app.message = Some("the selected workflow has no run in progress".into());
        }
        (Command::Answer, _) if approvals::reopen(app) => {}
        (Command::Answer, selected) => answer(app, selected),
        (Command::Runs, _) => return runs::open(app),
        (Command::JournalUp, _) => runs::scroll(app, 1),
        (Command::JournalDown, _) => runs::scroll(app, -1),
        (Command::JournalFollow, _) => runs::follow(app),
        (Command::Replay, _) => return runs::replay(app),
        (Command::NewWorkflow, _) => naming::start(app, NameFor::New(0)),
        (Command::Duplicate, Some(w)) => naming::start(app, NameFor::Duplicate(w)),
        (Command::Rename, Some(w)) => naming::start(app, NameFor::Rename(w)),
        (Command::Delete, Some(w)) => naming::start(app, NameFor::Delete(w)),
        (_, None) => app.message = Some("no workflow selected".into()),
        _ => {}
    }
    Vec::new()
}

/// The prompt of the run that waits for an answer, the selected workflow's first.
fn answer(app: &mut App, selected: Option<String>) {
    let waiting = app
        .runs
        .values()
        .rev()
        .filter(|r| r.phase == Phase::WaitingForInput)
        .max_by_key(|r| Some(&r.workflow) == selected.as_ref())
        .map(|r| r.run_id.clone());
    match waiting {
        Some(run_id) => app.open_prompt(run_id),
        None => app.message = Some("no run is waiting for an answer".into()),
    }
}

/// The editor's commands.
fn editing(app: &mut App, command: Command) -> Vec<Effect> {
    match command {
        Command::Edit => return editing::open(app),
        Command::ExternalEdit => return editing::external(app),
        Command::Save => return editing::save(app),
        Command::Undo => return editing::undo(app, false),
        Command::Redo => return editing::undo(app, true),
        Command::Find => editing::start_find(app),
        Command::NextProblem => editing::next_problem(app),
        Command::TogglePanel => editing::cycle_panel(app),
        Command::Choose(c) => return editing::answer(app, c),
        Command::Complete => return editing::start_completion(app),
        _ => {}
    }
    Vec::new()
}
