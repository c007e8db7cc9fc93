//! The box open over the studio's views, owning what it shows: one at a time, and while it is
//! open the keys go to it. Closing it is dropping it: the mode underneath comes back by
//! itself (see [`super::state::App::mode`]).

use super::form::InputsForm;
use super::keymap::Mode;
use super::state::{App, Naming, Palette, ProblemsView, RunsView};
use crate::engine::audit_log::AuditEntry;

/// What is open over the views, with its state.
#[derive(Debug, Clone)]
pub enum Overlay {
    /// The keys of `of` (the mode help was opened from), from the row `top` down: it pages
    /// when the terminal is short.
    Help { of: Mode, top: usize },
    /// Asked whether to close this pane, whose program still runs (`x`).
    ConfirmClose(String),
    /// The selected workflow's violations.
    Problems(ProblemsView),
    /// The audit log's latest tool calls, from the line `top` down.
    Audit {
        entries: Vec<AuditEntry>,
        top: usize,
    },
    /// The command palette.
    Palette(Palette),
    /// Naming a new, duplicated or renamed workflow.
    Naming(Naming),
    /// Filling a workflow's inputs before its run.
    Form(InputsForm),
    /// Answering the prompt of the run `run_id`: the answer typed so far.
    Prompt { run_id: String, answer: String },
    /// Asked whether to quit while a run is in progress.
    ConfirmQuit,
    /// Typing a search in the shown pane's output: the pattern so far.
    Search(String),
    /// The selected workflow's runs and a run's journal.
    Runs(RunsView),
    /// The first of the agents' runs waiting for approval (`App::approvals`), shown.
    Approve,
}

impl Overlay {
    /// The mode whose keys this overlay takes.
    pub fn mode(&self) -> Mode {
        match self {
            Overlay::Help { .. } => Mode::Help,
            Overlay::ConfirmClose(_) => Mode::ConfirmClose,
            Overlay::Problems(_) => Mode::Problems,
            Overlay::Audit { .. } => Mode::Audit,
            Overlay::Palette(_) => Mode::Palette,
            Overlay::Naming(_) => Mode::Name,
            Overlay::Form(_) => Mode::Form,
            Overlay::Prompt { .. } => Mode::Prompt,
            Overlay::ConfirmQuit => Mode::ConfirmQuit,
            Overlay::Search(_) => Mode::Search,
            Overlay::Runs(_) => Mode::Runs,
            Overlay::Approve => Mode::Approve,
        }
    }
}

impl App {
    /// The inputs form, while it is open.
    pub fn form(&self) -> Option<&InputsForm> {
        match &self.overlay {
            Some(Overlay::Form(form)) => Some(form),
            _ => None,
        }
    }

    pub fn form_mut(&mut self) -> Option<&mut InputsForm> {
        match &mut self.overlay {
            Some(Overlay::Form(form)) => Some(form),
            _ => None,
        }
    }

    /// The run view, while it is open.
    pub fn runs_view(&self) -> Option<&RunsView> {
        match &self.overlay {
            Some(Overlay::Runs(view)) => Some(view),
            _ => None,
        }
    }

    pub fn runs_view_mut(&mut self) -> Option<&mut RunsView> {
        match &mut self.overlay {
            Some(Overlay::Runs(view)) => Some(view),
            _ => None,
        }
    }
}
