//! The output stream as plain text: what `await_output` matches and what history shows.
//!
//! vt100's own scrollback costs about 1.6 µs and 6.4 KB per scrolled line, which would make
//! a `seq` flood slower than the PTY and ten sessions of 10,000 lines cost 185 MiB. So the
//! grid keeps no scrollback and the history lives here instead: one contiguous `String` of the
//! output with escape sequences removed, plus the offsets where lines start.
//!
//! Offsets are global (bytes of stripped text since the session began), so a cursor taken
//! before old lines were dropped still means the same place. `\r\n` becomes `\n`; a lone
//! `\r` (a progress bar rewriting its line) and backspaces stay in the text, so that every
//! state the program printed can be matched; [`render_line`] applies them for display.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::ops::Range;

/// A line longer than this is broken, so that output without newlines stays bounded.
pub const MAX_LINE_BYTES: usize = 256 * 1024;
/// Output after the last input is kept beyond the line limit up to this many bytes, so that a
/// wait registered just after the input (by a workflow step, or an agent's next tool call)
/// still sees the first lines of a flood.
pub const KEEP_AFTER_INPUT: u64 = 1 << 20;
/// Dead text at the front is dropped in one move once it is this large (and half the buffer).
const COMPACT_AT: usize = 64 * 1024;

/// The retained plain-text output of a session.
#[derive(Debug)]
pub struct Transcript {
    text: String,
    /// Global offset of `text[0]`.
    base: u64,
    /// Global offsets of the retained line starts; the first is the oldest retained line.
    line_starts: VecDeque<u64>,
    /// Global number of the first retained line.
    first_line: u64,
    max_lines: usize,
    max_bytes: usize,
    pending_cr: bool,
    /// Bytes of the current (last) line, kept so that a character costs no look-up.
    line_len: usize,
}

impl Transcript {
    pub fn new(max_lines: usize, max_bytes: usize) -> Self {
        let mut line_starts = VecDeque::new();
        line_starts.push_back(0);
        Transcript {
            text: String::new(),
            base: 0,
            line_starts,
            first_line: 0,
            max_lines: max_lines.max(1),
            max_bytes: max_bytes.max(MAX_LINE_BYTES),
            pending_cr: false,
            line_len: 0,
        }
    }

    /// Global offset just past the newest text.
    pub fn end(&self) -> u64 {
        self.base + self.text.len() as u64
    }

    /// Global offset of the oldest retained text.
    pub fn start(&self) -> u64 {
        self.line_starts.front().copied().unwrap_or(self.base)
    }

    /// Lines seen since the session began (the partial last line counts once it has text).
    pub fn total_lines(&self) -> u64 {
        self.first_line + self.line_starts.len() as u64 - u64::from(self.current_line_is_empty())
    }

    /// Retained lines (the partial last line counts once it has text).
    pub fn retained_lines(&self) -> usize {
        self.line_starts.len() - usize::from(self.current_line_is_empty())
    }

    fn current_line_is_empty(&self) -> bool {
        self.line_len == 0
    }

    /// The retained text (for regex searches; index it with [`Transcript::index`]).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Byte index into [`Transcript::text`] of a global offset, clamped to the retained text.
    pub fn index(&self, offset: u64) -> usize {
        let clamped = offset.clamp(self.base, self.end());
        // Offsets only ever point at char boundaries we produced; clamp keeps it in range.
        (clamped - self.base) as usize
    }

    /// Global offset of a byte index into [`Transcript::text`].
    pub fn offset(&self, index: usize) -> u64 {
        self.base + index as u64
    }

    /// The retained text from a global offset to the end.
    pub fn since(&self, offset: u64) -> &str {
        &self.text[self.index(offset.max(self.start()))..]
    }

    /// Global offset of the start of the line holding `offset`.
    pub fn line_start_of(&self, offset: u64) -> u64 {
        let pos = self.line_starts.partition_point(|&s| s <= offset);
        if pos == 0 {
            self.start()
        } else {
            self.line_starts[pos - 1]
        }
    }

    /// The last `n` lines, raw (the partial last line included when it has text).
    pub fn last_lines(&self, n: usize) -> impl Iterator<Item = &str> {
        let count = self.retained_lines();
        let skip = count.saturating_sub(n);
        (skip..count).map(move |i| self.line(i))
    }

    /// Numbers of the retained lines: each line's place in the output since the session
    /// began (0 = its first line), so a number keeps meaning the same line while old ones are
    /// dropped. The partial last line counts once it has text.
    pub fn line_numbers(&self) -> Range<u64> {
        self.first_line..self.first_line + self.retained_lines() as u64
    }

    /// The retained lines numbered within `numbers` (see [`Transcript::line_numbers`]), raw,
    /// in either direction; numbers no longer or not yet retained are left out.
    pub fn lines(&self, numbers: Range<u64>) -> impl DoubleEndedIterator<Item = (u64, &str)> {
        let kept = self.line_numbers();
        let from = numbers.start.clamp(kept.start, kept.end);
        let to = numbers.end.clamp(from, kept.end);
        (from..to).map(move |n| (n, self.line((n - self.first_line) as usize)))
    }

    /// Retained line `i` (0 = oldest), raw, without its newline.
    fn line(&self, i: usize) -> &str {
        let start = self.index(self.line_starts[i]);
        let end = match self.line_starts.get(i + 1) {
            Some(&next) => self.index(next) - 1,
            None => self.text.len(),
        };
        &self.text[start..end]
    }

    #[inline]
    fn push_char(&mut self, c: char) {
        if self.pending_cr {
            self.pending_cr = false;
            // A carriage return at the start of a line changes nothing.
            if self.line_len > 0 {
                self.text.push('\r');
                self.line_len += 1;
            }
        }
        self.text.push(c);
        self.line_len += c.len_utf8();
        if self.line_len >= MAX_LINE_BYTES {
            self.newline();
        }
    }

    fn newline(&mut self) {
        self.pending_cr = false;
        self.text.push('\n');
        self.line_starts.push_back(self.end());
        self.line_len = 0;
    }

    /// Drops the oldest lines beyond the line limit, except the output after `keep_from` (the
    /// last input; at most [`KEEP_AFTER_INPUT`] bytes of it), and beyond the byte limit in
    /// any case. Called after waiters have seen new text, so nothing is dropped unmatched.
    pub fn trim(&mut self, keep_from: u64) {
        let end = self.end();
        let keep_from = keep_from.max(end.saturating_sub(KEEP_AFTER_INPUT));
        let lines = self.line_starts.len();
        // Lines beyond the limit go, but not past the line holding `keep_from`...
        let by_lines = lines.saturating_sub(self.max_lines + 1).min(
            self.line_starts
                .partition_point(|&s| s <= keep_from)
                .saturating_sub(1),
        );
        // ...and any that make the text longer than the byte limit, the last line kept.
        let oldest_kept = end.saturating_sub(self.max_bytes as u64);
        let by_bytes = self
            .line_starts
            .partition_point(|&s| s < oldest_kept)
            .min(lines - 1);
        let drop = by_lines.max(by_bytes);
        self.line_starts.drain(..drop);
        self.first_line += drop as u64;
        let dead = (self.start() - self.base) as usize;
        if dead >= COMPACT_AT && dead * 2 >= self.text.len() {
            self.text.drain(..dead);
            self.base += dead as u64;
        }
    }

    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.text.capacity() + self.line_starts.capacity() * std::mem::size_of::<u64>()
    }
}

impl Transcript {
    /// Text the parser found in ground state: characters are appended, C0 and C1 controls
    /// executed (see decode.rs).
    pub fn push_text(&mut self, text: &str) {
        let bytes = text.as_bytes();
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b < 0x20 {
                self.push_plain(&text[start..i]);
                self.execute(b);
                i += 1;
                start = i;
            } else if b == 0xc2 && bytes.get(i + 1).is_some_and(|&n| n <= 0x9f) {
                // U+0080..=U+009F, C1 controls: executed, which here changes nothing.
                self.push_plain(&text[start..i]);
                i += 2;
                start = i;
            } else {
                i += 1;
            }
        }
        self.push_plain(&text[start..]);
    }

    /// Characters without controls, in one move per line.
    fn push_plain(&mut self, mut run: &str) {
        while !run.is_empty() {
            if self.pending_cr {
                self.pending_cr = false;
                // A carriage return at the start of a line changes nothing.
                if self.line_len > 0 {
                    self.text.push('\r');
                    self.line_len += 1;
                }
            }
            // The line breaks after the character that makes it MAX_LINE_BYTES long.
            let room = MAX_LINE_BYTES.saturating_sub(self.line_len).max(1);
            if run.len() < room {
                self.text.push_str(run);
                self.line_len += run.len();
                return;
            }
            let mut cut = room;
            while !run.is_char_boundary(cut) {
                cut += 1;
            }
            self.text.push_str(&run[..cut]);
            self.line_len += cut;
            self.newline();
            run = &run[cut..];
        }
    }

    /// A control character: line feeds end the line, a carriage return waits to see
    /// whether a line feed follows, tab and backspace are kept for display.
    pub fn execute(&mut self, byte: u8) {
        match byte {
            b'\n' | 0x0b | 0x0c => self.newline(),
            b'\r' => self.pending_cr = true,
            b'\t' => self.push_char('\t'),
            0x08 => self.push_char('\u{8}'),
            _ => {}
        }
    }
}

/// The reference the decoder (decode.rs) is tested against: `vte` handing over characters
/// and controls one at a time.
impl vte::Perform for Transcript {
    fn print(&mut self, c: char) {
        self.push_char(c);
    }

    fn execute(&mut self, byte: u8) {
        Transcript::execute(self, byte);
    }
}

/// A raw line as a person would see it: carriage returns and backspaces applied, tabs
/// expanded to 8 columns.
pub fn render_line(raw: &str) -> String {
    if !raw.contains(['\r', '\u{8}', '\t']) {
        return raw.to_string();
    }
    let mut cells: Vec<char> = Vec::with_capacity(raw.len());
    let mut col = 0usize;
    for c in raw.chars() {
        match c {
            '\r' => col = 0,
            '\u{8}' => col = col.saturating_sub(1),
            '\t' => {
                let next = (col / 8 + 1) * 8;
                while cells.len() < next {
                    cells.push(' ');
                }
                col = next;
            }
            c => {
                if col < cells.len() {
                    cells[col] = c;
                } else {
                    cells.push(c);
                }
                col += 1;
            }
        }
    }
    cells.into_iter().collect()
}

/// [`render_line`], borrowing the line when there is nothing to apply (most lines), so that
/// reading many lines allocates only for the few that need it.
pub fn displayed(raw: &str) -> Cow<'_, str> {
    if raw.contains(['\r', '\u{8}', '\t']) {
        Cow::Owned(render_line(raw))
    } else {
        Cow::Borrowed(raw)
    }
}

/// Renders raw text of several lines.
pub fn render_text(raw: &str) -> String {
    raw.split('\n')
        .map(render_line)
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::decode::Decoder;

    fn feed(t: &mut Transcript, d: &mut Decoder, bytes: &[u8]) {
        d.feed(t, bytes);
        t.trim(u64::MAX);
    }

    #[test]
    fn strips_sequences_and_joins_split_chunks() {
        let mut t = Transcript::new(100, 1 << 20);
        let mut d = Decoder::default();
        feed(&mut t, &mut d, b"\x1b[1;3");
        feed(&mut t, &mut d, b"1mRED\x1b[0m do");
        feed(&mut t, &mut d, b"ne\r");
        feed(&mut t, &mut d, b"\n\x1b]0;title\x07next");
        assert_eq!(t.text(), "RED done\nnext");
        assert_eq!(t.total_lines(), 2);
    }

    #[test]
    fn lone_carriage_returns_are_kept_and_rendered() {
        let mut t = Transcript::new(100, 1 << 20);
        let mut d = Decoder::default();
        feed(&mut t, &mut d, b"10%\r20%\r100%\r\n");
        assert_eq!(t.text(), "10%\r20%\r100%\n");
        assert_eq!(render_line("10%\r20%\r100%"), "100%");
        assert_eq!(render_line("abc\u{8}\u{8}X"), "aXc");
        assert_eq!(render_line("a\tb"), "a       b");
    }

    #[test]
    fn old_lines_are_dropped_and_offsets_stay_global() {
        let mut t = Transcript::new(3, 1 << 20);
        let mut d = Decoder::default();
        for i in 0..10 {
            feed(&mut t, &mut d, format!("line {i}\r\n").as_bytes());
        }
        let kept: Vec<&str> = t.last_lines(10).collect();
        assert_eq!(kept, ["line 7", "line 8", "line 9"]);
        assert_eq!(t.total_lines(), 10);
        assert_eq!(t.end(), 70);
        assert_eq!(t.since(t.end() - 7), "line 9\n");
        // An offset that was dropped clamps to the oldest retained text.
        assert_eq!(t.since(0), "line 7\nline 8\nline 9\n");
        assert_eq!(t.line_start_of(t.end() - 3), 63);
    }

    #[test]
    fn output_since_the_last_input_is_kept_up_to_the_byte_limit() {
        let mut t = Transcript::new(3, 300_000);
        let mut d = Decoder::default();
        d.feed(&mut t, b"before\n");
        let mark = t.end();
        for i in 0..10 {
            d.feed(&mut t, format!("line {i}\n").as_bytes());
            t.trim(mark);
        }
        assert_eq!(t.retained_lines(), 10);
        assert!(t.since(0).starts_with("line 0\n"));
        // The byte limit still holds.
        for _ in 0..100 {
            d.feed(&mut t, format!("{}\n", "z".repeat(10_000)).as_bytes());
            t.trim(mark);
        }
        assert!(t.end() - t.start() <= 300_000);
        // Beyond KEEP_AFTER_INPUT bytes after the input, the line limit applies again.
        let mut t = Transcript::new(3, 8 << 20);
        let mark = t.end();
        for _ in 0..300 {
            d.feed(&mut t, format!("{}\n", "k".repeat(9_999)).as_bytes());
            t.trim(mark);
        }
        assert_eq!(t.retained_lines(), (KEEP_AFTER_INPUT / 10_000) as usize + 1);
    }

    #[test]
    fn lines_keep_their_numbers_while_old_ones_are_dropped() {
        let mut t = Transcript::new(3, 1 << 20);
        let mut d = Decoder::default();
        for i in 0..10 {
            feed(&mut t, &mut d, format!("line {i}\r\n").as_bytes());
        }
        feed(&mut t, &mut d, b"part");
        // Three whole lines and the partial one.
        assert_eq!(t.line_numbers(), 7..11);
        let all: Vec<(u64, &str)> = t.lines(0..u64::MAX).collect();
        assert_eq!(
            all,
            [(7, "line 7"), (8, "line 8"), (9, "line 9"), (10, "part")]
        );
        let back: Vec<u64> = t.lines(7..9).rev().map(|(n, _)| n).collect();
        assert_eq!(back, [8, 7]);
        assert_eq!(t.lines(0..5).count(), 0);
        let (from, to) = (9, 3);
        assert_eq!(t.lines(from..to).count(), 0, "a reversed range");
        assert_eq!(displayed("plain"), Cow::Borrowed("plain"));
        assert_eq!(displayed("10%\r20%"), "20%");
    }

    #[test]
    fn compaction_keeps_the_retained_text_intact() {
        let mut t = Transcript::new(10, 1 << 20);
        let mut d = Decoder::default();
        let line = "x".repeat(1000);
        for _ in 0..1000 {
            feed(&mut t, &mut d, format!("{line}\n").as_bytes());
        }
        assert!(t.text().len() < 200_000, "dead text was not compacted");
        assert_eq!(t.last_lines(20).count(), 10);
        assert!(t.last_lines(20).all(|l| l == line));
    }

    #[test]
    fn endless_lines_are_broken() {
        let mut t = Transcript::new(100, 1 << 20);
        let mut d = Decoder::default();
        feed(&mut t, &mut d, &vec![b'y'; MAX_LINE_BYTES * 2 + 10]);
        assert_eq!(t.total_lines(), 3);
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        let mut t = Transcript::new(100, 1 << 20);
        let mut d = Decoder::default();
        feed(&mut t, &mut d, b"ok \xff\xfe end\n");
        assert!(t.text().starts_with("ok "));
        assert!(t.text().contains('\u{fffd}'));
        assert!(t.text().ends_with(" end\n"));
    }
}
