//! Everything a person can ask of the studio, as one type: keys map to these (keymap.rs), the
//! help overlay lists them, the command palette offers them and mouse actions name the same
//! values, so that no action exists in one place only.

/// One thing the studio can be asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    Quit,
    /// Leave the studio with everything going on in the folder's server.
    Detach,
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
    /// Play the selected run's recording in a pane (runs view).
    Replay,
    /// Run on a host or a fleet: the inputs form, even without arguments, at its host field.
    RunOn,
    Cancel,
    Answer,
    NewShell,
    Focus,
    LeaveFocus,
    NextPane,
    PrevPane,
    ClosePane,
    /// A new workflow drafted from what was typed in the front pane's shell.
    DraftWorkflow,
    /// Set the front pane's mark: a draft holds what is typed after it.
    MarkPane,
    /// A yes to a question (quit while what the person started still runs).
    Yes,
    /// A no to a question.
    No,
    /// The previous choice of an enum field in the inputs form.
    ChoicePrev,
    /// The next choice of an enum field in the inputs form.
    ChoiceNext,
    /// Space in the inputs form: the next choice of a field picked from choices (a boolean
    /// toggles), a space in a typed one.
    Toggle,
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
    /// The command palette: every command, found by typing part of what it does.
    Palette,
    /// Panes side by side in a grid, or one at a time as tabs.
    ToggleGrid,
    /// The panes take the whole screen, or give the list and plan back.
    Zoom,
    /// Select the shown pane's text with the keyboard.
    CopyMode,
    /// Move the copy mode's cursor left.
    Left,
    /// Move the copy mode's cursor right.
    Right,
    /// Start a selection at the cursor, or drop it.
    Mark,
    /// Start a selection of whole lines at the cursor.
    MarkLines,
    /// Copy the selection to the clipboard.
    Copy,
    /// Take the mouse, or leave it to the terminal (its own selection and copy).
    ToggleMouse,
    /// Edit the selected workflow's manifest in the studio.
    Edit,
    /// Open the selected workflow's manifest in `$VISUAL` / `$EDITOR`.
    ExternalEdit,
    /// A new workflow from a template.
    NewWorkflow,
    /// A copy of the selected workflow under a new name.
    Duplicate,
    /// Rename the selected workflow.
    Rename,
    /// Delete the selected workflow (its name typed again confirms).
    Delete,
    /// Save the editor's text.
    Save,
    Undo,
    Redo,
    /// Search the editor's text.
    Find,
    /// The next line with a problem.
    NextProblem,
    /// The editor's side panel: problems, plan, nothing.
    TogglePanel,
    /// An answer to the editor's question, by its key.
    Choose(char),
    /// What the schema allows at the editor's cursor.
    Complete,
    /// Who did what: the tool calls of every agent, from the audit log.
    Audit,
    /// Approve the agent's run shown (approval mode).
    Approve,
    /// Deny the agent's run shown.
    Deny,
    /// Put the approval requests aside.
    Later,
    /// The inbox: every run and terminal that needs you, failed, finished or went quiet.
    Inbox,
    /// Go to the next run or terminal that needs you.
    NextNeedsYou,
    /// Clear the inbox's chosen item: what failed or finished has been seen.
    Clear,
}

/// The commands the palette offers, in the order it lists them before anything is typed:
/// the ones a person may look for by name. Answers to questions and the keys of text fields
/// are left out: they mean nothing outside their overlay.
pub const PALETTE: &[Command] = &[
    Command::Run,
    Command::RunOn,
    Command::Cancel,
    Command::Answer,
    Command::Inbox,
    Command::NextNeedsYou,
    Command::NewShell,
    Command::Focus,
    Command::ClosePane,
    Command::NextPane,
    Command::PrevPane,
    Command::ToggleGrid,
    Command::Zoom,
    Command::CopyMode,
    Command::ToggleMouse,
    Command::Search,
    Command::NextHit,
    Command::PrevHit,
    Command::ScrollUp,
    Command::ScrollDown,
    Command::ScrollTop,
    Command::ScrollLive,
    Command::Filter,
    Command::Problems,
    Command::Runs,
    Command::Replay,
    Command::NextView,
    Command::PrevView,
    Command::Edit,
    Command::ExternalEdit,
    Command::NewWorkflow,
    Command::DraftWorkflow,
    Command::MarkPane,
    Command::Duplicate,
    Command::Rename,
    Command::Delete,
    Command::Save,
    Command::Find,
    Command::NextProblem,
    Command::TogglePanel,
    Command::Audit,
    Command::Help,
    Command::Detach,
    Command::Quit,
];

impl Command {
    /// What the attention list's commands do.
    fn describe_attention(self) -> &'static str {
        match self {
            Command::NextNeedsYou => "go to the next run or terminal that needs you",
            Command::Clear => "clear the chosen item: seen",
            _ => "inbox: what needs you, failed, is done or quiet",
        }
    }

    /// What the command does, in the words of the help overlay and the palette.
    pub fn describe(self) -> &'static str {
        match self {
            Command::Quit => "quit (asks first if what you started still runs)",
            Command::Detach => "detach: leave the studio, everything goes on",
            Command::Help => "this help",
            Command::Filter => "filter the workflow list",
            Command::Up => "move up",
            Command::Down => "move down",
            Command::NextView => "next view",
            Command::PrevView => "previous view",
            Command::Confirm => "open / confirm",
            Command::Close => "close / back",
            Command::Run => "run the selected workflow (inputs form first)",
            Command::Replay => "replay the selected run's recording in a pane",
            Command::RunOn => "run on a host or a fleet (ssh): the form at its host field",
            Command::Cancel => "cancel the selected workflow's run",
            Command::Answer => "answer what waits: an approval or a prompt",
            Command::NewShell => "open a shell pane",
            Command::Focus => "focus mode: keys go to the pane's program",
            Command::LeaveFocus => "leave focus mode",
            Command::NextPane => "next pane",
            Command::PrevPane => "previous pane",
            Command::ClosePane => "close the pane's session",
            Command::DraftWorkflow => "draft a workflow from what was typed in the pane",
            Command::MarkPane => "mark the pane's shell: a draft starts here",
            Command::Yes => "yes",
            Command::No => "no",
            Command::ChoicePrev => "previous choice",
            Command::ChoiceNext => "next choice",
            Command::Toggle => "toggle a boolean, the next choice (a space in text)",
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
            Command::Palette => "command palette: any command by what it does",
            Command::ToggleGrid => "panes in a grid / as tabs",
            Command::Zoom => "zoom: panes take the whole screen / back",
            Command::CopyMode => "copy mode: select the pane's text by keys",
            Command::Left => "cursor left",
            Command::Right => "cursor right",
            Command::Mark => "start a selection at the cursor (again: drop it)",
            Command::MarkLines => "select whole lines from the cursor",
            Command::Copy => "copy the selection to the clipboard (OSC 52)",
            Command::ToggleMouse => "mouse off / on (off: the terminal selects)",
            Command::Edit => "edit the workflow's manifest here",
            Command::ExternalEdit => "edit the manifest in $VISUAL / $EDITOR",
            Command::NewWorkflow => "new workflow from a template",
            Command::Duplicate => "duplicate the workflow under a new name",
            Command::Rename => "rename the workflow",
            Command::Delete => "delete the workflow (asks for its name)",
            Command::Save => "save (asks on errors or a change on disk)",
            Command::Undo => "undo",
            Command::Redo => "redo",
            Command::Find => "find in the text",
            Command::NextProblem => "the next line with a problem",
            Command::TogglePanel => "side panel: problems / plan / none",
            Command::Complete => "complete what the schema allows at the cursor",
            Command::Audit => "agents' tool calls: who did what, when, with what outcome",
            Command::Approve => "approve: the agent's run starts, and this content is remembered",
            Command::Deny => "deny: the agent's run ends not approved",
            Command::Later => "answer later: the run keeps waiting (a brings it back)",
            Command::Inbox | Command::NextNeedsYou | Command::Clear => self.describe_attention(),
            Command::Choose(c) => match c {
                'r' => "reload the file from disk (your changes dropped)",
                'o' => "overwrite the file with your text",
                'd' => "changed on disk: show the diff; leaving: drop your changes",
                's' => "save, then go on",
                'y' => "yes",
                _ => "answer",
            },
        }
    }
}
