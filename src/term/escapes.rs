//! A session's output, character by character, as the decoder reads it: printed text,
//! control characters, and escape sequences by kind.
//!
//! Whoever reads the stream other than the transcript (the secrets' masker, replay's filter)
//! reads it here, with the decoder's own transitions (decode.rs), so that all of them agree
//! on where each sequence begins and ends: a secret with colour codes between its letters is
//! the secret to all of them, and an OSC the transcript skipped is the OSC replay drops.

use super::decode::{State, transition};

/// What kind of escape sequence a character belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `ESC` and what follows it, until its kind is known, or a short `ESC x` sequence
    /// (character sets, keypad modes, string terminators).
    Esc,
    /// `ESC [`: cursor moves, colours, modes. Draws the screen.
    Csi,
    /// `ESC ]`: titles, clipboard, hyperlinks, colours, working directory, prompts' marks.
    Osc,
    /// `ESC P`: device control strings (tmux's passthrough among them).
    Dcs,
    /// `ESC X`, `ESC ^`, `ESC _`: SOS, PM and APC strings (kitty's graphics among them).
    Str,
}

/// Where one character of the stream stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Drawn on the screen as text.
    Printed,
    /// A control character the terminal executes (line feed, carriage return, backspace,
    /// bell, tab; also one inside a sequence, which the terminal executes all the same).
    Control,
    /// Part of an escape sequence; `starts`: the `ESC` that begins one. The kind is what is
    /// known after this character (an `ESC` alone is [`Kind::Esc`] until the next one).
    Sequence { kind: Kind, starts: bool },
}

/// The reader's place in the stream, kept between chunks.
#[derive(Debug, Clone, Copy, Default)]
pub struct Scanner {
    state: State,
    kind: Option<Kind>,
}

impl Scanner {
    /// Whether the stream is between sequences (the next character is text or begins one).
    pub fn in_text(&self) -> bool {
        self.state == State::Ground
    }

    /// Classifies the next character and moves on.
    pub fn next(&mut self, c: char) -> Class {
        if self.state == State::Ground {
            return match c {
                '\x1b' => self.begin(),
                '\x00'..='\x1f' | '\x7f' => Class::Control,
                _ => Class::Printed,
            };
        }
        if !c.is_ascii() {
            // Each byte of it moves the decoder (none of them is a control it executes).
            let mut buf = [0u8; 4];
            for &b in c.encode_utf8(&mut buf).as_bytes() {
                self.state = transition(self.state, b).0;
            }
            return self.inside();
        }
        let b = c as u8;
        let before = self.state;
        let (next, executed) = transition(before, b);
        self.state = next;
        if b == 0x1b && next == State::Escape {
            return self.begin();
        }
        if executed {
            if next == State::Ground {
                // CAN or SUB: the sequence is cancelled.
                self.kind = None;
            }
            return Class::Control;
        }
        if before == State::Escape {
            self.kind = Some(match next {
                State::CsiEntry => Kind::Csi,
                State::OscString => Kind::Osc,
                State::DcsEntry => Kind::Dcs,
                State::SosPmApcString => Kind::Str,
                _ => Kind::Esc,
            });
        }
        self.inside()
    }

    fn begin(&mut self) -> Class {
        self.state = State::Escape;
        self.kind = Some(Kind::Esc);
        Class::Sequence {
            kind: Kind::Esc,
            starts: true,
        }
    }

    fn inside(&self) -> Class {
        Class::Sequence {
            kind: self.kind.unwrap_or(Kind::Esc),
            starts: false,
        }
    }
}

/// `text` cut every `cut` bytes, each cut moved on to a character's boundary: a stream as
/// the tests feed it, in chunks.
#[cfg(test)]
pub(crate) fn pieces(text: &str, cut: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut from = 0;
    while from < text.len() {
        let mut to = (from + cut.max(1)).min(text.len());
        while !text.is_char_boundary(to) {
            to += 1;
        }
        out.push(&text[from..to]);
        from = to;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `vte` prints and executes: the reference.
    #[derive(Default)]
    struct Seen {
        printed: String,
        executed: Vec<u8>,
    }

    impl vte::Perform for Seen {
        fn print(&mut self, c: char) {
            self.printed.push(c);
        }
        fn execute(&mut self, byte: u8) {
            self.executed.push(byte);
        }
    }

    fn classify(text: &str) -> Seen {
        let mut scanner = Scanner::default();
        let mut seen = Seen::default();
        for c in text.chars() {
            match scanner.next(c) {
                Class::Printed => seen.printed.push(c),
                Class::Control => seen.executed.push(c as u8),
                Class::Sequence { .. } => {}
            }
        }
        seen
    }

    /// Printed text and executed controls are what `vte` makes of the same stream (text
    /// without C1 controls, which UTF-8 text cannot hold as single bytes).
    #[test]
    fn prints_and_executes_what_vte_does() {
        const PIECES: &[&str] = &[
            "text ",
            "é",
            "中",
            "😀",
            "\r\n",
            "\x08",
            "\x07",
            "\t",
            "\x00",
            "\x1b[1;31m",
            "\x1b[",
            "38;5;2",
            "m",
            "\x1b[?1049h",
            "\x1b]0;title\x07",
            "\x1b]8;;http://x\x1b\\",
            "\x1bP1$r",
            "q\x1b\\",
            "\x1b",
            "[",
            "]",
            "P",
            "X",
            "^",
            "_",
            "\x18",
            "\x1a",
            "\x1b(B",
            "\x1b#8",
            "\x1b[3\n1m",
            "\x1b[>4;2m",
            "\x1b[ q",
            "\x1bc",
            ";",
            "?",
            " ",
            "\x1b\x1b",
            "\x7f",
        ];
        let mut rng = fastrand::Rng::with_seed(0xe5c);
        for case in 0..3000 {
            let mut text = String::new();
            for _ in 0..rng.usize(..200) {
                text.push_str(PIECES[rng.usize(..PIECES.len())]);
            }
            let mut vte = Seen::default();
            vte::Parser::new().advance(&mut vte, text.as_bytes());
            let ours = classify(&text);
            // vte hands DEL to print; a terminal draws nothing for it: a control here.
            let executed: Vec<u8> = ours.executed.into_iter().filter(|&b| b != 0x7f).collect();
            let printed: String = vte.printed.chars().filter(|&c| c != '\x7f').collect();
            assert_eq!(ours.printed, printed, "case {case}: {text:?}");
            assert_eq!(executed, vte.executed, "case {case}: {text:?}");
        }
    }

    #[test]
    fn sequences_are_told_apart_by_kind() {
        let kinds = |text: &str| {
            let mut scanner = Scanner::default();
            text.chars()
                .map(|c| match scanner.next(c) {
                    Class::Sequence { kind, .. } => Some(kind),
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        use Kind::*;
        assert_eq!(
            kinds("\x1b[1m"),
            [Some(Esc), Some(Csi), Some(Csi), Some(Csi)]
        );
        assert_eq!(
            kinds("\x1b]0;t\x07a"),
            [
                Some(Esc),
                Some(Osc),
                Some(Osc),
                Some(Osc),
                Some(Osc),
                Some(Osc),
                None
            ]
        );
        assert_eq!(
            kinds("\x1bPq\x1b\\"),
            [Some(Esc), Some(Dcs), Some(Dcs), Some(Esc), Some(Esc)]
        );
        assert_eq!(
            kinds("\x1b_G\x07"),
            [Some(Esc), Some(Str), Some(Str), Some(Str)]
        );
        assert_eq!(kinds("\x1b(B"), [Some(Esc), Some(Esc), Some(Esc)]);
    }
}
