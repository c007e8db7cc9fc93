//! The editor's state changes, without a terminal or an engine: opening, typing, checks that
//! arrive late, saves, conflicts settled each way, leaving and quitting with unsaved changes,
//! recovery copies, and naming workflows.

use crate::engine::authoring::ManifestValidation;
use crate::engine::editing::Draft;
use crate::tui::editor::{Ask, Document, SaveFailure};
use crate::tui::effect::Effect;
use crate::tui::mode::Mode;
use crate::tui::overlay::NameFor;
use crate::tui::state::App;
use crate::tui::test_support::{key, summary};
use crate::tui::update::{Event, update};
use crate::workflow::violation::Violation;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

pub(super) const TEXT: &str =
    "name: deploy\ninitial_state: a\nstates:\n  a:\n    action: { tool: list_terminal_sessions }\n";

pub(super) fn ctrl(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

pub(super) fn typed(app: &mut App, text: &str) -> Vec<Effect> {
    text.chars()
        .flat_map(|c| update(app, key(KeyCode::Char(c))))
        .collect()
}

/// `E` on `deploy`, and its file (version `v1`) arriving with `text`.
pub(super) fn open_deploy(app: &mut App, text: &str) -> Vec<Effect> {
    assert_eq!(
        update(app, key(KeyCode::Char('E'))),
        vec![Effect::LoadDocument("deploy".into())]
    );
    update(
        app,
        Event::Document {
            workflow: "deploy".into(),
            document: Ok(Document {
                file: "deploy.yaml".into(),
                path: "/w/deploy.yaml".into(),
                version: "v1".into(),
                text: text.into(),
            }),
        },
    )
}

/// The studio with `deploy` open in the editor at version `v1`.
fn editing() -> App {
    let mut app = App::new("workflows".into());
    app.size = (120, 30);
    app.workflows = vec![summary("deploy")];
    assert_eq!(open_deploy(&mut app, TEXT), vec![Effect::CheckLater(0)]);
    assert_eq!(app.mode(), Mode::Edit);
    app
}

fn draft(errors: usize, violations: Vec<Violation>, name: &str) -> Box<Draft> {
    Box::new(Draft {
        validation: ManifestValidation {
            valid: errors == 0,
            name: Some(name.into()),
            errors,
            warnings: 0,
            violations,
            workflow_signature: None,
        },
        plan: None,
    })
}

/// The check of the text at `edits` came back as `draft`.
fn checked(app: &mut App, edits: u64, draft: Box<Draft>) {
    update(app, Event::Checked { edits, draft });
}

fn error_on(line: usize) -> Violation {
    let mut v = Violation::error("unknown_key", "/states/a/x", "unknown key 'x'");
    v.line = Some(line);
    v.column = Some(5);
    v
}

#[test]
fn typing_edits_the_text_and_a_pause_checks_it_and_keeps_a_recovery_copy() {
    let mut app = editing();
    let effects = typed(&mut app, "# hi\n");
    let editor = app.editor.as_ref().unwrap();
    assert!(editor.dirty());
    assert!(editor.contents().starts_with("# hi\nname: deploy"));
    assert_eq!(effects.last(), Some(&Effect::CheckLater(editor.edits)));
    let edits = editor.edits;
    // An older pause is no longer the text.
    assert!(update(&mut app, Event::CheckDue(edits - 1)).is_empty());
    let effects = update(&mut app, Event::CheckDue(edits));
    let text = app.editor.as_ref().unwrap().contents();
    assert_eq!(
        effects,
        vec![
            Effect::Check {
                edits,
                text: text.clone()
            },
            Effect::Recover {
                file: "deploy.yaml".into(),
                text,
                base_version: Some("v1".into()),
            }
        ]
    );
}

#[test]
fn a_late_check_of_older_text_does_not_replace_a_newer_one() {
    let mut app = editing();
    checked(&mut app, 5, draft(1, vec![error_on(2)], "deploy"));
    checked(&mut app, 3, draft(0, vec![], "deploy"));
    let editor = app.editor.as_ref().unwrap();
    assert_eq!(editor.checked_edits, 5);
    assert_eq!(editor.violations_on(2).count(), 1);
}

#[test]
fn saving_text_with_errors_asks_first_then_saves_with_the_opened_version() {
    let mut app = editing();
    typed(&mut app, "x");
    let edits = app.editor.as_ref().unwrap().edits;
    checked(&mut app, edits, draft(1, vec![error_on(1)], "deploy"));
    assert!(update(&mut app, ctrl('s')).is_empty());
    assert_eq!(app.mode(), Mode::EditAsk);
    assert_eq!(app.editor.as_ref().unwrap().ask, Some(Ask::SaveInvalid));
    let effects = update(&mut app, key(KeyCode::Char('y')));
    assert!(
        matches!(&effects[..], [Effect::Save { expected_version: Some(v), .. }] if v == "v1"),
        "{effects:?}"
    );
    assert_eq!(app.mode(), Mode::Edit);
    let effects = update(
        &mut app,
        Event::Saved {
            edits,
            result: Ok(("v2".into(), 1)),
        },
    );
    assert_eq!(effects, vec![Effect::DiscardRecovery("deploy.yaml".into())]);
    let editor = app.editor.as_ref().unwrap();
    assert!(!editor.dirty());
    assert_eq!(editor.base_version, "v2");
    assert!(
        app.message
            .as_deref()
            .unwrap_or("")
            .contains("last good version")
    );
}

#[test]
fn a_text_renamed_inside_is_not_saved_over_another_workflow() {
    let mut app = editing();
    typed(&mut app, "x");
    let edits = app.editor.as_ref().unwrap().edits;
    checked(&mut app, edits, draft(0, vec![], "other"));
    assert!(update(&mut app, ctrl('s')).is_empty());
    assert!(app.message.as_deref().unwrap_or("").contains("named other"));
}

/// `deploy` open, one change typed, and the file changed on disk to `v9`.
pub(super) fn in_conflict() -> App {
    let mut app = editing();
    typed(&mut app, "#");
    let effects = update(
        &mut app,
        Event::Engine(Box::new(crate::engine::EngineEvent {
            seq: 1,
            at: String::new(),
            actor: crate::engine::Actor::Agent {
                client: "agent".into(),
                connection: "c1".into(),
            },
            change: crate::engine::Change::WorkflowChanged {
                name: "deploy".into(),
                file_name: "deploy.yaml".into(),
                version: Some("v9".into()),
            },
        })),
    );
    assert!(
        effects.contains(&Effect::LoadDisk("deploy".into())),
        "{effects:?}"
    );
    update(
        &mut app,
        Event::Disk {
            workflow: "deploy".into(),
            now: Some(("v9".into(), "name: deploy\n# theirs\n".into())),
        },
    );
    assert!(app.editor.as_ref().unwrap().conflict.is_some());
    app
}

#[test]
fn a_change_on_disk_keeps_unsaved_text_and_save_offers_reload_overwrite_and_diff() {
    let mut app = in_conflict();
    // The buffer is untouched.
    assert!(
        app.editor
            .as_ref()
            .unwrap()
            .contents()
            .starts_with("#name: deploy")
    );
    update(&mut app, ctrl('s'));
    assert_eq!(app.editor.as_ref().unwrap().ask, Some(Ask::Conflict));
    update(&mut app, key(KeyCode::Char('d')));
    assert_eq!(app.editor.as_ref().unwrap().diff, Some(0));
    // Esc leaves the diff for the question, not the question.
    update(&mut app, key(KeyCode::Esc));
    assert_eq!(app.editor.as_ref().unwrap().ask, Some(Ask::Conflict));
    let effects = update(&mut app, key(KeyCode::Char('o')));
    assert!(
        matches!(&effects[..], [Effect::Save { expected_version: Some(v), text, .. }]
            if v == "v9" && text.starts_with("#name")),
        "overwrite replaces exactly the version seen: {effects:?}"
    );
}

#[test]
fn reload_takes_the_file_on_disk_and_drops_the_changes() {
    let mut app = in_conflict();
    update(&mut app, ctrl('s'));
    let effects = update(&mut app, key(KeyCode::Char('r')));
    let editor = app.editor.as_ref().unwrap();
    assert_eq!(editor.contents(), "name: deploy\n# theirs\n");
    assert_eq!(editor.base_version, "v9");
    assert!(!editor.dirty() && editor.conflict.is_none());
    assert!(effects.contains(&Effect::DiscardRecovery("deploy.yaml".into())));
    assert_eq!(app.mode(), Mode::Edit);
}

#[test]
fn a_clean_buffer_follows_the_file_and_its_own_save_is_no_conflict() {
    let mut app = editing();
    update(
        &mut app,
        Event::Disk {
            workflow: "deploy".into(),
            now: Some(("v1".into(), TEXT.into())),
        },
    );
    assert!(app.editor.as_ref().unwrap().conflict.is_none());
    update(
        &mut app,
        Event::Disk {
            workflow: "deploy".into(),
            now: Some(("v2".into(), "name: deploy\n".into())),
        },
    );
    let editor = app.editor.as_ref().unwrap();
    assert_eq!(editor.contents(), "name: deploy\n");
    assert!(!editor.dirty() && editor.conflict.is_none());
}

#[test]
fn a_save_refused_for_a_version_conflict_reads_the_disk() {
    let mut app = editing();
    typed(&mut app, "#");
    let effects = update(
        &mut app,
        Event::Saved {
            edits: 1,
            result: Err(SaveFailure::Conflict),
        },
    );
    assert_eq!(effects, vec![Effect::LoadDisk("deploy".into())]);
    assert!(app.editor.as_ref().unwrap().dirty());
}

#[test]
fn leaving_with_unsaved_changes_asks_and_each_answer_does_what_it_says() {
    let mut app = editing();
    typed(&mut app, "#");
    update(&mut app, key(KeyCode::Esc));
    assert_eq!(app.editor.as_ref().unwrap().ask, Some(Ask::Leave));
    update(&mut app, key(KeyCode::Esc));
    assert_eq!(app.mode(), Mode::Edit, "Esc keeps editing");
    update(&mut app, key(KeyCode::Esc));
    let effects = update(&mut app, key(KeyCode::Char('d')));
    assert_eq!(effects, vec![Effect::DiscardRecovery("deploy.yaml".into())]);
    assert!(app.editor.is_none());
    assert_eq!(app.mode(), Mode::Normal);

    // Save, then close once saved.
    let mut app = editing();
    typed(&mut app, "#");
    update(&mut app, key(KeyCode::Esc));
    let effects = update(&mut app, key(KeyCode::Char('s')));
    assert!(matches!(&effects[..], [Effect::Save { .. }]));
    assert!(app.editor.is_some());
    let edits = app.editor.as_ref().unwrap().edits;
    update(
        &mut app,
        Event::Saved {
            edits,
            result: Ok(("v2".into(), 0)),
        },
    );
    assert!(app.editor.is_none());
}

#[test]
fn quitting_with_unsaved_changes_asks_first() {
    let mut app = editing();
    typed(&mut app, "#");
    update(&mut app, ctrl('p'));
    typed(&mut app, "quit");
    update(&mut app, key(KeyCode::Enter));
    assert!(!app.quit);
    assert_eq!(app.editor.as_ref().unwrap().ask, Some(Ask::Quit));
    update(&mut app, key(KeyCode::Char('d')));
    assert!(app.quit);
}

#[test]
fn the_palette_opened_from_the_editor_returns_to_it() {
    let mut app = editing();
    update(&mut app, ctrl('p'));
    assert_eq!(app.mode(), Mode::Palette);
    update(&mut app, key(KeyCode::Esc));
    assert_eq!(app.mode(), Mode::Edit);
}

#[test]
fn next_problem_jumps_to_the_line_and_says_what_is_wrong() {
    let mut app = editing();
    checked(&mut app, 0, draft(1, vec![error_on(4)], "deploy"));
    update(&mut app, ctrl('n'));
    assert_eq!(app.editor.as_ref().unwrap().text.cursor(), (3, 4));
    assert!(
        app.message
            .as_deref()
            .unwrap_or("")
            .starts_with("line 4: unknown key")
    );
}

#[test]
fn a_new_workflow_is_named_from_a_template_and_opens_in_the_editor() {
    let mut app = App::new("workflows".into());
    app.workflows = vec![summary("deploy")];
    update(&mut app, key(KeyCode::Char('A')));
    assert_eq!(app.mode(), Mode::Name);
    update(&mut app, key(KeyCode::Right));
    typed(&mut app, "my_service");
    let effects = update(&mut app, key(KeyCode::Enter));
    assert_eq!(
        effects,
        vec![Effect::CreateWorkflow {
            template: 1,
            name: "my_service".into()
        }]
    );
    // A refused name leaves the box open to fix it.
    update(
        &mut app,
        Event::Named {
            purpose: NameFor::New(1),
            result: Err("workflow my_service exists".into()),
        },
    );
    assert_eq!(app.mode(), Mode::Name);
    let effects = update(
        &mut app,
        Event::Named {
            purpose: NameFor::New(1),
            result: Ok("my_service".into()),
        },
    );
    assert_eq!(
        effects,
        vec![
            Effect::ReloadList,
            Effect::LoadDocument("my_service".into())
        ]
    );
}

#[test]
fn delete_needs_the_name_typed_and_rename_and_duplicate_ask_the_engine() {
    let mut app = App::new("workflows".into());
    app.workflows = vec![summary("deploy")];
    update(&mut app, key(KeyCode::Char('D')));
    typed(&mut app, "deplo");
    assert!(update(&mut app, key(KeyCode::Enter)).is_empty());
    typed(&mut app, "y");
    assert_eq!(
        update(&mut app, key(KeyCode::Enter)),
        vec![Effect::DeleteWorkflow("deploy".into())]
    );
    update(&mut app, key(KeyCode::Esc));
    update(&mut app, key(KeyCode::Char('R')));
    update(&mut app, key(KeyCode::Backspace));
    typed(&mut app, "z");
    assert_eq!(
        update(&mut app, key(KeyCode::Enter)),
        vec![Effect::RenameWorkflow {
            from: "deploy".into(),
            to: "deploz".into()
        }]
    );
    update(&mut app, key(KeyCode::Esc));
    update(&mut app, key(KeyCode::Char('Y')));
    assert_eq!(
        update(&mut app, key(KeyCode::Enter)),
        vec![Effect::DuplicateWorkflow {
            from: "deploy".into(),
            name: "deploy_copy".into()
        }]
    );
}

fn ctrl_space() -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(' '), KeyModifiers::CONTROL))
}

#[test]
fn completion_writes_the_one_candidate_at_once() {
    let mut app = editing();
    // A new top-level key at the end of line 2 (`initial_state: a` gets a sibling).
    update(&mut app, key(KeyCode::Down));
    update(&mut app, key(KeyCode::End));
    update(&mut app, key(KeyCode::Enter));
    typed(&mut app, "max_s");
    update(&mut app, ctrl_space());
    assert_eq!(app.mode(), Mode::Edit, "one candidate: written at once");
    let text = app.editor.as_ref().unwrap().contents();
    assert!(
        text.starts_with("name: deploy\ninitial_state: a\nmax_steps: \nstates:"),
        "{text}"
    );
    // Nothing to offer in free text: said, nothing written.
    typed(&mut app, "3 # a commen");
    update(&mut app, ctrl_space());
    assert_eq!(app.message.as_deref(), Some("nothing to complete here"));
}

#[test]
fn completion_in_a_state_lists_its_keys_and_enter_writes_the_chosen_one() {
    let mut app = App::new("workflows".into());
    app.size = (120, 30);
    app.workflows = vec![summary("deploy")];
    open_deploy(
        &mut app,
        "name: deploy\ninitial_state: a\nstates:\n  a:\n    \n",
    );
    for _ in 0..4 {
        update(&mut app, key(KeyCode::Down));
    }
    update(&mut app, key(KeyCode::End));
    update(&mut app, ctrl_space());
    assert_eq!(app.mode(), Mode::Complete);
    let names: Vec<String> = app
        .editor
        .as_ref()
        .and_then(|e| e.completion.as_ref())
        .map(|(c, _)| c.items.iter().map(|i| i.text.clone()).collect())
        .unwrap_or_default();
    assert_eq!(
        names,
        [
            "description",
            "action",
            "timeout_seconds",
            "when",
            "transitions"
        ]
    );
    update(&mut app, key(KeyCode::Down));
    update(&mut app, key(KeyCode::Enter));
    assert_eq!(app.mode(), Mode::Edit);
    assert!(
        app.editor
            .as_ref()
            .unwrap()
            .contents()
            .ends_with("  a:\n    action: \n")
    );
    // Typing on closes a list and types.
    update(&mut app, ctrl_space());
    typed(&mut app, "x");
    assert_eq!(app.mode(), Mode::Edit);
}

#[test]
fn opening_another_workflow_over_unsaved_text_asks_first() {
    let mut app = editing();
    typed(&mut app, "#");
    update(&mut app, ctrl('p'));
    typed(&mut app, "edit the workflow");
    let effects = update(&mut app, key(KeyCode::Enter));
    assert!(effects.is_empty(), "{effects:?}");
    assert_eq!(app.editor.as_ref().unwrap().ask, Some(Ask::Leave));
    assert!(app.editor.as_ref().unwrap().dirty());
}
