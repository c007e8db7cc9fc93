//! The modes the keys can be in and the views they act on: plain data that the state, the
//! keymap, the update and the drawing all speak in, so it sits below all of them.

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

/// The modes under the overlays and the editor: what the studio is in when nothing is open
/// over its views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BaseMode {
    #[default]
    Normal,
    Filter,
    Focus,
    Copy,
}

impl From<BaseMode> for Mode {
    fn from(base: BaseMode) -> Mode {
        match base {
            BaseMode::Normal => Mode::Normal,
            BaseMode::Filter => Mode::Filter,
            BaseMode::Focus => Mode::Focus,
            BaseMode::Copy => Mode::Copy,
        }
    }
}

/// What the keyboard is doing right now; each mode has its own keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// Moving around the views.
    #[default]
    Normal,
    /// Typing the list's filter.
    Filter,
    /// Keys go to the focused pane's program.
    Focus,
    /// Filling a workflow's inputs before its run.
    Form,
    /// Answering a run's prompt step.
    Prompt,
    Help,
    /// Asked whether to quit while a run is in progress.
    ConfirmQuit,
    /// Asked whether to close a pane whose program still runs (`x`).
    ConfirmClose,
    /// Typing a search in the shown pane's output.
    Search,
    /// Reading the selected workflow's problems.
    Problems,
    /// Reading the selected workflow's runs and a run's journal.
    Runs,
    /// Typing in the command palette.
    Palette,
    /// Selecting the shown pane's text with the keyboard.
    Copy,
    /// Editing a manifest: keys no binding takes edit the text.
    Edit,
    /// The editor asks something (a conflict, errors, unsaved changes).
    EditAsk,
    /// Typing a search in the editor.
    EditFind,
    /// Typing a workflow's name (new, duplicate, rename, delete).
    Name,
    /// Choosing in the editor's completion list.
    Complete,
    /// Reading the audit log.
    Audit,
    /// An agent's run waits for the person's approval (approval mode).
    Approve,
    /// Reading the inbox: what needs the person, failed, finished, went quiet.
    Inbox,
}

impl Mode {
    pub fn title(self) -> &'static str {
        match self {
            Mode::Normal => "studio",
            Mode::Filter => "filter",
            Mode::Focus => "focus mode",
            Mode::Form => "inputs form",
            Mode::Prompt => "prompt",
            Mode::Help => "help",
            Mode::ConfirmQuit => "quit?",
            Mode::ConfirmClose => "close?",
            Mode::Search => "pane search",
            Mode::Problems => "problems",
            Mode::Runs => "runs",
            Mode::Palette => "command palette",
            Mode::Copy => "copy mode",
            Mode::Edit => "editor",
            Mode::EditAsk => "editor question",
            Mode::EditFind => "editor search",
            Mode::Name => "workflow name",
            Mode::Complete => "completion",
            Mode::Audit => "audit log",
            Mode::Approve => "approval",
            Mode::Inbox => "inbox",
        }
    }

    /// Modes where printable keys are text being typed, not commands.
    pub fn takes_text(self) -> bool {
        matches!(
            self,
            Mode::Filter
                | Mode::Form
                | Mode::Prompt
                | Mode::Search
                | Mode::Palette
                | Mode::EditFind
                | Mode::Name
        )
    }
}
