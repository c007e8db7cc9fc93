//! Where the editor looks: the cursor kept in view, characters as cells, the gutter, and the
//! marks and choices the drawing shows.

use super::{Ask, Editor};
use crate::workflow::violation::Severity;
use ratatui_textarea::CursorMove;

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

pub fn jump(editor: &mut Editor, row: usize, col: usize) {
    editor.steps.interrupt();
    editor.text.move_cursor(CursorMove::Jump(
        u16::try_from(row).unwrap_or(u16::MAX),
        u16::try_from(col).unwrap_or(u16::MAX),
    ));
}

/// The answers a question takes (the status line shows only those).
pub fn choices(ask: Ask) -> &'static [char] {
    match ask {
        Ask::Conflict => &['r', 'o', 'd'],
        Ask::SaveInvalid => &['y'],
        Ask::Leave | Ask::Quit => &['s', 'd'],
    }
}

/// What answering `ask` with `c` does, in the words of the status line: each question's
/// keys say plainly what they do there (`d` shows the diff of a conflict, but drops the
/// changes when leaving).
pub fn answer_label(ask: Ask, c: char) -> Option<&'static str> {
    Some(match (ask, c) {
        (Ask::Conflict, 'r') => "reload theirs",
        (Ask::Conflict, 'o') => "overwrite with yours",
        (Ask::Conflict, 'd') => "diff",
        (Ask::SaveInvalid, 'y') => "save anyway",
        (Ask::Leave, 's') => "save, close",
        (Ask::Leave, 'd') => "drop changes, close",
        (Ask::Quit, 's') => "save, quit",
        (Ask::Quit, 'd') => "drop changes, quit",
        _ => return None,
    })
}

/// A severity's mark in the gutter.
pub fn mark(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "✗",
        Severity::Warning => "!",
    }
}
