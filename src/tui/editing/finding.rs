//! Finding text in the buffer, and completing the word at the cursor from the manifest's
//! vocabulary.

use super::{changed, text_size};
use crate::tui::editor::follow_cursor;
use crate::tui::editor::undo::Edit;
use crate::tui::effect::Effect;
use crate::tui::state::App;
use crate::workflow::completion::complete;
use ratatui_textarea::CursorMove;

/// Ctrl-f: type a search (find mode); Enter finds it from the cursor on.
pub fn start_find(app: &mut App) {
    if let Some(editor) = &mut app.editor {
        editor.find.clear();
        editor.finding = true;
    }
}

pub fn find(app: &mut App) {
    let (rows, cols) = text_size(app);
    let Some(editor) = &mut app.editor else {
        return;
    };
    editor.finding = false;
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
    editor.steps.before(&editor.text, Edit::Other);
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
    editor.steps.after(true);
    changed(app)
}

/// Esc, or any other key: the list closes.
pub fn close_completion(app: &mut App) {
    if let Some(editor) = &mut app.editor {
        editor.completion = None;
    }
}
