//! Property tests of the editor on any text a person may type: random lines of ASCII, keys
//! and punctuation mixed with multi-byte letters, combining marks, wide characters, emoji
//! (with skin tones and joiners), tabs and controls, with the cursor anywhere. Completion,
//! accepting a completion, Enter's indentation, find and drawing must never panic, and the
//! cursor must stay on a character of its line.

use super::draw;
use super::editing::text_size;
use super::editor::{Document, follow_cursor};
use super::mode::Mode;
use super::state::App;
use super::test_support::{NoScreens, ctrl_key, key, summary};
use super::theme::Theme;
use super::update::{Event, update};
use crate::workflow::completion::complete;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui_textarea::CursorMove;

/// Pieces lines are made of: the YAML a manifest holds, and the text around it that breaks
/// naive byte arithmetic.
const PIECES: &[&str] = &[
    "tool",
    "condition",
    "next_state",
    "params",
    "ru",
    "succ",
    "se",
    "x",
    "_",
    "a1",
    " ",
    "  ",
    ": ",
    ":",
    "- ",
    "{ ",
    ", ",
    "}",
    "#",
    "\"",
    "'",
    "“",
    "”",
    "«",
    "»",
    "é",
    "e\u{301}",
    "a\u{308}\u{332}",
    "漢字",
    "ｗｉｄｅ",
    "🦀",
    "👍🏽",
    "👨\u{200d}👩\u{200d}👧",
    "🇫🇷",
    "\t",
    "\u{1b}[31m",
    "\u{202e}",
    "\u{7f}",
    "ß",
    "İ",
    "Ω",
    "\u{feff}",
];

fn random_line(rng: &mut fastrand::Rng) -> String {
    let indent = " ".repeat(rng.usize(0..8));
    let parts = rng.usize(0..10);
    let mut line = indent;
    for _ in 0..parts {
        line.push_str(PIECES[rng.usize(0..PIECES.len())]);
    }
    line
}

fn random_text(rng: &mut fastrand::Rng) -> Vec<String> {
    let mut lines = vec![
        "name: deploy".to_string(),
        "states:".to_string(),
        "  a:".to_string(),
    ];
    for _ in 0..rng.usize(1..6) {
        lines.push(random_line(rng));
    }
    lines
}

/// The studio with `text` open in the editor, the cursor at (`row`, `col`).
fn editing(text: &[String], row: usize, col: usize) -> App {
    let mut app = App::new("workflows".into());
    app.size = (60, 20);
    app.workflows = vec![summary("deploy")];
    update(&mut app, key(KeyCode::Char('E')));
    update(
        &mut app,
        Event::Document {
            workflow: "deploy".into(),
            document: Ok(Document {
                file: "deploy.yaml".into(),
                path: "/w/deploy.yaml".into(),
                version: "v1".into(),
                text: text.join("\n"),
            }),
        },
    );
    assert_eq!(app.mode(), Mode::Edit, "the editor opened");
    let (rows, cols) = text_size(&app);
    let editor = app.editor.as_mut().expect("an editor");
    editor.text.move_cursor(CursorMove::Jump(
        u16::try_from(row).expect("a small row"),
        u16::try_from(col).expect("a small column"),
    ));
    follow_cursor(editor, rows, cols);
    app
}

/// Draws the studio, as the loop does after every event.
fn drawn(app: &App) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(60, 20)).expect("a test terminal");
    terminal
        .draw(|frame| draw::draw(frame, app, &Theme::default(), &NoScreens))
        .expect("drawn");
    terminal
}

/// The cursor is on a character of its line (or just after the last).
fn cursor_in_line(app: &App, context: &str) {
    let editor = app.editor.as_ref().expect("an editor");
    let (row, col) = editor.text.cursor();
    let line = &editor.text.lines()[row];
    assert!(
        col <= line.chars().count(),
        "cursor at {col} past the end of {line:?} ({context})"
    );
}

#[test]
fn completion_never_panics_and_starts_at_or_before_the_cursor() {
    let mut rng = fastrand::Rng::with_seed(21);
    for _ in 0..2_000 {
        let lines = random_text(&mut rng);
        let row = rng.usize(0..lines.len() + 1);
        let width = lines.get(row).map_or(0, |l| l.chars().count());
        let col = rng.usize(0..width + 3);
        let found = complete(&lines, row, col);
        assert!(
            found.start <= col.max(width),
            "start {} after the cursor {col} in {:?}",
            found.start,
            lines.get(row)
        );
    }
}

#[test]
fn a_word_after_a_multi_byte_character_completes() {
    // A letter of any script is part of the word (`éru`); the word after anything else
    // starts after it, whatever its size in bytes.
    let lines = vec!["      tool: éru".to_string()];
    assert_eq!(complete(&lines, 0, 15).start, 12);
    for prefix in ["“", "«", "🦀", "e\u{301}", "👨\u{200d}👩"] {
        let lines = vec![format!("      tool: {prefix}ru")];
        let col = lines[0].chars().count();
        let found = complete(&lines, 0, col);
        assert_eq!(found.start, col - 2, "{prefix}");
        // A key after a wide character: the word is what follows it.
        let lines = vec!["states:".into(), "  a:".into(), format!("    {prefix}tra")];
        let col = lines[2].chars().count();
        assert_eq!(complete(&lines, 2, col).start, col - 3, "{prefix}");
    }
    // The studio writes the chosen word in place of the typed one, keeping what is before.
    let lines = vec![
        "name: deploy".to_string(),
        "states:".into(),
        "  a:".into(),
        "    «tool: ru".into(),
    ];
    let col = lines[3].chars().count();
    let mut app = editing(&lines, 3, col);
    update(&mut app, Event::Key(ctrl_key(' ')));
    let editor = app.editor.as_ref().expect("an editor");
    assert_eq!(editor.text.lines()[3], "    «tool: run_command");
}

#[test]
fn the_editor_takes_any_text_at_any_cursor() {
    let mut rng = fastrand::Rng::with_seed(2111);
    for round in 0..300 {
        let lines = random_text(&mut rng);
        let row = rng.usize(0..lines.len());
        let col = rng.usize(0..lines[row].chars().count() + 1);
        let context = format!("round {round}: {lines:?} at {row}:{col}");

        // Completion, and accepting its first item.
        let mut app = editing(&lines, row, col);
        update(&mut app, Event::Key(ctrl_key(' ')));
        drawn(&app);
        if app.mode() == Mode::Complete {
            update(&mut app, key(KeyCode::Enter));
        }
        cursor_in_line(&app, &context);
        drawn(&app);

        // Enter keeps the indentation; typing after it lands on the new line.
        let mut app = editing(&lines, row, col);
        update(&mut app, key(KeyCode::Enter));
        update(&mut app, key(KeyCode::Char('ü')));
        cursor_in_line(&app, &context);
        drawn(&app);

        // Find: a piece of the text itself (often multi-byte), from the cursor on.
        let mut app = editing(&lines, row, col);
        let needle: String = {
            let chars: Vec<char> = lines[row].chars().collect();
            let from = rng.usize(0..chars.len() + 1);
            let to = (from + rng.usize(0..4)).min(chars.len());
            chars[from..to].iter().collect()
        };
        update(
            &mut app,
            Event::Key(KeyEvent::new(KeyCode::Char('f'), KeyModifiers::CONTROL)),
        );
        for c in needle.chars() {
            update(&mut app, key(KeyCode::Char(c)));
        }
        update(&mut app, key(KeyCode::Enter));
        cursor_in_line(&app, &context);
        drawn(&app);
    }
}

#[test]
fn the_cursor_after_wide_characters_stays_on_screen() {
    // 40 wide characters: 80 cells, wider than the 60-column studio.
    for wide in ["漢", "🦀", "ｗ"] {
        let line = format!("    {}", wide.repeat(40));
        let lines = vec!["name: deploy".to_string(), line.clone()];
        let app = editing(&lines, 1, line.chars().count());
        let terminal = drawn(&app);
        // The studio draws the cursor only where it is on screen.
        assert!(
            terminal.backend().cursor_visible(),
            "the cursor at the end of {wide:?}×40 is off screen (first column shown: {})",
            app.editor.as_ref().map_or(0, |e| e.left)
        );
    }
}
