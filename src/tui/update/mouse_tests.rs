//! Clicks, the wheel and drags → the same state and effects as keys, found by the layout the
//! frame is drawn with.

use crate::tui::effect::Effect;
use crate::tui::layout;
use crate::tui::mode::{Mode, View};
use crate::tui::selection::{Point, Surface, Unit};
use crate::tui::state::App;
use crate::tui::test_support::{key, shell_pane, summary};
use crate::tui::update::{Event, update};
use crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

/// 100x30 with three workflows and three shell panes, the panes view active.
fn app() -> App {
    let mut app = App::new("workflows".into());
    app.size = (100, 30);
    app.workflows = vec![summary("build"), summary("deploy"), summary("git_health")];
    for id in ["s1", "s2", "s3"] {
        let mut pane = shell_pane(98, 13);
        pane.session_id = id.into();
        app.panes.push(pane);
    }
    app
}

fn mouse(kind: MouseEventKind, x: u16, y: u16, at_ms: u64) -> Event {
    Event::Mouse {
        event: MouseEvent {
            kind,
            column: x,
            row: y,
            modifiers: KeyModifiers::NONE,
        },
        at_ms,
        reporting: None,
    }
}

fn click(app: &mut App, x: u16, y: u16, at_ms: u64) -> Vec<Effect> {
    let mut effects = update(
        app,
        mouse(MouseEventKind::Down(MouseButton::Left), x, y, at_ms),
    );
    effects.extend(update(
        app,
        mouse(MouseEventKind::Up(MouseButton::Left), x, y, at_ms),
    ));
    effects
}

#[test]
fn a_click_on_a_list_row_selects_that_workflow_and_loads_its_plan() {
    let mut app = app();
    let list = layout::app_areas(&app).list;
    // The border is row 0; the third workflow is on row 3.
    let effects = click(&mut app, list.x + 3, list.y + 3, 0);
    assert_eq!(app.selected, 2);
    assert_eq!(app.view, View::List);
    assert_eq!(effects, vec![Effect::LoadPlan("git_health".into())]);
    // Below the last workflow: nothing changes.
    click(&mut app, list.x + 3, list.y + 6, 1000);
    assert_eq!(app.selected, 2);
    let plan = layout::app_areas(&app).plan;
    click(&mut app, plan.x + 5, plan.y + 2, 2000);
    assert_eq!(app.view, View::Plan);
}

#[test]
fn the_wheel_moves_the_list_and_scrolls_a_panes_history_a_few_lines() {
    let mut app = app();
    let list = layout::app_areas(&app).list;
    update(
        &mut app,
        mouse(MouseEventKind::ScrollDown, list.x + 2, list.y + 2, 0),
    );
    assert_eq!(app.selected, 1);
    let panes = layout::app_areas(&app).panes;
    let effects = update(
        &mut app,
        mouse(MouseEventKind::ScrollUp, panes.x + 5, panes.y + 5, 0),
    );
    assert_eq!(app.view, View::Panes);
    assert!(
        matches!(&effects[..], [Effect::ReadHistory { session_id, .. }] if session_id == "s1"),
        "{effects:?}"
    );
    assert_eq!(app.scroll.as_ref().map(|s| s.offset), Some(3));
    // Back down past the newest line: the live screen again.
    update(
        &mut app,
        mouse(MouseEventKind::ScrollDown, panes.x + 5, panes.y + 5, 0),
    );
    assert!(app.scroll.is_none());
}

#[test]
fn a_click_on_a_tab_shows_that_pane() {
    let mut app = app();
    let panes = layout::app_areas(&app).panes;
    // " [s1 · bash] │ s2 · bash │ s3 · bash ": the third tab starts after two labels.
    let first = "[s1 · bash]".chars().count() as u16;
    let second = "s2 · bash".chars().count() as u16;
    let x = panes.x + 2 + first + 3 + second + 3 + 1;
    let effects = click(&mut app, x, panes.y, 0);
    assert_eq!(app.pane, 2);
    assert_eq!(app.view, View::Panes);
    assert!(
        effects
            .iter()
            .all(|e| matches!(e, Effect::Resize { session_id, .. } if session_id == "s3"))
    );
}

#[test]
fn in_the_grid_every_pane_is_shown_resized_to_its_cell_and_a_click_picks_one() {
    let mut app = app();
    let effects = update(&mut app, key(KeyCode::Char('g')));
    assert!(app.grid);
    let slots = layout::app_slots(&app);
    assert_eq!(slots.len(), 3);
    // Each running pane gets the size of its own cell.
    for slot in &slots {
        let (cols, rows) = layout::pty_size(slot.inner);
        let id = &app.panes[slot.index].session_id;
        assert!(
            effects.contains(&Effect::Resize {
                session_id: id.clone(),
                cols,
                rows
            }),
            "{id} not resized to {cols}x{rows}: {effects:?}"
        );
    }
    let second = slots[1].inner;
    click(&mut app, second.x + 2, second.y + 1, 0);
    assert_eq!(app.pane, 1);
    update(&mut app, key(KeyCode::Char('g')));
    assert!(!app.grid);
}

#[test]
fn zoom_gives_the_panes_the_screen_and_resizes_them() {
    let mut app = app();
    let before = layout::selected_pane_size(&app);
    let effects = update(&mut app, key(KeyCode::Char('z')));
    let after = layout::selected_pane_size(&app);
    assert!(after.1 > before.1, "{before:?} → {after:?}");
    assert_eq!(
        effects,
        vec![Effect::Resize {
            session_id: "s1".into(),
            cols: after.0,
            rows: after.1
        }]
    );
}

#[test]
fn the_terminal_the_studio_itself_runs_in_is_never_fitted_to_its_pane() {
    // A studio typed into one of flowdeck's terminals shows that terminal too: fitting it
    // to its pane would shrink the studio's own window, its pane, and so on to 2x2.
    let mut app = app();
    app.inside = vec![app.panes[0].pid];
    let effects = update(&mut app, key(KeyCode::Char('z')));
    assert!(effects.is_empty(), "{effects:?}");
}

#[test]
fn a_drag_selects_screen_cells_inside_its_pane_only_and_the_release_copies_them() {
    let mut app = app();
    let inner = layout::app_slots(&app)[0].inner;
    update(
        &mut app,
        mouse(
            MouseEventKind::Down(MouseButton::Left),
            inner.x + 2,
            inner.y + 1,
            0,
        ),
    );
    // Dragged far past the pane's bottom-left: the selection stops at its border.
    update(
        &mut app,
        mouse(MouseEventKind::Drag(MouseButton::Left), 0, 29, 10),
    );
    let selection = app.selection.clone().expect("a selection");
    assert_eq!(selection.anchor, Point { line: 1, col: 2 });
    assert_eq!(
        selection.head,
        Point {
            line: u64::from(inner.height - 1),
            col: 0
        }
    );
    let effects = update(
        &mut app,
        mouse(MouseEventKind::Up(MouseButton::Left), 0, 29, 20),
    );
    let copied = app.selection.clone().expect("the selection stays shown");
    assert!(!copied.dragging);
    assert_eq!(effects, vec![Effect::CopyScreen(copied)]);
}

#[test]
fn a_plain_click_in_a_pane_selects_nothing_and_copies_nothing() {
    let mut app = app();
    let inner = layout::app_slots(&app)[0].inner;
    let effects = click(&mut app, inner.x + 4, inner.y + 2, 0);
    assert!(effects.is_empty(), "{effects:?}");
    assert!(app.selection.is_none());
}

#[test]
fn double_and_triple_clicks_select_words_and_lines_at_once() {
    let mut app = app();
    let inner = layout::app_slots(&app)[0].inner;
    let (x, y) = (inner.x + 4, inner.y + 2);
    click(&mut app, x, y, 1000);
    let effects = click(&mut app, x, y, 1200);
    assert!(
        matches!(&effects[..], [Effect::CopyScreen(s)] if s.unit == Unit::Word),
        "{effects:?}"
    );
    let effects = click(&mut app, x, y, 1350);
    assert!(
        matches!(&effects[..], [Effect::CopyScreen(s)] if s.unit == Unit::Line),
        "{effects:?}"
    );
    // Too late for a double click: a plain click again.
    let effects = click(&mut app, x, y, 5000);
    assert!(effects.is_empty());
}

#[test]
fn a_selection_in_the_history_view_is_copied_from_the_lines_read() {
    let mut app = app();
    app.view = View::Panes;
    update(&mut app, key(KeyCode::PageUp));
    update(
        &mut app,
        Event::History {
            session_id: "s1".into(),
            lines: Ok(((1..=100).map(|n| format!("line {n}")).collect(), 100)),
        },
    );
    let scroll = app.scroll.clone().expect("the history view");
    let inner = layout::app_slots(&app)[0].inner;
    let top = scroll.top_line(usize::from(inner.height));
    update(
        &mut app,
        mouse(MouseEventKind::Down(MouseButton::Left), inner.x, inner.y, 0),
    );
    update(
        &mut app,
        mouse(
            MouseEventKind::Drag(MouseButton::Left),
            inner.x + 3,
            inner.y + 1,
            5,
        ),
    );
    let effects = update(
        &mut app,
        mouse(
            MouseEventKind::Up(MouseButton::Left),
            inner.x + 3,
            inner.y + 1,
            9,
        ),
    );
    assert_eq!(
        app.selection.as_ref().map(|s| s.surface),
        Some(Surface::History)
    );
    assert_eq!(
        effects,
        vec![Effect::Clipboard(format!("line {top}\nline"))]
    );
}

#[test]
fn with_the_mouse_left_to_the_terminal_the_studio_ignores_it() {
    let mut app = app();
    let effects = update(&mut app, key(KeyCode::Char('m')));
    assert_eq!(effects, vec![Effect::MouseCapture(false)]);
    let list = layout::app_areas(&app).list;
    click(&mut app, list.x + 3, list.y + 3, 0);
    assert_eq!(app.selected, 0);
    assert_eq!(
        update(&mut app, key(KeyCode::Char('m'))),
        vec![Effect::MouseCapture(true)]
    );
    click(&mut app, list.x + 3, list.y + 3, 0);
    assert_eq!(app.selected, 2);
}

#[test]
fn a_click_outside_the_panes_ends_focus_mode() {
    let mut app = app();
    update(&mut app, key(KeyCode::Char('i')));
    assert_eq!(app.mode(), Mode::Focus);
    let list = layout::app_areas(&app).list;
    click(&mut app, list.x + 3, list.y + 1, 0);
    assert_eq!(app.mode(), Mode::Normal);
    assert_eq!(app.view, View::List);
}

#[test]
fn a_click_below_a_selected_broken_workflow_counts_its_error_line() {
    let mut app = app();
    app.workflows[0].first_error = Some("build.yaml:3:1: broken (parse_error)".into());
    let list = layout::app_areas(&app).list;
    // Rows 0 and 1 are the selected broken workflow and its error; row 2 is `deploy`.
    click(&mut app, list.x + 3, list.y + 1 + 2, 0);
    assert_eq!(app.selected, 1);
    // `build` is no longer selected: one row again.
    click(&mut app, list.x + 3, list.y + 1, 1000);
    assert_eq!(app.selected, 0);
    click(&mut app, list.x + 3, list.y + 1 + 1, 2000);
    assert_eq!(app.selected, 0, "the error line belongs to its workflow");
}

#[test]
fn in_focus_mode_a_program_that_asked_for_the_mouse_gets_it_inside_its_pane() {
    use crate::tui::mouse_report::Reporting;
    use crate::workflow::action::Key;
    let mut app = app();
    update(&mut app, key(KeyCode::Char('i')));
    assert_eq!(app.mode(), Mode::Focus);
    let pane = layout::app_slots(&app)
        .into_iter()
        .find(|s| s.index == app.pane)
        .unwrap()
        .inner;
    let vim = Reporting {
        mode: crate::engine::panes::MouseMode::ButtonMotion,
        encoding: crate::engine::panes::MouseEncoding::Sgr,
    };
    let at = |kind, x, y, reporting| Event::Mouse {
        event: MouseEvent {
            kind,
            column: x,
            row: y,
            modifiers: KeyModifiers::NONE,
        },
        at_ms: 0,
        reporting,
    };
    let sent = |text: &str| {
        vec![Effect::SendKeys {
            session_id: "s1".into(),
            keys: vec![Key::Text { text: text.into() }],
        }]
    };
    let down = MouseEventKind::Down(MouseButton::Left);
    assert_eq!(
        update(&mut app, at(down, pane.x + 4, pane.y + 2, Some(vim))),
        sent("\u{1b}[<0;5;3M"),
        "a click, at the pane's own cell"
    );
    assert_eq!(
        update(
            &mut app,
            at(MouseEventKind::ScrollUp, pane.x, pane.y, Some(vim))
        ),
        sent("\u{1b}[<64;1;1M"),
        "the wheel scrolls the program, not the history"
    );
    assert!(app.scroll.is_none());
    assert_eq!(
        update(
            &mut app,
            at(MouseEventKind::Moved, pane.x, pane.y, Some(vim))
        ),
        Vec::new(),
        "motion it did not ask for is dropped, not taken as the studio's"
    );
    assert!(app.selection.is_none());
    assert_eq!(app.mode(), Mode::Focus);

    // A program that did not ask: the studio's selection, as before.
    update(&mut app, at(down, pane.x + 4, pane.y + 2, None));
    assert!(app.selection.is_some());
    // Outside the pane the mouse is the studio's even for a program that asked.
    assert_eq!(app.mode(), Mode::Focus);
    let list = layout::app_areas(&app).list;
    update(&mut app, at(down, list.x + 3, list.y + 1, Some(vim)));
    assert_eq!(app.mode(), Mode::Normal);
}
