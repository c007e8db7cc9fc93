//! The manifest editor's state: a workflow's file text in a `ratatui-textarea` buffer with its
//! undo steps, the last check of it, the question it asks and the conflict it holds, and how
//! its text is shown (`view.rs`). Data and what can be said of it from itself alone: what
//! keys, checks and saves do to it is in `editing/`.

pub mod undo;
mod view;

pub use view::{
    answer_label, cell_width, choices, follow_cursor, gutter_width, jump, mark, shown_char,
};

use super::mode::Mode;
use crate::workflow::completion::Completion;
use crate::workflow::plan::Plan;
use crate::workflow::violation::Violation;
use ratatui_textarea::TextArea;

/// How long typing must pause before the buffer is checked (and its recovery copy written).
pub const CHECK_AFTER_MS: u64 = 150;

/// A workflow's file as the editor opens it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub file: String,
    pub path: String,
    pub version: String,
    pub text: String,
}

/// The last check of the buffer.
#[derive(Debug, Clone)]
pub struct Check {
    pub violations: Vec<Violation>,
    pub errors: usize,
    pub warnings: usize,
    /// The name the text declares, when it has one.
    pub name: Option<String>,
    pub plan: Option<Plan>,
}

/// The file changed on disk while the buffer had changes of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The version on disk now (`None`: the file was deleted): what `o` replaces.
    pub version: Option<String>,
    pub text: String,
    /// The file changed again while the question about it was open: the question says so.
    pub again: bool,
}

/// A question the editor asks before it goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// The file changed on disk: reload theirs, overwrite with mine, or see the diff.
    Conflict,
    /// The buffer has errors: save anyway?
    SaveInvalid,
    /// Leaving the editor with unsaved changes: save, drop them, or stay.
    Leave,
    /// Quitting the studio with unsaved changes.
    Quit,
}

/// What the side panel beside the text shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Panel {
    #[default]
    Problems,
    Plan,
    None,
}

/// A manifest being edited.
#[derive(Debug, Clone)]
pub struct Editor {
    /// The workflow's name when it was opened.
    pub workflow: String,
    pub file: String,
    /// The file's path, for `$EDITOR`.
    pub path: String,
    /// The version on disk the buffer is based on (what a save expects to replace); empty
    /// when not known (a recovery copy of an earlier flowdeck), which no file's version is.
    pub base_version: String,
    pub text: TextArea<'static>,
    /// Bumped by every change of the text.
    pub edits: u64,
    /// `edits` when the text was last the file's (opened, saved or reloaded).
    pub saved_edits: u64,
    pub check: Option<Check>,
    /// `edits` that `check` was made for.
    pub checked_edits: u64,
    /// The first line and column shown.
    pub top: usize,
    pub left: usize,
    pub conflict: Option<Conflict>,
    pub ask: Option<Ask>,
    /// The diff of the conflict is shown, scrolled to this line.
    pub diff: Option<usize>,
    pub panel: Panel,
    /// The search being typed (find mode), or the last one found.
    pub find: String,
    /// The search is being typed.
    pub finding: bool,
    /// The text came from a recovery copy, not from the file.
    pub recovered: bool,
    /// What to do once the save under way succeeds: close the editor (`Leave`) or quit
    /// (`Quit`).
    pub after_save: Option<Ask>,
    /// The completion list shown at the cursor, and the item chosen.
    pub completion: Option<(Completion, usize)>,
    /// The conflict question's file changed again while it was open: `r` and `o` wait
    /// (tui/settling.rs).
    pub settling: Option<crate::tui::settling::Settling>,
    /// What Ctrl-z and Ctrl-y take back and forward.
    pub steps: undo::Steps,
}

impl Editor {
    pub fn new(workflow: String, file: String, path: String, version: String, text: &str) -> Self {
        let area = undo::area(lines_of(text), (0, 0));
        Editor {
            workflow,
            file,
            path,
            base_version: version,
            text: area,
            edits: 0,
            saved_edits: 0,
            check: None,
            checked_edits: u64::MAX,
            top: 0,
            left: 0,
            conflict: None,
            ask: None,
            diff: None,
            panel: Panel::Problems,
            find: String::new(),
            finding: false,
            recovered: false,
            after_save: None,
            completion: None,
            settling: None,
            steps: undo::Steps::default(),
        }
    }

    /// The editor's mode, from what it has open: a question, then the completion list, then
    /// the search being typed.
    pub fn mode(&self) -> Mode {
        if self.ask.is_some() {
            Mode::EditAsk
        } else if self.completion.is_some() {
            Mode::Complete
        } else if self.finding {
            Mode::EditFind
        } else {
            Mode::Edit
        }
    }

    pub fn dirty(&self) -> bool {
        self.edits != self.saved_edits
    }

    /// The buffer's text as it would be saved (lines joined, a final newline).
    pub fn contents(&self) -> String {
        let mut text = self.text.lines().join("\n");
        text.push('\n');
        text
    }

    /// The violations on line `line` (1-based, as the validator counts).
    pub fn violations_on(&self, line: usize) -> impl Iterator<Item = &Violation> {
        self.check
            .iter()
            .flat_map(|c| c.violations.iter())
            .filter(move |v| v.line == Some(line))
    }

    /// The version the buffer is based on, when known.
    pub fn known_base(&self) -> Option<&str> {
        Some(self.base_version.as_str()).filter(|v| !v.is_empty())
    }

    /// Whether the last check found errors (warnings do not stop a save).
    pub fn has_errors(&self) -> bool {
        self.check.as_ref().is_some_and(|c| c.errors > 0)
    }
}

/// A file's text as the editor's lines (a final newline makes no extra empty line).
pub fn lines_of(text: &str) -> Vec<String> {
    let text = text.strip_suffix('\n').unwrap_or(text);
    text.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
        .collect()
}

/// Why a save did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SaveFailure {
    /// The file is not the version the buffer is based on.
    Conflict,
    Other(String),
}

/// The buffer becomes the file's text at `version`.
pub fn reload(editor: &mut Editor, version: String, text: &str) {
    // What was undone before is of another text: the steps start again here.
    editor.text = undo::area(lines_of(text), editor.text.cursor());
    editor.steps = undo::Steps::default();
    editor.base_version = version;
    editor.edits += 1;
    editor.saved_edits = editor.edits;
    editor.conflict = None;
    editor.settling = None;
    editor.recovered = false;
}
