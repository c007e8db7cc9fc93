//! The studio's one state transition: `(state, event) → effects`. Keys become commands
//! through the keymap, commands change the state, and anything that needs the engine comes
//! back as an [`Effect`] for the loop to carry out. No terminal, no engine: unit-testable.
//!
//! Here are the events and the transition; beside it, what keys and the mouse do ([`keys`],
//! [`mouse`]), what each command does ([`commands`], [`panes`], [`moving`], overlays' pages in
//! [`paging`]), what the engine's events and snapshots do ([`apply`]), and what the answers of
//! effects, the editor's and the server's events do ([`answers`]).

pub(in crate::tui) mod answers;
mod apply;
mod commands;
mod inbox;
mod keys;
mod mouse;
mod moving;
mod paging;
mod panes;

pub use commands::run_command;
use panes::fit_panes;

use super::effect::Effect;
use super::mode::Mode;
use super::selection::Point;
use super::state::App;
use crate::engine::authoring::{InputSpec, WorkflowSummary};
use crate::engine::journal::{JournalEvent, RunSummary};
use crate::engine::search::Found;
use crate::engine::{EngineEvent, SessionInfo, Snapshot};
use crate::workflow::plan::Plan;
use crate::workflow::violation::Violation;
use crossterm::event::{KeyEvent, MouseEvent};

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
        on_host: bool,
    },
    RunStarted(Result<String, String>),
    /// A run on hosts (a fleet) ended on every one of them.
    FleetEnded(Result<crate::engine::FleetResult, String>),
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
        purpose: super::overlay::NameFor,
        result: Result<String, String>,
    },
    /// The path of a workflow's file arrived (from the folder's server): open it in the
    /// person's editor.
    EditFile(String),
    /// The external editor returned.
    ExternalDone(Result<(), String>),
    /// The themes the palette may offer, by name.
    Themes(Vec<String>),
    /// A theme read to switch to, and what is wrong with it (it was replaced, a colour
    /// was not understood).
    Theme {
        theme: Box<super::theme::Theme>,
        warning: Option<String>,
    },
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
    /// The instant the loop woke for ([`App::due`]): a changed question may take answers
    /// again (settling.rs).
    Tick(std::time::Instant),
}

pub fn update(app: &mut App, event: Event) -> Vec<Effect> {
    let mut effects = apply_event(app, event);
    super::approvals::show_if_due(app);
    super::approvals::track(app, std::time::Instant::now());
    // The pane the person types into (focus mode) is theirs alone, however focus mode began
    // or ended (a key, a click, the pane's program exiting).
    let typing = (app.mode() == Mode::Focus)
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

/// What an event from the terminal or the engine does; the answers of effects and the rest go
/// on to [`answers::answered`].
fn apply_event(app: &mut App, event: Event) -> Vec<Effect> {
    match event {
        Event::Key(key) => keys::on_key(app, key),
        Event::Mouse {
            event,
            at_ms,
            reporting,
        } => mouse::on_mouse(app, event, at_ms, reporting),
        Event::TermFocus(focused) => {
            app.term_focused = focused;
            if focused && app.attention.take().is_some() {
                return vec![Effect::ClearAlert];
            }
            Vec::new()
        }
        Event::Paste(text) => keys::paste(app, text),
        Event::Resize(cols, rows) => {
            app.size = (cols, rows);
            fit_panes(app)
        }
        Event::Engine(event) => apply::engine_event(app, *event),
        Event::Snapshot(snapshot) => apply::snapshot(app, *snapshot),
        Event::Tick(now) => {
            app.tick(now);
            Vec::new()
        }
        other => answers::answered(app, other),
    }
}
