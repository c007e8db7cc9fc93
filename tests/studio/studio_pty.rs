//! The real `flowdeck` binary in a terminal (flowdeck's own `term` layer as the harness): the
//! studio opens, shows the bundled workflows, runs one, and gives the terminal back as it
//! was when `q` is pressed or a signal ends it.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::LONG;
use common::studio::{ASKER, expect, expect_gone, on_screen, open, quit};
use flowdeck::term::{Content, Session, TermConfig, Terminals, WaitOutcome};
use std::sync::Arc;

/// The studio in a 100x30 terminal, started by a shell that first prints a line the
/// studio's alternate screen must hide and its exit must bring back.
fn studio(terminals: &Terminals, dir: &std::path::Path) -> Arc<Session> {
    open(
        terminals,
        vec![
            "sh".into(),
            "-c".into(),
            r#"printf 'before the studio\n'; exec "$0" --workflows "$1""#.into(),
            env!("CARGO_BIN_EXE_flowdeck").into(),
            dir.display().to_string(),
        ],
        None,
        (100, 30),
        Vec::new(),
    )
}

/// The studio opened on a copy of the bundled workflows, its list drawn.
async fn opened() -> (tempfile::TempDir, Terminals, Arc<Session>) {
    let dir = common::bundled_workflows_copy();
    let terminals = Terminals::new(TermConfig::default());
    let session = studio(&terminals, dir.path());
    expect(&session, "make_build").await;
    (dir, terminals, session)
}

#[tokio::test]
async fn the_studio_opens_on_the_folder_and_q_gives_the_terminal_back() {
    let dir = common::bundled_workflows_copy();
    let terminals = Terminals::new(TermConfig::default());
    let session = studio(&terminals, dir.path());
    expect(&session, r"Workflows \(7\)").await;
    expect(&session, "make_build").await;
    assert!(session.with_screen(|s| s.alternate_screen()));
    // A manifest added on disk appears without a keypress.
    let added = std::fs::read_to_string(dir.path().join("git_health.yaml"))
        .unwrap()
        .replace("name: git_health", "name: zz_added");
    std::fs::write(dir.path().join("zz_added.yaml"), added).unwrap();
    expect(&session, r"Workflows \(8\)").await;
    expect(&session, "zz_added").await;
    assert!(
        !session
            .content(Content::Screen)
            .contains("before the studio")
    );

    quit(&session).await;
    assert_eq!(session.exit().and_then(|e| e.code), Some(0));
    // The alternate screen was left: what was on the terminal before is back, the cursor
    // is shown.
    session.with_screen(|s| {
        assert!(!s.alternate_screen());
        assert!(!s.hide_cursor());
        assert!(
            !s.mouse_protocol_mode()
                .eq(&vt100::MouseProtocolMode::AnyMotion)
        );
    });
    let screen = session.content(Content::Screen);
    assert!(screen.contains("before the studio"), "{screen}");
    assert!(!screen.contains("Workflows ("), "{screen}");
}

#[tokio::test]
async fn a_workflow_runs_from_the_studio_and_its_result_is_shown() {
    let dir = common::bundled_workflows_copy();
    let terminals = Terminals::new(TermConfig::default());
    let session = studio(&terminals, dir.path());
    expect(&session, "git_health").await;
    // Filter down to one workflow, run it, and start it from the inputs form as it is.
    session.send_text("/git_health", "test").unwrap();
    expect(&session, "/git_health").await;
    session.send_text("\r", "test").unwrap();
    session.send_text("r", "test").unwrap();
    expect(&session, r"Run git_health|run r").await;
    if session.content(Content::Screen).contains("Run git_health") {
        session.send_text("\r", "test").unwrap();
    }
    expect(&session, r"result: completed in").await;
    quit(&session).await;
    assert_eq!(session.exit().and_then(|e| e.code), Some(0));
}

#[tokio::test]
async fn a_prompt_step_is_answered_in_the_studio() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("asker.yaml"), ASKER).unwrap();
    let terminals = Terminals::new(TermConfig::default());
    let session = studio(&terminals, dir.path());
    expect(&session, "asker").await;
    session.send_text("r", "test").unwrap();
    expect(&session, "asker asks").await;
    expect(&session, "Which environment").await;
    session.send_text("staging\r", "test").unwrap();
    expect(&session, r"result: completed in").await;
    expect(&session, "env=staging").await;
    quit(&session).await;
}

#[tokio::test]
async fn sigterm_gives_the_terminal_back_and_the_shell_goes_on_in_the_server() {
    let (dir, _terminals, session) = opened().await;
    session.send_text("t", "test").unwrap();
    // The shell's tab, with the shell's process under the folder's server.
    expect(&session, r"\[s\d+ · ").await;
    let server = common::background_server_of(dir.path());
    common::wait_until(LONG, "the shell pane's process", || {
        (!common::session_processes_of(server).is_empty()).then_some(())
    });
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(session.pid() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let r = session
        .await_output(on_screen("never printed"))
        .await
        .unwrap();
    assert_eq!(r.outcome, WaitOutcome::Exited, "{r:#?}");
    session.with_screen(|s| assert!(!s.alternate_screen() && !s.hide_cursor()));
    assert!(
        session
            .content(Content::Screen)
            .contains("before the studio")
    );
    // A signal detaches, as `d` does: the shell lives on for the next studio.
    assert!(!common::session_processes_of(server).is_empty());
}

#[tokio::test]
async fn no_color_draws_the_studio_without_colours() {
    let dir = common::bundled_workflows_copy();
    let terminals = Terminals::new(TermConfig::default());
    let session = open(
        &terminals,
        vec![
            env!("CARGO_BIN_EXE_flowdeck").into(),
            "--workflows".into(),
            dir.path().display().to_string(),
        ],
        None,
        (100, 30),
        vec![("NO_COLOR".into(), "1".into())],
    );
    expect(&session, r"Workflows \(7\)").await;
    expect(&session, "q quit").await;
    session.with_screen(|s| {
        let (rows, cols) = s.size();
        for row in 0..rows.get() {
            for col in 0..cols.get() {
                let cell = s.cell(row, col).unwrap();
                assert_eq!(
                    (cell.fgcolor(), cell.bgcolor()),
                    (vt100::Color::Default, vt100::Color::Default),
                    "row {row} col {col}: {:?}",
                    cell.contents()
                );
            }
        }
        // The selected workflow is still marked, in reverse video.
        assert!((0..cols.get()).any(|col| s.cell(1, col).unwrap().inverse()));
    });
    quit(&session).await;
}

/// `--theme NAME` run from a folder with no `themes/` in it, as an installed binary is: the
/// bundled theme compiled in, or the person's own from `$XDG_CONFIG_HOME/flowdeck/themes/`,
/// seen in the colour of the focused list's border.
#[tokio::test]
async fn a_theme_is_found_wherever_the_studio_runs() {
    let dir = common::bundled_workflows_copy();
    let elsewhere = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let own = config.path().join("flowdeck").join("themes");
    std::fs::create_dir_all(&own).unwrap();
    std::fs::write(
        own.join("mine.yaml"),
        "name: mine\nfocus_border: \"#ff00aa\"\n",
    )
    .unwrap();
    let terminals = Terminals::new(TermConfig::default());
    for (theme, border) in [
        ("light", vt100::Color::Rgb(0x40, 0x78, 0xf2)),
        ("mine", vt100::Color::Rgb(0xff, 0x00, 0xaa)),
    ] {
        let session = open(
            &terminals,
            vec![
                env!("CARGO_BIN_EXE_flowdeck").into(),
                "--workflows".into(),
                dir.path().display().to_string(),
                "--theme".into(),
                theme.into(),
            ],
            Some(elsewhere.path()),
            (100, 30),
            vec![
                (
                    "XDG_CONFIG_HOME".into(),
                    config.path().display().to_string(),
                ),
                // Set and empty: colours on, whatever the tests' own environment says.
                ("NO_COLOR".into(), String::new()),
            ],
        );
        expect(&session, "q quit").await;
        let screen = session.content(Content::Screen);
        assert!(!screen.contains("theme '"), "{theme}: a warning:\n{screen}");
        let corner = session.with_screen(|s| {
            s.cell(0, 0)
                .map(|c| (c.contents().to_string(), c.fgcolor()))
        });
        assert_eq!(
            corner,
            Some(("╭".to_string(), border)),
            "{theme}:\n{screen}"
        );
        quit(&session).await;
        assert_eq!(session.exit().and_then(|e| e.code), Some(0));
    }
}

#[tokio::test]
async fn a_shells_history_is_scrolled_and_searched() {
    let (_dir, _terminals, session) = opened().await;
    session.send_text("t", "test").unwrap();
    expect(&session, r"\[s\d+ · ").await;
    // Focus mode: the shell prints 300 numbered lines; Ctrl-g leaves.
    session.send_text("i", "test").unwrap();
    expect(&session, "FOCUS").await;
    session.send_text("seq 1 300\r", "test").unwrap();
    expect(&session, r"(?m)^│300 ").await;
    session.send_text("\u{7}", "test").unwrap();
    // PageUp: the history, with its indicator.
    session.send_text("\u{1b}[5~", "test").unwrap();
    expect(&session, r"history −\d+").await;
    // A search: ten hits, the newest (299) first, and n goes to the next.
    session.send_text("/^29.$\r", "test").unwrap();
    expect(&session, r"hit 1 of 10").await;
    expect(&session, r"(?m)^│299 ").await;
    session.send_text("n", "test").unwrap();
    expect(&session, r"hit 2 of 10").await;
    // End: the live screen again (the title loses its `history −N`, keeps the search).
    session.send_text("\u{1b}[F", "test").unwrap();
    expect(&session, r"\] · /\^29\.\$ hit 2 of 10 ─").await;
    quit(&session).await;
}

/// `x` on a pane whose program still runs asks first (`n` keeps it, `y` closes it); a pane
/// whose program has ended closes at once (issue 37 F14).
#[tokio::test]
async fn x_asks_before_killing_a_running_program_and_not_once_it_ended() {
    let dir = tempfile::tempdir().unwrap();
    let terminals = Terminals::new(TermConfig::default());
    let session = common::studio::studio(&terminals, dir.path(), 100, 30);
    expect(&session, r"Workflows \(0\)").await;
    session.send_text("t", "test").unwrap();
    expect(&session, r"\[s\d+ · ").await;
    session.send_text("x", "test").unwrap();
    expect(&session, r"still runs its program").await;
    expect(&session, r"Close it\? y / n").await;
    session.send_text("n", "test").unwrap();
    expect_gone(&session, r"Close it\?").await;
    expect(&session, r"\[s\d+ · ").await;
    session.send_text("x", "test").unwrap();
    expect(&session, r"Close it\? y / n").await;
    session.send_text("y", "test").unwrap();
    expect_gone(&session, r"\[s\d+ · ").await;

    // A shell that has exited: nothing to lose, no question.
    session.send_text("t", "test").unwrap();
    expect(&session, r"\[s\d+ · ").await;
    session.send_text("i", "test").unwrap();
    expect(&session, "FOCUS").await;
    session.send_text("exit\r", "test").unwrap();
    expect(&session, r"exit code \d").await;
    session.send_text("\u{7}", "test").unwrap();
    expect_gone(&session, "FOCUS").await;
    session.send_text("x", "test").unwrap();
    expect_gone(&session, r"\[s\d+ · ").await;
    let screen = session.content(Content::Screen);
    assert!(!screen.contains("Close it?"), "{screen}");
    quit(&session).await;
}

/// The person's `t` shell opens where they started the studio, even when the folder's
/// server was started from another directory (an agent's, here a first studio's) (issue 37
/// F13).
#[tokio::test]
async fn a_persons_shell_opens_in_the_studios_working_directory() {
    let folder = tempfile::tempdir().unwrap();
    let theirs = tempfile::tempdir().unwrap();
    let mine = tempfile::tempdir().unwrap();
    let terminals = Terminals::new(TermConfig::default());
    let workflows = folder.path().display().to_string();
    // The server starts from `theirs`, and a shell keeps it up after this studio detaches.
    let first = common::studio::studio_with(
        &terminals,
        &["--workflows", &workflows],
        Some(theirs.path()),
        100,
        30,
    );
    expect(&first, r"Workflows \(0\)").await;
    first.send_text("t", "test").unwrap();
    expect(&first, r"\[s\d+ · ").await;
    common::studio::detach(&first).await;

    let second = common::studio::studio_with(
        &terminals,
        &["--workflows", &workflows],
        Some(mine.path()),
        100,
        30,
    );
    expect(&second, r"Workflows \(0\)").await;
    second.send_text("t", "test").unwrap();
    expect(&second, r"\[s2 · ").await;
    second.send_text("i", "test").unwrap();
    expect(&second, "FOCUS").await;
    second.send_text("echo \"here=$(pwd)\"\r", "test").unwrap();
    let here = mine.path().canonicalize().unwrap().display().to_string();
    expect(&second, &format!("here={}", regex::escape(&here))).await;
    second.send_text("\u{7}", "test").unwrap();
    expect_gone(&second, "FOCUS").await;
    quit(&second).await;
}
