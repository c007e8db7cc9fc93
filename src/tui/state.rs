//! The studio's state: what the engine told it (workflows, sessions, runs) and what the person
//! is doing (selection, filter, mode, form). No terminal types: update.rs changes it, draw/
//! reads it.

use super::form::InputsForm;
use super::mode::{BaseMode, Mode, View};
use super::overlay::{Overlay, RunsView};
use super::selection::{Click, Point, Selection};
use crate::engine::authoring::WorkflowSummary;
use crate::engine::search::Hit;
use crate::engine::{Actor, Phase, RunStatus, SessionInfo, StepStatus, WrittenFinalState};
use crate::workflow::plan::Plan;
use indexmap::IndexMap;
use std::collections::HashMap;
use std::time::Instant;

/// The step plan of the selected workflow, or why there is none.
#[derive(Debug, Clone)]
pub struct PlanView {
    pub workflow: String,
    pub plan: Result<Plan, String>,
}

/// How one executed state ended, in the run shown.
#[derive(Debug, Clone, PartialEq)]
pub struct StepMark {
    pub status: StepStatus,
    pub elapsed_ms: f64,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    pub final_state: WrittenFinalState,
    pub success: bool,
    pub error: Option<String>,
    pub return_values: IndexMap<String, String>,
    pub duration_ms: f64,
}

impl Finished {
    /// How a run ended, as its result says.
    pub fn from_result(result: &crate::engine::RunResult) -> Finished {
        Finished {
            final_state: result.final_state.into(),
            success: result.success,
            error: result.error.clone(),
            return_values: result.return_values.clone(),
            duration_ms: result.duration_ms,
        }
    }
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
    /// A run the studio hears of first from an event: what the event says, the rest to come.
    pub fn new(run_id: &str, workflow: &str, phase: Phase) -> RunView {
        RunView {
            run_id: run_id.to_string(),
            workflow: workflow.to_string(),
            session_id: None,
            actor: None,
            phase,
            current_state: None,
            prompt: None,
            steps: HashMap::new(),
            finished: None,
        }
    }

    pub fn from_status(s: &RunStatus) -> RunView {
        RunView {
            run_id: s.run_id.clone(),
            workflow: s.workflow_name.clone(),
            session_id: s.session_id.clone(),
            actor: s.started_by.clone(),
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

/// A pane's history shown instead of its live screen: lines read from the engine and kept
/// as read, so that new output does not move what the person is reading.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scrollback {
    pub session_id: String,
    /// The lines read, oldest first; empty until the first read arrives.
    pub lines: Vec<String>,
    /// The number (1 = the session's first line) of the last of `lines`.
    pub last_line: u64,
    /// How many lines the last read asked for: fewer came back when the history has no more.
    pub asked: usize,
    /// Lines between the bottom of the view and the end of `lines` (`history −N`).
    pub offset: usize,
    /// A line to bring into view when the read arrives (a search hit).
    pub target: Option<u64>,
}

impl Scrollback {
    /// The number of `lines[0]`.
    pub fn first_line(&self) -> u64 {
        (self.last_line + 1).saturating_sub(self.lines.len() as u64)
    }

    /// The indices of `lines` in a view of `rows` rows: the last ones but `offset`.
    pub fn window(&self, rows: usize) -> std::ops::Range<usize> {
        let end = self.lines.len().saturating_sub(self.offset);
        end.saturating_sub(rows)..end
    }

    /// The number of the line at the top of a view of `rows` rows.
    pub fn top_line(&self, rows: usize) -> u64 {
        self.first_line() + self.window(rows).start as u64
    }

    /// A line by its number; empty when it was not read.
    pub fn line(&self, n: u64) -> String {
        n.checked_sub(self.first_line())
            .and_then(|i| self.lines.get(i as usize))
            .cloned()
            .unwrap_or_default()
    }

    /// Whether the whole retained history (or as much as the studio reads) is in `lines`;
    /// never before the first read arrived (its empty `lines` say nothing yet).
    pub fn complete(&self, max: usize) -> bool {
        let read = self.last_line > 0 || !self.lines.is_empty();
        read && (self.lines.len() < self.asked || self.asked >= max)
    }
}

/// A search in a pane's output: the hits of the pages read so far, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct PaneSearch {
    pub session_id: String,
    pub pattern: String,
    pub hits: Vec<Hit>,
    /// Hits in all, as the first page counted them (counting stops at 1,000).
    pub total: usize,
    pub truncated: bool,
    /// The engine's cursor for the page after the hits read.
    pub next_cursor: Option<String>,
    /// The newest history line when the search ran.
    pub last_line: Option<u64>,
    /// The hit shown.
    pub at: usize,
}

impl PaneSearch {
    pub fn hit(&self) -> Option<&Hit> {
        self.hits.get(self.at)
    }

    /// `hit 2 of 17`.
    pub fn position(&self) -> String {
        format!(
            "hit {} of {}{}",
            self.at + 1,
            self.total.max(self.hits.len()),
            if self.truncated { "+" } else { "" }
        )
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
    /// The mode under any overlay and editor. Read the mode the keys are in with
    /// [`App::mode`].
    pub base: BaseMode,
    /// The box drawn over everything, which takes the keys while it is open.
    pub overlay: Option<Overlay>,
    pub view: View,
    /// The shown pane's history, while the person scrolls it.
    pub scroll: Option<Scrollback>,
    /// The last search in a pane and the hit shown.
    pub search: Option<PaneSearch>,
    /// The last thing worth telling the person (an error, a run's end).
    pub message: Option<String>,
    /// The terminal's size in cells.
    pub size: (u16, u16),
    /// The last engine event applied.
    pub seq: u64,
    pub quit: bool,
    /// Panes side by side in a grid instead of one at a time as tabs.
    pub grid: bool,
    /// The panes take the whole screen but the status line (list and plan hidden).
    pub zoom: bool,
    /// The colours the studio is drawn in; the palette switches them.
    pub theme: super::theme::Theme,
    /// The themes the palette offers: the bundled ones, then as the person's folder lists
    /// them when the palette opens.
    pub themes: Vec<String>,
    /// Text selected in a pane (mouse drag or copy mode).
    pub selection: Option<Selection>,
    /// The copy mode's cursor, while the keyboard selects.
    pub copy_cursor: Option<Point>,
    /// The last left click, to tell double and triple clicks.
    pub last_click: Option<Click>,
    /// Whether the studio takes the mouse; off, the terminal's own selection works.
    pub mouse: bool,
    /// Whether the person's terminal has the focus (as far as it reports focus changes).
    pub term_focused: bool,
    /// Something happened (a run ended, a prompt waits) while the terminal was not focused:
    /// the title says so until the focus comes back.
    pub attention: Option<String>,
    /// Every run and terminal with what it asks of the person, as the engine last told: the
    /// status line's count, the marks on the list and tabs, the inbox (`!`).
    pub inbox: crate::engine::attention::AttentionList,
    /// How the person's terminal is called when something starts needing them.
    pub ring: super::ring::Ring,
    /// The item the person was last taken to (the inbox, `u`): the next `u` goes past it.
    pub jumped_to: Option<String>,
    /// Why a copy may not reach the clipboard (tmux dropping OSC 52), said on each copy.
    pub clipboard_hint: Option<String>,
    /// What is wrong with the workflows folder itself (missing, a file, unreadable), as the
    /// engine last said; the list shows it in place of workflows.
    pub folder_problem: Option<crate::engine::FolderProblem>,
    /// A workflow whose file was removed while its plan was shown: the plan says so (with its
    /// run's outcome) until another workflow's plan replaces it.
    pub gone: Option<String>,
    /// A workflow the person just made or renamed: the list selects it once a listing holds
    /// it, so that the next `r` runs the workflow they made (the listing that follows the
    /// engine's answer may still be one read before the file existed).
    pub select_when_listed: Option<String>,
    /// The manifest being edited.
    pub editor: Option<super::editor::Editor>,
    /// Where the editor's cursor goes when the file asked for arrives: a problem's line and
    /// column (Enter in the problems view).
    pub open_at: Option<(usize, usize)>,
    /// Unsaved text left by an editor that did not close, offered when its file is opened.
    pub recovered: Vec<crate::engine::Recovered>,
    /// The session whose input the person holds (focus mode): agents' input is refused.
    pub input_held: Option<String>,
    /// Agents' runs waiting for the person's approval (approval mode), oldest first: the
    /// first is the one shown.
    pub approvals: Vec<ApprovalView>,
    /// The person put the approvals aside (Esc): they open again with `a`, or by themselves
    /// when a new request comes.
    pub approvals_later: bool,
    /// The approval request on screen now, the only one `y` or `n` may answer.
    pub approval_shown: Option<ApprovalShown>,
    /// The processes the studio runs inside (itself and its parents). The pane of a session
    /// one of them leads is the terminal the studio itself is drawn in: fitting it to its
    /// pane would shrink the studio's own window, and the pane again, down to nothing.
    pub inside: Vec<u32>,
    /// Attached to the folder's server (the studio can detach); otherwise it hosts the
    /// folder itself and everything ends with it.
    pub attached: bool,
    /// How many studios the server has attached, this one included.
    pub studios: usize,
    /// Who this studio's person is to the engine, as the server told it (`None` for a studio
    /// that hosts the engine: then every person is this one).
    pub me: Option<Actor>,
}

/// An approval request as the studio shows it: the manifest's diff against the last
/// approved content, and the first line of it in view.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalView {
    pub request: crate::engine::approval::ApprovalRequest,
    /// The request's fingerprint, hashed once when it arrives.
    pub fingerprint: String,
    pub top: usize,
}

/// The text approved before (empty when nothing was) and the text asking now.
pub fn approval_texts(request: &crate::engine::approval::ApprovalRequest) -> (&str, &str) {
    let before = request
        .last_approved
        .as_ref()
        .map_or("", |a| a.content.as_str());
    (before, &request.content)
}

/// The approval request on screen: its run and fingerprint (what an answer names), and
/// whether it has just taken the place of another (answers wait: `settling.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalShown {
    pub run_id: String,
    pub fingerprint: String,
    pub settling: Option<super::settling::Settling>,
}

impl App {
    pub fn new(folder: String) -> App {
        App {
            folder,
            size: (80, 24),
            mouse: true,
            term_focused: true,
            themes: super::themes::BUNDLED
                .iter()
                .map(|(name, _)| name.to_string())
                .collect(),
            ..App::default()
        }
    }

    /// The mode the keys and the status line are in: the overlay's if one is open, else the
    /// one underneath. Derived, never stored, so that it cannot disagree with what is open.
    pub fn mode(&self) -> Mode {
        match (&self.overlay, &self.editor) {
            (Some(overlay), _) => overlay.mode(),
            // While a manifest is open, the editor is what the keys go back to.
            (None, Some(editor)) if self.base == BaseMode::Normal => editor.mode(),
            (None, _) => self.base.into(),
        }
    }

    /// Opens `overlay` over whatever is shown. It takes the place of the mode it was opened
    /// from: closing it comes back to the normal mode (or the editor, when one is open).
    /// The question of the run `run_id`, to answer.
    pub fn open_prompt(&mut self, run_id: String) {
        self.open(Overlay::Prompt {
            run_id,
            answer: String::new(),
        });
    }

    pub fn open(&mut self, overlay: Overlay) {
        self.base = BaseMode::Normal;
        // The editor's find and completion list are left, as any other mode is.
        if let Some(editor) = &mut self.editor {
            editor.finding = false;
            editor.completion = None;
        }
        self.overlay = Some(overlay);
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

    /// Whether `actor` is the person at this studio.
    pub fn is_me(&self, actor: &Actor) -> bool {
        actor.is_person() && self.me.as_ref().is_none_or(|me| me == actor)
    }

    /// `you` for this studio's person, else the actor's own label.
    pub fn who(&self, actor: &Actor) -> String {
        if self.is_me(actor) {
            "you".into()
        } else {
            actor.label()
        }
    }

    pub fn any_run_active(&self) -> bool {
        self.runs.values().any(RunView::active)
    }

    pub fn focused_pane(&self) -> Option<&SessionInfo> {
        self.panes.get(self.pane)
    }

    /// Keeps the selection inside the list after it shrank.
    pub fn clamp_selection(&mut self) {
        if let Some(name) = &self.select_when_listed
            && let Some(at) = self.visible().iter().position(|w| &w.name == name)
        {
            self.selected = at;
            self.select_when_listed = None;
        }
        let n = self.visible().len();
        self.selected = self.selected.min(n.saturating_sub(1));
        self.pane = self.pane.min(self.panes.len().saturating_sub(1));
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

/// The moments in which a changed question takes no answer (settling.rs): when the loop wakes
/// for the next to end, and its tick ending those that are over.
impl App {
    /// The earliest instant at which a changed question takes answers again: the loop wakes
    /// then.
    pub fn due(&self) -> Option<Instant> {
        let approval = self.approval_shown.as_ref().and_then(|s| s.settling);
        let editor = self.editor.as_ref().and_then(|e| e.settling);
        [approval, editor]
            .into_iter()
            .flatten()
            .map(|s| s.until)
            .min()
    }

    /// The loop's tick at `now`: every question whose moment is over asks normally again.
    pub fn tick(&mut self, now: Instant) {
        if let Some(shown) = &mut self.approval_shown
            && shown.settling.is_some_and(|s| s.over(now))
        {
            shown.settling = None;
        }
        if let Some(editor) = &mut self.editor
            && editor.settling.is_some_and(|s| s.over(now))
        {
            editor.settling = None;
        }
    }
}
