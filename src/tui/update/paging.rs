//! How far a page of an overlay goes: help a page of its rows, the others as tall as the
//! screen. Both the moving keys and the paging keys scroll them.

use super::super::help;
use super::super::overlay::Overlay;
use super::super::state::App;

/// Moves help `delta` rows, no further than its last page.
pub(super) fn scroll_help(app: &mut App, delta: isize) {
    if let Some(Overlay::Help { of, top }) = &mut app.overlay {
        let last = help::last_top(*of, app.view, app.size);
        *top = top.saturating_add_signed(delta).min(last);
    }
}

/// A page of an overlay as tall as the screen (its border and the status line aside).
pub(super) fn page_rows(app: &App) -> isize {
    isize::try_from(app.size.1.saturating_sub(6).max(1)).unwrap_or(1)
}

/// A page of help: its rows shown at once.
pub(super) fn help_page(app: &App) -> isize {
    isize::try_from(help::page(app.size.1)).unwrap_or(1)
}
