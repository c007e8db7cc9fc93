//! Snapshots of the editor as a person sees it: problems in the gutter and beside the text,
//! the plan of the text, the conflict banner and its diff, and the completion list. Drawn from
//! a real engine into ratatui's `TestBackend`, with the editor's checks run as the loop runs
//! them (here at once instead of after a pause).

#![allow(clippy::unwrap_used)]

use crate::common;

use common::render::{feed, press, render, studio};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use flowdeck::engine::Engine;
use flowdeck::tui::state::App;
use flowdeck::tui::update::Event;

const DEPLOY: &str = "# Deploys a build.
name: deploy
description: Deploys a build.
initial_state: build
states:
  build:
    action:
      tool: run_command
      params:
        command: make
        timeout: 60
    transitions:
      - { condition: success, next_state: ship }
  ship:
    action: { tool: list_terminal_sessions }
";

fn key(engine: &Engine, app: &mut App, code: KeyCode, modifiers: KeyModifiers) {
    feed(engine, app, Event::Key(KeyEvent::new(code, modifiers)));
}

fn typed(engine: &Engine, app: &mut App, text: &str) {
    for c in text.chars() {
        let code = if c == '\n' {
            KeyCode::Enter
        } else {
            KeyCode::Char(c)
        };
        key(engine, app, code, KeyModifiers::NONE);
    }
}

/// `deploy` open in the editor of a 110x26 studio.
fn editing() -> (tempfile::TempDir, std::sync::Arc<Engine>, App) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("deploy.yaml"), DEPLOY).unwrap();
    let engine = common::test_engine(dir.path(), 1, false);
    let mut app = studio(&engine, 110, 26);
    press(&engine, &mut app, KeyCode::Char('E'));
    assert!(
        app.editor.as_ref().unwrap().check.is_some(),
        "checked once opened"
    );
    (dir, engine, app)
}

#[tokio::test]
async fn problems_are_marked_at_their_lines_and_listed_beside_the_text() {
    let (_dir, engine, mut app) = editing();
    // Line 10 (`command: make`): a key no tool has, under it.
    for _ in 0..9 {
        key(&engine, &mut app, KeyCode::Down, KeyModifiers::NONE);
    }
    key(&engine, &mut app, KeyCode::End, KeyModifiers::NONE);
    typed(&engine, &mut app, "\nretries: 3");
    let screen = render(&engine, &app, 110, 26);
    assert!(screen.contains("✗"), "{screen}");
    insta::assert_snapshot!("editor_problems", screen);
    // The plan of the text, beside it, once it is valid again.
    key(&engine, &mut app, KeyCode::Char('z'), KeyModifiers::CONTROL);
    for _ in 0..12 {
        key(&engine, &mut app, KeyCode::Char('z'), KeyModifiers::CONTROL);
    }
    key(&engine, &mut app, KeyCode::Char('t'), KeyModifiers::CONTROL);
    insta::assert_snapshot!("editor_plan", render(&engine, &app, 110, 26));
}

#[tokio::test]
async fn a_change_on_disk_shows_the_banner_and_the_diff() {
    let (dir, engine, mut app) = editing();
    typed(&engine, &mut app, "# mine\n");
    std::fs::write(
        dir.path().join("deploy.yaml"),
        DEPLOY.replace("command: make", "command: make all"),
    )
    .unwrap();
    feed(
        &engine,
        &mut app,
        Event::Disk {
            workflow: "deploy".into(),
            now: Some((
                "v-theirs".into(),
                DEPLOY.replace("command: make", "command: make all"),
            )),
        },
    );
    insta::assert_snapshot!("editor_conflict", render(&engine, &app, 110, 26));
    key(&engine, &mut app, KeyCode::Char('s'), KeyModifiers::CONTROL);
    key(&engine, &mut app, KeyCode::Char('d'), KeyModifiers::NONE);
    insta::assert_snapshot!("editor_diff", render(&engine, &app, 110, 26));
    // Back to the question; the file changes again while it is open: it says so, and holds
    // `r` and `o` a moment, then asks plainly again.
    key(&engine, &mut app, KeyCode::Esc, KeyModifiers::NONE);
    feed(
        &engine,
        &mut app,
        Event::Disk {
            workflow: "deploy".into(),
            now: Some((
                "v-theirs-again".into(),
                DEPLOY.replace("command: make", "command: make install"),
            )),
        },
    );
    insta::assert_snapshot!("editor_conflict_again", render(&engine, &app, 110, 26));
    let due = app.due().expect("the question settles");
    feed(&engine, &mut app, Event::Tick(due));
    insta::assert_snapshot!(
        "editor_conflict_asked_again",
        render(&engine, &app, 110, 26)
    );
}

#[tokio::test]
async fn the_completion_list_shows_what_a_state_takes() {
    let (_dir, engine, mut app) = editing();
    // The end of `ship:`'s action line: a new key of the state.
    for _ in 0..14 {
        key(&engine, &mut app, KeyCode::Down, KeyModifiers::NONE);
    }
    key(&engine, &mut app, KeyCode::End, KeyModifiers::NONE);
    typed(&engine, &mut app, "\n    ");
    key(&engine, &mut app, KeyCode::Char(' '), KeyModifiers::CONTROL);
    assert_eq!(app.mode(), flowdeck::tui::mode::Mode::Complete);
    insta::assert_snapshot!("editor_completion", render(&engine, &app, 110, 26));
}
