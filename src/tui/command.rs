//! Everything a person can ask of the studio, as one type: keys map to these (keymap.rs), the
//! help overlay lists them, and the command palette and mouse actions will name the same
//! values, so that no action exists in one place only.

/// One thing the studio can be asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    Quit,
    Help,
    Filter,
    Up,
    Down,
    NextView,
    PrevView,
    /// Enter: open what is selected, or confirm the overlay.
    Confirm,
    /// Esc: close the overlay or leave the text being typed.
    Close,
    Run,
    Cancel,
    Answer,
    NewShell,
    Focus,
    LeaveFocus,
    NextPane,
    PrevPane,
    ClosePane,
    /// A yes to a question (quit while a run is in progress).
    Yes,
    /// A no to a question.
    No,
    /// The previous choice of an enum field in the inputs form.
    ChoicePrev,
    /// The next choice of an enum field in the inputs form.
    ChoiceNext,
    DeleteChar,
    /// Scroll the shown pane's history a page up (older).
    ScrollUp,
    /// A page down (newer); at the bottom the live screen is back.
    ScrollDown,
    /// The oldest line the view reads.
    ScrollTop,
    /// Back to the live screen.
    ScrollLive,
    /// Search the shown pane's output.
    Search,
    /// The next (older) hit of the search.
    NextHit,
    /// The previous (newer) hit.
    PrevHit,
    /// The selected workflow's problems (its violations).
    Problems,
    /// The selected workflow's runs and the selected run's journal.
    Runs,
    /// The run view's journal a page up (older).
    JournalUp,
    /// A page down (newer); at the bottom it follows the end.
    JournalDown,
    /// Follow the journal's end again.
    JournalFollow,
}

impl Command {
    /// What the command does, in the words of the help overlay and the palette.
    pub fn describe(self) -> &'static str {
        match self {
            Command::Quit => "quit (asks when a run is in progress)",
            Command::Help => "this help",
            Command::Filter => "filter the workflow list",
            Command::Up => "move up",
            Command::Down => "move down",
            Command::NextView => "next view",
            Command::PrevView => "previous view",
            Command::Confirm => "open / confirm",
            Command::Close => "close / back",
            Command::Run => "run the selected workflow (inputs form first)",
            Command::Cancel => "cancel the selected workflow's run",
            Command::Answer => "answer the waiting prompt",
            Command::NewShell => "open a shell pane",
            Command::Focus => "focus mode: keys go to the pane's program",
            Command::LeaveFocus => "leave focus mode",
            Command::NextPane => "next pane",
            Command::PrevPane => "previous pane",
            Command::ClosePane => "close the pane's session",
            Command::Yes => "yes",
            Command::No => "no",
            Command::ChoicePrev => "previous choice",
            Command::ChoiceNext => "next choice",
            Command::DeleteChar => "delete a character",
            Command::ScrollUp => "scroll the pane's history a page up",
            Command::ScrollDown => "scroll a page down (at the bottom: live again)",
            Command::ScrollTop => "the oldest line of the pane's history",
            Command::ScrollLive => "leave the history: the live screen",
            Command::Search => "search the pane's output (panes view)",
            Command::NextHit => "next (older) hit of the search",
            Command::PrevHit => "previous (newer) hit of the search",
            Command::Problems => "the selected workflow's problems (file:line:col)",
            Command::Runs => "the selected workflow's runs and their journals",
            Command::JournalUp => "scroll the run's journal a page up",
            Command::JournalDown => "scroll a page down (at the bottom: follows the end)",
            Command::JournalFollow => "follow the end of the run's journal",
        }
    }
}
