//! The buffer checked and saved: the debounced check, saving with the version the file was
//! opened at, a file changed on disk by someone else (reloaded when the buffer is clean, a
//! conflict the person settles when it is not), and the answers to the editor's questions.
//!
//! The conflict question is pinned to the version it shows: `o` replaces exactly that one
//! (the store refuses any other). A newer change while the question is open replaces what it
//! shows, says the file changed again, and holds `r` and `o` a moment (tui/settling.rs): a
//! key pressed then was meant for the version shown before.

use super::close;
use crate::engine::editing::Draft;
use crate::tui::editor::{Ask, Check, Conflict, Editor, SaveFailure, reload};
use crate::tui::effect::Effect;
use crate::tui::settling::Settling;
use crate::tui::state::App;
use std::time::Instant;

/// Typing paused: check the buffer if it is still the text that paused.
pub fn check_due(app: &mut App, edits: u64) -> Vec<Effect> {
    let Some(editor) = &app.editor else {
        return Vec::new();
    };
    if editor.edits != edits || editor.checked_edits == edits {
        return Vec::new();
    }
    // The whole text is joined once a pause: it may be megabytes.
    let text = editor.contents();
    let mut effects = Vec::with_capacity(2);
    if editor.dirty() {
        effects.push(Effect::Recover {
            file: editor.file.clone(),
            text: text.clone(),
            base_version: editor.known_base().map(str::to_string),
        });
    }
    effects.insert(0, Effect::Check { edits, text });
    effects
}

/// A check came back; an older one than shown is dropped.
pub fn checked(app: &mut App, edits: u64, draft: Draft) {
    let Some(editor) = &mut app.editor else {
        return;
    };
    if editor.checked_edits != u64::MAX && edits < editor.checked_edits {
        return;
    }
    let v = draft.validation;
    editor.check = Some(Check {
        errors: v.errors,
        warnings: v.warnings,
        name: v.name,
        violations: v.violations,
        plan: draft.plan,
    });
    editor.checked_edits = edits;
}

/// Ctrl-s: save with the version the buffer is based on. A known conflict, errors or a
/// changed name ask first.
pub fn save(app: &mut App) -> Vec<Effect> {
    let Some(editor) = &mut app.editor else {
        return Vec::new();
    };
    if let Some(conflict) = &mut editor.conflict {
        // A question of its own: nothing changed while it was open yet.
        conflict.again = false;
        editor.ask = Some(Ask::Conflict);
        return Vec::new();
    }
    if let Some(name) = editor.check.as_ref().and_then(|c| c.name.as_ref())
        && *name != editor.workflow
        && editor.checked_edits == editor.edits
    {
        app.message = Some(format!(
            "the text is named {name}, the file is {}: put the name back, or rename the workflow from the list (R)",
            editor.workflow
        ));
        return Vec::new();
    }
    if editor.has_errors() && editor.checked_edits == editor.edits {
        editor.ask = Some(Ask::SaveInvalid);
        return Vec::new();
    }
    save_now(editor, Some(editor.base_version.clone()))
}

fn save_now(editor: &Editor, expected: Option<String>) -> Vec<Effect> {
    vec![Effect::Save {
        edits: editor.edits,
        file: editor.file.clone(),
        text: editor.contents(),
        expected_version: expected,
    }]
}

/// The save came back.
pub fn saved(
    app: &mut App,
    edits: u64,
    result: Result<(String, usize), SaveFailure>,
) -> Vec<Effect> {
    let Some(editor) = &mut app.editor else {
        return Vec::new();
    };
    match result {
        Ok((version, errors)) => {
            editor.base_version = version;
            editor.saved_edits = edits;
            editor.conflict = None;
            editor.recovered = false;
            let file = editor.file.clone();
            match editor.after_save.take() {
                Some(Ask::Leave) if !editor.dirty() => close(app),
                Some(Ask::Quit) if !editor.dirty() => app.quit = true,
                _ => {}
            }
            app.message = Some(if errors > 0 {
                format!(
                    "saved {file} with {errors} error{}: the last good version still runs",
                    if errors == 1 { "" } else { "s" }
                )
            } else {
                format!("saved {file}")
            });
            vec![Effect::DiscardRecovery(file)]
        }
        Err(SaveFailure::Conflict) => {
            editor.after_save = None;
            app.message = Some(format!(
                "{} changed on disk since you opened it: nothing was saved",
                editor.file
            ));
            vec![Effect::LoadDisk(editor.workflow.clone())]
        }
        Err(SaveFailure::Other(e)) => {
            editor.after_save = None;
            app.message = Some(format!("not saved: {e}"));
            Vec::new()
        }
    }
}

/// The workflow changed on disk (an engine event): see what is there now.
pub fn changed_on_disk(app: &App, workflow: &str) -> Vec<Effect> {
    match &app.editor {
        Some(e) if e.workflow == workflow => vec![Effect::LoadDisk(workflow.to_string())],
        _ => Vec::new(),
    }
}

/// What is on disk now. The same version: nothing to do (our own save). A clean buffer follows
/// the file; a buffer with changes keeps them and shows the conflict.
pub fn disk(app: &mut App, workflow: &str, now: Option<(String, String)>) -> Vec<Effect> {
    let Some(editor) = app.editor.as_mut().filter(|e| e.workflow == workflow) else {
        return Vec::new();
    };
    let (version, text) = match now {
        Some((version, text)) => (Some(version), text),
        None => (None, String::new()),
    };
    if version.as_deref() == Some(editor.base_version.as_str()) {
        back_to_base(app);
        return Vec::new();
    }
    if editor
        .conflict
        .as_ref()
        .is_some_and(|c| c.version == version)
    {
        // Told twice (the event and a refused save both read the disk): nothing new.
        return Vec::new();
    }
    match version {
        Some(version) if !editor.dirty() => {
            reload(editor, version, &text);
            app.message = Some(format!("{}: changed on disk, reloaded", editor.file));
            vec![Effect::CheckLater(editor.edits)]
        }
        version => {
            conflicted(app, version, text, Instant::now());
            Vec::new()
        }
    }
}

/// The file is the version the buffer is based on again: no conflict, and no question about
/// one left open.
fn back_to_base(app: &mut App) {
    let Some(editor) = &mut app.editor else {
        return;
    };
    if editor.conflict.take().is_some() && editor.ask == Some(Ask::Conflict) {
        editor.ask = None;
        editor.diff = None;
        editor.settling = None;
        app.message = Some(format!(
            "{} is back to the version you opened: nothing to settle",
            editor.file
        ));
    }
}

/// The file on disk is `version` (`None`: deleted) with `text`, and the buffer has changes of
/// its own. With the conflict question open, the question now shows this version, says the
/// file changed again, and takes no `r` or `o` until `now` has settled.
fn conflicted(app: &mut App, version: Option<String>, text: String, now: Instant) {
    let Some(editor) = &mut app.editor else {
        return;
    };
    let asked = editor.ask == Some(Ask::Conflict);
    let deleted = version.is_none();
    editor.conflict = Some(Conflict {
        version,
        text,
        again: asked,
    });
    app.message = Some(match (asked, deleted) {
        (true, _) => {
            editor.settling = Some(Settling::from(now));
            format!(
                "{} changed on disk again while you were asked: the question shows it now",
                editor.file
            )
        }
        (false, true) => format!(
            "{} was deleted on disk: Ctrl-s saves your text again",
            editor.file
        ),
        (false, false) => format!(
            "{} changed on disk: your changes are kept · Ctrl-s: reload, overwrite or diff",
            editor.file
        ),
    });
}

/// An answer to the editor's question.
pub fn answer(app: &mut App, choice: char) -> Vec<Effect> {
    // Esc in the diff goes back to the question.
    if let Some(e) = app
        .editor
        .as_mut()
        .filter(|e| e.diff.is_some() && choice == 'n')
    {
        e.diff = None;
        return Vec::new();
    }
    let Some(ask) = app.editor.as_ref().and_then(|e| e.ask) else {
        return Vec::new();
    };
    if ask == Ask::Conflict
        && matches!(choice, 'r' | 'o')
        && app.editor.as_ref().is_some_and(|e| e.settling.is_some())
    {
        app.message = Some(
            "the file changed again while you were asked: read the question again, then answer"
                .into(),
        );
        return Vec::new();
    }
    let effects = match (ask, choice) {
        (Ask::Conflict, 'd') => {
            if let Some(e) = &mut app.editor {
                e.diff = Some(0);
            }
            return Vec::new();
        }
        (Ask::Conflict, 'r') => reload_theirs(app),
        (Ask::Conflict, 'o') => {
            let Some(editor) = &mut app.editor else {
                return Vec::new();
            };
            // Deleted on disk: saved as a new file.
            let expected = editor.conflict.take().and_then(|c| c.version);
            save_now(editor, expected)
        }
        (Ask::SaveInvalid, 'y') | (Ask::Leave, 's') | (Ask::Quit, 's') => {
            let Some(editor) = &mut app.editor else {
                return Vec::new();
            };
            editor.after_save = (ask != Ask::SaveInvalid).then_some(ask);
            save_now(editor, Some(editor.base_version.clone()))
        }
        (Ask::Leave, 'd') | (Ask::Quit, 'd') => {
            let file = app.editor.as_ref().map(|e| e.file.clone());
            close(app);
            app.quit = ask == Ask::Quit;
            return file.map(Effect::DiscardRecovery).into_iter().collect();
        }
        _ => Vec::new(),
    };
    if let Some(e) = &mut app.editor {
        e.ask = None;
        e.diff = None;
    }
    effects
}

/// The conflict settled for the file on disk: the buffer is its text, the changes dropped.
fn reload_theirs(app: &mut App) -> Vec<Effect> {
    let Some(editor) = &mut app.editor else {
        return Vec::new();
    };
    let Some(conflict) = editor.conflict.take() else {
        return Vec::new();
    };
    let file = editor.file.clone();
    match conflict.version {
        Some(version) => {
            reload(editor, version, &conflict.text);
            let edits = editor.edits;
            app.message = Some(format!("{file}: reloaded from disk, your changes dropped"));
            vec![Effect::DiscardRecovery(file), Effect::CheckLater(edits)]
        }
        None => {
            app.message = Some(format!("{file} is deleted on disk: nothing to reload"));
            Vec::new()
        }
    }
}
