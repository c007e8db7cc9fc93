//! Where the editor's cursor and panel go: a page up or down, the next problem, the side
//! panel in turn.

use super::text_size;
use crate::tui::editor::{Panel, follow_cursor, jump};
use crate::tui::state::App;

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
