//! A pane's history: scrolling back through it and searching it. The lines come from the
//! engine (`get_screen_content` tail, `search_output`) through effects; here is only where
//! the view is and which hit is shown.

use super::effect::Effect;
use super::layout;
use super::mode::{Mode, View};
use super::state::{App, PaneSearch, Scrollback};
use crate::engine::search::{Found, Source};

/// The most lines the view reads from a session's history.
pub const HISTORY_MAX: usize = 10_000;
/// The first read of a history: enough for a few pages.
const FIRST_READ: usize = 500;
/// Hits read in one page of a search.
pub const SEARCH_PAGE: u32 = 50;

/// Rows of the shown pane's view.
pub fn rows(app: &App) -> usize {
    usize::from(layout::selected_pane_size(app).1)
}

/// A page: the view's rows less one kept for context.
fn page(app: &App) -> usize {
    rows(app).saturating_sub(1).max(1)
}

/// Back to the shown pane's live screen.
pub fn leave(app: &mut App) {
    app.scroll = None;
}

/// The history view scrolled `by` pages (up when positive), read from the engine when it
/// needs lines not read yet.
pub fn scroll(app: &mut App, pages: isize) -> Vec<Effect> {
    let lines = pages.saturating_mul(page(app) as isize);
    scroll_lines(app, lines)
}

/// The history view scrolled `lines` lines (up when positive; the mouse wheel scrolls a few
/// at a time). Below the newest line the live screen is back, except in copy mode, which
/// keeps the history it selects in.
pub fn scroll_lines(app: &mut App, lines: isize) -> Vec<Effect> {
    let Some(pane) = app.focused_pane() else {
        app.message = Some("no pane to scroll: t opens a shell".into());
        return Vec::new();
    };
    let session_id = pane.session_id.clone();
    app.view = View::Panes;
    let (rows, page) = (rows(app), page(app));
    let keep = app.mode() == Mode::Copy;
    let scroll = match &mut app.scroll {
        Some(s) if s.session_id == session_id => s,
        _ if lines <= 0 => return Vec::new(),
        _ => return open(app, session_id, lines.unsigned_abs()),
    };
    if lines < 0 {
        scroll.offset = scroll.offset.saturating_sub(lines.unsigned_abs());
        if scroll.offset == 0 && !keep {
            leave(app);
        }
        return Vec::new();
    }
    scroll.offset += lines.unsigned_abs();
    let wanted = scroll.offset + rows;
    if wanted > scroll.lines.len() && !scroll.complete(HISTORY_MAX) {
        // Read further back; where the view is follows on arrival (see `history_read`).
        scroll.asked = (scroll.asked * 2).max(wanted + page).min(HISTORY_MAX);
        return vec![Effect::ReadHistory {
            session_id,
            lines: scroll.asked,
        }];
    }
    clamp(scroll, rows);
    Vec::new()
}

/// Opens the shown pane's history `offset` lines above its newest line (0: the newest lines at
/// the bottom, where copy mode starts).
pub fn open(app: &mut App, session_id: String, offset: usize) -> Vec<Effect> {
    let (rows, page) = (rows(app), page(app));
    let asked = FIRST_READ.max(rows + page).max(offset + rows);
    app.scroll = Some(Scrollback {
        session_id: session_id.clone(),
        asked,
        offset,
        ..Scrollback::default()
    });
    vec![Effect::ReadHistory {
        session_id,
        lines: asked,
    }]
}

/// The oldest line the view reads.
pub fn top(app: &mut App) -> Vec<Effect> {
    let effects = scroll(app, 1);
    let rows = rows(app);
    let Some(scroll) = &mut app.scroll else {
        return effects;
    };
    scroll.offset = usize::MAX;
    if scroll.complete(HISTORY_MAX) {
        clamp(scroll, rows);
        return Vec::new();
    }
    scroll.asked = HISTORY_MAX;
    vec![Effect::ReadHistory {
        session_id: scroll.session_id.clone(),
        lines: HISTORY_MAX,
    }]
}

fn clamp(scroll: &mut Scrollback, rows: usize) {
    scroll.offset = scroll.offset.min(scroll.lines.len().saturating_sub(rows));
}

/// Lines of a session's history arrived: `last_line` is the number of the last one.
pub fn history_read(app: &mut App, session_id: &str, lines: Vec<String>, last_line: u64) {
    let rows = rows(app);
    let Some(scroll) = app.scroll.as_mut().filter(|s| s.session_id == session_id) else {
        return;
    };
    if !scroll.lines.is_empty() && scroll.offset != usize::MAX {
        // Output since the last read lies below the view: the view stays on its lines.
        scroll.offset += last_line.saturating_sub(scroll.last_line) as usize;
    }
    scroll.lines = lines;
    scroll.last_line = last_line;
    if let Some(target) = scroll.target.take()
        && !bring_into_view(scroll, target, rows)
    {
        app.message = Some(format!(
            "the hit on line {target} is older than the {} lines the view reads",
            scroll.lines.len()
        ));
    }
    if let Some(scroll) = &mut app.scroll {
        clamp(scroll, rows);
    }
}

/// Puts line number `line` in the middle of the view; false when it was not read.
fn bring_into_view(scroll: &mut Scrollback, line: u64, rows: usize) -> bool {
    let first = scroll.first_line();
    if scroll.lines.is_empty() || line < first || line > scroll.last_line {
        return false;
    }
    let index = (line - first) as usize;
    let bottom = (index + rows / 2).min(scroll.lines.len() - 1);
    scroll.offset = scroll.lines.len() - 1 - bottom;
    clamp(scroll, rows);
    true
}

/// Enter in search mode: search the shown pane.
pub fn start_search(app: &mut App, pattern: String) -> Vec<Effect> {
    let Some(pane) = app.focused_pane() else {
        app.message = Some("no pane to search".into());
        return Vec::new();
    };
    if pattern.is_empty() {
        return Vec::new();
    }
    vec![Effect::Search {
        session_id: pane.session_id.clone(),
        pattern,
        cursor: None,
    }]
}

/// A page of hits arrived (`more`: a later page of the search shown), or the engine's
/// reason there is none (a bad regex).
pub fn search_found(
    app: &mut App,
    session_id: String,
    pattern: String,
    more: bool,
    found: Result<Found, String>,
) -> Vec<Effect> {
    let found = match found {
        Ok(found) => found,
        Err(e) => {
            app.message = Some(e);
            return Vec::new();
        }
    };
    match &mut app.search {
        Some(search) if more && search.session_id == session_id && search.pattern == pattern => {
            if found.hits.is_empty() {
                search.next_cursor = None;
                app.message = Some(format!(
                    "/{}: {}: the oldest hit",
                    search.pattern,
                    search.position()
                ));
                return Vec::new();
            }
            search.hits.extend(found.hits);
            search.next_cursor = found.next_cursor;
            search.at += 1;
        }
        _ if more => return Vec::new(),
        _ => {
            if found.hits.is_empty() {
                app.search = None;
                app.message = Some(format!("/{pattern}: no hits"));
                return Vec::new();
            }
            app.search = Some(PaneSearch {
                session_id,
                pattern,
                total: found.total_hits,
                truncated: found.truncated,
                hits: found.hits,
                next_cursor: found.next_cursor,
                last_line: found.last_line,
                at: 0,
            });
        }
    }
    show_hit(app)
}

/// `n` (older, `step` 1) or `N` (newer, -1): the next hit, read from the engine's next page
/// when the hits read so far are used up.
pub fn next_hit(app: &mut App, step: isize) -> Vec<Effect> {
    let shown = app.focused_pane().map(|p| p.session_id.clone());
    let Some(search) = app
        .search
        .as_mut()
        .filter(|s| Some(&s.session_id) == shown.as_ref())
    else {
        app.message = Some("no search in this pane: / searches".into());
        return Vec::new();
    };
    if step < 0 {
        if search.at == 0 {
            app.message = Some(format!(
                "/{}: {}: the newest hit",
                search.pattern,
                search.position()
            ));
            return Vec::new();
        }
        search.at -= 1;
    } else if search.at + 1 < search.hits.len() {
        search.at += 1;
    } else {
        return match &search.next_cursor {
            Some(cursor) => vec![Effect::Search {
                session_id: search.session_id.clone(),
                pattern: search.pattern.clone(),
                cursor: Some(cursor.clone()),
            }],
            None => {
                app.message = Some(format!(
                    "/{}: {}: the oldest hit",
                    search.pattern,
                    search.position()
                ));
                Vec::new()
            }
        };
    }
    show_hit(app)
}

/// Scrolls to the search's current hit and says which it is.
fn show_hit(app: &mut App) -> Vec<Effect> {
    let rows = rows(app);
    let Some(search) = &app.search else {
        return Vec::new();
    };
    let Some(hit) = search.hit() else {
        return Vec::new();
    };
    app.message = Some(format!("/{}: {}", search.pattern, search.position()));
    app.view = View::Panes;
    if hit.source == Source::Screen {
        // On a full-screen program's screen: the live screen shows it.
        leave(app);
        return Vec::new();
    }
    let line = hit.line;
    let session_id = search.session_id.clone();
    let newest = search.last_line.unwrap_or(line);
    if let Some(scroll) = app.scroll.as_mut().filter(|s| s.session_id == session_id)
        && bring_into_view(scroll, line, rows)
    {
        return Vec::new();
    }
    let newest = newest.max(app.scroll.as_ref().map_or(0, |s| s.last_line));
    let wanted = (newest.saturating_sub(line) as usize + 1 + rows).max(FIRST_READ);
    let asked = wanted.min(HISTORY_MAX);
    let scroll = app.scroll.get_or_insert_with(|| Scrollback {
        session_id: session_id.clone(),
        ..Scrollback::default()
    });
    if scroll.session_id != session_id {
        *scroll = Scrollback {
            session_id: session_id.clone(),
            ..Scrollback::default()
        };
    }
    scroll.asked = asked;
    scroll.target = Some(line);
    vec![Effect::ReadHistory {
        session_id,
        lines: asked,
    }]
}
