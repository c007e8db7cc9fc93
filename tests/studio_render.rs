//! The studio's screens, rendered with ratatui's `TestBackend` from a real engine on the
//! bundled workflows, and compared with the reviewed snapshots in tests/snapshots/.

#![allow(clippy::unwrap_used)]

mod common;

use flowdeck::tui::draw;
use flowdeck::tui::state::App;
use flowdeck::tui::theme::Theme;
use flowdeck::tui::update::{Event, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// The studio's state as the loop builds it: a snapshot, then the selected workflow's plan.
fn studio(engine: &flowdeck::engine::Engine, cols: u16, rows: u16) -> App {
    let mut app = App::new("workflows".into());
    app.size = (cols, rows);
    let effects = update(&mut app, Event::Snapshot(Box::new(engine.snapshot())));
    for effect in effects {
        if let flowdeck::tui::effect::Effect::LoadPlan(workflow) = effect {
            let plan = engine
                .workflow_step_plan(&workflow)
                .map_err(|e| e.to_string());
            update(&mut app, Event::Plan { workflow, plan });
        }
    }
    app
}

fn render(engine: &flowdeck::engine::Engine, app: &App, cols: u16, rows: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(cols, rows)).unwrap();
    terminal
        .draw(|frame| draw::draw(frame, app, &Theme::default(), engine))
        .unwrap();
    terminal.backend().to_string()
}

#[tokio::test]
async fn main_screen_80x24() {
    let dir = common::bundled_workflows_copy();
    let engine = common::test_engine(dir.path(), 1, false);
    let app = studio(&engine, 80, 24);
    insta::assert_snapshot!(render(&engine, &app, 80, 24));
}

#[tokio::test]
async fn main_screen_120x40() {
    let dir = common::bundled_workflows_copy();
    let engine = common::test_engine(dir.path(), 1, false);
    let app = studio(&engine, 120, 40);
    insta::assert_snapshot!(render(&engine, &app, 120, 40));
}

#[tokio::test]
async fn help_overlay_lists_the_keymap() {
    let dir = common::bundled_workflows_copy();
    let engine = common::test_engine(dir.path(), 1, false);
    let mut app = studio(&engine, 100, 40);
    flowdeck::tui::update::run_command(&mut app, flowdeck::tui::command::Command::Help);
    insta::assert_snapshot!(render(&engine, &app, 100, 40));
}

#[tokio::test]
async fn a_tiny_terminal_gets_a_message_not_a_panic() {
    let dir = common::bundled_workflows_copy();
    let engine = common::test_engine(dir.path(), 1, false);
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
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal
        .draw(|frame| draw::draw(frame, &app, &Theme::default(), &*engine))
        .unwrap();
    // Cell by cell: the backend's text form escapes controls itself and would hide them.
    let cells = terminal.backend().buffer().content();
    assert!(cells.iter().all(|c| {
        !c.symbol()
            .chars()
            .any(flowdeck::workflow::names::is_dangerous_char)
    }));
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
