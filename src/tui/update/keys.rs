//! What a key does that is not a command: typed into the focused pane in focus mode, into
//! the editor, or into the text of a filter, a form, a prompt, a search, a name.

use super::super::editing;
use super::super::effect::Effect;
use super::super::keymap::{self};
use super::super::mode::{BaseMode, Mode};
use super::super::overlay::Overlay;
use super::super::state::App;
use super::commands::run_command;
use super::moving::plan_follows_selection;
use super::panes::fit_focused;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

pub(super) fn on_key(app: &mut App, key: KeyEvent) -> Vec<Effect> {
    if key.kind == KeyEventKind::Release {
        return Vec::new();
    }
    if let Some(command) = keymap::lookup(app.mode(), app.view, &key) {
        return run_command(app, command);
    }
    if app.mode() == Mode::Complete {
        // Typing on closes the list; the key is the text's.
        editing::close_completion(app);
    }
    if app.mode() == Mode::Edit {
        return editing::key(app, key);
    }
    if app.mode() == Mode::Focus {
        if app.focused_pane().is_none() {
            app.base = BaseMode::Normal;
            return Vec::new();
        }
        let Some(k) = super::super::keys::to_pty(&key) else {
            return Vec::new();
        };
        // The pane follows the studio that types into it (another may have sized it).
        let mut effects = fit_focused(app);
        if let Some(pane) = app.focused_pane() {
            effects.push(Effect::SendKeys {
                session_id: pane.session_id.clone(),
                keys: vec![k],
            });
        }
        return effects;
    }
    let chord = key
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    match key.code {
        KeyCode::Char(c) if app.mode().takes_text() && !chord => type_char(app, c),
        _ => Vec::new(),
    }
}

/// Pasted text: to the editor, to the focused pane's program (as one bracketed paste when it
/// asked for that), or typed into the field in use.
pub(super) fn paste(app: &mut App, text: String) -> Vec<Effect> {
    if app.mode() == Mode::Edit {
        return editing::paste(app, &text);
    }
    match (app.mode(), app.focused_pane()) {
        (Mode::Focus, Some(pane)) => {
            let paste = Effect::Paste {
                session_id: pane.session_id.clone(),
                text,
            };
            let mut effects = fit_focused(app);
            effects.push(paste);
            effects
        }
        (mode, _) if mode.takes_text() => {
            // Typed one character at a time so each field's checks apply; controls
            // (a pasted newline) would end or break the line.
            text.chars()
                .filter(|c| !c.is_control())
                .flat_map(|c| type_char(app, c))
                .collect()
        }
        _ => Vec::new(),
    }
}

fn type_char(app: &mut App, c: char) -> Vec<Effect> {
    match app.mode() {
        Mode::Filter => {
            app.filter.push(c);
            app.selected = 0;
            plan_follows_selection(app, false)
        }
        Mode::Form => {
            if let Some(form) = app.form_mut() {
                form.type_char(c);
            }
            Vec::new()
        }
        Mode::Prompt => {
            if let Some(Overlay::Prompt { answer, .. }) = &mut app.overlay {
                answer.push(c);
            }
            Vec::new()
        }
        Mode::Search => {
            if let Some(Overlay::Search(typed)) = &mut app.overlay {
                typed.push(c);
            }
            Vec::new()
        }
        Mode::Palette => {
            if let Some(Overlay::Palette(p)) = &mut app.overlay {
                p.query.push(c);
                p.selected = 0;
            }
            Vec::new()
        }
        Mode::EditFind => {
            if let Some(e) = &mut app.editor {
                e.find.push(c);
            }
            Vec::new()
        }
        Mode::Name => {
            if let Some(Overlay::Naming(n)) = &mut app.overlay {
                n.name.push(c);
            }
            Vec::new()
        }
        _ => Vec::new(),
    }
}
