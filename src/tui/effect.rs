//! What an update asks of the outside world. The loop (app.rs) carries each out against the
//! engine and feeds what came back in as an [`super::update::Event`], so updates stay pure.

use super::selection::Selection;
use crate::workflow::action::Key;
use indexmap::IndexMap;

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// The themes the person can switch to: the bundled ones and those of their folder.
    ListThemes,
    /// Switch the studio's colours to this theme (read from the person's folder, or bundled).
    LoadTheme(String),
    /// Read the workflow list again (a manifest changed on disk).
    ReloadList,
    /// End these terminals and runs (what the person started), then quit.
    EndAndQuit {
        sessions: Vec<String>,
        runs: Vec<String>,
    },
    /// Take a new snapshot (events were missed).
    Resnapshot,
    LoadPlan(String),
    /// Read a workflow's arguments for the inputs form. `on_host`: the person asked to run
    /// on a host, so the form opens, at its host field, even for a workflow without
    /// arguments.
    LoadInputs {
        workflow: String,
        on_host: bool,
    },
    /// A run (`host`: on that host, through ssh), or a fleet when `host` names several
    /// hosts or a group of hosts.conf.
    StartRun {
        workflow: String,
        inputs: IndexMap<String, String>,
        host: Option<String>,
    },
    CancelRun(String),
    AnswerPrompt {
        run_id: String,
        answer: String,
    },
    OpenShell {
        cols: u16,
        rows: u16,
    },
    /// A pane that plays a run's recording (`flowdeck replay`), of the folder `folder`.
    Replay {
        run_id: String,
        folder: String,
        cols: u16,
        rows: u16,
    },
    CloseSession(String),
    SendKeys {
        session_id: String,
        keys: Vec<Key>,
    },
    /// Pasted text, wrapped in bracketed-paste marks when the program asked for them.
    Paste {
        session_id: String,
        text: String,
    },
    Resize {
        session_id: String,
        cols: u16,
        rows: u16,
    },
    /// Read the last `lines` lines of a session's history (for the scrollback view).
    ReadHistory {
        session_id: String,
        lines: usize,
    },
    /// Search a session's output, newest first; `cursor` goes on from an earlier page.
    Search {
        session_id: String,
        pattern: String,
        cursor: Option<String>,
    },
    /// Read a workflow's violations from its file.
    LoadProblems(String),
    /// Read a workflow's past runs, newest first (the run view).
    LoadRuns(String),
    /// Read a run's journal from its first line (the run view).
    LoadRunEvents(String),
    /// Read where a pane's cursor is and whether a full-screen program holds its screen:
    /// where copy mode starts.
    LocateCursor(String),
    /// Copy a selection of a pane's live screen (read from the screen) to the clipboard.
    CopyScreen(Selection),
    /// Put text on the clipboard (OSC 52, and tmux's paste buffer when tmux drops OSC 52).
    Clipboard(String),
    /// Take the mouse (true) or leave it to the terminal.
    MouseCapture(bool),
    /// Ring the bell and put `text` in the terminal's title: something happened while the
    /// person's terminal was not focused.
    Alert(String),
    /// Give the terminal its own title back.
    ClearAlert,
    /// Something started needing the person: their terminal is rung as `how` says, and
    /// with `title` its title says `text` until it has the focus again.
    Ring {
        how: super::ring::Ring,
        text: String,
        title: bool,
    },
    /// The person has seen these runs and terminals (what failed or finished): the engine
    /// clears them from every front end's list.
    Acknowledge(Vec<String>),
    /// Read a workflow's file (text, path, version) for the editor.
    LoadDocument(String),
    /// Wake the editor once typing paused, to check the text as it is then (`edits`).
    CheckLater(u64),
    /// Check the editor's text (off the loop): violations and plan.
    Check {
        edits: u64,
        text: String,
    },
    /// Keep unsaved text as the file's recovery copy, with the version of the file it was
    /// typed over (`None`: not known).
    Recover {
        file: String,
        text: String,
        base_version: Option<String>,
    },
    /// Drop the file's recovery copy.
    DiscardRecovery(String),
    /// Save the editor's text; `expected_version` is what it may replace (`None`: the file
    /// was deleted, so a new one).
    Save {
        edits: u64,
        file: String,
        text: String,
        expected_version: Option<String>,
    },
    /// Read what is on disk now for the edited workflow (version and text).
    LoadDisk(String),
    /// Suspend the studio and open the file in `$VISUAL` / `$EDITOR`.
    ExternalEditor(String),
    /// Read the path of a workflow's file, then open it in `$VISUAL` / `$EDITOR`.
    ExternalEditWorkflow(String),
    /// Read the recovery copies left by editors that did not close.
    ListRecovery,
    /// A new workflow `name` drafted from what was typed in a session.
    DraftWorkflow {
        session_id: String,
        name: String,
    },
    /// Set a session's mark: drafts start there.
    MarkSession(String),
    /// A new workflow `name` from template number `template`.
    CreateWorkflow {
        template: usize,
        name: String,
    },
    DuplicateWorkflow {
        from: String,
        name: String,
    },
    RenameWorkflow {
        from: String,
        to: String,
    },
    DeleteWorkflow(String),
    /// The person holds this session's input (focus mode): nobody else may type into it.
    HoldInput(String),
    /// The person gives the session's input back.
    ReleaseInput(String),
    /// Read the audit log's latest tool calls.
    LoadAudit,
    /// Read the runs waiting for approval.
    LoadApprovals,
    /// Answer a run's approval request: the one shown, by its fingerprint.
    DecideApproval {
        run_id: String,
        fingerprint: String,
        approve: bool,
    },
}

/// How a replay pane's name begins (`replay-RUN_ID`): the studio gives it the keyboard as it
/// opens, so that the player's keys are at hand (Ctrl-g leaves it).
pub const REPLAY_PANE: &str = "replay-";
