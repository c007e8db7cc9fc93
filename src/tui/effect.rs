//! What an update asks of the outside world. The loop (app.rs) carries each out against the
//! engine and feeds what came back in as an [`super::update::Event`], so updates stay pure.

use crate::workflow::action::Key;
use indexmap::IndexMap;

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Read the workflow list again (a manifest changed on disk).
    ReloadList,
    /// Take a new snapshot (events were missed).
    Resnapshot,
    LoadPlan(String),
    /// Read a workflow's arguments for the inputs form.
    LoadInputs(String),
    StartRun {
        workflow: String,
        inputs: IndexMap<String, String>,
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
}
