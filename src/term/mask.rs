//! Secrets masked on what the terminal shows: the one masker every sink uses (the run's
//! journal and results, its recording, drafts), so that none of them lets through what
//! another catches.
//!
//! A secret is looked for in the *printed* characters of a text, read as the decoder reads
//! them (escapes.rs): escape sequences between its letters (a colour a character, a line
//! editor's redraw), control characters (the line feed between two rows of a screen that
//! wrapped it, a carriage return) and a character printed then erased by a backspace (a
//! shell's echo at the screen's edge) do not hide it, nor does the end of a chunk. What it
//! covered is replaced by the mask, followed by the sequences and controls that were
//! between its letters, so that the screen is drawn as before around it.

use super::escapes::{Class, Kind, Scanner};
use aho_corasick::{AhoCorasick, MatchKind};
use std::borrow::Cow;
use std::sync::Arc;

/// Printed characters held beyond a secret's length at the end of a chunk: backspaces in the
/// next chunks may take that many back (a shell's echo at the screen's edge writes a space
/// and a backspace; a person types a secret, erases some and goes on, a key an event).
const SLACK: usize = 32;
/// The longest text of an OSC, DCS or APC string held to be masked whole (a window title set
/// to the command line holds what was typed): past it, the string is masked as far as it
/// came and let out.
const STRING_HELD: usize = 64 << 10;

/// Secret values, ready to be found; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Needles {
    finder: Option<Arc<AhoCorasick>>,
    /// The longest, in characters.
    longest: usize,
}

impl Needles {
    pub fn new<S: AsRef<str>>(values: &[S]) -> Needles {
        // Looked for in printed characters, which holds no control: a value with a tab or a
        // line break is looked for without them.
        let values: Vec<String> = values
            .iter()
            .map(|v| v.as_ref().chars().filter(|c| !c.is_control()).collect())
            .filter(|v: &String| !v.is_empty())
            .collect();
        if values.is_empty() {
            return Needles::default();
        }
        let longest = values.iter().map(|v| v.chars().count()).max().unwrap_or(0);
        // Leftmost-longest: a secret containing another is masked whole.
        let finder = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&values)
            .ok()
            .map(Arc::new);
        Needles { finder, longest }
    }

    pub fn is_empty(&self) -> bool {
        self.finder.is_none()
    }

    /// The text with every secret it shows masked.
    pub fn mask<'a>(&self, text: &'a str, mask: &str) -> Cow<'a, str> {
        let Some(finder) = &self.finder else {
            return Cow::Borrowed(text);
        };
        // Nothing between letters: what is printed is the text itself.
        if !text.contains(|c: char| c.is_ascii_control()) {
            return match finder.is_match(text) {
                true => Cow::Owned(finder.replace_all(text, &vec![mask; finder.patterns_len()])),
                false => Cow::Borrowed(text),
            };
        }
        let mut masker = Masker::new(self.clone(), mask);
        let mut out = masker.push(text);
        out.push_str(&masker.finish());
        if out == text {
            Cow::Borrowed(text)
        } else {
            Cow::Owned(out)
        }
    }
}

/// One printed character still held: where it is in the held text.
#[derive(Debug, Clone, Copy)]
struct Shown {
    /// Its byte offset in [`Masker::shown`].
    at: usize,
    /// Its bytes in [`Masker::raw`].
    start: usize,
    end: usize,
}

/// Masks a stream of text, however it is cut: the end of each chunk that could still become
/// part of a secret is held until the next chunk says what it is.
#[derive(Debug)]
pub struct Masker {
    needles: Needles,
    mask: String,
    scanner: Scanner,
    /// Text not let out yet. It begins with a printed character (or is empty), so a new
    /// masker can take it over from a fresh scanner.
    raw: String,
    /// Its printed characters, as the screen would have them (backspaced ones taken back).
    shown: String,
    places: Vec<Shown>,
    /// Where in `raw` the sequence being read began (its ESC).
    sequence_at: usize,
    /// An OSC, DCS, SOS, PM or APC string being read: where its ESC and its text begin in
    /// `raw`. Its text is masked as a whole once it ends, and held until then.
    string: Option<(usize, usize)>,
}

impl Masker {
    pub fn new(needles: Needles, mask: &str) -> Masker {
        Masker {
            needles,
            mask: mask.to_string(),
            scanner: Scanner::default(),
            raw: String::new(),
            shown: String::new(),
            places: Vec::new(),
            sequence_at: 0,
            string: None,
        }
    }

    /// The text that can be let out now, masked.
    pub fn push(&mut self, text: &str) -> String {
        let Some(finder) = self.needles.finder.clone() else {
            return text.to_string();
        };
        for c in text.chars() {
            let start = self.raw.len();
            self.raw.push(c);
            match self.scanner.next(c) {
                Class::Printed => {
                    self.places.push(Shown {
                        at: self.shown.len(),
                        start,
                        end: self.raw.len(),
                    });
                    self.shown.push(c);
                }
                Class::Control if c == '\x08' => {
                    if let Some(erased) = self.places.pop() {
                        self.shown.truncate(erased.at);
                    }
                }
                Class::Sequence { starts: true, .. } => {
                    self.end_string(&finder, start);
                    self.sequence_at = start;
                }
                Class::Sequence {
                    kind: Kind::Osc | Kind::Dcs | Kind::Str,
                    ..
                } if self.string.is_none() => {
                    self.string = Some((self.sequence_at, self.raw.len()));
                }
                _ => {}
            }
            if self.scanner.in_text() {
                self.end_string(&finder, start);
            } else if let Some((_, text)) = self.string
                && self.raw.len() - text > STRING_HELD
            {
                self.end_string(&finder, self.raw.len());
            }
        }
        let hold = self.needles.longest.saturating_sub(1) + SLACK;
        let keep_from = self.places.len().saturating_sub(hold);
        let mut cut = match self.places.get(keep_from) {
            Some(first_held) => first_held.start,
            None => self.raw.len(),
        };
        // A string not ended yet is held from its ESC, so that a new masker can take over.
        if let Some((esc, _)) = self.string {
            cut = cut.min(esc);
        }
        let keep_from = self.places.partition_point(|p| p.start < cut);
        self.let_out(&finder, keep_from, cut)
    }

    /// The string being read ended before byte `end` of `raw` (its terminator, or where it
    /// is given up): its text is masked where it stands. Nothing printed follows a string
    /// still being read, so no held place moves.
    fn end_string(&mut self, finder: &AhoCorasick, end: usize) {
        let Some((_, text)) = self.string.take() else {
            return;
        };
        let end = end.max(text);
        if finder.is_match(&self.raw[text..end]) {
            let masked = finder.replace_all(
                &self.raw[text..end],
                &vec![self.mask.as_str(); finder.patterns_len()],
            );
            self.raw.replace_range(text..end, &masked);
        }
    }

    /// The text held for a masker that takes over (with more secrets): it begins where a
    /// fresh scanner can read it.
    pub fn take_held(&mut self) -> String {
        self.shown.clear();
        self.places.clear();
        self.string = None;
        std::mem::take(&mut self.raw)
    }

    /// The held text, masked: the stream ended, or what came is whole (a screen drawn at
    /// once). The masker goes on from there.
    pub fn finish(&mut self) -> String {
        let Some(finder) = self.needles.finder.clone() else {
            return std::mem::take(&mut self.raw);
        };
        self.end_string(&finder, self.raw.len());
        let all = self.places.len();
        let end = self.raw.len();
        self.let_out(&finder, all, end)
    }

    /// Lets out the held text up to byte `cut` (the start of printed character `kept`, or
    /// the end), masking every secret that begins before it; one that begins before and
    /// ends after it is let out whole (it is whole: `cut` leaves a secret's length held).
    fn let_out(&mut self, finder: &AhoCorasick, kept: usize, cut: usize) -> String {
        let shown_cut = self.places.get(kept).map_or(self.shown.len(), |p| p.at);
        let mut out = String::with_capacity(cut);
        let mut from = 0;
        for m in finder.find_iter(&self.shown) {
            if m.start() >= shown_cut {
                break;
            }
            let first = self.place_at(m.start());
            let last = self.place_at(m.end() - 1);
            let (start, end) = (self.places[first].start, self.places[last].end);
            out.push_str(&self.raw[from..start]);
            out.push_str(&self.mask);
            out.push_str(&between(&self.raw[start..end]));
            from = end;
        }
        let cut = cut.max(from);
        out.push_str(&self.raw[from..cut]);
        let kept = self.places.partition_point(|p| p.start < cut);
        let shown_cut = self.places.get(kept).map_or(self.shown.len(), |p| p.at);
        self.raw.drain(..cut);
        self.places.drain(..kept);
        self.shown.drain(..shown_cut);
        for place in &mut self.places {
            place.at -= shown_cut;
            place.start -= cut;
            place.end -= cut;
        }
        out
    }

    /// The held printed character at byte `at` of [`Masker::shown`].
    fn place_at(&self, at: usize) -> usize {
        self.places
            .partition_point(|p| p.at <= at)
            .saturating_sub(1)
    }
}

/// What of a secret's text is not its letters: the sequences and controls between them, so
/// that colours, modes and lines stay as they were. Characters printed and backspaced within
/// it go, with their backspaces.
fn between(secret: &str) -> String {
    // A secret begins with a printed character: the scanner starts between sequences.
    let mut scanner = Scanner::default();
    secret
        .chars()
        .filter(|&c| match scanner.next(c) {
            Class::Printed => false,
            Class::Control => c != '\x08',
            Class::Sequence { .. } => true,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked_in_pieces(secrets: &[&str], text: &str, cut: usize) -> String {
        let mut masker = Masker::new(Needles::new(secrets), "***");
        let mut out = String::new();
        for piece in crate::term::escapes::pieces(text, cut) {
            out.push_str(&masker.push(piece));
        }
        out.push_str(&masker.finish());
        out
    }

    #[test]
    fn a_secret_is_masked_wherever_the_stream_is_cut() {
        let text = "pw: hunter2 and höllo hunter22 ✓ hunter2";
        for cut in 1..=text.len() {
            assert_eq!(
                masked_in_pieces(&["hunter2", "hunter22"], text, cut),
                "pw: *** and höllo *** ✓ ***",
                "cut every {cut} bytes"
            );
        }
    }

    #[test]
    fn sequences_controls_and_backspaces_between_letters_do_not_hide_a_secret() {
        let cases = [
            // A colour a character.
            ("Z\x1b[0mq\x1b[0m7!", "***\x1b[0m\x1b[0m!"),
            // Two rows of a screen that wrapped it.
            ("> Hunter2Sho\nrt-Pw9 $", "> ***\n $"),
            // A shell's echo at the screen's edge: a space, taken back.
            ("Hunter2Sho \x08rt-Pw9", "***"),
            // A cursor move and a title in the middle.
            (
                "Hunter\x1b[1D\x1b[1C2Sho\x1b]0;x\x07rt-Pw9.",
                "***\x1b[1D\x1b[1C\x1b]0;x\x07.",
            ),
        ];
        for (text, want) in cases {
            for cut in 1..=text.len() {
                assert_eq!(
                    masked_in_pieces(&["Hunter2Short-Pw9", "Zq7"], text, cut),
                    want,
                    "{text:?} cut every {cut} bytes"
                );
            }
            assert_eq!(
                Needles::new(&["Hunter2Short-Pw9", "Zq7"]).mask(text, "***"),
                want
            );
        }
    }

    #[test]
    fn a_secret_in_a_title_or_a_link_is_masked_in_it_however_the_stream_is_cut() {
        // A shell that sets the window title to the command line; a link with a password.
        let text = "a\x1b]0;export TOKEN=s3cr3t-v4l\x07b \x1b]8;;https://u:s3cr3t-v4l@h/\x1b\\l\x1b]8;;\x1b\\ c";
        let want = "a\x1b]0;export TOKEN=***\x07b \x1b]8;;https://u:***@h/\x1b\\l\x1b]8;;\x1b\\ c";
        for cut in 1..=text.len() {
            assert_eq!(
                masked_in_pieces(&["s3cr3t-v4l"], text, cut),
                want,
                "cut every {cut}"
            );
        }
        assert_eq!(Needles::new(&["s3cr3t-v4l"]).mask(text, "***"), want);
    }

    #[test]
    fn a_secret_with_a_control_in_it_is_masked_as_shown() {
        let needles = Needles::new(&["tab\tsecret-9f", "line1\nline2"]);
        assert_eq!(needles.mask("x tab\tsecret-9f y", "*"), "x *\t y");
        assert_eq!(needles.mask("line1\r\nline2.", "*"), "*\r\n.");
    }

    #[test]
    fn a_secret_typed_erased_and_typed_again_a_key_at_a_time_is_masked() {
        // A person's keys, each its own event: the end of the secret erased and typed again.
        let keys = [
            "a",
            "b",
            "c",
            "d",
            "e",
            "X",
            "Y",
            "Z",
            "\x08 \x08",
            "\x08 \x08",
            "\x08 \x08",
            "f",
            "\r\n",
        ];
        let mut masker = Masker::new(Needles::new(&["abcdef"]), "***");
        let mut out = String::new();
        for key in keys {
            out.push_str(&masker.push(key));
        }
        out.push_str(&masker.finish());
        assert!(!printed(&out).contains("abcdef"), "{out:?}");
    }

    /// What a terminal prints of `text`.
    fn printed(text: &str) -> String {
        let mut scanner = Scanner::default();
        let mut shown: Vec<char> = Vec::new();
        for c in text.chars() {
            match scanner.next(c) {
                Class::Printed => shown.push(c),
                Class::Control if c == '\x08' => {
                    shown.pop();
                }
                _ => {}
            }
        }
        shown.into_iter().collect()
    }

    #[test]
    fn without_secrets_text_passes_as_it_comes() {
        let mut masker = Masker::new(Needles::default(), "***");
        assert_eq!(masker.push("abc\x1b[1m"), "abc\x1b[1m");
        assert_eq!(masker.finish(), "");
        assert!(matches!(
            Needles::new(&["x"]).mask("abc", "*"),
            Cow::Borrowed("abc")
        ));
    }

    /// Random screens of output: a secret with colour codes, cursor moves, line feeds and
    /// erased spaces between its letters, cut into random chunks, never comes out whole, and
    /// everything else comes out as it went in.
    #[test]
    fn no_cut_and_no_sequence_lets_a_secret_through() {
        let secret = "s3cr3t-Válue";
        let mut rng = fastrand::Rng::with_seed(0x5ec);
        const NOISE: &[&str] = &[
            "\x1b[0m",
            "\x1b[38;5;200m",
            "\x1b[1D\x1b[1C",
            "\r\n",
            " \x08",
            "\x1b]8;;x\x07",
            "",
        ];
        for case in 0..2000 {
            let mut text = String::from("$ echo ");
            for c in secret.chars() {
                text.push(c);
                text.push_str(NOISE[rng.usize(..NOISE.len())]);
            }
            text.push_str(" done\r\n");
            let cut = 1 + rng.usize(..12);
            let out = masked_in_pieces(&[secret], &text, cut);
            assert!(
                out.starts_with("$ echo ***"),
                "case {case}: {text:?} -> {out:?}"
            );
            assert!(out.ends_with(" done\r\n"), "case {case}: {out:?}");
            assert!(!out.contains('V'), "case {case}: {out:?}");
        }
    }
}
