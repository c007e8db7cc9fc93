//! The box open over the studio's views, owning what it shows: one at a time, and while it is
//! open the keys go to it. Closing it is dropping it: the mode underneath comes back by
//! itself (see [`super::state::App::mode`]).

use super::form::InputsForm;
use super::mode::Mode;
use crate::engine::audit_log::AuditEntry;
use crate::engine::journal::{JournalEvent, RunSummary};
use crate::workflow::violation::Violation;

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
    /// Every run and terminal with what it asks of the person (`App::inbox`), the one at
    /// `selected` chosen.
    Inbox { selected: usize },
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
            Overlay::Inbox { .. } => Mode::Inbox,
        }
    }
}

/// A workflow's violations, as the engine reads them from its file.
#[derive(Debug, Clone, PartialEq)]
pub struct ProblemsView {
    pub workflow: String,
    pub file: String,
    pub violations: Vec<Violation>,
    /// The first line shown.
    pub top: usize,
}

/// The runs of a workflow and the journal of the selected one (the run view).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunsView {
    pub workflow: String,
    /// The journaled runs, newest first.
    pub runs: Vec<RunSummary>,
    /// Index into `runs`.
    pub selected: usize,
    /// The run whose journal is shown.
    pub run_id: Option<String>,
    /// Its journal lines, oldest first: as read, then as they arrive.
    pub journal: Vec<JournalEvent>,
    /// Whether the read of the journal has come back.
    pub loaded: bool,
    /// Lines between the bottom of the journal shown and its end: 0 follows the end.
    pub offset: usize,
}

impl RunsView {
    pub fn selected_run(&self) -> Option<&RunSummary> {
        self.runs.get(self.selected)
    }

    /// The journal's last line number held.
    pub fn last_seq(&self) -> u64 {
        self.journal.last().map_or(0, |e| e.seq)
    }
}

/// What a typed workflow name is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameFor {
    /// A new workflow from the template at this index of `engine::editing::TEMPLATES`.
    New(usize),
    /// A copy of this workflow.
    Duplicate(String),
    /// A new name for this workflow.
    Rename(String),
    /// Deleting this workflow: the name typed again confirms it.
    Delete(String),
    /// A new workflow drafted from what was typed in this session.
    Draft(String),
}

/// The name being typed, and what it is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Naming {
    pub purpose: NameFor,
    pub name: String,
}

/// The command palette: what is typed and the match selected.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Palette {
    pub query: String,
    /// Index into the matches of `query`.
    pub selected: usize,
}
