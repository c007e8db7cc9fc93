//! The studio's one state transition: `(state, event) → effects`. Keys become commands
//! through the keymap, commands change the state, and anything that needs the engine comes
//! back as an [`Effect`] for the loop to carry out. No terminal, no engine: unit-testable.

use super::command::Command;
use super::copy;
use super::effect::Effect;
use super::form::InputsForm;
use super::history;
use super::keymap::{self, Mode};
use super::layout;
use super::runs;
use super::state::{App, PlanView, ProblemsView, View};
use super::state::{NameFor, Palette, Point, Unit};
use super::{editor, naming};
use crate::engine::authoring::{InputSpec, WorkflowSummary};
use crate::engine::journal::{JournalEvent, RunSummary};
use crate::engine::search::Found;
use crate::engine::{Actor, EngineEvent, Phase, SessionInfo, Snapshot};
use crate::workflow::plan::Plan;
use crate::workflow::violation::Violation;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent};

/// Something that happened: from the terminal, the engine, or an effect that finished.
#[derive(Debug, Clone)]
pub enum Event {
    Key(KeyEvent),
    /// A mouse event and when it came, in milliseconds of the loop's clock.
    Mouse {
        event: MouseEvent,
        at_ms: u64,
        /// In focus mode: what the focused pane's program asked the terminal to report
        /// (read from its screen when the event came).
        reporting: Option<super::mouse_report::Reporting>,
    },
    /// The person's terminal gained (true) or lost the focus.
    TermFocus(bool),
    Paste(String),
    Resize(u16, u16),
    Engine(Box<EngineEvent>),
    Snapshot(Box<Snapshot>),
    /// How many studios the folder's server has attached now, this one included.
    Studios(usize),
    /// Why a log cannot be written (`None`: it can again): the folder server's, or the
    /// studio's own (`server` false).
    LogTrouble {
        server: bool,
        trouble: Option<String>,
    },
    /// Focus mode could not take the pane's input: someone else types into it (why).
    HoldRefused(String),
    /// What the person asked to end before quitting has ended (or failed to): quit now.
    Ended(Vec<String>),
    List(Vec<WorkflowSummary>),
    Plan {
        workflow: String,
        plan: Result<Plan, String>,
    },
    Inputs {
        workflow: String,
        inputs: Result<Vec<InputSpec>, String>,
    },
    RunStarted(Result<String, String>),
    ShellOpened(Result<SessionInfo, String>),
    /// The last lines of a session's history; `last_line` is the number of the last one.
    History {
        session_id: String,
        lines: Result<(Vec<String>, u64), String>,
    },
    /// A page of a pane search (`more`: a page after the first).
    Found {
        session_id: String,
        pattern: String,
        more: bool,
        found: Result<Found, String>,
    },
    /// A workflow's file name and violations.
    Problems {
        workflow: String,
        problems: Result<(String, Vec<Violation>), String>,
    },
    /// A workflow's past runs, newest first.
    Runs {
        workflow: String,
        runs: Vec<RunSummary>,
    },
    /// A run's journal, from its first line.
    RunEvents {
        run_id: String,
        events: Result<Vec<JournalEvent>, String>,
    },
    /// Where a pane's cursor is and whether a full-screen program holds its screen (copy
    /// mode starts there).
    CursorLocated {
        session_id: String,
        alternate: bool,
        cursor: Point,
    },
    /// Text went to the clipboard: how many characters.
    Copied(usize),
    /// A workflow's file for the editor.
    Document {
        workflow: String,
        document: Result<super::editor::Document, String>,
    },
    /// Typing paused at `edits`.
    CheckDue(u64),
    /// The editor's text as it was at `edits`, checked.
    Checked {
        edits: u64,
        draft: Box<crate::engine::editing::Draft>,
    },
    /// The editor's save of the text at `edits`: the new version and its error count.
    Saved {
        edits: u64,
        result: Result<(String, usize), super::editor::SaveFailure>,
    },
    /// What is on disk for a workflow now (version and text); `None`: no such file.
    Disk {
        workflow: String,
        now: Option<(String, String)>,
    },
    /// Recovery copies found when the studio started.
    Recovered(Vec<crate::engine::Recovered>),
    /// A workflow was created, duplicated or renamed: its name (or why not).
    Named {
        purpose: super::state::NameFor,
        result: Result<String, String>,
    },
    /// The path of a workflow's file arrived (from the folder's server): open it in the
    /// person's editor.
    EditFile(String),
    /// The external editor returned.
    ExternalDone(Result<(), String>),
    /// An effect finished with nothing to tell.
    Nothing,
    /// The audit log's latest tool calls, oldest first.
    Audit(Vec<crate::engine::audit_log::AuditEntry>),
    /// The runs waiting for approval, oldest first, and why an answer could not be given.
    Approvals {
        pending: Vec<crate::engine::approval::ApprovalRequest>,
        error: Option<String>,
    },
    /// An effect failed: tell the person.
    Failed(String),
}

pub fn update(app: &mut App, event: Event) -> Vec<Effect> {
    let mut effects = apply_event(app, event);
    super::approvals::show_if_due(app);
    // While a manifest is open, the editor is what the keys go back to from any overlay.
    if app.mode == Mode::Normal && app.editor.is_some() {
        app.mode = Mode::Edit;
    }
    // The pane the person types into (focus mode) is theirs alone, however focus mode began
    // or ended (a key, a click, the pane's program exiting).
    let typing = (app.mode == Mode::Focus)
        .then(|| app.focused_pane().map(|p| p.session_id.clone()))
        .flatten();
    if typing != app.input_held {
        if let Some(old) = app.input_held.take() {
            effects.push(Effect::ReleaseInput(old));
        }
        if let Some(new) = &typing {
            effects.push(Effect::HoldInput(new.clone()));
        }
        app.input_held = typing;
    }
    effects
}

#[expect(clippy::too_many_lines, reason = "issue 23 splits it by its jobs")]
fn apply_event(app: &mut App, event: Event) -> Vec<Effect> {
    match event {
        Event::Key(key) => on_key(app, key),
        Event::Mouse {
            event,
            at_ms,
            reporting,
        } => super::mouse::on_mouse(app, event, at_ms, reporting),
        Event::TermFocus(focused) => {
            app.term_focused = focused;
            if focused && app.attention.take().is_some() {
                return vec![Effect::ClearAlert];
            }
            Vec::new()
        }
        Event::CursorLocated {
            session_id,
            alternate,
            cursor,
        } => copy::located(app, &session_id, alternate, cursor),
        Event::Document { workflow, document } => match document {
            Ok(document) => editor::opened(app, workflow, document),
            Err(e) => {
                app.message = Some(format!("cannot open {workflow}: {e}"));
                Vec::new()
            }
        },
        Event::CheckDue(edits) => editor::check_due(app, edits),
        Event::Checked { edits, draft } => {
            editor::checked(app, edits, *draft);
            Vec::new()
        }
        Event::Saved { edits, result } => editor::saved(app, edits, result),
        Event::Disk { workflow, now } => editor::disk(app, &workflow, now),
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
        Event::Named { purpose, result } => naming::named(app, purpose, result),
        Event::Nothing => Vec::new(),
        Event::Approvals { pending, error } => {
            super::approvals::loaded(app, pending, error);
            Vec::new()
        }
        Event::Audit(entries) => {
            if entries.is_empty() {
                app.message = Some("no agent has called a tool on this folder yet".into());
            } else {
                // The newest at the bottom, in view.
                let top = entries
                    .len()
                    .saturating_sub(usize::from(app.size.1).saturating_sub(6));
                app.audit = Some((entries, top));
                app.mode = Mode::Audit;
            }
            Vec::new()
        }
        Event::EditFile(path) => vec![Effect::ExternalEditor(path)],
        Event::ExternalDone(result) => {
            if let Err(e) = result {
                app.message = Some(e);
            }
            vec![Effect::ReloadList]
        }
        Event::Copied(chars) => {
            let mut message = format!("copied {chars} characters to the clipboard");
            if let Some(hint) = &app.clipboard_hint {
                message.push_str(&format!(" · {hint}"));
            }
            app.message = Some(message);
            Vec::new()
        }
        Event::Paste(text) if app.mode == Mode::Edit => editor::paste(app, &text),
        Event::Paste(text) => match (app.mode, app.focused_pane()) {
            (Mode::Focus, Some(pane)) => {
                let paste = Effect::Paste {
                    session_id: pane.session_id.clone(),
                    text,
                };
                let mut effects = fit_focused(app);
                effects.push(paste);
                effects
            }
            (mode, _) if mode.takes_text() => {
                // Typed one character at a time so each field's checks apply; controls
                // (a pasted newline) would end or break the line.
                text.chars()
                    .filter(|c| !c.is_control())
                    .flat_map(|c| type_char(app, c))
                    .collect()
            }
            _ => Vec::new(),
        },
        Event::Resize(cols, rows) => {
            app.size = (cols, rows);
            fit_panes(app)
        }
        Event::Engine(event) => super::apply::engine_event(app, *event),
        Event::Snapshot(snapshot) => super::apply::snapshot(app, *snapshot),
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
        Event::Inputs { workflow, inputs } => match inputs {
            Ok(inputs) if inputs.is_empty() => vec![Effect::StartRun {
                workflow,
                inputs: Default::default(),
            }],
            Ok(inputs) => {
                app.form = Some(InputsForm::new(workflow, inputs));
                app.mode = Mode::Form;
                Vec::new()
            }
            Err(e) => {
                app.message = Some(format!("cannot run {workflow}: {e}"));
                Vec::new()
            }
        },
        Event::RunStarted(result) => {
            app.message = Some(match result {
                Ok(run_id) => format!("run {run_id} started"),
                Err(e) => format!("the run did not start: {e}"),
            });
            Vec::new()
        }
        Event::ShellOpened(result) => match result {
            Ok(info) => {
                let id = info.session_id.clone();
                if !app.panes.iter().any(|p| p.session_id == id) {
                    app.panes.push(info);
                }
                show_pane(app, &id)
            }
            Err(e) => {
                app.message = Some(format!("no shell: {e}"));
                Vec::new()
            }
        },
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
        Event::Problems { workflow, problems } => {
            match problems {
                Ok((_, violations)) if violations.is_empty() => {
                    app.message = Some(format!("{workflow} has no problems"));
                }
                Ok((file, violations)) => {
                    app.problems = Some(ProblemsView {
                        workflow,
                        file,
                        violations,
                        top: 0,
                    });
                    app.mode = Mode::Problems;
                }
                Err(e) => app.message = Some(format!("cannot read {workflow}: {e}")),
            }
            Vec::new()
        }
        Event::Runs { workflow, runs } => runs::runs_read(app, workflow, runs),
        Event::RunEvents { run_id, events } => {
            runs::events_read(app, &run_id, events);
            Vec::new()
        }
        Event::Failed(e) => {
            app.message = Some(e);
            Vec::new()
        }
        Event::Studios(n) => {
            app.studios = n;
            Vec::new()
        }
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
            Vec::new()
        }
        Event::HoldRefused(why) => {
            // Out of focus mode: the keys would be refused one by one.
            if app.mode == Mode::Focus {
                app.mode = Mode::Normal;
            }
            app.input_held = None;
            app.message = Some(why);
            Vec::new()
        }
        Event::Ended(failures) => {
            if failures.is_empty() {
                app.quit = true;
            } else {
                // Something would not end: the person stays to see what, and decides again.
                app.message = Some(failures.join("; "));
            }
            Vec::new()
        }
    }
}

fn on_key(app: &mut App, key: KeyEvent) -> Vec<Effect> {
    if key.kind == KeyEventKind::Release {
        return Vec::new();
    }
    if let Some(command) = keymap::lookup(app.mode, app.view, &key) {
        return run_command(app, command);
    }
    if app.mode == Mode::Complete {
        // Typing on closes the list; the key is the text's.
        editor::close_completion(app);
    }
    if app.mode == Mode::Edit {
        return editor::key(app, key);
    }
    if app.mode == Mode::Focus {
        if app.focused_pane().is_none() {
            app.mode = Mode::Normal;
            return Vec::new();
        }
        let Some(k) = super::keys::to_pty(&key) else {
            return Vec::new();
        };
        // The pane follows the studio that types into it (another may have sized it).
        let mut effects = fit_focused(app);
        if let Some(pane) = app.focused_pane() {
            effects.push(Effect::SendKeys {
                session_id: pane.session_id.clone(),
                keys: vec![k],
            });
        }
        return effects;
    }
    let chord = key
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    match key.code {
        KeyCode::Char(c) if app.mode.takes_text() && !chord => type_char(app, c),
        _ => Vec::new(),
    }
}

fn type_char(app: &mut App, c: char) -> Vec<Effect> {
    match app.mode {
        Mode::Filter => {
            app.filter.push(c);
            app.selected = 0;
            plan_follows_selection(app, false)
        }
        Mode::Form => {
            if let Some(form) = &mut app.form {
                form.type_char(c);
            }
            Vec::new()
        }
        Mode::Prompt => {
            app.answer.push(c);
            Vec::new()
        }
        Mode::Search => {
            app.search_input.push(c);
            Vec::new()
        }
        Mode::Palette => {
            if let Some(p) = &mut app.palette {
                p.query.push(c);
                p.selected = 0;
            }
            Vec::new()
        }
        Mode::EditFind => {
            if let Some(e) = &mut app.editor {
                e.find.push(c);
            }
            Vec::new()
        }
        Mode::Name => {
            if let Some(n) = &mut app.naming {
                n.name.push(c);
            }
            Vec::new()
        }
        _ => Vec::new(),
    }
}

/// Carries out one command on the state.
#[expect(clippy::too_many_lines, reason = "issue 23 splits it by its jobs")]
pub fn run_command(app: &mut App, command: Command) -> Vec<Effect> {
    match command {
        Command::Quit => {
            if !editor::may_quit(app) {
                return Vec::new();
            }
            super::quitting::quit(app);
        }
        Command::Detach => {
            if !editor::may_quit(app) {
                return Vec::new();
            }
            super::quitting::detach(app);
        }
        Command::Approve => return super::approvals::decide(app, true),
        Command::Deny => return super::approvals::decide(app, false),
        Command::Later => super::approvals::later(app),
        Command::Yes => return super::quitting::end_and_quit(app),
        Command::No => app.mode = Mode::Normal,
        Command::Help => {
            app.mode = Mode::Help;
            app.help_top = 0;
        }
        Command::Filter => {
            app.mode = Mode::Filter;
            app.view = View::List;
        }
        Command::Up | Command::Down => {
            let delta = if command == Command::Up { -1 } else { 1 };
            return move_by(app, delta);
        }
        Command::NextView | Command::PrevView => {
            let at = View::ALL.iter().position(|v| *v == app.view).unwrap_or(0);
            let step = if command == Command::NextView { 1 } else { 2 };
            app.view = View::ALL[(at + step) % View::ALL.len()];
        }
        Command::Confirm => return confirm(app),
        Command::Close => match app.mode {
            Mode::Filter => {
                app.filter.clear();
                app.mode = Mode::Normal;
                return plan_follows_selection(app, false);
            }
            Mode::Form => {
                app.form = None;
                app.mode = Mode::Normal;
            }
            Mode::Prompt => {
                app.answering = None;
                app.mode = Mode::Normal;
            }
            Mode::Search => {
                app.search_input.clear();
                app.mode = Mode::Normal;
            }
            Mode::Problems => {
                app.problems = None;
                app.mode = Mode::Normal;
            }
            Mode::Runs => runs::close(app),
            Mode::Palette => {
                app.palette = None;
                app.mode = Mode::Normal;
            }
            Mode::Copy => copy::leave(app),
            Mode::Edit => return editor::leave(app),
            Mode::Complete => editor::close_completion(app),
            Mode::Audit => {
                app.audit = None;
                app.mode = Mode::Normal;
            }
            Mode::EditAsk => return editor::answer(app, 'n'),
            Mode::EditFind => app.mode = Mode::Edit,
            Mode::Name => {
                app.naming = None;
                app.mode = Mode::Normal;
            }
            _ => {
                // Esc in the panes view also leaves the history and the search.
                if app.view == View::Panes && (app.scroll.is_some() || app.search.is_some()) {
                    history::leave(app);
                    app.search = None;
                }
                app.mode = Mode::Normal;
                app.message = None;
                app.selection = None;
            }
        },
        Command::Run => {
            if let Some(w) = app.selected_workflow() {
                return vec![Effect::LoadInputs(w.name.clone())];
            }
            app.message = Some("no workflow selected".into());
        }
        Command::Cancel => {
            let run = app
                .selected_workflow()
                .and_then(|w| app.active_run_of(&w.name))
                .map(|r| r.run_id.clone());
            match run {
                Some(run_id) => return vec![Effect::CancelRun(run_id)],
                None => app.message = Some("the selected workflow has no run in progress".into()),
            }
        }
        Command::Answer if super::approvals::reopen(app) => {}
        Command::Answer => {
            let selected = app.selected_workflow().map(|w| w.name.clone());
            let waiting = app
                .runs
                .values()
                .rev()
                .filter(|r| r.phase == Phase::WaitingForInput)
                .max_by_key(|r| Some(&r.workflow) == selected.as_ref())
                .map(|r| r.run_id.clone());
            match waiting {
                Some(run_id) => open_prompt(app, run_id),
                None => app.message = Some("no run is waiting for an answer".into()),
            }
        }
        Command::NewShell => {
            let (cols, rows) = layout::new_pane_size(app);
            return vec![Effect::OpenShell { cols, rows }];
        }
        Command::Focus => match app.focused_pane() {
            Some(pane) if pane.running => {
                // Keys go to the live program: show its live screen.
                history::leave(app);
                app.mode = Mode::Focus;
                app.view = View::Panes;
            }
            Some(_) => app.message = Some("the pane's program has ended".into()),
            None => app.message = Some("no pane to focus: t opens a shell".into()),
        },
        Command::LeaveFocus => app.mode = Mode::Normal,
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
            if let Some(pane) = app.focused_pane() {
                return vec![Effect::CloseSession(pane.session_id.clone())];
            }
        }
        Command::ChoicePrev | Command::ChoiceNext if app.mode == Mode::Name => {
            naming::cycle(
                app,
                if command == Command::ChoicePrev {
                    -1
                } else {
                    1
                },
            );
        }
        Command::ChoicePrev | Command::ChoiceNext => {
            if let Some(form) = &mut app.form {
                form.cycle_choice(if command == Command::ChoicePrev {
                    -1
                } else {
                    1
                });
            }
        }
        Command::DeleteChar => match app.mode {
            Mode::Filter => {
                app.filter.pop();
                return plan_follows_selection(app, false);
            }
            Mode::Form => {
                if let Some(form) = &mut app.form {
                    form.delete_char();
                }
            }
            Mode::Prompt => {
                app.answer.pop();
            }
            Mode::Search => {
                app.search_input.pop();
            }
            Mode::Palette => {
                if let Some(p) = &mut app.palette {
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
                if let Some(n) = &mut app.naming {
                    n.name.pop();
                }
            }
            _ => {}
        },
        Command::ScrollUp if app.mode == Mode::Approve => {
            super::approvals::move_by(app, -page_rows(app));
        }
        Command::ScrollDown if app.mode == Mode::Approve => {
            super::approvals::move_by(app, page_rows(app));
        }
        Command::ScrollUp if app.mode == Mode::Edit => editor::page(app, -1),
        Command::ScrollDown if app.mode == Mode::Edit => editor::page(app, 1),
        Command::ScrollUp if app.mode == Mode::Copy => return copy::page(app, 1),
        Command::ScrollDown if app.mode == Mode::Copy => return copy::page(app, -1),
        Command::ScrollUp => return history::scroll(app, 1),
        Command::ScrollDown => return history::scroll(app, -1),
        Command::ScrollTop => return history::top(app),
        Command::ScrollLive => history::leave(app),
        Command::Search => match app.focused_pane() {
            Some(_) => {
                app.search_input.clear();
                app.mode = Mode::Search;
                app.view = View::Panes;
            }
            None => app.message = Some("no pane to search: t opens a shell".into()),
        },
        Command::NextHit => return history::next_hit(app, 1),
        Command::PrevHit => return history::next_hit(app, -1),
        Command::Problems => match app.selected_workflow() {
            Some(w) => return vec![Effect::LoadProblems(w.name.clone())],
            None => app.message = Some("no workflow selected".into()),
        },
        Command::Runs => return runs::open(app),
        Command::JournalUp => runs::scroll(app, 1),
        Command::JournalDown => runs::scroll(app, -1),
        Command::JournalFollow => runs::follow(app),
        Command::Palette => {
            app.palette = Some(Palette::default());
            app.mode = Mode::Palette;
        }
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
        Command::CopyMode => return copy::start(app),
        Command::Left => return copy::move_cursor(app, -1, 0),
        Command::Right => return copy::move_cursor(app, 1, 0),
        Command::Mark => copy::mark(app, Unit::Char),
        Command::MarkLines => copy::mark(app, Unit::Line),
        Command::Copy => return copy::copy(app),
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
        Command::Edit => return editor::open(app),
        Command::ExternalEdit => return editor::external(app),
        Command::NewWorkflow => naming::start(app, NameFor::New(0)),
        Command::Duplicate | Command::Rename | Command::Delete => {
            let Some(w) = app.selected_workflow().map(|w| w.name.clone()) else {
                app.message = Some("no workflow selected".into());
                return Vec::new();
            };
            naming::start(
                app,
                match command {
                    Command::Duplicate => NameFor::Duplicate(w),
                    Command::Rename => NameFor::Rename(w),
                    _ => NameFor::Delete(w),
                },
            );
        }
        Command::Save => return editor::save(app),
        Command::Undo => return editor::undo(app, false),
        Command::Redo => return editor::undo(app, true),
        Command::Find => editor::start_find(app),
        Command::NextProblem => editor::next_problem(app),
        Command::TogglePanel => editor::cycle_panel(app),
        Command::Choose(c) => return editor::answer(app, c),
        Command::Complete => return editor::start_completion(app),
        Command::Audit => return vec![Effect::LoadAudit],
    }
    Vec::new()
}

/// A page of an overlay as tall as the screen (its border and the status line aside).
fn page_rows(app: &App) -> isize {
    isize::try_from(app.size.1.saturating_sub(6).max(1)).unwrap_or(1)
}

fn move_by(app: &mut App, delta: isize) -> Vec<Effect> {
    match (app.mode, app.view) {
        (Mode::Form, _) => {
            if let Some(form) = &mut app.form {
                form.move_by(delta);
            }
            Vec::new()
        }
        (Mode::Help, _) => {
            // The overlay is the terminal's height less 2, inside its border.
            let shown = usize::from(app.size.1).saturating_sub(4);
            let last = keymap::help_height().saturating_sub(shown);
            app.help_top = app.help_top.saturating_add_signed(delta).min(last);
            Vec::new()
        }
        (Mode::Problems, _) => {
            if let Some(p) = &mut app.problems {
                let last = p.violations.len().saturating_sub(1);
                p.top = (p.top as isize + delta).clamp(0, last as isize) as usize;
            }
            Vec::new()
        }
        (Mode::Runs, _) => runs::move_by(app, delta),
        (Mode::Palette, _) => {
            if let Some(p) = &mut app.palette {
                let n = super::palette::matches(&p.query).len();
                p.selected =
                    (p.selected as isize + delta).clamp(0, n.saturating_sub(1) as isize) as usize;
            }
            Vec::new()
        }
        (Mode::Copy, _) => copy::move_cursor(app, 0, delta as i64),
        (Mode::Approve, _) => {
            super::approvals::move_by(app, delta);
            Vec::new()
        }
        (Mode::Audit, _) => {
            if let Some((entries, top)) = &mut app.audit {
                *top = top
                    .saturating_add_signed(delta)
                    .min(entries.len().saturating_sub(1));
            }
            Vec::new()
        }
        (Mode::Complete, _) => {
            editor::move_completion(app, delta);
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
        (_, View::Panes) => run_command(
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
    match app.mode {
        Mode::Filter => {
            app.mode = Mode::Normal;
            Vec::new()
        }
        Mode::Form => {
            let Some(form) = &mut app.form else {
                app.mode = Mode::Normal;
                return Vec::new();
            };
            match form.submit() {
                Some(inputs) => {
                    let workflow = form.workflow.clone();
                    app.form = None;
                    app.mode = Mode::Normal;
                    vec![Effect::StartRun { workflow, inputs }]
                }
                None => Vec::new(),
            }
        }
        Mode::Search => {
            app.mode = Mode::Normal;
            history::start_search(app)
        }
        Mode::EditFind => {
            editor::find(app);
            Vec::new()
        }
        Mode::Name => naming::submit(app),
        Mode::Complete => editor::accept_completion(app),
        Mode::Palette => {
            let chosen = app.palette.take().and_then(|p| {
                super::palette::matches(&p.query)
                    .get(p.selected)
                    .map(|e| e.command)
            });
            app.mode = Mode::Normal;
            match chosen {
                Some(command) => run_command(app, command),
                None => Vec::new(),
            }
        }
        Mode::Prompt => {
            app.mode = Mode::Normal;
            match app.answering.take() {
                Some(run_id) => vec![Effect::AnswerPrompt {
                    run_id,
                    answer: std::mem::take(&mut app.answer),
                }],
                None => Vec::new(),
            }
        }
        _ => match app.view {
            View::List => {
                app.view = View::Plan;
                Vec::new()
            }
            View::Panes => run_command(app, Command::Focus),
            View::Plan => Vec::new(),
        },
    }
}

pub(super) fn open_prompt(app: &mut App, run_id: String) {
    app.answering = Some(run_id);
    app.answer.clear();
    app.mode = Mode::Prompt;
}

/// Loads the plan of the selected workflow when it is not the one shown (or always, when the
/// workflow itself changed).
pub(super) fn plan_follows_selection(app: &mut App, changed: bool) -> Vec<Effect> {
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

/// Shows a session in the pane area and gives its program the pane's size.
pub(super) fn show_pane(app: &mut App, session_id: &str) -> Vec<Effect> {
    if let Some(at) = app.panes.iter().position(|p| p.session_id == session_id) {
        app.pane = at;
        app.view = View::Panes;
    }
    fit_panes(app)
}

/// The focused pane fitted to this studio, when another studio sized it otherwise (alone,
/// the studio fits its panes whenever its layout changes: nothing is left to fit).
fn fit_focused(app: &App) -> Vec<Effect> {
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
pub(super) fn fit_when_alone(app: &App) -> Vec<Effect> {
    if app.studios > 1 {
        return Vec::new();
    }
    fit_panes(app)
}

/// Resizes the PTY of each pane on screen to the cells it is drawn in, when they differ
/// (the person changed the layout, the terminal was resized, or they type into it).
pub(super) fn fit_panes(app: &App) -> Vec<Effect> {
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
pub(super) fn is_persons(app: &App, actor: &Actor) -> bool {
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
