//! What keys, checks and saves do to the manifest editor (its state is `editor/`): text
//! checked by the engine as it is typed (debounced, off the loop), saved through the engine
//! with the version it was opened at, so that a file changed on disk by anyone else is a
//! conflict the person settles, never a silent overwrite. Unsaved text is kept as a recovery
//! copy while it is unsaved. Pure state changes: the loop carries out the effects. Here:
//! opening, typing and leaving; checking and saving in `saving.rs`, finding and completing in
//! `finding.rs`, paging, problems and the panel in `moving.rs`.

mod finding;
mod moving;
mod saving;

pub use finding::{
    accept_completion, close_completion, find, move_completion, start_completion, start_find,
};
pub use moving::{cycle_panel, next_problem, page};
pub use saving::{answer, changed_on_disk, check_due, checked, disk, save, saved};

use super::editor::undo::Edit;
use super::editor::{Ask, Conflict, Document, Editor, follow_cursor, jump};
use super::effect::Effect;
use super::layout;
use super::mode::BaseMode;
use super::state::App;
use crossterm::event::{KeyEvent, KeyModifiers};

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
        jump(editor, line.saturating_sub(1), column.saturating_sub(1));
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
mod editing_tests;
#[cfg(test)]
mod undo_tests;
