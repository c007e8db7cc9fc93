//! The manifest's vocabulary turned into the terminal layer's: waits in seconds (the
//! state's default, clamped), patterns, keys, and where a wait looks. Kept apart so that
//! every tool reads its parameters the same way.

use crate::engine::EngineError;
use crate::term::{self, KeyPress, Named};
use crate::workflow::action::{self, Key, NamedKey};
use crate::workflow::pattern;
use std::time::Duration;

/// A wait in seconds as asked (or the state's, or the default), clamped.
pub(super) fn wait_duration(
    asked: Option<f64>,
    state_default: Option<f64>,
) -> (Duration, f64, bool) {
    let seconds = asked
        .or(state_default)
        .unwrap_or(action::DEFAULT_WAIT_SECONDS);
    let (seconds, clamped) = action::clamp_wait(seconds);
    (Duration::from_secs_f64(seconds), seconds, clamped)
}

pub(super) fn compile(pattern: &str) -> Result<regex::Regex, EngineError> {
    pattern::compile(pattern).map_err(|source| EngineError::Pattern {
        pattern: pattern.to_string(),
        source,
    })
}

pub(super) fn key_press(key: &Key) -> Result<KeyPress, EngineError> {
    // A chord is one key: taking the first character of "ab", or NUL for "", would press a
    // key nobody asked for.
    let one = |kind: &str, text: &str| {
        let mut chars = text.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => Ok(c),
            _ => Err(EngineError::InvalidParams(format!(
                "key {{\"{kind}\": {text:?}}} needs exactly one character, not {}",
                text.chars().count()
            ))),
        }
    };
    Ok(match key {
        Key::Text { text } => KeyPress::Text(text.clone()),
        Key::Named { key } => KeyPress::Named(named(*key)),
        Key::Ctrl { ctrl } => KeyPress::Ctrl(one("ctrl", ctrl)?),
        Key::Alt { alt } => KeyPress::Alt(one("alt", alt)?),
        // A run replaces these with their values before it types (run/executor/actions.rs).
        Key::Var { var } => {
            return Err(EngineError::InvalidParams(format!(
                "key {{\"var\": {var:?}}} types a run's variable: only a workflow's steps have variables"
            )));
        }
    })
}

fn named(key: NamedKey) -> Named {
    match key {
        NamedKey::Enter => Named::Enter,
        NamedKey::Tab => Named::Tab,
        NamedKey::Escape => Named::Escape,
        NamedKey::Backspace => Named::Backspace,
        NamedKey::Up => Named::Up,
        NamedKey::Down => Named::Down,
        NamedKey::Left => Named::Left,
        NamedKey::Right => Named::Right,
        NamedKey::Home => Named::Home,
        NamedKey::End => Named::End,
        NamedKey::PageUp => Named::PageUp,
        NamedKey::PageDown => Named::PageDown,
        NamedKey::Insert => Named::Insert,
        NamedKey::Delete => Named::Delete,
        NamedKey::F1 => Named::F(1),
        NamedKey::F2 => Named::F(2),
        NamedKey::F3 => Named::F(3),
        NamedKey::F4 => Named::F(4),
        NamedKey::F5 => Named::F(5),
        NamedKey::F6 => Named::F(6),
        NamedKey::F7 => Named::F(7),
        NamedKey::F8 => Named::F(8),
        NamedKey::F9 => Named::F(9),
        NamedKey::F10 => Named::F(10),
        NamedKey::F11 => Named::F(11),
        NamedKey::F12 => Named::F(12),
    }
}

pub(super) fn since(mode: action::Since) -> term::Since {
    match mode {
        action::Since::LastInput => term::Since::LastInput,
        action::Since::Entry => term::Since::Entry,
        action::Since::Screen => term::Since::Screen,
        action::Since::All => term::Since::All,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_default_and_clamp() {
        assert_eq!(wait_duration(None, None).1, 30.0);
        assert_eq!(wait_duration(None, Some(5.0)).1, 5.0);
        assert_eq!(wait_duration(Some(2.0), Some(5.0)).1, 2.0);
        let (_, seconds, clamped) = wait_duration(Some(1e9), None);
        assert_eq!((seconds, clamped), (300.0, true));
        let (_, seconds, clamped) = wait_duration(Some(f64::NAN), None);
        assert_eq!((seconds, clamped), (300.0, true));
        let (_, seconds, clamped) = wait_duration(Some(-1.0), None);
        assert_eq!((seconds, clamped), (0.0, true));
    }
}
