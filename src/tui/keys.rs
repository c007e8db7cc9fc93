//! Keys pressed in focus mode, as the manifest's key vocabulary, so they reach the pane's
//! program through the engine's `send_input` (encoded for the program's current modes) like
//! any other typist's keys.

use crate::workflow::action::{Key, NamedKey};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// The key to send for `key`, or `None` for a key no terminal program can receive.
pub fn to_pty(key: &KeyEvent) -> Option<Key> {
    let named = |key| Some(Key::Named { key });
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    match key.code {
        KeyCode::Char(c) if ctrl && (c.is_ascii_alphabetic() || "@[\\]^_ ".contains(c)) => {
            Some(Key::Ctrl {
                ctrl: c.to_string(),
            })
        }
        KeyCode::Char(c) if alt => Some(Key::Alt { alt: c.to_string() }),
        KeyCode::Char(c) => Some(Key::Text {
            text: c.to_string(),
        }),
        KeyCode::Enter => named(NamedKey::Enter),
        KeyCode::Tab => named(NamedKey::Tab),
        // Shift-Tab has no name in the manifest's vocabulary: its sequence is the same in
        // every mode.
        KeyCode::BackTab => Some(Key::Text {
            text: "\u{1b}[Z".into(),
        }),
        KeyCode::Esc => named(NamedKey::Escape),
        KeyCode::Backspace => named(NamedKey::Backspace),
        KeyCode::Up => named(NamedKey::Up),
        KeyCode::Down => named(NamedKey::Down),
        KeyCode::Left => named(NamedKey::Left),
        KeyCode::Right => named(NamedKey::Right),
        KeyCode::Home => named(NamedKey::Home),
        KeyCode::End => named(NamedKey::End),
        KeyCode::PageUp => named(NamedKey::PageUp),
        KeyCode::PageDown => named(NamedKey::PageDown),
        KeyCode::Insert => named(NamedKey::Insert),
        KeyCode::Delete => named(NamedKey::Delete),
        KeyCode::F(n) => [
            NamedKey::F1,
            NamedKey::F2,
            NamedKey::F3,
            NamedKey::F4,
            NamedKey::F5,
            NamedKey::F6,
            NamedKey::F7,
            NamedKey::F8,
            NamedKey::F9,
            NamedKey::F10,
            NamedKey::F11,
            NamedKey::F12,
        ]
        .get(usize::from(n).wrapping_sub(1))
        .copied()
        .map(|key| Key::Named { key }),
        _ => None,
    }
}
