//! `flowdeck record` as a person uses it: the real binary at a terminal (a PTY whose screen
//! is read back), their shell recorded while they type a procedure, and on `exit` the draft
//! written into the folder with the recording beside it. A name that is taken is refused
//! before the shell starts; `--force` replaces it; a shell left with nothing done writes
//! nothing.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use flowdeck::term::{Session, TermConfig, Terminals};
use std::path::Path;
use std::sync::Arc;

use crate::common;
use common::studio::{exit_code, expect};

/// `flowdeck --workflows DIR record ARGS` at a terminal of its own, in `cwd`.
fn record(terminals: &Terminals, dir: &Path, args: &[&str]) -> Arc<Session> {
    record_with(terminals, dir, args, Vec::new())
}

fn record_with(
    terminals: &Terminals,
    dir: &Path,
    args: &[&str],
    env: Vec<(String, String)>,
) -> Arc<Session> {
    let mut program = vec![
        env!("CARGO_BIN_EXE_flowdeck").to_string(),
        "--workflows".into(),
        dir.display().to_string(),
        "record".into(),
    ];
    program.extend(args.iter().map(|a| a.to_string()));
    common::studio::open(terminals, program, Some(dir), (100, 30), env)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_procedure_done_in_a_recorded_shell_is_written_as_a_draft_beside_its_recording() {
    let dir = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = work.path().display().to_string();
    let terminals = Terminals::new(TermConfig::default());

    let shell = record(&terminals, dir.path(), &["setup"]);
    expect(&shell, "recording setup").await;
    expect(&shell, r"[$#]\s*$").await;
    shell
        .send_text(&format!("mkdir -p {w}/made\r"), "test")
        .unwrap();
    shell.send_text(&format!("cd {w}/made\r"), "test").unwrap();
    shell.send_text("ls no-such-file\r", "test").unwrap();
    expect(&shell, "cannot access").await;
    shell
        .send_text("echo naïve-ü-$((6*7)) > written\r", "test")
        .unwrap();
    // A job left running keeps the terminal open: the shell's exit ends the recording all
    // the same.
    shell.send_text("sleep 300 &\r", "test").unwrap();
    shell.send_text("exit\r", "test").unwrap();
    expect(&shell, "wrote .*setup.yaml").await;
    assert_eq!(exit_code(&shell).await, Some(0));
    assert_eq!(
        std::fs::read_to_string(work.path().join("made/written")).unwrap(),
        "naïve-ü-42\n"
    );

    let draft = std::fs::read_to_string(dir.path().join("setup.yaml")).unwrap();
    // The directory used twice is an argument, the one typed its default.
    assert!(
        draft.contains(&format!("#   MADE_DIR = {w}/made: used in 2 commands"))
            && draft.contains(&format!("default: {w}/made")),
        "{draft}"
    );
    assert!(
        draft.contains("command: mkdir -p \"${MADE_DIR}\""),
        "{draft}"
    );
    assert!(draft.contains("command: cd \"${MADE_DIR}\""), "{draft}");
    assert!(draft.contains("command: ls no-such-file"), "{draft}");
    assert!(draft.contains("condition: failure"), "{draft}");
    assert!(draft.contains("naïve-ü-$((6*7))"), "{draft}");
    assert!(
        !draft.contains("command: exit"),
        "the shell's end is no step: {draft}"
    );
    let checked = std::process::Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("validate")
        .arg(dir.path().join("setup.yaml"))
        .output()
        .unwrap();
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stdout)
    );
    let cast = dir.path().join("setup.cast");
    let shown = common::recorded_output(&cast.display().to_string());
    assert!(shown.contains("cannot access"), "{shown}");
    assert!(shown.contains("naïve-ü-$((6*7))"), "{shown}");

    // Run in a fresh session, the draft does the same work.
    std::fs::remove_dir_all(work.path().join("made")).unwrap();
    common::run_to_success(dir.path(), "setup");
    assert_eq!(
        std::fs::read_to_string(work.path().join("made/written")).unwrap(),
        "naïve-ü-42\n"
    );

    // The name is taken: refused before any shell starts.
    let again = record(&terminals, dir.path(), &["setup"]);
    assert_eq!(exit_code(&again).await, Some(2));
    expect(
        &again,
        "setup.yaml exists: choose another name, or give --force",
    )
    .await;

    // With --force it is replaced; a shell left at once writes nothing and says so.
    let forced = record(&terminals, dir.path(), &["setup", "--force"]);
    expect(&forced, r"[$#]\s*$").await;
    forced.send_text("echo replaced\r", "test").unwrap();
    forced.send_text("exit\r", "test").unwrap();
    assert_eq!(exit_code(&forced).await, Some(0));
    let replaced = std::fs::read_to_string(dir.path().join("setup.yaml")).unwrap();
    assert!(replaced.contains("command: echo replaced"), "{replaced}");
    // A shell that is no POSIX one is replaced by bash, and says so.
    let empty = record_with(
        &terminals,
        dir.path(),
        &["nothing_done"],
        vec![("SHELL".into(), "/usr/bin/python3".into())],
    );
    expect(&empty, "python3 is no POSIX shell; recording bash").await;
    expect(&empty, r"[$#]\s*$").await;
    empty.send_text("\x04", "test").unwrap();
    assert_eq!(exit_code(&empty).await, Some(1));
    expect(
        &empty,
        "nothing was typed at the shell's prompt; no draft written",
    )
    .await;
    assert!(!dir.path().join("nothing_done.yaml").exists());
    assert!(!dir.path().join("nothing_done.cast").exists());
    terminals.close_all().await;
}
