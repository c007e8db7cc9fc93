//! The studio's state: what the engine told it (workflows, sessions, runs) and what the person
//! is doing (selection, filter, mode, form). No terminal types: update.rs changes it, draw/
//! reads it.

use super::form::InputsForm;
use super::keymap::Mode;
use crate::engine::authoring::WorkflowSummary;
use crate::engine::{Actor, Phase, RunStatus, SessionInfo};
use crate::workflow::plan::Plan;
use indexmap::IndexMap;
use std::collections::HashMap;

/// The view that arrows and Enter act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    #[default]
    List,
    Plan,
    Panes,
}

impl View {
    pub const ALL: [View; 3] = [View::List, View::Plan, View::Panes];
}

/// The step plan of the selected workflow, or why there is none.
#[derive(Debug, Clone)]
pub struct PlanView {
    pub workflow: String,
    pub plan: Result<Plan, String>,
}

/// How one executed state ended, in the run shown.
#[derive(Debug, Clone, PartialEq)]
pub struct StepMark {
    pub status: String,
    pub elapsed_ms: f64,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    pub final_state: String,
    pub success: bool,
    pub error: Option<String>,
    pub return_values: IndexMap<String, String>,
    pub duration_ms: f64,
}

/// A run as the studio follows it, from its journal lines.
#[derive(Debug, Clone)]
pub struct RunView {
    pub run_id: String,
    pub workflow: String,
    pub session_id: Option<String>,
    pub actor: Option<Actor>,
    pub phase: Phase,
    pub current_state: Option<String>,
    pub prompt: Option<String>,
    pub steps: HashMap<String, StepMark>,
    pub finished: Option<Finished>,
}

impl RunView {
    pub fn from_status(s: &RunStatus) -> RunView {
        RunView {
            run_id: s.run_id.clone(),
            workflow: s.workflow_name.clone(),
            session_id: s.session_id.clone(),
            actor: None,
            phase: s.status,
            current_state: s.current_state.clone(),
            prompt: s.prompt.clone(),
            steps: HashMap::new(),
            finished: None,
        }
    }

    pub fn active(&self) -> bool {
        self.phase != Phase::Finished
    }
}

/// Everything the studio shows.
#[derive(Debug, Clone, Default)]
pub struct App {
    /// The workflows folder, for titles.
    pub folder: String,
    pub workflows: Vec<WorkflowSummary>,
    pub filter: String,
    /// Index into [`App::visible`].
    pub selected: usize,
    pub plan: Option<PlanView>,
    /// Every engine session, in the order they opened.
    pub panes: Vec<SessionInfo>,
    pub pane: usize,
    /// Runs seen since the studio opened, oldest first.
    pub runs: IndexMap<String, RunView>,
    pub mode: Mode,
    pub view: View,
    pub form: Option<InputsForm>,
    /// The run whose prompt is being answered, and the answer typed so far.
    pub answering: Option<String>,
    pub answer: String,
    /// The last thing worth telling the person (an error, a run's end).
    pub message: Option<String>,
    /// The terminal's size in cells.
    pub size: (u16, u16),
    /// The last engine event applied.
    pub seq: u64,
    pub quit: bool,
}

impl App {
    pub fn new(folder: String) -> App {
        App {
            folder,
            size: (80, 24),
            ..App::default()
        }
    }

    /// The workflows the filter lets through, in list order.
    pub fn visible(&self) -> Vec<&WorkflowSummary> {
        let filter = self.filter.to_lowercase();
        self.workflows
            .iter()
            .filter(|w| filter.is_empty() || w.name.to_lowercase().contains(&filter))
            .collect()
    }

    pub fn selected_workflow(&self) -> Option<&WorkflowSummary> {
        self.visible().get(self.selected).copied()
    }

    /// The newest run of a workflow, the one its plan shows.
    pub fn latest_run_of(&self, workflow: &str) -> Option<&RunView> {
        self.runs.values().rev().find(|r| r.workflow == workflow)
    }

    pub fn active_run_of(&self, workflow: &str) -> Option<&RunView> {
        self.runs
            .values()
            .rev()
            .find(|r| r.workflow == workflow && r.active())
    }

    pub fn any_run_active(&self) -> bool {
        self.runs.values().any(RunView::active)
    }

    pub fn focused_pane(&self) -> Option<&SessionInfo> {
        self.panes.get(self.pane)
    }

    /// Keeps the selection inside the list after it shrank.
    pub fn clamp_selection(&mut self) {
        let n = self.visible().len();
        self.selected = self.selected.min(n.saturating_sub(1));
        self.pane = self.pane.min(self.panes.len().saturating_sub(1));
    }
}
