//! Where the editor looks: the cursor kept in view, characters as cells, the gutter, paging,
//! the next problem, the side panel, and the marks and choices the drawing shows.

use super::{Ask, Editor, Panel, text_size};
use crate::tui::state::App;
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

pub(super) fn jump(editor: &mut Editor, row: usize, col: usize) {
    editor.steps.interrupt();
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
