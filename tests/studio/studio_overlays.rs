//! The overlays a newcomer meets first, drawn from a real engine on the bundled workflows at
//! 80x24 and 160x45: archive_logs' inputs form (longer than the small screen), help, the
//! palette.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::render::{bundled, feed, press, render, studio};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use flowdeck::tui::state::App;
use flowdeck::tui::update::Event;

/// The studio with archive_logs selected and `r` pressed: its inputs form open.
fn archive_logs_form(engine: &flowdeck::engine::Engine, cols: u16, rows: u16) -> App {
    let mut app = studio(engine, cols, rows);
    while app.selected_workflow().map(|w| w.name.as_str()) != Some("archive_logs") {
        let before = app.selected;
        press(engine, &mut app, KeyCode::Down);
        assert_ne!(app.selected, before, "archive_logs is not listed");
    }
    press(engine, &mut app, KeyCode::Char('r'));
    assert!(app.form().is_some(), "r opened no form");
    app
}

#[tokio::test]
async fn the_long_form_at_80x24_scrolls_to_its_focused_field() {
    let (_dir, engine) = bundled();
    let mut app = archive_logs_form(&engine, 80, 24);
    insta::assert_snapshot!("form_80x24_first", render(&engine, &app, 80, 24));
    for _ in 0..6 {
        press(&engine, &mut app, KeyCode::Tab);
    }
    insta::assert_snapshot!("form_80x24_dry_run", render(&engine, &app, 80, 24));
    press(&engine, &mut app, KeyCode::Tab);
    press(&engine, &mut app, KeyCode::Tab);
    insta::assert_snapshot!("form_80x24_on_host", render(&engine, &app, 80, 24));
}

#[tokio::test]
async fn the_long_form_at_160x45_shows_whole() {
    let (_dir, engine) = bundled();
    let app = archive_logs_form(&engine, 160, 45);
    insta::assert_snapshot!("form_160x45", render(&engine, &app, 160, 45));
}

#[tokio::test]
async fn help_at_80x24_and_160x45() {
    let (_dir, engine) = bundled();
    for (cols, rows) in [(80, 24), (160, 45)] {
        let mut app = studio(&engine, cols, rows);
        press(&engine, &mut app, KeyCode::Char('?'));
        insta::assert_snapshot!(
            format!("help_{cols}x{rows}"),
            render(&engine, &app, cols, rows)
        );
        press(&engine, &mut app, KeyCode::PageDown);
        insta::assert_snapshot!(
            format!("help_{cols}x{rows}_next_page"),
            render(&engine, &app, cols, rows)
        );
    }
}

#[tokio::test]
async fn the_palette_at_80x24_and_160x45() {
    let (_dir, engine) = bundled();
    for (cols, rows) in [(80, 24), (160, 45)] {
        let mut app = studio(&engine, cols, rows);
        let ctrl_p = KeyEvent::new(KeyCode::Char('p'), KeyModifiers::CONTROL);
        feed(&engine, &mut app, Event::Key(ctrl_p));
        for c in "theme".chars() {
            press(&engine, &mut app, KeyCode::Char(c));
        }
        insta::assert_snapshot!(
            format!("palette_theme_{cols}x{rows}"),
            render(&engine, &app, cols, rows)
        );
    }
}

/// The binary at 80x24: archive_logs' form, taller than the screen, follows Tab to its last
/// field (`on host`, under eight others) and keeps its footer; Space toggles DRY_RUN.
#[tokio::test]
async fn the_binary_scrolls_a_long_form_to_its_focused_field_at_80x24() {
    use common::studio::{expect, quit, studio as binary};
    let dir = common::bundled_workflows_copy();
    let terminals = flowdeck::term::Terminals::new(flowdeck::term::TermConfig::default());
    let session = binary(&terminals, dir.path(), 80, 24);
    expect(&session, "archive_logs").await;
    session.send_text("/archive\r", "test").unwrap();
    session.send_text("r", "test").unwrap();
    expect(&session, r"▶ LOG_DIR\*").await;
    expect(&session, "Enter runs · Tab").await;
    // Six Tabs: DRY_RUN, a boolean that Space toggles.
    session.send_text("\t\t\t\t\t\t ", "test").unwrap();
    expect(&session, r"▶ DRY_RUN \(boolean\) ◂ true ▸").await;
    session.send_text("\t\t", "test").unwrap();
    expect(&session, r"▶ on host \(host\)").await;
    expect(&session, "field 9 of 9").await;
    expect(&session, "Enter runs · Tab").await;
    session.send_text("\x1b", "test").unwrap();
    common::studio::expect_gone(&session, "Enter runs · Tab").await;
    quit(&session).await;
}

/// The binary: the palette finds the light theme by its words and the studio switches to it
/// at once (drawn in the light theme's foreground from then on).
#[tokio::test]
async fn the_binary_switches_its_theme_from_the_palette() {
    use common::studio::{expect, quit, studio as binary};
    let dir = common::bundled_workflows_copy();
    let terminals = flowdeck::term::Terminals::new(flowdeck::term::TermConfig::default());
    let session = binary(&terminals, dir.path(), 100, 30);
    expect(&session, "archive_logs").await;
    session.send_text("\x10", "test").unwrap();
    expect(&session, "Commands").await;
    session.send_text("theme light", "test").unwrap();
    expect(&session, r"> theme light").await;
    session.send_text("\r", "test").unwrap();
    expect(&session, r"│ theme light").await;
    // The list's name is drawn in the light theme's foreground now.
    let light = flowdeck::tui::themes::load(Some("light"), None)
        .0
        .foreground;
    let ratatui::style::Color::Rgb(r, g, b) = light else {
        panic!("the light theme's foreground is not a colour: {light:?}");
    };
    let drawn = session.with_screen(|s| {
        (0..30).any(|row| {
            (0..100).any(|col| {
                s.cell(row, col)
                    .is_some_and(|c| c.fgcolor() == vt100::Color::Rgb(r, g, b))
            })
        })
    });
    assert!(drawn, "nothing drawn in the light theme's foreground");
    quit(&session).await;
}
