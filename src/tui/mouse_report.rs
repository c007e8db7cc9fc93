//! Mouse reports for a pane's program that asked for them (xterm's mouse modes, as the pane's
//! vt100 screen recorded them: vim with `mouse=a`, htop, tmux, less with `--mouse`). In focus
//! mode a press, release, drag, motion or wheel inside the pane goes to the program encoded
//! the way it asked, as a terminal would send it; everywhere else the mouse stays the
//! studio's.

use crate::engine::panes::{MouseEncoding, MouseMode};
use crossterm::event::{KeyModifiers, MouseButton, MouseEventKind};

/// What the program of a pane asked the terminal to report, read from its screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reporting {
    pub mode: MouseMode,
    pub encoding: MouseEncoding,
}

impl Reporting {
    /// Whether the program wants the mouse at all.
    pub fn wanted(self) -> bool {
        self.mode != MouseMode::None
    }
}

/// The bytes (as text: every encoding used here is ASCII or UTF-8) a terminal sends for
/// `kind` at cell (`col`, `row`) of the pane, both counted from 0. `None` when the program's
/// mode does not report this kind of event, or its encoding cannot hold the position (the
/// oldest one stops at column 95 here: past it a byte would not be text).
pub fn encode(
    reporting: Reporting,
    kind: MouseEventKind,
    modifiers: KeyModifiers,
    col: u16,
    row: u16,
) -> Option<String> {
    let (button, release, motion) = match kind {
        MouseEventKind::Down(b) => (button_code(b), false, false),
        MouseEventKind::Up(b) => (button_code(b), true, false),
        MouseEventKind::Drag(b) => (button_code(b), false, true),
        // Motion with no button held is "button 3" moving.
        MouseEventKind::Moved => (3, false, true),
        MouseEventKind::ScrollUp => (64, false, false),
        MouseEventKind::ScrollDown => (65, false, false),
        MouseEventKind::ScrollLeft => (66, false, false),
        MouseEventKind::ScrollRight => (67, false, false),
    };
    let reported = match reporting.mode {
        MouseMode::None => false,
        MouseMode::Press => !release && !motion,
        MouseMode::PressRelease => !motion,
        MouseMode::ButtonMotion => kind != MouseEventKind::Moved,
        MouseMode::AnyMotion => true,
    };
    if !reported {
        return None;
    }
    let mut code = button + if motion { 32 } else { 0 };
    // X10 mode reports no modifiers.
    if reporting.mode != MouseMode::Press {
        if modifiers.contains(KeyModifiers::SHIFT) {
            code += 4;
        }
        if modifiers.contains(KeyModifiers::ALT) {
            code += 8;
        }
        if modifiers.contains(KeyModifiers::CONTROL) {
            code += 16;
        }
    }
    let (x, y) = (u32::from(col) + 1, u32::from(row) + 1);
    match reporting.encoding {
        MouseEncoding::Sgr => Some(format!(
            "\u{1b}[<{code};{x};{y}{}",
            if release { 'm' } else { 'M' }
        )),
        encoding => {
            // The older encodings cannot say which button was released.
            if release {
                code = (code & !3) | 3;
            }
            let limit = if encoding == MouseEncoding::Utf8 {
                2015
            } else {
                95
            };
            if x > limit || y > limit {
                return None;
            }
            let at = |v: u32| char::from_u32(32 + v);
            Some(format!("\u{1b}[M{}{}{}", at(code)?, at(x)?, at(y)?))
        }
    }
}

fn button_code(button: MouseButton) -> u32 {
    match button {
        MouseButton::Left => 0,
        MouseButton::Middle => 1,
        MouseButton::Right => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reporting(mode: MouseMode, encoding: MouseEncoding) -> Reporting {
        Reporting { mode, encoding }
    }

    const NONE: KeyModifiers = KeyModifiers::NONE;

    #[test]
    fn sgr_reports_presses_releases_drags_and_the_wheel_with_modifiers() {
        let r = reporting(MouseMode::ButtonMotion, MouseEncoding::Sgr);
        let left = MouseButton::Left;
        assert_eq!(
            encode(r, MouseEventKind::Down(left), NONE, 4, 2).as_deref(),
            Some("\u{1b}[<0;5;3M")
        );
        assert_eq!(
            encode(r, MouseEventKind::Up(left), NONE, 4, 2).as_deref(),
            Some("\u{1b}[<0;5;3m")
        );
        assert_eq!(
            encode(r, MouseEventKind::Drag(left), NONE, 5, 2).as_deref(),
            Some("\u{1b}[<32;6;3M")
        );
        assert_eq!(
            encode(r, MouseEventKind::ScrollDown, KeyModifiers::CONTROL, 0, 0).as_deref(),
            Some("\u{1b}[<81;1;1M")
        );
        assert_eq!(
            encode(
                r,
                MouseEventKind::Down(MouseButton::Right),
                KeyModifiers::SHIFT,
                300,
                99
            )
            .as_deref(),
            Some("\u{1b}[<6;301;100M"),
            "SGR has no column limit"
        );
        assert_eq!(encode(r, MouseEventKind::Moved, NONE, 1, 1), None);
    }

    #[test]
    fn each_mode_reports_only_what_it_asked_for() {
        let kinds = [
            MouseEventKind::Down(MouseButton::Left),
            MouseEventKind::Up(MouseButton::Left),
            MouseEventKind::Drag(MouseButton::Left),
            MouseEventKind::Moved,
        ];
        let reported = |mode| {
            kinds
                .iter()
                .map(|k| encode(reporting(mode, MouseEncoding::Sgr), *k, NONE, 0, 0).is_some())
                .collect::<Vec<_>>()
        };
        assert_eq!(reported(MouseMode::None), [false; 4]);
        assert_eq!(reported(MouseMode::Press), [true, false, false, false]);
        assert_eq!(
            reported(MouseMode::PressRelease),
            [true, true, false, false]
        );
        assert_eq!(reported(MouseMode::ButtonMotion), [true, true, true, false]);
        assert_eq!(reported(MouseMode::AnyMotion), [true; 4]);
    }

    #[test]
    fn the_older_encodings_release_as_button_3_and_stop_where_their_bytes_do() {
        let normal = reporting(MouseMode::PressRelease, MouseEncoding::Default);
        assert_eq!(
            encode(normal, MouseEventKind::Down(MouseButton::Left), NONE, 0, 0).as_deref(),
            Some("\u{1b}[M !!")
        );
        assert_eq!(
            encode(
                normal,
                MouseEventKind::Up(MouseButton::Right),
                KeyModifiers::ALT,
                9,
                4
            )
            .as_deref(),
            Some("\u{1b}[M+*%")
        );
        assert_eq!(
            encode(normal, MouseEventKind::Down(MouseButton::Left), NONE, 95, 0),
            None,
            "column 96 would need a byte over 127"
        );
        let utf8 = reporting(MouseMode::PressRelease, MouseEncoding::Utf8);
        assert_eq!(
            encode(utf8, MouseEventKind::Down(MouseButton::Left), NONE, 199, 0).as_deref(),
            Some("\u{1b}[M \u{e8}!")
        );
        let x10 = reporting(MouseMode::Press, MouseEncoding::Default);
        assert_eq!(
            encode(
                x10,
                MouseEventKind::Down(MouseButton::Left),
                KeyModifiers::SHIFT,
                0,
                0
            )
            .as_deref(),
            Some("\u{1b}[M !!"),
            "X10 reports no modifiers"
        );
    }
}
