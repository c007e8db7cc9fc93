//! Editor figures (issue 14, docs/PERFORMANCE.md): a keystroke to its redrawn frame in a
//! 2,000-line manifest while the text is being checked on the other core, the check of that
//! text (what runs off the input path), and the same keystroke in a 5 MB buffer. In-process:
//! the studio's own update and drawing, emitted to a sink as escape sequences.
//!
//! `cargo bench --bench editor`; `FLOWDECK_BENCH_QUICK=1` shortens it.

#![allow(clippy::unwrap_used)]

#[path = "../tests/common/mod.rs"]
mod common;

#[path = "support/mod.rs"]
mod support;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use flowdeck::tui::draw;
use flowdeck::tui::editor::Document;
use flowdeck::tui::state::App;
use flowdeck::tui::theme::Theme;
use flowdeck::tui::update::{Event, update};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

fn quick() -> bool {
    std::env::var_os("FLOWDECK_BENCH_QUICK").is_some()
}

/// A valid manifest of about `lines` lines: 50 states (the most a workflow has), each with
/// notes in comments and a multi-line command.
fn big_manifest(lines: usize) -> String {
    let per_state = lines / 50;
    let mut text = String::from(
        "# A generated workflow for the editor benchmark.\nname: big\ndescription: Big.\ninitial_state: s0\nstates:\n",
    );
    for i in 0..50 {
        text.push_str(&format!("  s{i}:\n    description: State {i}.\n"));
        for j in 0..per_state.saturating_sub(12) / 2 {
            text.push_str(&format!(
                "    # Note {j} about state {i}, long enough to read like a real one.\n"
            ));
        }
        text.push_str("    action:\n      tool: run_command\n      params:\n        command: |\n");
        for j in 0..per_state.saturating_sub(12) / 2 {
            text.push_str(&format!(
                "          echo \"step {i} line {j}\" | tr a-z A-Z\n"
            ));
        }
        text.push_str("        timeout: 30\n");
        if i < 49 {
            text.push_str(&format!(
                "    transitions:\n      - {{ condition: success, next_state: s{} }}\n",
                i + 1
            ));
        }
    }
    text
}

fn editing(text: &str) -> App {
    let mut app = App::new("workflows".into());
    app.size = (120, 40);
    update(
        &mut app,
        Event::Document {
            workflow: "big".into(),
            document: Ok(Document {
                file: "big.yaml".into(),
                path: "/w/big.yaml".into(),
                version: "v1".into(),
                text: text.to_string(),
            }),
        },
    );
    // The cursor in the middle of the text.
    let lines = text.lines().count();
    for _ in 0..lines / 2 {
        update(
            &mut app,
            Event::Key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE)),
        );
    }
    app
}

/// Keystroke → update → frame drawn and emitted, `n` times, while `busy` checks run.
fn keystrokes(app: &mut App, engine: &flowdeck::engine::Engine, n: usize) -> Vec<f64> {
    let theme = Theme::default();
    let mut terminal = Terminal::with_options(
        CrosstermBackend::new(std::io::sink()),
        ratatui::TerminalOptions {
            viewport: ratatui::Viewport::Fixed(ratatui::layout::Rect::new(0, 0, 120, 40)),
        },
    )
    .unwrap();
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let c = if i % 20 == 19 { ' ' } else { 'x' };
        let started = Instant::now();
        update(
            app,
            Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)),
        );
        terminal
            .draw(|frame| draw::draw(frame, app, &theme, engine))
            .unwrap();
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    samples
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let engine = common::test_engine(dir.path(), 1, false);
    let text = big_manifest(2200);
    let lines = text.lines().count();
    let draft = engine.workflow_draft(&text);
    assert!(draft.validation.valid, "{:?}", draft.validation.violations);
    let rounds = if quick() { 5 } else { 30 };
    let checks: Vec<f64> = (0..rounds)
        .map(|_| {
            let started = Instant::now();
            let d = engine.workflow_draft(&text);
            assert!(d.plan.is_some());
            started.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    support::stats(
        &format!("check of a {lines}-line manifest (off the input path)"),
        checks,
        "ms",
    );

    // Checks running all the time on another thread, as the debounced check does while a
    // person types (the worst case: one always in flight).
    let stop = Arc::new(AtomicBool::new(false));
    let checker = {
        let (stop, engine, text) = (stop.clone(), engine.clone(), text.clone());
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let _ = engine.workflow_draft(&text);
                n += 1;
            }
            n
        })
    };
    let mut app = editing(&text);
    let n = if quick() { 200 } else { 2000 };
    let samples = keystrokes(&mut app, &engine, n);
    stop.store(true, Ordering::Relaxed);
    let checked = checker.join().unwrap();
    support::stats(
        &format!("keystroke to frame, {lines} lines, checks running ({checked} ran)"),
        samples,
        "ms",
    );

    // 5 MB of text: far past what validation takes, typing must not notice.
    let mut huge = text.clone();
    while huge.len() < 5 * 1024 * 1024 {
        huge.push_str("# padding line, as a generated or pasted file would have them\n");
    }
    let mut app = editing(&huge);
    let samples = keystrokes(&mut app, &engine, if quick() { 100 } else { 500 });
    support::stats(
        &format!(
            "keystroke to frame, a {:.1} MB buffer",
            huge.len() as f64 / 1024.0 / 1024.0
        ),
        samples,
        "ms",
    );
}
