//! Copy mode: the keyboard's cursor over a pane's history (or a full-screen program's screen),
//! a selection made with `v`/`V`, and `y` putting it on the clipboard.

use crate::tui::effect::Effect;
use crate::tui::mode::{Mode, View};
use crate::tui::selection::{Point, Surface};
use crate::tui::state::App;
use crate::tui::test_support::{key, shell_pane};
use crate::tui::update::{Event, update};
use crossterm::event::KeyCode;

fn app() -> App {
    let mut app = App::new("workflows".into());
    app.size = (100, 30);
    app.panes.push(shell_pane(98, 13));
    app.view = View::Panes;
    app
}

/// `v` on a shell: copy mode asks where the cursor is, then opens the history at its newest
/// lines (unless it is shown already) with the cursor on the last one.
fn in_copy_mode(app: &mut App) {
    let history_shown = app.scroll.is_some();
    assert_eq!(
        update(app, key(KeyCode::Char('v'))),
        vec![Effect::LocateCursor("s1".into())]
    );
    let effects = update(
        app,
        Event::CursorLocated {
            session_id: "s1".into(),
            alternate: false,
            cursor: Point { line: 12, col: 2 },
        },
    );
    if history_shown {
        assert!(effects.is_empty(), "{effects:?}");
    } else {
        assert!(
            matches!(&effects[..], [Effect::ReadHistory { .. }]),
            "{effects:?}"
        );
    }
    update(
        app,
        Event::History {
            session_id: "s1".into(),
            lines: Ok(((1..=200).map(|n| format!("line {n}")).collect(), 200)),
        },
    );
    assert_eq!(app.mode(), Mode::Copy);
}

#[test]
fn copy_mode_starts_on_the_newest_line_of_the_history() {
    let mut app = app();
    in_copy_mode(&mut app);
    assert_eq!(app.copy_cursor, Some(Point { line: 200, col: 2 }));
    assert_eq!(app.scroll.as_ref().map(|s| s.offset), Some(0));
}

#[test]
fn v_then_moves_then_y_copies_the_lines_between_and_leaves_copy_mode() {
    let mut app = app();
    in_copy_mode(&mut app);
    update(&mut app, key(KeyCode::Char('k')));
    update(&mut app, key(KeyCode::Char('h')));
    update(&mut app, key(KeyCode::Char('h')));
    update(&mut app, key(KeyCode::Char('v')));
    update(&mut app, key(KeyCode::Char('j')));
    update(&mut app, key(KeyCode::Char('l')));
    update(&mut app, key(KeyCode::Char('l')));
    update(&mut app, key(KeyCode::Char('l')));
    let effects = update(&mut app, key(KeyCode::Char('y')));
    assert_eq!(effects, vec![Effect::Clipboard("line 199\nline".into())]);
    assert_eq!(app.mode(), Mode::Normal);
    assert!(app.selection.is_none() && app.copy_cursor.is_none());
    // The history view stays where it was read.
    assert!(app.scroll.is_some());
}

#[test]
fn whole_lines_with_capital_v_and_the_cursors_line_when_nothing_is_selected() {
    let mut app = app();
    in_copy_mode(&mut app);
    update(&mut app, key(KeyCode::Char('V')));
    update(&mut app, key(KeyCode::Up));
    assert_eq!(
        update(&mut app, key(KeyCode::Enter)),
        vec![Effect::Clipboard("line 199\nline 200".into())]
    );
    in_copy_mode(&mut app);
    assert_eq!(
        update(&mut app, key(KeyCode::Char('y'))),
        vec![Effect::Clipboard("line 200".into())]
    );
}

#[test]
fn the_cursor_moving_above_the_view_scrolls_the_history_without_leaving_it() {
    let mut app = app();
    in_copy_mode(&mut app);
    let rows = crate::tui::history::rows(&app) as u64;
    for _ in 0..rows {
        update(&mut app, key(KeyCode::Char('k')));
    }
    assert_eq!(app.copy_cursor.map(|c| c.line), Some(200 - rows));
    assert_eq!(app.scroll.as_ref().map(|s| s.offset), Some(1));
    // Back down to the bottom: still the history, still copy mode.
    for _ in 0..rows + 5 {
        update(&mut app, key(KeyCode::Char('j')));
    }
    assert_eq!(app.copy_cursor.map(|c| c.line), Some(200));
    assert_eq!(app.scroll.as_ref().map(|s| s.offset), Some(0));
    assert_eq!(app.mode(), Mode::Copy);
    update(&mut app, key(KeyCode::PageUp));
    assert_eq!(app.copy_cursor.map(|c| c.line), Some(200 - (rows - 1)));
    update(&mut app, key(KeyCode::Esc));
    assert_eq!(app.mode(), Mode::Normal);
    assert!(app.copy_cursor.is_none());
}

#[test]
fn on_a_full_screen_program_copy_mode_selects_its_screen() {
    let mut app = app();
    update(&mut app, key(KeyCode::Char('v')));
    let effects = update(
        &mut app,
        Event::CursorLocated {
            session_id: "s1".into(),
            alternate: true,
            cursor: Point { line: 3, col: 7 },
        },
    );
    assert!(effects.is_empty());
    assert!(app.scroll.is_none());
    assert_eq!(app.copy_cursor, Some(Point { line: 3, col: 7 }));
    update(&mut app, key(KeyCode::Char('v')));
    update(&mut app, key(KeyCode::Char('l')));
    let effects = update(&mut app, key(KeyCode::Char('y')));
    match &effects[..] {
        [Effect::CopyScreen(s)] => {
            assert_eq!(s.surface, Surface::Screen);
            assert_eq!(
                s.ordered(),
                (Point { line: 3, col: 7 }, Point { line: 3, col: 8 })
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn copied_text_is_reported_with_the_tmux_hint_when_there_is_one() {
    let mut app = app();
    app.clipboard_hint = Some("tmux drops OSC 52".into());
    update(&mut app, Event::Copied(12));
    let message = app.message.clone().unwrap_or_default();
    assert!(message.contains("copied 12 characters"), "{message}");
    assert!(message.contains("tmux drops OSC 52"), "{message}");
}
