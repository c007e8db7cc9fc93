//! The studio's editor end to end: the real binary in a PTY, keys typed, the screen read
//! back and the files on disk checked. A manifest is broken and fixed and saved; a change on
//! disk under unsaved text is settled each way; a workflow is made from a template and run,
//! renamed and deleted; quitting with unsaved text asks; `$EDITOR` edits the file.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::studio::{expect, expect_gone, on_screen, open, quit};
use flowdeck::term::{Session, TermConfig, Terminals, WaitOutcome};
use std::path::Path;
use std::sync::Arc;

const TINY: &str = "# a comment that survives\nname: tiny\ndescription: Lists sessions.\ninitial_state: look\nstates:\n  look:\n    action: { tool: list_terminal_sessions }\n";

fn studio_on(terminals: &Terminals, dir: &Path, env: Vec<(String, String)>) -> Arc<Session> {
    let program = vec![
        env!("CARGO_BIN_EXE_flowdeck").into(),
        "--workflows".into(),
        dir.display().to_string(),
    ];
    open(terminals, program, None, (110, 32), env)
}

fn send(s: &Session, text: &str) {
    s.send_text(text, "test").unwrap();
}

/// `tiny.yaml` in a folder, the studio on it, and the file open in the editor, checked.
async fn editing_tiny() -> (tempfile::TempDir, Terminals, Arc<Session>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tiny.yaml"), TINY).unwrap();
    let terminals = Terminals::new(TermConfig::default());
    let s = studio_on(&terminals, dir.path(), Vec::new());
    expect(&s, "tiny").await;
    send(&s, "E");
    expect(&s, r"Edit · tiny\.yaml").await;
    expect(&s, r"✓ valid").await;
    (dir, terminals, s)
}

/// Esc leaves the (saved) editor, then `q` quits.
async fn close_and_quit(s: &Session) {
    send(s, "\x1b");
    expect_gone(s, r"Edit · ").await;
    quit(s).await;
}

/// Waits until `check` holds for the file's text (the save happens off the loop).
async fn file_becomes(path: &Path, what: &str, check: impl Fn(&str) -> bool) -> String {
    common::poll_until(common::LONG, what, || {
        std::fs::read_to_string(path).ok().filter(|t| check(t))
    })
    .await
}

#[tokio::test]
async fn a_manifest_is_broken_and_fixed_and_saved_in_the_studio() {
    let (dir, _terminals, s) = editing_tiny().await;
    let file = dir.path().join("tiny.yaml");
    // Line 1 is the comment; a key the schema does not know goes on line 2.
    send(&s, "\x1b[B");
    send(&s, "bogus: 1\r");
    expect(&s, r"● modified").await;
    expect(&s, r"✗ 1").await;
    expect(&s, r"unknown key 'bogus'").await;
    // The gutter marks the line.
    expect(&s, r"2 ✗ bogus: 1").await;
    // Undo until it is gone (typing is undone in pieces), then save.
    for _ in 0..12 {
        send(&s, "\x1a");
    }
    expect(&s, r"✓ valid").await;
    send(&s, "\x13");
    expect(&s, r"saved tiny\.yaml").await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), TINY);
    // Broken again and saved anyway: it asks first, and the file keeps the text as typed.
    send(&s, "oops: [\r");
    expect(&s, r"✗ [1-9]").await;
    send(&s, "\x13");
    expect(&s, "Save with errors").await;
    send(&s, "y");
    let saved = file_becomes(&file, "the broken text saved", |t| t.contains("oops: [")).await;
    assert!(saved.starts_with("# a comment that survives\n"), "{saved}");
    expect(&s, r"last good version still runs").await;
    send(&s, "\x1b");
    expect(&s, r"tiny +✗").await;
    quit(&s).await;
}

#[tokio::test]
async fn a_change_on_disk_under_unsaved_text_is_a_conflict_settled_each_way() {
    let (dir, _terminals, s) = editing_tiny().await;
    let file = dir.path().join("tiny.yaml");
    send(&s, "# mine\r");
    expect(&s, r"● modified").await;
    let theirs = TINY.replace("Lists sessions.", "Changed by an agent.");
    std::fs::write(&file, &theirs).unwrap();
    expect(&s, r"changed on disk").await;
    // The buffer is untouched.
    expect(&s, r"# mine").await;
    // Save: asked; the diff first, then back, then overwrite.
    send(&s, "\x13");
    expect(&s, "Changed on disk").await;
    send(&s, "d");
    expect(&s, r"Diff · - on disk").await;
    expect(&s, r"- description: Changed by an agent\.").await;
    expect(&s, r"\+ # mine").await;
    send(&s, "\x1b");
    expect(&s, "reload: the file as it is on disk").await;
    send(&s, "o");
    file_becomes(&file, "mine over theirs", |t| t.starts_with("# mine\n")).await;
    expect(&s, r"saved tiny\.yaml").await;

    // Again, this time reloading theirs.
    send(&s, "# second\r");
    expect(&s, r"● modified").await;
    std::fs::write(&file, &theirs).unwrap();
    expect(&s, r"changed on disk").await;
    send(&s, "\x13");
    expect(&s, "Changed on disk").await;
    send(&s, "r");
    expect(&s, r"reloaded from disk").await;
    expect(&s, r"Changed by an agent").await;
    expect_gone(&s, r"# second").await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), theirs);
    close_and_quit(&s).await;
}

/// Issue 36: the conflict question is open about one change when a second lands. `o`
/// pressed then was meant for the first: it overwrites nothing. Asked again (the question says
/// the file changed again), `o` overwrites the newest, knowingly.
#[tokio::test]
async fn a_second_change_while_the_conflict_question_is_open_is_asked_about_before_o() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tiny.yaml");
    std::fs::write(&file, TINY).unwrap();
    let terminals = Terminals::new(TermConfig::default());
    // The moment `r` and `o` wait, long enough that the `o` below is surely inside it on a
    // loaded machine (debug builds only).
    let settle = ("FLOWDECK_TEST_SETTLE_MS".to_string(), "3000".to_string());
    let s = studio_on(&terminals, dir.path(), vec![settle]);
    expect(&s, "tiny").await;
    send(&s, "E");
    expect(&s, r"✓ valid").await;
    send(&s, "# mine\r");
    expect(&s, r"● modified").await;
    std::fs::write(&file, TINY.replace("Lists sessions.", "First change.")).unwrap();
    expect(&s, r"changed on disk").await;
    send(&s, "\x13");
    expect(&s, r"Changed on disk ").await;

    let second = TINY.replace("Lists sessions.", "Second change.");
    std::fs::write(&file, &second).unwrap();
    expect(&s, r"Changed on disk again · r and o wait a moment").await;
    expect(&s, r"changed on disk again while you were asked").await;
    send(&s, "o");
    expect(&s, r"read the question again, then answer").await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), second);
    // The diff shows the second change.
    send(&s, "d");
    expect(&s, r"- description: Second change\.").await;

    // Asked again: `o` replaces the second change, the one shown.
    expect_gone(&s, r"r/o wait").await;
    expect(&s, r"Diff · changed again").await;
    send(&s, "o");
    let saved = file_becomes(&file, "mine over the second change", |t| {
        t.starts_with("# mine\n")
    })
    .await;
    assert!(saved.contains("Lists sessions."), "{saved}");
    expect(&s, r"saved tiny\.yaml").await;
    close_and_quit(&s).await;
}

#[tokio::test]
async fn a_workflow_from_a_template_is_created_run_renamed_and_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let terminals = Terminals::new(TermConfig::default());
    let s = studio_on(&terminals, dir.path(), Vec::new());
    expect(&s, r"Workflows \(0\)").await;
    send(&s, "A");
    expect(&s, "New workflow").await;
    expect(&s, "a command with a contract").await;
    send(&s, "my_check\r");
    expect(&s, r"Edit · my_check\.yaml").await;
    expect(&s, r"✓ valid").await;
    assert!(dir.path().join("my_check.yaml").exists());
    send(&s, "\x1b");
    expect(&s, r"Workflows \(1\)").await;
    // Run it: its one input has a default, so the form starts it as it is.
    send(&s, "r");
    expect(&s, "Run my_check").await;
    send(&s, "\r");
    expect(&s, r"result: completed").await;
    expect(&s, r"STATUS=PASSED").await;

    send(&s, "R");
    expect(&s, "Rename").await;
    for _ in 0.."my_check".len() {
        send(&s, "\x7f");
    }
    send(&s, "their_check\r");
    expect(&s, r"my_check is now their_check").await;
    assert!(dir.path().join("their_check.yaml").exists());
    assert!(!dir.path().join("my_check.yaml").exists());

    send(&s, "D");
    expect(&s, "type their_check to delete").await;
    send(&s, "their_check\r");
    expect(&s, r"their_check deleted").await;
    expect(&s, r"Workflows \(0\)").await;
    assert!(!dir.path().join("their_check.yaml").exists());
    quit(&s).await;
}

/// The README's tutorial: `A`, a name, `Esc`; the list is left on the new workflow (not on
/// the row chosen before), so that the next `r` runs the workflow just made (issue 37 F1).
#[tokio::test]
async fn a_new_workflow_is_selected_when_its_editor_closes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tiny.yaml"), TINY).unwrap();
    let terminals = Terminals::new(TermConfig::default());
    let s = studio_on(&terminals, dir.path(), Vec::new());
    // tiny is selected; the new workflow lists below it.
    expect(&s, r"Plan · tiny").await;
    send(&s, "A");
    expect(&s, "New workflow").await;
    send(&s, "your_check\r");
    expect(&s, r"Edit · your_check\.yaml").await;
    send(&s, "\x1b");
    expect(&s, r"Workflows \(2\)").await;
    expect(&s, r"▶ your_check").await;
    expect(&s, r"Plan · your_check").await;
    send(&s, "r");
    expect(&s, "Run your_check").await;
    send(&s, "\x1b");
    expect_gone(&s, "Run your_check").await;
    quit(&s).await;
}

#[tokio::test]
async fn quitting_with_unsaved_text_asks_and_a_kill_leaves_a_recovery_copy() {
    let (dir, terminals, s) = editing_tiny().await;
    send(&s, "# unsaved words\r");
    expect(&s, r"● modified").await;
    // The recovery copy is written once typing pauses.
    let copy = dir.path().join(".flowdeck/recovery/tiny.yaml.recovery");
    file_becomes(&copy, "the recovery copy", |t| {
        t.contains("# unsaved words")
    })
    .await;
    // Quit from the palette: asked.
    send(&s, "\x10quit\r");
    expect(&s, "Unsaved changes").await;
    send(&s, "\x1b");
    expect_gone(&s, "Unsaved changes").await;
    // Killed: the next studio offers the copy, and E opens it.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(s.pid() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let r = s.await_output(on_screen("never")).await.unwrap();
    assert_eq!(r.outcome, WaitOutcome::Exited);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("tiny.yaml")).unwrap(),
        TINY
    );
    let s = studio_on(&terminals, dir.path(), Vec::new());
    expect(&s, r"unsaved edits of tiny\.yaml").await;
    send(&s, "E");
    expect(&s, r"recovered").await;
    expect(&s, r"# unsaved words").await;
    // Dropped on purpose: the copy goes.
    send(&s, "\x1b");
    expect(&s, "Unsaved changes").await;
    send(&s, "d");
    common::poll_until(common::LONG, "the copy dropped", || {
        (!copy.exists()).then_some(())
    })
    .await;
    quit(&s).await;
}

/// Issue 36: the studio is killed with an unsaved edit, and the file changes afterwards. The
/// next studio recovers the copy, and saving asks first (the copy records the version it was
/// typed over): the later change is not lost.
#[tokio::test]
async fn a_recovery_copy_over_a_file_changed_after_the_kill_asks_before_saving() {
    let (dir, terminals, s) = editing_tiny().await;
    let file = dir.path().join("tiny.yaml");
    send(&s, "# unsaved words\r");
    expect(&s, r"● modified").await;
    let copy = dir.path().join(".flowdeck/recovery/tiny.yaml.recovery");
    file_becomes(&copy, "the recovery copy", |t| {
        t.contains("# unsaved words")
    })
    .await;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(s.pid() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let r = s.await_output(on_screen("never")).await.unwrap();
    assert_eq!(r.outcome, WaitOutcome::Exited);
    // The folder's server retires once nothing is attached: the next studio's reads the
    // file as it is then (a server still up could hand out its catalog from before the
    // change, and the conflict would come from its watcher instead of from the copy).
    let server = common::background_server_of(dir.path());
    common::poll_until(common::LONG, "the folder's server to retire", || {
        common::has_ended(server).then_some(())
    })
    .await;
    let later = TINY.replace("Lists sessions.", "Changed after the kill.");
    std::fs::write(&file, &later).unwrap();

    let s = studio_on(&terminals, dir.path(), Vec::new());
    expect(&s, r"unsaved edits of tiny\.yaml").await;
    send(&s, "E");
    expect(&s, r"recovered").await;
    expect(&s, r"# unsaved words").await;
    expect(&s, r"tiny\.yaml changed on disk · your text is kept").await;
    expect(&s, r"unsaved edits recovered; the file changed since").await;
    // Saving asks; the later change is in the diff, and on disk untouched.
    send(&s, "\x13");
    expect(&s, r"changed on disk after your recovered text was typed").await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), later);
    send(&s, "d");
    expect(&s, r"- description: Changed after the kill\.").await;
    expect(&s, r"\+ # unsaved words").await;
    // Reloaded: the later change is what the editor holds, and the copy goes.
    send(&s, "r");
    expect(&s, r"reloaded from disk").await;
    expect(&s, r"Changed after the kill\.").await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), later);
    common::poll_until(common::LONG, "the copy dropped", || {
        (!copy.exists()).then_some(())
    })
    .await;
    close_and_quit(&s).await;
}

#[tokio::test]
async fn editor_from_the_environment_edits_the_file_and_the_studio_follows() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tiny.yaml"), TINY).unwrap();
    // An "editor" that changes the description and exits.
    let script = dir.path().join("edit.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nsed -i 's/Lists sessions./Edited outside./' \"$1\"\n",
    )
    .unwrap();
    let terminals = Terminals::new(TermConfig::default());
    let s = studio_on(
        &terminals,
        dir.path(),
        vec![
            ("VISUAL".into(), String::new()),
            // Run by `sh`, as editors set like `code --wait` are: and never executed
            // directly, which another test's fork could find still open for writing.
            ("EDITOR".into(), format!("sh {}", script.display())),
        ],
    );
    expect(&s, "tiny").await;
    send(&s, "E");
    expect(&s, r"Lists sessions").await;
    send(&s, "\x0f");
    expect(&s, r"Edited outside").await;
    expect(&s, r"Edit · tiny\.yaml").await;
    assert!(
        std::fs::read_to_string(dir.path().join("tiny.yaml"))
            .unwrap()
            .contains("Edited outside.")
    );
    close_and_quit(&s).await;
}
