//! The studio's screens, rendered with ratatui's `TestBackend` from a real engine on the
//! bundled workflows, and compared with the reviewed snapshots in tests/snapshots/.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::render::{
    TWO_STEPS, assert_drawn_safe, bundled, drawn, press, redacted, render, studio,
};
use flowdeck::tui::theme::Theme;
use flowdeck::tui::update::{Event, update};

#[tokio::test]
async fn main_screen_80x24() {
    let (_dir, engine) = bundled();
    let app = studio(&engine, 80, 24);
    insta::assert_snapshot!(render(&engine, &app, 80, 24));
}

#[tokio::test]
async fn main_screen_120x40() {
    let (_dir, engine) = bundled();
    let app = studio(&engine, 120, 40);
    insta::assert_snapshot!(render(&engine, &app, 120, 40));
}

#[tokio::test]
async fn help_overlay_lists_the_keymap() {
    let (_dir, engine) = bundled();
    let mut app = studio(&engine, 100, 40);
    flowdeck::tui::update::run_command(&mut app, flowdeck::tui::command::Command::Help);
    insta::assert_snapshot!(render(&engine, &app, 100, 40));
    // Its end, scrolled to: every key can be read on a 40-row terminal.
    for _ in 0..100 {
        flowdeck::tui::update::run_command(&mut app, flowdeck::tui::command::Command::Down);
    }
    insta::assert_snapshot!("help_overlay_end", render(&engine, &app, 100, 40));
}

#[tokio::test]
async fn a_tiny_terminal_gets_a_message_not_a_panic() {
    let (_dir, engine) = bundled();
    let app = studio(&engine, 20, 5);
    let screen = render(&engine, &app, 20, 5);
    assert!(screen.contains("too \"\n\"small"), "{screen}");
}

#[tokio::test]
async fn a_workflow_name_with_escapes_is_drawn_escaped() {
    let dir = tempfile::tempdir().unwrap();
    // Not a valid name: the file is listed by its file name, with its error, never dropped.
    std::fs::write(
        dir.path().join("evil.yaml"),
        "name: \"ev\\u001b]0;pwned\\u0007il\\u202e\"\ninitial_state: a\nstates: {}\n",
    )
    .unwrap();
    let engine = common::test_engine(dir.path(), 1, false);
    let app = studio(&engine, 80, 24);
    let terminal = drawn(&engine, &app, &Theme::default(), 80, 24);
    assert_drawn_safe(&terminal);
    let cells = terminal.backend().buffer().content();
    let text: String = cells.iter().map(|c| c.symbol()).collect();
    assert!(text.contains("ev\\u{1b}]0;pwned"), "{text}");
}

#[test]
fn the_bundled_themes_parse_and_a_bad_colour_is_a_warning() {
    for name in ["dark", "light", "high-contrast"] {
        let text = std::fs::read_to_string(format!("themes/{name}.yaml")).unwrap();
        let (theme, warnings) = Theme::parse(&text).unwrap();
        assert_eq!(theme.name, name);
        assert!(warnings.is_empty(), "{name}: {warnings:?}");
    }
    let (theme, warnings) = Theme::parse("name: odd\naccent: notacolour\n").unwrap();
    assert_eq!(theme.accent, Theme::default().accent);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
}

/// Feeds `event` to the studio and answers its reads (plan, history, search, problems) from
/// the engine, as the loop does, until no read is left.
/// A pane whose program printed `line 1` to `line 200`, then `RED` in red, and waits.
async fn printed_pane(engine: &flowdeck::engine::Engine) -> String {
    let params = flowdeck::workflow::action::OpenTerminalParams {
        command: Some(vec![
            "sh".into(),
            "-c".into(),
            r"i=1; while [ $i -le 200 ]; do echo line $i; i=$((i+1)); done; printf '\033[31mRED\033[0m\n'; exec sleep 60".into(),
        ]),
        cols: Some(78),
        rows: Some(10),
        ..Default::default()
    };
    let info = engine
        .open_terminal(&params, &flowdeck::engine::Actor::person())
        .await
        .unwrap();
    let id = info.session_id.clone();
    common::poll_until(common::LONG, "the pane's output", || {
        engine
            .list_terminal_sessions()
            .sessions
            .iter()
            .any(|s| s.session_id == id && s.history_lines >= 201)
            .then_some(())
    })
    .await;
    id
}

#[tokio::test]
async fn no_color_draws_every_cell_in_the_terminals_colours() {
    use ratatui::style::{Color, Modifier};
    let (_dir, engine) = bundled();
    printed_pane(&engine).await;
    let app = studio(&engine, 80, 24);
    let theme = Theme::default().without_colour();
    let terminal = drawn(&engine, &app, &theme, 80, 24);
    let buffer = terminal.backend().buffer();
    let text: String = buffer.content().iter().map(|c| c.symbol()).collect();
    assert!(text.contains("RED"), "the pane's red text is drawn: {text}");
    for cell in buffer.content() {
        assert_eq!((cell.fg, cell.bg), (Color::Reset, Color::Reset), "{cell:?}");
    }
    // The selected workflow is still marked: reverse video and bold.
    assert!(buffer.content().iter().any(|c| {
        c.modifier.contains(Modifier::REVERSED | Modifier::BOLD) && c.symbol() != " "
    }));
    engine.shutdown().await;
}

#[tokio::test]
async fn a_scrolled_pane_shows_its_history_and_search_marks_the_hit() {
    use crossterm::event::KeyCode;
    let (_dir, engine) = bundled();
    printed_pane(&engine).await;
    let mut app = studio(&engine, 80, 24);
    // Two pages up from the bottom of 201 lines.
    press(&engine, &mut app, KeyCode::Tab);
    press(&engine, &mut app, KeyCode::Tab);
    press(&engine, &mut app, KeyCode::PageUp);
    press(&engine, &mut app, KeyCode::PageUp);
    insta::assert_snapshot!("scrolled_pane", redacted(&render(&engine, &app, 80, 24)));
    // Search: the newest hit is shown and marked.
    press(&engine, &mut app, KeyCode::Char('/'));
    for c in "line 1.7$".chars() {
        press(&engine, &mut app, KeyCode::Char(c));
    }
    press(&engine, &mut app, KeyCode::Enter);
    assert_eq!(app.message.as_deref(), Some("/line 1.7$: hit 1 of 10"));
    press(&engine, &mut app, KeyCode::Char('n'));
    assert_eq!(app.message.as_deref(), Some("/line 1.7$: hit 2 of 10"));
    let terminal = drawn(&engine, &app, &Theme::default(), 80, 24);
    insta::assert_snapshot!("searched_pane", redacted(&terminal.backend().to_string()));
    let marked: String = terminal
        .backend()
        .buffer()
        .content()
        .iter()
        .filter(|c| c.modifier.contains(ratatui::style::Modifier::REVERSED))
        .map(|c| c.symbol())
        .collect();
    assert!(marked.contains("line 187"), "{marked:?}");
    // A bad regex: the engine's words on the status line.
    press(&engine, &mut app, KeyCode::Char('/'));
    press(&engine, &mut app, KeyCode::Char('('));
    press(&engine, &mut app, KeyCode::Enter);
    let message = app.message.clone().unwrap();
    assert!(message.starts_with("invalid pattern `(`"), "{message}");
    // End: the live screen again.
    press(&engine, &mut app, KeyCode::End);
    assert!(app.scroll.is_none());
    engine.shutdown().await;
}

const BROKEN: &str = "name: broken\ndescription: A manifest with problems.\ninitial_state: start\nstates:\n  start:\n    action: { tool: run_command, params: { command: \"true\" } }\n    transitions:\n      - { condition: success, next_state: \"nowhere\\u001b[2J\" }\n      - { condition: sometimes, next_state: start }\n";

#[tokio::test]
async fn the_problems_of_a_broken_manifest_are_listed_with_their_places() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.yaml"), BROKEN).unwrap();
    let engine = common::test_engine(dir.path(), 1, false);
    let mut app = studio(&engine, 100, 24);
    press(&engine, &mut app, crossterm::event::KeyCode::Char('e'));
    assert_eq!(app.mode(), flowdeck::tui::mode::Mode::Problems);
    let terminal = drawn(&engine, &app, &Theme::default(), 100, 24);
    assert_drawn_safe(&terminal);
    insta::assert_snapshot!("problems", terminal.backend().to_string());
}

/// Run ids, times and durations differ from run to run: written as placeholders.
#[tokio::test]
async fn the_runs_view_lists_past_runs_and_the_selected_runs_journal() {
    use flowdeck::engine::{Actor, RunRequest, WorkflowSource};
    use flowdeck::tui::effect::Effect;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tiny.yaml"), TWO_STEPS).unwrap();
    let engine = common::test_engine(dir.path(), 1, false);
    for _ in 0..2 {
        let request = RunRequest {
            workflow: WorkflowSource::Name("tiny".into()),
            session_id: None,
            inputs: Default::default(),
            keep_session: false,
            host: None,
            actor: Actor::person(),
            require_approval: false,
        };
        let result = common::within(common::LONG, "the run", engine.run(request))
            .await
            .unwrap();
        assert!(result.success, "{result:?}");
    }
    let mut app = studio(&engine, 110, 24);
    // h, with the reads answered as the loop answers them (the journal read is async).
    let mut pending = vec![Event::Key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Char('h'),
        crossterm::event::KeyModifiers::NONE,
    ))];
    while let Some(event) = pending.pop() {
        for effect in update(&mut app, event) {
            match effect {
                Effect::LoadRunEvents(run_id) => {
                    pending.push(flowdeck::tui::effects::read_run_events(&engine, run_id).await);
                }
                other => {
                    if let Ok(answer) = flowdeck::tui::effects::read(&engine, other) {
                        pending.push(answer);
                    }
                }
            }
        }
    }
    assert_eq!(app.mode(), flowdeck::tui::mode::Mode::Runs);
    let view = app.runs_view().unwrap();
    assert_eq!(view.runs.len(), 2);
    assert!(view.loaded && !view.journal.is_empty());
    insta::assert_snapshot!("runs_view", redacted(&render(&engine, &app, 110, 24)));
    engine.shutdown().await;
}
