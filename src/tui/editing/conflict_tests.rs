//! The editor's conflicts with the file on disk: a question pinned to the version it shows
//! (re-asked when a newer change lands while it is open), and recovery copies opened over a
//! file that changed after they were typed, or over one whose version they do not record.

use super::editing_tests::{TEXT, ctrl, in_conflict, open_deploy, typed};
use crate::tui::editor::{Ask, SaveFailure};
use crate::tui::effect::Effect;
use crate::tui::mode::Mode;
use crate::tui::state::App;
use crate::tui::test_support::{key, summary};
use crate::tui::update::{Event, update};
use crossterm::event::KeyCode;

/// The file on disk is now `version` with `text`.
fn on_disk(app: &mut App, version: &str, text: &str) -> Vec<Effect> {
    update(
        app,
        Event::Disk {
            workflow: "deploy".into(),
            now: Some((version.into(), text.into())),
        },
    )
}

#[test]
fn a_second_change_while_the_conflict_question_is_open_asks_again_before_overwriting() {
    let mut app = in_conflict();
    update(&mut app, ctrl('s'));
    assert_eq!(app.editor.as_ref().unwrap().ask, Some(Ask::Conflict));
    update(&mut app, key(KeyCode::Char('d')));
    // Another change lands while the person looks at v9.
    assert!(on_disk(&mut app, "v10", "name: deploy\n# theirs, again\n").is_empty());
    let editor = app.editor.as_ref().unwrap();
    let conflict = editor.conflict.as_ref().unwrap();
    assert_eq!(conflict.version.as_deref(), Some("v10"));
    assert!(conflict.again, "the question says the file changed again");
    assert_eq!(app.mode(), Mode::EditAsk, "still asked");
    assert_eq!(editor.diff, Some(0), "the diff shows the newest file");
    // `o` and `r` pressed now were meant for v9: neither does anything.
    assert!(update(&mut app, key(KeyCode::Char('o'))).is_empty());
    assert!(update(&mut app, key(KeyCode::Char('r'))).is_empty());
    assert!(
        app.message
            .as_deref()
            .unwrap_or("")
            .contains("changed again"),
        "{:?}",
        app.message
    );
    assert!(app.editor.as_ref().unwrap().dirty(), "the text is kept");
    // Asked again: `o` replaces v10, the version now shown, knowingly.
    let due = app.due().expect("the question settles");
    update(&mut app, Event::Tick(due));
    assert!(app.due().is_none());
    let effects = update(&mut app, key(KeyCode::Char('o')));
    assert!(
        matches!(&effects[..], [Effect::Save { expected_version: Some(v), text, .. }]
            if v == "v10" && text.starts_with("#name")),
        "{effects:?}"
    );
}

#[test]
fn an_overwrite_replaces_only_the_version_its_question_showed() {
    let mut app = in_conflict();
    update(&mut app, ctrl('s'));
    // `o` read before the studio heard of v10: it replaces v9 or nothing.
    let effects = update(&mut app, key(KeyCode::Char('o')));
    assert!(
        matches!(&effects[..], [Effect::Save { expected_version: Some(v), .. }] if v == "v9"),
        "{effects:?}"
    );
    // The store found v10: refused, the disk read again, a conflict with v10 to settle.
    let edits = app.editor.as_ref().unwrap().edits;
    let effects = update(
        &mut app,
        Event::Saved {
            edits,
            result: Err(SaveFailure::Conflict),
        },
    );
    assert_eq!(effects, vec![Effect::LoadDisk("deploy".into())]);
    on_disk(&mut app, "v10", "name: deploy\n# theirs, again\n");
    let editor = app.editor.as_ref().unwrap();
    assert_eq!(
        editor.conflict.as_ref().and_then(|c| c.version.as_deref()),
        Some("v10")
    );
    assert!(editor.dirty());
    // Ctrl-s asks afresh about v10.
    update(&mut app, ctrl('s'));
    assert_eq!(app.editor.as_ref().unwrap().ask, Some(Ask::Conflict));
    assert!(
        !app.editor
            .as_ref()
            .unwrap()
            .conflict
            .as_ref()
            .unwrap()
            .again
    );
}

#[test]
fn the_same_change_told_twice_asks_nothing_new_and_a_file_back_at_its_base_ends_the_question() {
    let mut app = in_conflict();
    update(&mut app, ctrl('s'));
    on_disk(&mut app, "v9", "name: deploy\n# theirs\n");
    assert!(app.due().is_none(), "nothing changed under the question");
    assert!(
        !app.editor
            .as_ref()
            .unwrap()
            .conflict
            .as_ref()
            .unwrap()
            .again
    );
    // The file goes back to the version the text is based on: nothing left to settle.
    on_disk(&mut app, "v1", TEXT);
    let editor = app.editor.as_ref().unwrap();
    assert!(editor.conflict.is_none() && editor.ask.is_none());
    assert_eq!(app.mode(), Mode::Edit);
    assert!(editor.dirty(), "the text is kept");
}

/// The studio started with a recovery copy of `deploy.yaml` typed over `base`, and `E`
/// opened it over the file at `v1`.
fn recovered_over(base: Option<&str>) -> App {
    let mut app = App::new("workflows".into());
    app.size = (120, 30);
    app.workflows = vec![summary("deploy")];
    update(
        &mut app,
        Event::Recovered(vec![crate::engine::Recovered {
            file: "deploy.yaml".into(),
            text: "name: deploy\n# typed before the crash\n".into(),
            base_version: base.map(str::to_string),
        }]),
    );
    assert!(app.message.as_deref().unwrap_or("").contains("deploy.yaml"));
    open_deploy(&mut app, TEXT);
    let editor = app.editor.as_ref().unwrap();
    assert!(editor.recovered && editor.dirty());
    assert!(editor.contents().contains("typed before the crash"));
    assert!(app.recovered.is_empty());
    app
}

/// A pause after typing: the recovery copy written then.
fn copy_kept(app: &mut App) -> Effect {
    typed(app, "#");
    let edits = app.editor.as_ref().unwrap().edits;
    let effects = update(app, Event::CheckDue(edits));
    effects
        .into_iter()
        .find(|e| matches!(e, Effect::Recover { .. }))
        .expect("a recovery copy")
}

#[test]
fn a_recovery_copy_opens_instead_of_the_file_as_unsaved_text() {
    let mut app = recovered_over(Some("v1"));
    assert!(app.editor.as_ref().unwrap().conflict.is_none());
    let effects = update(&mut app, ctrl('s'));
    assert!(
        matches!(&effects[..], [Effect::Save { expected_version: Some(v), .. }] if v == "v1"),
        "{effects:?}"
    );
}

#[test]
fn a_recovery_copy_over_a_file_changed_since_asks_before_saving() {
    let mut app = recovered_over(Some("v0"));
    assert!(
        app.message
            .as_deref()
            .unwrap_or("")
            .contains("file changed since"),
        "{:?}",
        app.message
    );
    // The copy goes on recording the version it was typed over, not the file's now.
    assert!(
        matches!(copy_kept(&mut app), Effect::Recover { base_version: Some(v), .. } if v == "v0")
    );
    // Ctrl-s asks; the later change is in the diff; `o` replaces it knowingly.
    assert!(update(&mut app, ctrl('s')).is_empty());
    assert_eq!(app.editor.as_ref().unwrap().ask, Some(Ask::Conflict));
    assert_eq!(
        app.editor
            .as_ref()
            .unwrap()
            .conflict
            .as_ref()
            .map(|c| c.text.as_str()),
        Some(TEXT)
    );
    let effects = update(&mut app, key(KeyCode::Char('o')));
    assert!(
        matches!(&effects[..], [Effect::Save { expected_version: Some(v), text, .. }]
            if v == "v1" && text.contains("typed before the crash")),
        "{effects:?}"
    );
}

#[test]
fn an_earlier_flowdecks_copy_without_its_base_asks_before_saving_too() {
    let mut app = recovered_over(None);
    assert!(
        app.message
            .as_deref()
            .unwrap_or("")
            .contains("may have changed"),
        "{:?}",
        app.message
    );
    assert!(
        matches!(
            copy_kept(&mut app),
            Effect::Recover {
                base_version: None,
                ..
            }
        ),
        "still unknown"
    );
    // The watcher telling the file's version changes nothing: the base is not known.
    on_disk(&mut app, "v1", TEXT);
    assert!(app.editor.as_ref().unwrap().conflict.is_some());
    update(&mut app, ctrl('s'));
    assert_eq!(app.editor.as_ref().unwrap().ask, Some(Ask::Conflict));
    // Reloaded: the file as it is, the copy dropped.
    let effects = update(&mut app, key(KeyCode::Char('r')));
    assert!(effects.contains(&Effect::DiscardRecovery("deploy.yaml".into())));
    let editor = app.editor.as_ref().unwrap();
    assert_eq!(editor.contents(), TEXT);
    assert_eq!(editor.base_version, "v1");
    assert!(!editor.dirty() && !editor.recovered);
}
