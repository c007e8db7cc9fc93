//! Keys to bytes, the way a VT220/xterm keyboard sends them in the terminal's current mode.

/// A key with a name, as the terminal encodes it. Manifests name keys in a vocabulary of
/// their own (`workflow::action::NamedKey`), which the engine maps to this one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Named {
    Enter,
    Tab,
    BackTab,
    Escape,
    Backspace,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
    Insert,
    Delete,
    /// F1 to F12.
    F(u8),
}

/// One key press.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyPress {
    /// Text typed as is.
    Text(String),
    Named(Named),
    /// A character pressed with Ctrl.
    Ctrl(char),
    /// A character pressed with Alt (sent as ESC then the character).
    Alt(char),
}

/// Terminal modes that change what a key sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Modes {
    /// DECCKM: arrows and Home/End send `ESC O x` instead of `ESC [ x`.
    pub application_cursor: bool,
}

/// Why a key cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("Ctrl-{0:?} has no control code (use a letter or one of @ [ \\ ] ^ _ and space)")]
    NoControlCode(char),
    #[error("there is no F{0} key (F1 to F12)")]
    NoFunctionKey(u8),
}

/// Appends the bytes for one key.
pub fn encode(key: &KeyPress, modes: Modes, out: &mut Vec<u8>) -> Result<(), KeyError> {
    match key {
        KeyPress::Text(text) => out.extend_from_slice(text.as_bytes()),
        KeyPress::Ctrl(c) => out.push(control_code(*c).ok_or(KeyError::NoControlCode(*c))?),
        KeyPress::Alt(c) => {
            out.push(0x1b);
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
        KeyPress::Named(named) => out.extend_from_slice(named_bytes(*named, modes)?),
    }
    Ok(())
}

/// The bytes for a list of keys.
pub fn encode_all(keys: &[KeyPress], modes: Modes) -> Result<Vec<u8>, KeyError> {
    let mut out = Vec::new();
    for key in keys {
        encode(key, modes, &mut out)?;
    }
    Ok(out)
}

fn control_code(c: char) -> Option<u8> {
    match c {
        'a'..='z' => Some(c as u8 - b'a' + 1),
        'A'..='Z' => Some(c as u8 - b'A' + 1),
        '@' | ' ' | '2' => Some(0),
        '[' | '3' => Some(0x1b),
        '\\' | '4' => Some(0x1c),
        ']' | '5' => Some(0x1d),
        '^' | '6' => Some(0x1e),
        '_' | '7' | '/' => Some(0x1f),
        '?' | '8' => Some(0x7f),
        _ => None,
    }
}

fn named_bytes(key: Named, modes: Modes) -> Result<&'static [u8], KeyError> {
    let app = modes.application_cursor;
    Ok(match key {
        Named::Enter => b"\r",
        Named::Tab => b"\t",
        Named::BackTab => b"\x1b[Z",
        Named::Escape => b"\x1b",
        Named::Backspace => b"\x7f",
        Named::Up if app => b"\x1bOA",
        Named::Up => b"\x1b[A",
        Named::Down if app => b"\x1bOB",
        Named::Down => b"\x1b[B",
        Named::Right if app => b"\x1bOC",
        Named::Right => b"\x1b[C",
        Named::Left if app => b"\x1bOD",
        Named::Left => b"\x1b[D",
        Named::Home if app => b"\x1bOH",
        Named::Home => b"\x1b[H",
        Named::End if app => b"\x1bOF",
        Named::End => b"\x1b[F",
        Named::PageUp => b"\x1b[5~",
        Named::PageDown => b"\x1b[6~",
        Named::Insert => b"\x1b[2~",
        Named::Delete => b"\x1b[3~",
        Named::F(n) => match n {
            1 => b"\x1bOP",
            2 => b"\x1bOQ",
            3 => b"\x1bOR",
            4 => b"\x1bOS",
            5 => b"\x1b[15~",
            6 => b"\x1b[17~",
            7 => b"\x1b[18~",
            8 => b"\x1b[19~",
            9 => b"\x1b[20~",
            10 => b"\x1b[21~",
            11 => b"\x1b[23~",
            12 => b"\x1b[24~",
            n => return Err(KeyError::NoFunctionKey(n)),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(keys: &[KeyPress], app: bool) -> Vec<u8> {
        encode_all(
            keys,
            Modes {
                application_cursor: app,
            },
        )
        .unwrap()
    }

    #[test]
    fn arrows_follow_the_cursor_key_mode() {
        let up = [KeyPress::Named(Named::Up), KeyPress::Named(Named::Home)];
        assert_eq!(bytes(&up, false), b"\x1b[A\x1b[H");
        assert_eq!(bytes(&up, true), b"\x1bOA\x1bOH");
    }

    #[test]
    fn control_alt_and_function_keys() {
        let keys = [
            KeyPress::Ctrl('c'),
            KeyPress::Ctrl('\\'),
            KeyPress::Ctrl('D'),
            KeyPress::Alt('x'),
            KeyPress::Named(Named::F(1)),
            KeyPress::Named(Named::F(12)),
            KeyPress::Named(Named::Enter),
            KeyPress::Text("é".into()),
        ];
        assert_eq!(
            bytes(&keys, false),
            b"\x03\x1c\x04\x1bx\x1bOP\x1b[24~\r\xc3\xa9".to_vec()
        );
    }

    #[test]
    fn impossible_keys_are_errors() {
        assert_eq!(
            encode_all(&[KeyPress::Ctrl('1')], Modes::default()),
            Err(KeyError::NoControlCode('1'))
        );
        assert_eq!(
            encode_all(&[KeyPress::Named(Named::F(13))], Modes::default()),
            Err(KeyError::NoFunctionKey(13))
        );
    }
}
