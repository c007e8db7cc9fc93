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

use super::escapes::{Class, Scanner};
use aho_corasick::{AhoCorasick, MatchKind};
use std::borrow::Cow;
use std::sync::Arc;

/// Printed characters held beyond a secret's length at the end of a chunk: a backspace at
/// the start of the next chunk may take one back (a shell's echo at the screen's edge
/// writes a space and a backspace).
const SLACK: usize = 2;

/// Secret values, ready to be found; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Needles {
    finder: Option<Arc<AhoCorasick>>,
    /// The longest, in characters.
    longest: usize,
}

impl Needles {
    pub fn new<S: AsRef<str>>(values: &[S]) -> Needles {
        let values: Vec<&str> = values
            .iter()
            .map(AsRef::as_ref)
            .filter(|v| !v.is_empty())
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
                _ => {}
            }
        }
        let hold = self.needles.longest.saturating_sub(1) + SLACK;
        let keep_from = self.places.len().saturating_sub(hold);
        let cut = match self.places.get(keep_from) {
            Some(first_held) => first_held.start,
            None => self.raw.len(),
        };
        self.let_out(&finder, keep_from, cut)
    }

    /// The text held for a masker that takes over (with more secrets): it begins where a
    /// fresh scanner can read it.
    pub fn take_held(&mut self) -> String {
        self.shown.clear();
        self.places.clear();
        std::mem::take(&mut self.raw)
    }

    /// The held text, masked: the stream ended, or what came is whole (a screen drawn at
    /// once). The masker goes on from there.
    pub fn finish(&mut self) -> String {
        let Some(finder) = self.needles.finder.clone() else {
            return std::mem::take(&mut self.raw);
        };
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
    fn text_inside_sequences_is_not_printed_so_not_a_secret() {
        let needles = Needles::new(&["title"]);
        assert_eq!(
            needles.mask("\x1b]0;title\x07title", "*"),
            "\x1b]0;title\x07*"
        );
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
