//! The manifest editor: a workflow's file text in a `ratatui-textarea` buffer (editing, undo,
//! redo, search), checked by the engine as it is typed (debounced, off the loop), saved
//! through the engine with the version it was opened at, so that a file changed on disk by
//! anyone else is a conflict the person settles, never a silent overwrite. Unsaved text is
//! kept as a recovery copy while it is unsaved. Pure state changes: the loop carries out the
//! effects.

use super::effect::Effect;
use super::keymap::Mode;
use super::layout;
use super::state::App;
use crate::engine::editing::Draft;
use crate::workflow::completion::{Completion, complete};
use crate::workflow::plan::Plan;
use crate::workflow::violation::{Severity, Violation};
use crossterm::event::KeyEvent;
use ratatui_textarea::{CursorMove, TextArea};

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
    /// The version on disk now (`None`: the file was deleted).
    pub version: Option<String>,
    pub text: String,
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
    /// The version on disk the buffer is based on (what a save expects to replace).
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
    /// The search being typed (find mode).
    pub find: String,
    /// The text came from a recovery copy, not from the file.
    pub recovered: bool,
    /// What to do once the save under way succeeds: close the editor (`Leave`) or quit
    /// (`Quit`).
    pub after_save: Option<Ask>,
    /// The completion list shown at the cursor, and the item chosen.
    pub completion: Option<(Completion, usize)>,
}

impl Editor {
    pub fn new(workflow: String, file: String, path: String, version: String, text: &str) -> Self {
        let mut area = TextArea::new(lines_of(text));
        area.set_max_histories(1000);
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
            recovered: false,
            after_save: None,
            completion: None,
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
    if let Some(editor) = app.editor.as_mut().filter(|e| e.dirty()) {
        editor.ask = Some(Ask::Leave);
        app.mode = Mode::EditAsk;
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
    let Document {
        file,
        path,
        version,
        text,
    } = document;
    let recovered = app
        .recovered
        .iter()
        .position(|r| r.file == file)
        .map(|at| app.recovered.remove(at));
    let mut editor = Editor::new(workflow, file, path, version, &text);
    if let Some(copy) = recovered.filter(|r| r.text != text) {
        editor = Editor::new(
            editor.workflow,
            editor.file,
            editor.path,
            editor.base_version,
            &copy.text,
        );
        // Unsaved until saved: the copy is what the person had typed.
        editor.edits = 1;
        editor.recovered = true;
        app.message = Some(format!(
            "{}: your unsaved edits were recovered (Ctrl-s saves them, Esc then d drops them)",
            editor.file
        ));
    }
    let edits = editor.edits;
    app.editor = Some(editor);
    app.mode = Mode::Edit;
    vec![Effect::CheckLater(edits)]
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
        editor.text.insert_newline();
        editor.text.insert_str(indent);
        return changed(app);
    }
    // A conflict waits for the person's choice; typing goes on meanwhile.
    if editor.text.input(key) {
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
    if editor.text.insert_str(text) {
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

/// Keeps the cursor in view: the first line and column shown follow it.
pub fn follow_cursor(editor: &mut Editor, rows: usize, cols: usize) {
    let (row, col) = editor.text.cursor();
    let rows = rows.max(1);
    if row < editor.top {
        editor.top = row;
    } else if row >= editor.top + rows {
        editor.top = row + 1 - rows;
    }
    let gutter = gutter_width(editor.text.lines().len());
    let cols = cols.saturating_sub(gutter).max(1);
    if col < editor.left {
        editor.left = col;
        return;
    }
    // The view scrolls by characters but fills cells: a wide character (CJK, emoji) takes
    // two, so the first character shown is the leftmost that still leaves the cursor's own
    // cell on screen.
    let line = editor.text.lines().get(row).map_or("", String::as_str);
    let byte = |at: usize| line.char_indices().nth(at).map_or(line.len(), |(b, _)| b);
    let mut used = 1;
    let mut first = col;
    for c in line[byte(editor.left)..byte(col)].chars().rev() {
        let w = cell_width(c);
        if used + w > cols {
            break;
        }
        used += w;
        first -= 1;
    }
    editor.left = editor.left.max(first);
}

/// How a character of the text is drawn: a tab as one space, anything that could act on the
/// person's terminal (an escape typed into the file, a bidi control) as `�`, one cell each,
/// so that the columns the cursor counts and the cells drawn agree.
pub fn shown_char(c: char) -> char {
    if c == '\t' {
        ' '
    } else if crate::workflow::names::is_dangerous_char(c) {
        '\u{fffd}'
    } else {
        c
    }
}

/// The cells a character of the text takes on screen: a combining mark none of its own, a
/// wide character (CJK, most emoji) two.
pub fn cell_width(c: char) -> usize {
    unicode_width::UnicodeWidthChar::width(shown_char(c)).unwrap_or(0)
}

/// Cells before the text on each row: the line number, a mark column and a space.
pub fn gutter_width(lines: usize) -> usize {
    lines.max(1).to_string().len() + 3
}

/// Typing paused: check the buffer if it is still the text that paused.
pub fn check_due(app: &mut App, edits: u64) -> Vec<Effect> {
    let Some(editor) = &app.editor else {
        return Vec::new();
    };
    if editor.edits != edits || editor.checked_edits == edits {
        return Vec::new();
    }
    // The whole text is joined once a pause: it may be megabytes.
    let text = editor.contents();
    let mut effects = Vec::with_capacity(2);
    if editor.dirty() {
        effects.push(Effect::Recover {
            file: editor.file.clone(),
            text: text.clone(),
        });
    }
    effects.insert(0, Effect::Check { edits, text });
    effects
}

/// A check came back; an older one than shown is dropped.
pub fn checked(app: &mut App, edits: u64, draft: Draft) {
    let Some(editor) = &mut app.editor else {
        return;
    };
    if editor.checked_edits != u64::MAX && edits < editor.checked_edits {
        return;
    }
    let v = draft.validation;
    editor.check = Some(Check {
        errors: v.errors,
        warnings: v.warnings,
        name: v.name,
        violations: v.violations,
        plan: draft.plan,
    });
    editor.checked_edits = edits;
}

/// Ctrl-s: save with the version the buffer is based on. A known conflict, errors or a
/// changed name ask first.
pub fn save(app: &mut App) -> Vec<Effect> {
    let Some(editor) = &mut app.editor else {
        return Vec::new();
    };
    if editor.conflict.is_some() {
        editor.ask = Some(Ask::Conflict);
        app.mode = Mode::EditAsk;
        return Vec::new();
    }
    if let Some(name) = editor.check.as_ref().and_then(|c| c.name.as_ref())
        && *name != editor.workflow
        && editor.checked_edits == editor.edits
    {
        app.message = Some(format!(
            "the text is named {name}, the file is {}: put the name back, or rename the workflow from the list (R)",
            editor.workflow
        ));
        return Vec::new();
    }
    if editor.has_errors() && editor.checked_edits == editor.edits {
        editor.ask = Some(Ask::SaveInvalid);
        app.mode = Mode::EditAsk;
        return Vec::new();
    }
    save_now(editor, Some(editor.base_version.clone()))
}

fn save_now(editor: &Editor, expected: Option<String>) -> Vec<Effect> {
    vec![Effect::Save {
        edits: editor.edits,
        file: editor.file.clone(),
        text: editor.contents(),
        expected_version: expected,
    }]
}

/// The save came back.
pub fn saved(
    app: &mut App,
    edits: u64,
    result: Result<(String, usize), SaveFailure>,
) -> Vec<Effect> {
    let Some(editor) = &mut app.editor else {
        return Vec::new();
    };
    match result {
        Ok((version, errors)) => {
            editor.base_version = version;
            editor.saved_edits = edits;
            editor.conflict = None;
            editor.recovered = false;
            let file = editor.file.clone();
            match editor.after_save.take() {
                Some(Ask::Leave) if !editor.dirty() => close(app),
                Some(Ask::Quit) if !editor.dirty() => app.quit = true,
                _ => {}
            }
            app.message = Some(if errors > 0 {
                format!(
                    "saved {file} with {errors} error{}: the last good version still runs",
                    if errors == 1 { "" } else { "s" }
                )
            } else {
                format!("saved {file}")
            });
            vec![Effect::DiscardRecovery(file)]
        }
        Err(SaveFailure::Conflict) => {
            editor.after_save = None;
            app.message = Some(format!(
                "{} changed on disk since you opened it: nothing was saved",
                editor.file
            ));
            vec![Effect::LoadDisk(editor.workflow.clone())]
        }
        Err(SaveFailure::Other(e)) => {
            editor.after_save = None;
            app.message = Some(format!("not saved: {e}"));
            Vec::new()
        }
    }
}

/// Why a save did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SaveFailure {
    /// The file is not the version the buffer is based on.
    Conflict,
    Other(String),
}

/// The workflow changed on disk (an engine event): see what is there now.
pub fn changed_on_disk(app: &App, workflow: &str) -> Vec<Effect> {
    match &app.editor {
        Some(e) if e.workflow == workflow => vec![Effect::LoadDisk(workflow.to_string())],
        _ => Vec::new(),
    }
}

/// What is on disk now. The same version: nothing to do (our own save). A clean buffer follows
/// the file; a buffer with changes keeps them and shows the conflict.
pub fn disk(app: &mut App, workflow: &str, now: Option<(String, String)>) -> Vec<Effect> {
    let Some(editor) = app.editor.as_mut().filter(|e| e.workflow == workflow) else {
        return Vec::new();
    };
    let (version, text) = match now {
        Some((version, text)) => (Some(version), text),
        None => (None, String::new()),
    };
    if version.as_deref() == Some(editor.base_version.as_str()) {
        editor.conflict = None;
        return Vec::new();
    }
    match version {
        Some(version) if !editor.dirty() => {
            reload(editor, version, &text);
            app.message = Some(format!("{}: changed on disk, reloaded", editor.file));
            vec![Effect::CheckLater(editor.edits)]
        }
        version => {
            let deleted = version.is_none();
            editor.conflict = Some(Conflict { version, text });
            app.message = Some(if deleted {
                format!(
                    "{} was deleted on disk: Ctrl-s saves your text again",
                    editor.file
                )
            } else {
                format!(
                    "{} changed on disk: your changes are kept · Ctrl-s: reload, overwrite or diff",
                    editor.file
                )
            });
            Vec::new()
        }
    }
}

/// The buffer becomes the file's text at `version`.
fn reload(editor: &mut Editor, version: String, text: &str) {
    let cursor = editor.text.cursor();
    let mut area = TextArea::new(lines_of(text));
    area.set_max_histories(1000);
    area.move_cursor(CursorMove::Jump(
        u16::try_from(cursor.0).unwrap_or(u16::MAX),
        u16::try_from(cursor.1).unwrap_or(u16::MAX),
    ));
    editor.text = area;
    editor.base_version = version;
    editor.edits += 1;
    editor.saved_edits = editor.edits;
    editor.conflict = None;
    editor.recovered = false;
}

/// An answer to the editor's question.
pub fn answer(app: &mut App, choice: char) -> Vec<Effect> {
    // Esc in the diff goes back to the question.
    if let Some(e) = app
        .editor
        .as_mut()
        .filter(|e| e.diff.is_some() && choice == 'n')
    {
        e.diff = None;
        return Vec::new();
    }
    let Some(ask) = app.editor.as_ref().and_then(|e| e.ask) else {
        app.mode = if app.editor.is_some() {
            Mode::Edit
        } else {
            Mode::Normal
        };
        return Vec::new();
    };
    let effects = match (ask, choice) {
        (Ask::Conflict, 'd') => {
            if let Some(e) = &mut app.editor {
                e.diff = Some(0);
            }
            return Vec::new();
        }
        (Ask::Conflict, 'r') => reload_theirs(app),
        (Ask::Conflict, 'o') => {
            let Some(editor) = &mut app.editor else {
                return Vec::new();
            };
            // Deleted on disk: saved as a new file.
            let expected = editor.conflict.take().and_then(|c| c.version);
            save_now(editor, expected)
        }
        (Ask::SaveInvalid, 'y') | (Ask::Leave, 's') | (Ask::Quit, 's') => {
            let Some(editor) = &mut app.editor else {
                return Vec::new();
            };
            editor.after_save = (ask != Ask::SaveInvalid).then_some(ask);
            save_now(editor, Some(editor.base_version.clone()))
        }
        (Ask::Leave, 'd') | (Ask::Quit, 'd') => {
            let file = app.editor.as_ref().map(|e| e.file.clone());
            close(app);
            app.quit = ask == Ask::Quit;
            return file.map(Effect::DiscardRecovery).into_iter().collect();
        }
        _ => Vec::new(),
    };
    if let Some(e) = &mut app.editor {
        e.ask = None;
        e.diff = None;
    }
    app.mode = Mode::Edit;
    effects
}

/// The conflict settled for the file on disk: the buffer is its text, the changes dropped.
fn reload_theirs(app: &mut App) -> Vec<Effect> {
    let Some(editor) = &mut app.editor else {
        return Vec::new();
    };
    let Some(conflict) = editor.conflict.take() else {
        return Vec::new();
    };
    let file = editor.file.clone();
    match conflict.version {
        Some(version) => {
            reload(editor, version, &conflict.text);
            let edits = editor.edits;
            app.message = Some(format!("{file}: reloaded from disk, your changes dropped"));
            vec![Effect::DiscardRecovery(file), Effect::CheckLater(edits)]
        }
        None => {
            app.message = Some(format!("{file} is deleted on disk: nothing to reload"));
            Vec::new()
        }
    }
}

/// Esc: the editor closes, asking first when there are unsaved changes.
pub fn leave(app: &mut App) -> Vec<Effect> {
    let Some(editor) = &mut app.editor else {
        app.mode = Mode::Normal;
        return Vec::new();
    };
    if editor.dirty() {
        editor.ask = Some(Ask::Leave);
        app.mode = Mode::EditAsk;
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
            app.mode = Mode::EditAsk;
            false
        }
        _ => true,
    }
}

fn close(app: &mut App) {
    app.editor = None;
    app.mode = Mode::Normal;
}

/// Ctrl-z and Ctrl-y.
pub fn undo(app: &mut App, redo: bool) -> Vec<Effect> {
    let Some(editor) = &mut app.editor else {
        return Vec::new();
    };
    let done = if redo {
        editor.text.redo()
    } else {
        editor.text.undo()
    };
    if done { changed(app) } else { Vec::new() }
}

/// PgUp/PgDn: the cursor moves a page.
pub fn page(app: &mut App, pages: isize) {
    let (rows, cols) = text_size(app);
    let Some(editor) = &mut app.editor else {
        return;
    };
    let (row, col) = editor.text.cursor();
    let step = rows.saturating_sub(1).max(1);
    let to = if pages < 0 {
        row.saturating_sub(step)
    } else {
        row + step
    };
    jump(editor, to, col);
    follow_cursor(editor, rows, cols);
}

fn jump(editor: &mut Editor, row: usize, col: usize) {
    editor.text.move_cursor(CursorMove::Jump(
        u16::try_from(row).unwrap_or(u16::MAX),
        u16::try_from(col).unwrap_or(u16::MAX),
    ));
}

/// Ctrl-n: the next line with a violation after the cursor (wrapping), its message said.
pub fn next_problem(app: &mut App) {
    let (rows, cols) = text_size(app);
    let Some(editor) = &mut app.editor else {
        return;
    };
    let row = editor.text.cursor().0 + 1;
    let mut lines: Vec<(usize, usize)> = editor
        .check
        .iter()
        .flat_map(|c| c.violations.iter())
        .filter_map(|v| Some((v.line?, v.column.unwrap_or(1))))
        .collect();
    lines.sort_unstable();
    lines.dedup();
    let Some(&(line, column)) = lines
        .iter()
        .find(|(l, _)| *l > row)
        .or_else(|| lines.first())
    else {
        app.message = Some(if editor.check.is_some() {
            "no problems in this text".into()
        } else {
            "not checked yet".into()
        });
        return;
    };
    jump(editor, line - 1, column.saturating_sub(1));
    follow_cursor(editor, rows, cols);
    if let Some(v) = editor.violations_on(line).next() {
        app.message = Some(format!(
            "line {line}: {} ({})",
            crate::workflow::names::sanitize(&v.message),
            v.rule
        ));
    }
}

/// Ctrl-t: the side panel shows the problems, the plan, or nothing.
pub fn cycle_panel(app: &mut App) {
    if let Some(editor) = &mut app.editor {
        editor.panel = match editor.panel {
            Panel::Problems => Panel::Plan,
            Panel::Plan => Panel::None,
            Panel::None => Panel::Problems,
        };
    }
}

/// Ctrl-f: type a search (find mode); Enter finds it from the cursor on.
pub fn start_find(app: &mut App) {
    if let Some(editor) = &mut app.editor {
        editor.find.clear();
        app.mode = Mode::EditFind;
    }
}

pub fn find(app: &mut App) {
    let (rows, cols) = text_size(app);
    app.mode = Mode::Edit;
    let Some(editor) = &mut app.editor else {
        return;
    };
    let pattern = regex::escape(&editor.find);
    if let Err(e) = editor.text.set_search_pattern(&pattern) {
        app.message = Some(format!("cannot search: {e}"));
        return;
    }
    if editor.find.is_empty() {
        return;
    }
    if editor.text.search_forward(false) {
        follow_cursor(editor, rows, cols);
    } else {
        app.message = Some(format!(
            "{:?} is not in the text",
            crate::workflow::names::sanitize(&editor.find)
        ));
    }
}

/// Ctrl-Space: what the schema allows at the cursor (keys of the mapping it is in, a tool,
/// a condition, a state name); one candidate is written at once.
pub fn start_completion(app: &mut App) -> Vec<Effect> {
    let Some(editor) = &mut app.editor else {
        return Vec::new();
    };
    let (row, col) = editor.text.cursor();
    let found = complete(editor.text.lines(), row, col);
    match found.items.len() {
        0 => {
            app.message = Some("nothing to complete here".into());
            Vec::new()
        }
        1 => {
            editor.completion = Some((found, 0));
            accept_completion(app)
        }
        _ => {
            editor.completion = Some((found, 0));
            app.mode = Mode::Complete;
            Vec::new()
        }
    }
}

/// ↑/↓ in the completion list.
pub fn move_completion(app: &mut App, delta: isize) {
    if let Some((c, at)) = app.editor.as_mut().and_then(|e| e.completion.as_mut()) {
        let last = c.items.len().saturating_sub(1) as isize;
        *at = (*at as isize + delta).clamp(0, last) as usize;
    }
}

/// Enter or Tab: the chosen item replaces the word (a key gets its `: `).
pub fn accept_completion(app: &mut App) -> Vec<Effect> {
    app.mode = Mode::Edit;
    let Some(editor) = &mut app.editor else {
        return Vec::new();
    };
    let Some((found, at)) = editor.completion.take() else {
        return Vec::new();
    };
    let Some(item) = found.items.get(at) else {
        return Vec::new();
    };
    // Both in characters, as the editor counts: the word typed so far is replaced.
    let (_, col) = editor.text.cursor();
    let typed = found.start.min(col);
    for _ in typed..col {
        editor.text.move_cursor(CursorMove::Back);
    }
    editor.text.delete_str(col - typed);
    let mut text = item.text.clone();
    if found.key {
        text.push_str(": ");
    }
    editor.text.insert_str(text);
    changed(app)
}

/// Esc, or any other key: the list closes.
pub fn close_completion(app: &mut App) {
    app.mode = Mode::Edit;
    if let Some(editor) = &mut app.editor {
        editor.completion = None;
    }
}

/// The answers a question takes (the status line shows only those).
pub fn choices(ask: Ask) -> &'static [char] {
    match ask {
        Ask::Conflict => &['r', 'o', 'd'],
        Ask::SaveInvalid => &['y'],
        Ask::Leave | Ask::Quit => &['s', 'd'],
    }
}

/// A severity's mark in the gutter.
pub fn mark(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "✗",
        Severity::Warning => "!",
    }
}

#[cfg(test)]
#[path = "editor_tests.rs"]
mod tests;
