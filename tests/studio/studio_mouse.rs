//! The studio's mouse and its clipboard, end to end: the real `flowdeck` binary in a PTY of
//! flowdeck's own `term` layer, sent the SGR mouse reports a terminal sends, its screen read
//! back. The copy goes through a private tmux server, the way a person inside tmux gets it.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::studio::expect;
use flowdeck::term::{Content, Session, TermConfig, Terminals};
use std::path::Path;
use std::sync::Arc;

/// The studio on `dir` in a 100x30 terminal, with `env` added.
fn studio(terminals: &Terminals, dir: &Path, env: Vec<(String, String)>) -> Arc<Session> {
    let program = vec![
        env!("CARGO_BIN_EXE_flowdeck").into(),
        "--workflows".into(),
        dir.display().to_string(),
    ];
    common::studio::open(terminals, program, None, (100, 30), env)
}

/// Where `text` is on the screen, the last occurrence: (column, row), 0-based.
fn find(session: &Session, text: &str) -> (u16, u16) {
    let screen = session.content(Content::Screen);
    screen
        .lines()
        .enumerate()
        .filter_map(|(row, line)| {
            line.find(text)
                .map(|byte| (line[..byte].chars().count() as u16, row as u16))
        })
        .last()
        .unwrap_or_else(|| panic!("{text:?} is not on the screen:\n{screen}"))
}

/// An SGR mouse report (what terminals send once mouse capture is on): `button` 0 is the
/// left button, 32 added for a drag; `press` false is the release.
fn mouse(session: &Session, button: u8, (col, row): (u16, u16), press: bool) {
    let end = if press { 'M' } else { 'm' };
    session
        .send_text(
            &format!("\x1b[<{button};{};{}{end}", col + 1, row + 1),
            "test",
        )
        .unwrap();
}

fn click(session: &Session, at: (u16, u16)) {
    mouse(session, 0, at, true);
    mouse(session, 0, at, false);
}

#[tokio::test]
async fn a_click_selects_a_workflow_and_the_palette_runs_a_command_by_name() {
    let dir = common::bundled_workflows_copy();
    let terminals = Terminals::new(TermConfig::default());
    let session = studio(&terminals, dir.path(), Vec::new());
    expect(&session, "python_repl").await;
    click(&session, find(&session, "python_repl"));
    expect(&session, r"Plan · python_repl").await;

    // The palette: Ctrl-p, part of what the command does, Enter.
    session.send_text("\x10", "test").unwrap();
    expect(&session, r"Commands \d+").await;
    session.send_text("open a shell", "test").unwrap();
    expect(&session, r"> open a shell").await;
    session.send_text("\r", "test").unwrap();
    expect(&session, r"\[s\d+ · ").await;

    // A second shell, then the grid from the palette: both panes are drawn at once.
    session.send_text("t", "test").unwrap();
    expect(&session, r"│ \[s\d+ · [^]]*\]").await;
    session.send_text(":grid\r", "test").unwrap();
    // Two pane titles at once (the palette's own line "panes in a grid" is no sign: it shows
    // while the command is still being typed).
    expect(&session, r"(?s)[╭┏] \[?s\d+ · .*[╭┏] \[?s\d+ · ").await;
    let screen = session.content(Content::Screen);
    let titles = regex::Regex::new(r"[╭┏] \[?s\d+ · ").unwrap();
    assert_eq!(titles.find_iter(&screen).count(), 2, "{screen}");
    common::studio::quit(&session).await;
}

#[tokio::test]
async fn a_double_click_copies_a_word_and_m_leaves_the_mouse_to_the_terminal() {
    let Some(tmux) = common::tmux::Tmux::start() else {
        panic!("tmux is needed (.ci/run installs it)");
    };
    let dir = common::bundled_workflows_copy();
    let terminals = Terminals::new(TermConfig::default());
    // As inside that tmux: its set-clipboard is `external` by default, so tmux would drop
    // OSC 52 and the studio also loads tmux's paste buffer.
    let session = studio(
        &terminals,
        dir.path(),
        vec![(
            "TMUX".into(),
            format!("{},{},0", tmux.socket.display(), std::process::id()),
        )],
    );
    expect(&session, "python_repl").await;
    session.send_text("t", "test").unwrap();
    expect(&session, r"\[s\d+ · ").await;
    session.send_text("i", "test").unwrap();
    expect(&session, "FOCUS").await;
    session
        .send_text("echo copy-me/please.txt done\r", "test")
        .unwrap();
    expect(&session, r"(?m)^\W*copy-me/please.txt done").await;
    session.send_text("\x07", "test").unwrap();
    // Out of focus mode: the panes view's keys are back on the status line.
    expect(&session, r"PgUp history").await;
    // The word on the output line (the last occurrence), clicked twice.
    let at = find(&session, "copy-me/please.txt done");
    let word = (at.0 + 3, at.1);
    click(&session, word);
    click(&session, word);
    expect(&session, r"copied 18 characters").await;
    expect(&session, r"in tmux's buffer").await;
    // tmux loads its buffer off the studio's loop: the message may come first.
    common::wait_until(common::LONG, "tmux's buffer", || {
        (tmux.tmux(&["show-buffer"]) == "copy-me/please.txt").then_some(())
    });

    // A drag along the line: from the first character to the seventh.
    mouse(&session, 0, (at.0, at.1), true);
    mouse(&session, 32, (at.0 + 6, at.1), true);
    mouse(&session, 0, (at.0 + 6, at.1), false);
    expect(&session, r"copied 7 characters").await;
    // tmux loads its buffer off the studio's loop: the message may come first.
    common::wait_until(common::LONG, "tmux's buffer", || {
        (tmux.tmux(&["show-buffer"]) == "copy-me").then_some(())
    });

    // m: the mouse is the terminal's; m again: the studio's.
    session.send_text("m", "test").unwrap();
    expect(&session, "mouse left to your terminal").await;
    assert_eq!(
        session.with_screen(|s| s.mouse_protocol_mode()),
        vt100::MouseProtocolMode::None
    );
    session.send_text("m", "test").unwrap();
    expect(&session, "takes the mouse again").await;
    assert_ne!(
        session.with_screen(|s| s.mouse_protocol_mode()),
        vt100::MouseProtocolMode::None
    );
    common::studio::quit(&session).await;
}

#[tokio::test]
async fn in_focus_mode_a_program_that_asked_for_the_mouse_gets_its_clicks_at_its_own_cells() {
    let dir = tempfile::tempdir().unwrap();
    let terminals = Terminals::new(TermConfig::default());
    let session = studio(&terminals, dir.path(), Vec::new());
    expect(&session, r"no workflows").await;
    session.send_text("t", "test").unwrap();
    expect(&session, r"\[s\d+ · ").await;
    session.send_text("i", "test").unwrap();
    expect(&session, "FOCUS").await;
    // A program that asks for SGR mouse reports (as vim with mouse=a does), reads one, and
    // says what it got.
    // (The words it prints are split in its source, so that the command line typed into the
    // shell never shows them.)
    let program = r#"python3 -c 'import os,sys,tty; tty.setraw(0); sys.stdout.write("\x1b[?1002h\x1b[?1006h REA" "DY\r\n"); sys.stdout.flush(); got = os.read(0, 64); sys.stdout.write("\x1b[?1002l\x1b[?1006lGO" "T %r\r\n" % got)'"#;
    session.send_text(&format!("{program}\r"), "test").unwrap();
    expect(&session, r" READY").await;
    let ready = find(&session, " READY");
    // The pane's first row is the one under its title; 'R' is the program's column 1.
    let title_row = find(&session, "╭ [s").1;
    let (col, row) = (ready.0 + 1, ready.1);
    mouse(&session, 0, (col, row), true);
    let expected = format!(r"GOT b'\\x1b\[<0;2;{}M'", row - title_row);
    expect(&session, &expected).await;
    session.send_text("\u{7}", "test").unwrap();
    common::studio::expect_gone(&session, "FOCUS").await;
    common::studio::quit(&session).await;
}
