//! The keyboard while a recording plays: in raw mode when stdin is a terminal (and put back
//! at the end), each key as it is pressed, with a deadline.

use anyhow::Result;
use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// A key the player knows, or the terminal resized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Key {
    Char(char),
    Left,
    Right,
    Enter,
    Backspace,
    /// Esc, or Ctrl-C.
    Quit,
    Resized,
}

pub(super) struct Keys {
    /// Keys are read: stdin is a terminal, now in raw mode.
    pub raw: bool,
}

impl Keys {
    pub fn take() -> Keys {
        let raw = std::io::stdin().is_terminal() && crossterm::terminal::enable_raw_mode().is_ok();
        Keys { raw }
    }

    /// A key pressed within `wait` (`None`: for as long as it takes). With no keyboard, the
    /// wait is slept through.
    pub fn next(&self, wait: Option<Duration>) -> Result<Option<Key>> {
        if !self.raw {
            if let Some(wait) = wait {
                std::thread::sleep(wait);
            }
            return Ok(None);
        }
        // A wait too long to have an end is one without.
        let deadline = wait.and_then(|w| Instant::now().checked_add(w));
        loop {
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if left.is_some_and(|l| l.is_zero()) {
                return Ok(None);
            }
            if !event::poll(left.unwrap_or(Duration::from_secs(3600)))? {
                continue;
            }
            match event::read()? {
                Event::Key(KeyEvent {
                    code,
                    modifiers,
                    kind: KeyEventKind::Press | KeyEventKind::Repeat,
                    ..
                }) => {
                    let key = match code {
                        KeyCode::Char('c') if modifiers.contains(KeyModifiers::CONTROL) => {
                            Key::Quit
                        }
                        KeyCode::Char(c) => Key::Char(c),
                        KeyCode::Left => Key::Left,
                        KeyCode::Right => Key::Right,
                        KeyCode::Enter => Key::Enter,
                        KeyCode::Backspace => Key::Backspace,
                        KeyCode::Esc => Key::Quit,
                        _ => continue,
                    };
                    return Ok(Some(key));
                }
                Event::Resize(..) => return Ok(Some(Key::Resized)),
                _ => {}
            }
        }
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        if self.raw {
            // Answers the terminal gave to queries in the recording (its attributes, the
            // cursor's place) must not reach the person's shell as typed text.
            let _ =
                rustix::termios::tcflush(std::io::stdin(), rustix::termios::QueueSelector::IFlush);
            let _ = crossterm::terminal::disable_raw_mode();
        }
    }
}
