//! The manifest editor: a workflow's file text in a `ratatui-textarea` buffer (editing, undo,
//! redo, search), checked by the engine as it is typed (debounced, off the loop), saved
//! through the engine with the version it was opened at, so that a file changed on disk by
//! anyone else is a conflict the person settles, never a silent overwrite. Unsaved text is
//! kept as a recovery copy while it is unsaved. Pure state changes: the loop carries out the
//! effects. Here: the editor's state, opening, typing and leaving; checking and saving in
//! `saving.rs`, finding and completing in `finding.rs`, what the view shows in `view.rs`.

mod finding;
mod saving;
mod undo;
mod view;

pub use finding::{
    accept_completion, close_completion, find, move_completion, start_completion, start_find,
};
pub use saving::{SaveFailure, answer, changed_on_disk, check_due, checked, disk, save, saved};
pub use view::{
    answer_label, cell_width, choices, cycle_panel, follow_cursor, gutter_width, mark,
    next_problem, page, shown_char,
};

use super::effect::Effect;
use super::layout;
use super::mode::{BaseMode, Mode};
use super::state::App;
use crate::workflow::completion::Completion;
use crate::workflow::plan::Plan;
use crate::workflow::violation::Violation;
use crossterm::event::{KeyEvent, KeyModifiers};
use ratatui_textarea::TextArea;
use undo::Edit;

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
fn lines_of(text: &str) -> Vec<String> {
    let text = text.strip_suffix('\n').unwrap_or(text);
    text.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
        .collect()
}

/// Rows and columns of the text view, and the width of the line-number gutter.
pub fn text_size(app: &App) -> (usize, usize) {
    let area = layout::editor_text(app);
    (usize::from(area.height), usize::from(area.width))
}

/// `E`: open the selected workflow's file. Unsaved text of another is never dropped for it:
/// the person is asked first.
pub fn open(app: &mut App) -> Vec<Effect> {
    app.open_at = None;
    if let Some(editor) = app.editor.as_mut().filter(|e| e.dirty()) {
        editor.ask = Some(Ask::Leave);
        app.message = Some(format!("{} has unsaved changes", editor.file));
        return Vec::new();
    }
    match app.selected_workflow() {
        Some(w) => vec![Effect::LoadDocument(w.name.clone())],
        None => {
            app.message = Some("no workflow selected".into());
            Vec::new()
        }
    }
}

/// `O` (or Ctrl-o in the editor): the manifest in the person's own editor. An open buffer
/// with unsaved changes is saved first: the other editor opens the file on disk.
pub fn external(app: &mut App) -> Vec<Effect> {
    match &app.editor {
        Some(editor) if editor.dirty() => {
            app.message = Some("save first (Ctrl-s): $EDITOR opens the file on disk".into());
            Vec::new()
        }
        Some(editor) => vec![Effect::ExternalEditor(editor.path.clone())],
        None => match app.selected_workflow() {
            Some(w) => vec![Effect::ExternalEditWorkflow(w.name.clone())],
            None => {
                app.message = Some("no workflow selected".into());
                Vec::new()
            }
        },
    }
}

/// The file's text arrived: the editor opens on it, or on its recovery copy when one was
/// left by an editor that did not close.
pub fn opened(app: &mut App, workflow: String, document: Document) -> Vec<Effect> {
    let recovered = app
        .recovered
        .iter()
        .position(|r| r.file == document.file)
        .map(|at| app.recovered.remove(at));
    let editor = match recovered.filter(|r| r.text != document.text) {
        Some(copy) => {
            let (editor, said) = recovering(workflow, document, copy);
            app.message = Some(said);
            editor
        }
        None => Editor::new(
            workflow,
            document.file,
            document.path,
            document.version,
            &document.text,
        ),
    };
    let edits = editor.edits;
    app.editor = Some(editor);
    app.base = BaseMode::Normal;
    if let Some((line, column)) = app.open_at.take() {
        go_to(app, line, column);
    }
    vec![Effect::CheckLater(edits)]
}

/// Enter on a problem: the editor at its line and column (1-based), on `workflow`'s file.
/// The file already open goes there at once; another opens, and goes there when it arrives.
pub fn open_at(app: &mut App, workflow: String, line: usize, column: usize) -> Vec<Effect> {
    if app.editor.as_ref().is_some_and(|e| e.workflow == workflow) {
        app.base = BaseMode::Normal;
        go_to(app, line, column);
        return Vec::new();
    }
    if app.editor.as_ref().is_some_and(Editor::dirty) {
        // Its unsaved text is asked about first (`open`); the problem is not gone.
        return open(app);
    }
    app.open_at = Some((line, column));
    vec![Effect::LoadDocument(workflow)]
}

fn go_to(app: &mut App, line: usize, column: usize) {
    let (rows, cols) = text_size(app);
    if let Some(editor) = &mut app.editor {
        view::jump(editor, line.saturating_sub(1), column.saturating_sub(1));
        follow_cursor(editor, rows, cols);
    }
}

/// The editor on a recovery copy of `document`'s file, and what to tell the person. A copy
/// typed over another version than the file's now, or over one it does not record (an
/// earlier flowdeck's), is a conflict with the file: saving asks (reload, overwrite, diff),
/// so that a change made after the copy is never overwritten unseen.
fn recovering(
    workflow: String,
    document: Document,
    copy: crate::engine::Recovered,
) -> (Editor, String) {
    let Document {
        file,
        path,
        version,
        text,
    } = document;
    let current = copy.base_version.as_deref() == Some(version.as_str());
    let base = copy.base_version.unwrap_or_default();
    let mut editor = Editor::new(workflow, file, path, base, &copy.text);
    // Unsaved until saved: the copy is what the person had typed.
    editor.edits = 1;
    editor.recovered = true;
    let said = if current {
        format!(
            "{}: your unsaved edits were recovered (Ctrl-s saves them, Esc then d drops them)",
            editor.file
        )
    } else {
        editor.conflict = Some(Conflict {
            version: Some(version),
            text,
            again: false,
        });
        format!(
            "{}: unsaved edits recovered; the file {} since · Ctrl-s asks",
            editor.file,
            if editor.known_base().is_some() {
                "changed"
            } else {
                "may have changed"
            }
        )
    };
    (editor, said)
}

/// A key that no binding of the editor took: it edits the text.
pub fn key(app: &mut App, key: KeyEvent) -> Vec<Effect> {
    let (rows, cols) = text_size(app);
    let Some(editor) = &mut app.editor else {
        return Vec::new();
    };
    // Enter keeps the line's indentation, one level deeper after a `key:` that opens a
    // block: YAML is written in indented blocks.
    if key.code == crossterm::event::KeyCode::Enter && key.modifiers.is_empty() {
        let (row, col) = editor.text.cursor();
        let line = editor.text.lines().get(row).cloned().unwrap_or_default();
        let head: String = line.chars().take(col).collect();
        let mut indent: String = head.chars().take_while(|c| *c == ' ').collect();
        if head.trim_end().ends_with(':') {
            indent.push_str("  ");
        }
        editor.steps.before(&editor.text, Edit::Other);
        editor.text.insert_newline();
        editor.text.insert_str(indent);
        editor.steps.after(true);
        return changed(app);
    }
    let typing = matches!(key.code, crossterm::event::KeyCode::Char(_))
        && !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    editor.steps.before(
        &editor.text,
        if typing { Edit::Typing } else { Edit::Other },
    );
    // A conflict waits for the person's choice; typing goes on meanwhile.
    let edited = editor.text.input(key);
    editor.steps.after(edited);
    if edited {
        return changed(app);
    }
    follow_cursor(editor, rows, cols);
    Vec::new()
}

/// Pasted text goes in as typed, newlines included.
pub fn paste(app: &mut App, text: &str) -> Vec<Effect> {
    let Some(editor) = &mut app.editor else {
        return Vec::new();
    };
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    editor.steps.before(&editor.text, Edit::Other);
    let edited = editor.text.insert_str(text);
    editor.steps.after(edited);
    if edited {
        return changed(app);
    }
    Vec::new()
}

/// The text changed: a check (and a recovery copy) once typing pauses.
fn changed(app: &mut App) -> Vec<Effect> {
    let (rows, cols) = text_size(app);
    let Some(editor) = &mut app.editor else {
        return Vec::new();
    };
    editor.edits += 1;
    follow_cursor(editor, rows, cols);
    vec![Effect::CheckLater(editor.edits)]
}

/// Esc: the editor closes, asking first when there are unsaved changes.
pub fn leave(app: &mut App) -> Vec<Effect> {
    let Some(editor) = &mut app.editor else {
        app.base = BaseMode::Normal;
        return Vec::new();
    };
    if editor.dirty() {
        editor.ask = Some(Ask::Leave);
        return Vec::new();
    }
    close(app);
    Vec::new()
}

/// Quitting with unsaved changes asks; true when it may quit at once.
pub fn may_quit(app: &mut App) -> bool {
    match &mut app.editor {
        Some(editor) if editor.dirty() => {
            editor.ask = Some(Ask::Quit);
            false
        }
        _ => true,
    }
}

fn close(app: &mut App) {
    app.editor = None;
    app.base = BaseMode::Normal;
}

/// Ctrl-z and Ctrl-y.
pub fn undo(app: &mut App, redo: bool) -> Vec<Effect> {
    let Some(editor) = &mut app.editor else {
        return Vec::new();
    };
    let done = editor.steps.undo(&mut editor.text, redo);
    if done { changed(app) } else { Vec::new() }
}

#[cfg(test)]
mod conflict_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod undo_tests;
