//! The visible screen: a vt100 grid, the replies to terminal queries, and snapshots.

use super::fastforward::FastForward;
use serde::Serialize;
use std::num::NonZeroU16;

/// Smallest grid flowdeck will make; vt100 panics on some smaller ones, and no program can
/// use them anyway.
pub const MIN_COLS: u16 = 2;
pub const MIN_ROWS: u16 = 2;
/// Largest grid flowdeck will make (a grid costs memory per cell).
pub const MAX_COLS: u16 = 1000;
pub const MAX_ROWS: u16 = 500;

/// A terminal size in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Size {
    pub cols: u16,
    pub rows: u16,
}

impl Size {
    /// The size clamped to what a grid supports. Returns the size and whether it changed.
    pub fn clamped(cols: u16, rows: u16) -> (Size, bool) {
        let size = Size {
            cols: cols.clamp(MIN_COLS, MAX_COLS),
            rows: rows.clamp(MIN_ROWS, MAX_ROWS),
        };
        (size, size.cols != cols || size.rows != rows)
    }

    fn nonzero(self) -> (NonZeroU16, NonZeroU16) {
        // Clamped sizes are never zero; MIN_* are the fallbacks the type system wants.
        let rows = NonZeroU16::new(self.rows).unwrap_or(NonZeroU16::MIN.saturating_add(1));
        let cols = NonZeroU16::new(self.cols).unwrap_or(NonZeroU16::MIN.saturating_add(1));
        (rows, cols)
    }
}

/// Collects what the program asked the terminal to answer while a chunk was parsed. A
/// terminal that never answers makes vim wait and htop guess, so the common queries get the
/// answers a VT220-class terminal gives.
#[derive(Debug, Default)]
pub struct Replies {
    pending: Vec<u8>,
    title: Vec<u8>,
}

impl vt100::Callbacks for Replies {
    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        _i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        let first = params.first().and_then(|p| p.first()).copied().unwrap_or(0);
        let (row, col) = screen.cursor_position();
        match (i1, c, first) {
            // Device status report: "OK".
            (None, 'n', 5) => self.pending.extend_from_slice(b"\x1b[0n"),
            // Cursor position report, 1-based.
            (None, 'n', 6) => {
                self.pending
                    .extend_from_slice(format!("\x1b[{};{}R", row + 1, col + 1).as_bytes());
            }
            (Some(b'?'), 'n', 6) => {
                self.pending
                    .extend_from_slice(format!("\x1b[?{};{}R", row + 1, col + 1).as_bytes());
            }
            // Primary device attributes: a VT220 with ANSI colour.
            (None, 'c', 0) => self.pending.extend_from_slice(b"\x1b[?62;22c"),
            // Secondary device attributes: VT220, firmware 1.
            (Some(b'>'), 'c', 0) => self.pending.extend_from_slice(b"\x1b[>1;10;0c"),
            // Text area size in characters.
            (None, 't', 18) => {
                let (rows, cols) = screen.size();
                self.pending
                    .extend_from_slice(format!("\x1b[8;{rows};{cols}t").as_bytes());
            }
            _ => {}
        }
    }

    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        // Foreground/background colour queries (vim asks to pick its palette): white on black.
        match params {
            [b"10", b"?"] => self
                .pending
                .extend_from_slice(b"\x1b]10;rgb:ffff/ffff/ffff\x1b\\"),
            [b"11", b"?"] => self
                .pending
                .extend_from_slice(b"\x1b]11;rgb:0000/0000/0000\x1b\\"),
            _ => {}
        }
    }

    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.title.clear();
        self.title.extend_from_slice(&title[..title.len().min(256)]);
    }
}

/// Plain lines that wait for the next batch are drawn at once beyond this many bytes.
const MAX_WAITING: usize = 64 << 10;

/// How many bytes at the end of `bytes` are the start of a UTF-8 character still missing
/// its last bytes (0 if none).
fn cut_character(bytes: &[u8]) -> usize {
    let tail = &bytes[bytes.len().saturating_sub(3)..];
    for (back, &b) in tail.iter().rev().enumerate() {
        let have = back + 1;
        let needs = match b {
            0x80..=0xbf => continue,
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => return 0,
        };
        return if have < needs { have } else { 0 };
    }
    0
}

/// The live grid of one session.
pub struct Screen {
    parser: vt100::Parser<Replies>,
    size: Size,
    skip: FastForward,
    /// Plain lines at the end of the last batch, not drawn yet: the next batch may scroll
    /// them away unseen. Drawn before anything reads the grid.
    waiting: Vec<u8>,
    /// The start of a UTF-8 character cut by the end of what was drawn, held back: vte,
    /// given a character in two pieces with an invalid byte soon after, drops the valid
    /// characters between. (A cut character shows nothing until it is whole anyway.)
    cut: Vec<u8>,
    /// Batches that skipped lines, for tests to know they tested something.
    #[cfg(test)]
    skipped: usize,
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Screen")
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl Screen {
    pub fn new(size: Size) -> Self {
        let (rows, cols) = size.nonzero();
        Screen {
            // No vt100 scrollback: history lives in the transcript (see transcript.rs).
            parser: vt100::Parser::new_with_callbacks(rows, cols, 0, Replies::default()),
            size,
            skip: FastForward::default(),
            waiting: Vec::new(),
            cut: Vec::new(),
            #[cfg(test)]
            skipped: 0,
        }
    }

    /// Parses output; returns the bytes the terminal must answer with. Lines that would
    /// scroll off unseen are not drawn, and the plain lines at the end wait for the next batch
    /// (fastforward.rs): reading the grid draws them first.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<u8> {
        // What waited (whole lines, already scanned) or a cut character comes first.
        let scanned = self.waiting.len();
        let mut held = if scanned > 0 {
            std::mem::take(&mut self.waiting)
        } else {
            std::mem::take(&mut self.cut)
        };
        let owned = !held.is_empty();
        if owned {
            held.extend_from_slice(bytes);
        }
        let (rest, wait) = {
            let data: &[u8] = if owned { &held } else { bytes };
            let plan = self.skip.plan(data, scanned, self.size.rows);
            self.parser.process(&data[plan.before.clone()]);
            let mut rest = plan.before.end;
            let (row, _) = self.parser.screen().cursor_position();
            if let Some(skip) = plan.skip.filter(|_| row + 1 == self.size.rows) {
                #[cfg(test)]
                {
                    self.skipped += 1;
                }
                for sgr in skip.pen {
                    self.parser.process(&data[sgr]);
                }
                self.parser.process(b"\r");
                self.parser.process(&data[skip.last_line.clone()]);
                rest = skip.last_line.end;
            }
            let wait = plan.defer && data.len() - rest <= MAX_WAITING;
            self.skip.keep_waiting(wait.then_some(rest));
            if !wait {
                self.draw_to_end(&data[rest..]);
            }
            (rest, wait)
        };
        match (wait, owned) {
            (true, true) => {
                held.drain(..rest);
                // A flood's batches made it large; a session at rest keeps little.
                if held.capacity() > 16 << 10 && held.len() * 8 < held.capacity() {
                    held.shrink_to(held.len().max(4096));
                }
                self.waiting = held;
            }
            (true, false) => self.waiting.extend_from_slice(&bytes[rest..]),
            (false, _) => {}
        }
        std::mem::take(&mut self.parser.callbacks_mut().pending)
    }

    /// Draws the end of the output so far, but for the start of a cut character.
    fn draw_to_end(&mut self, bytes: &[u8]) {
        let whole = bytes.len() - cut_character(bytes);
        self.parser.process(&bytes[..whole]);
        self.cut.extend_from_slice(&bytes[whole..]);
    }

    /// Draws the lines that wait for the next batch.
    fn draw_waiting(&mut self) {
        if !self.waiting.is_empty() {
            let waiting = std::mem::take(&mut self.waiting);
            self.draw_to_end(&waiting);
            // Keep the allocation for the next batch's lines.
            self.waiting = waiting;
            self.waiting.clear();
        }
    }

    /// Parses output drawing every byte, for comparing with `feed`.
    #[cfg(test)]
    fn feed_all(&mut self, bytes: &[u8]) -> Vec<u8> {
        self.skip.plan(bytes, 0, self.size.rows);
        self.skip.keep_waiting(None);
        self.parser.process(bytes);
        std::mem::take(&mut self.parser.callbacks_mut().pending)
    }

    pub fn size(&self) -> Size {
        self.size
    }

    pub fn resize(&mut self, size: Size) {
        self.draw_waiting();
        let (rows, cols) = size.nonzero();
        self.parser.set_size(rows, cols);
        self.size = size;
    }

    /// The grid, with everything drawn.
    pub fn vt(&mut self) -> &vt100::Screen {
        self.draw_waiting();
        self.parser.screen()
    }

    /// The visible text, one line per row, trailing blanks trimmed except on a row that
    /// wrapped: its blanks are text that goes on in the next row (a secret with a space
    /// in it is still the secret to the masker, term/mask.rs, which reads across rows).
    pub fn text(&mut self) -> String {
        self.draw_waiting();
        let screen = self.parser.screen();
        let mut lines: Vec<String> = screen.rows(0, self.size.cols).collect();
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
        }
        lines
            .iter()
            .enumerate()
            .map(|(row, line)| match u16::try_from(row) {
                Ok(row) if screen.row_wrapped(row) => line.as_str(),
                _ => line.trim_end(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Whether the program asked for application cursor keys (arrows send `ESC O A`).
    /// (Modes and the title change only through escape sequences, which never wait.)
    pub fn application_cursor(&self) -> bool {
        self.parser.screen().application_cursor()
    }

    pub fn bracketed_paste(&self) -> bool {
        self.parser.screen().bracketed_paste()
    }

    pub fn title(&self) -> String {
        String::from_utf8_lossy(&self.parser.callbacks().title).into_owned()
    }

    /// A styled copy of the grid, for front ends that draw it.
    pub fn snapshot(&mut self) -> ScreenSnapshot {
        self.draw_waiting();
        let screen = self.parser.screen();
        let (cursor_row, cursor_col) = screen.cursor_position();
        let mut cells =
            Vec::with_capacity(usize::from(self.size.rows) * usize::from(self.size.cols));
        for row in 0..self.size.rows {
            for col in 0..self.size.cols {
                cells.push(match screen.cell(row, col) {
                    Some(cell) => Cell::from_vt(cell),
                    None => Cell::default(),
                });
            }
        }
        ScreenSnapshot {
            cols: self.size.cols,
            rows: self.size.rows,
            cursor_row,
            cursor_col,
            cursor_visible: !screen.hide_cursor(),
            alternate_screen: screen.alternate_screen(),
            title: self.title(),
            cells,
        }
    }
}

/// A colour as the program set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Color {
    #[default]
    Default,
    Indexed(u8),
    Rgb(u8, u8, u8),
}

impl From<vt100::Color> for Color {
    fn from(c: vt100::Color) -> Self {
        match c {
            vt100::Color::Default => Color::Default,
            vt100::Color::Idx(i) => Color::Indexed(i),
            vt100::Color::Rgb(r, g, b) => Color::Rgb(r, g, b),
        }
    }
}

/// One character cell.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Cell {
    /// The grapheme in the cell; empty for a blank cell or the right half of a wide one.
    pub text: String,
    pub fg: Color,
    pub bg: Color,
    pub bold: bool,
    pub dim: bool,
    pub italic: bool,
    pub underline: bool,
    pub inverse: bool,
    pub wide: bool,
}

impl Cell {
    fn from_vt(cell: &vt100::Cell) -> Self {
        Cell {
            text: cell.contents().to_string(),
            fg: cell.fgcolor().into(),
            bg: cell.bgcolor().into(),
            bold: cell.bold(),
            dim: cell.dim(),
            italic: cell.italic(),
            underline: cell.underline(),
            inverse: cell.inverse(),
            wide: cell.is_wide(),
        }
    }
}

/// The screen with styles, row-major (`cells[row * cols + col]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScreenSnapshot {
    pub cols: u16,
    pub rows: u16,
    pub cursor_row: u16,
    pub cursor_col: u16,
    pub cursor_visible: bool,
    pub alternate_screen: bool,
    pub title: String,
    pub cells: Vec<Cell>,
}

impl ScreenSnapshot {
    pub fn cell(&self, row: u16, col: u16) -> Option<&Cell> {
        if row >= self.rows || col >= self.cols {
            return None;
        }
        self.cells
            .get(usize::from(row) * usize::from(self.cols) + usize::from(col))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_answered() {
        let mut s = Screen::new(Size { cols: 80, rows: 24 });
        assert_eq!(s.feed(b"ab\x1b[6n"), b"\x1b[1;3R");
        assert_eq!(s.feed(b"\x1b[c"), b"\x1b[?62;22c");
        assert_eq!(s.feed(b"\x1b[>c"), b"\x1b[>1;10;0c");
        assert_eq!(s.feed(b"\x1b[5n"), b"\x1b[0n");
        assert_eq!(s.feed(b"\x1b[18t"), b"\x1b[8;24;80t");
        assert_eq!(
            s.feed(b"\x1b]11;?\x07"),
            b"\x1b]11;rgb:0000/0000/0000\x1b\\"
        );
        assert!(s.feed(b"plain text").is_empty());
    }

    #[test]
    fn a_query_split_across_chunks_is_answered_once() {
        let mut s = Screen::new(Size { cols: 80, rows: 24 });
        assert!(s.feed(b"\x1b[").is_empty());
        assert_eq!(s.feed(b"6n"), b"\x1b[1;1R");
    }

    #[test]
    fn tiny_and_huge_sizes_are_clamped() {
        assert_eq!(
            Size::clamped(0, 0),
            (
                Size {
                    cols: MIN_COLS,
                    rows: MIN_ROWS
                },
                true
            )
        );
        assert_eq!(
            Size::clamped(1, 1).0,
            Size {
                cols: MIN_COLS,
                rows: MIN_ROWS
            }
        );
        assert_eq!(
            Size::clamped(u16::MAX, u16::MAX).0,
            Size {
                cols: MAX_COLS,
                rows: MAX_ROWS
            }
        );
        assert_eq!(
            Size::clamped(120, 30),
            (
                Size {
                    cols: 120,
                    rows: 30
                },
                false
            )
        );
    }

    fn pick<'a>(rng: &mut fastrand::Rng, items: &[&'a str]) -> &'a str {
        items[rng.usize(..items.len())]
    }

    /// Pieces of a line of text in [`stream`].
    const TEXT: &[&str] = &[
        "a",
        "bc",
        "def ",
        "1234567",
        " ",
        "\t",
        "\u{4e2d}",
        "e\u{301}",
        "\u{1f600}",
        "\u{e9}",
        "\x08",
        "\x07",
        "\u{ff}",
    ];
    /// Colours and attributes in [`stream`].
    const SGR: &[&str] = &[
        "\x1b[m",
        "\x1b[0m",
        "\x1b[1m",
        "\x1b[31m",
        "\x1b[1;32m",
        "\x1b[38;5;200m",
        "\x1b[48;2;1;2;3m",
        "\x1b[4:3m",
        "\x1b[0;7m",
        "\x1b[00m",
    ];
    /// Anything else a program may write, now and then, in [`stream`].
    const OTHER: &[&str] = &[
        "\x1b[H",
        "\x1b[5;10H",
        "\x1b[2J",
        "\x1b[K",
        "\x1b[3A",
        "\x1b[?1049h",
        "\x1b[?1049l",
        "\x1b]0;title\x07",
        "\x1b[6n",
        "\x1b[2;3r",
        "\x1b[r",
        "\x1bc",
        "\x1bM",
        "\x1b[3L",
        "\x1b[2S",
        "\x1b7",
        "\x1b8",
        "\x1b[4h",
        "\x1b[4l",
        "\x1b(0",
        "\x1b(B",
        "\x0e",
        "\x0f",
        "\x0b",
        "\x0c",
        "\x1b[5b",
        "\x1b[?7l",
        "\x1b[?7h",
        "\x1b[?6h",
        "\x1b[?6l",
        "\x1b[20h",
        "\x1b[20l",
        "\x1b[1;999r",
        "\x1bP1$r\x1b\\",
        "\x1b[3\n1m",
        "\x1b[>4;2m",
    ];

    /// Output as programs write it: mostly lines of text (wide, combining and invalid
    /// characters, tabs, lines longer than the screen, LF without CR), colours, and now and
    /// then anything else: cursor moves, erases, scroll regions, the alternate screen,
    /// titles, queries, resets.
    fn stream(rng: &mut fastrand::Rng) -> Vec<u8> {
        let mut out = Vec::new();
        let elements = 200 + rng.usize(..1500);
        for _ in 0..elements {
            match rng.usize(..100) {
                0..=2 => out.extend_from_slice(pick(rng, OTHER).as_bytes()),
                // The cursor a few rows above the bottom, where lines do not scroll yet.
                3 => out.extend_from_slice(pick(rng, &["\x1b[2A", "\x1b[3A", "\x1bM"]).as_bytes()),
                4..=10 => out.extend_from_slice(pick(rng, SGR).as_bytes()),
                11 => out.extend_from_slice(b"\xc3"),
                12 => out.extend_from_slice(b"\x85"),
                _ => text_line(rng, &mut out),
            }
        }
        out
    }

    /// A line of text in [`stream`]: now and then a long one, mostly ended by CR LF.
    fn text_line(rng: &mut fastrand::Rng, out: &mut Vec<u8>) {
        let words = if rng.usize(..20) == 0 {
            60
        } else {
            rng.usize(..12)
        };
        for _ in 0..words {
            out.extend_from_slice(pick(rng, TEXT).as_bytes());
        }
        out.extend_from_slice(match rng.usize(..20) {
            0..=14 => b"\r\n".as_slice(),
            15..=16 => b"\n",
            17 => b"\r",
            _ => b"",
        });
    }

    fn state(s: &mut Screen) -> (String, (u16, u16), Vec<bool>, String, bool) {
        let rows = s.size.rows;
        let title = s.title();
        let vt = s.vt();
        (
            vt.state_formatted(),
            vt.cursor_position(),
            (0..rows).map(|r| vt.row_wrapped(r)).collect(),
            title,
            vt.alternate_screen(),
        )
    }

    /// Skipping what scrolls away leaves the grid exactly as drawing everything does, after
    /// every batch, whatever the stream and however it is cut into batches.
    #[test]
    fn skipping_unseen_lines_changes_nothing_visible() {
        let seed = std::env::var("FLOWDECK_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x5eed_u64);
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut skipped = 0;
        for case in 0..100 {
            let size = Size {
                cols: [10, 40, 80, 120][rng.usize(..4)],
                rows: [3, 5, 24][rng.usize(..3)],
            };
            let mut fast = Screen::new(size);
            let mut exact = Screen::new(size);
            let bytes = stream(&mut rng);
            let (mut at, mut exact_at) = (0, 0);
            while at < bytes.len() {
                let most = [40, 4000, 16_000][rng.usize(..3)];
                let n = (1 + rng.usize(..most)).min(bytes.len() - at);
                let batch = &bytes[at..at + n];
                at += n;
                // The reference gets no character in two pieces (see `Screen::cut`).
                let safe = (exact_at..=at)
                    .rev()
                    .find(|&i| i == bytes.len() || !(0x80..=0xbf).contains(&bytes[i]))
                    .unwrap_or(exact_at);
                let replies = (fast.feed(batch), exact.feed_all(&bytes[exact_at..safe]));
                exact_at = safe;
                assert_eq!(replies.0, replies.1, "seed {seed} case {case} at {at}");
                // Looked at now and then, so that lines wait across batches in between.
                if rng.usize(..3) == 0 || at == bytes.len() {
                    assert_eq!(
                        state(&mut fast),
                        state(&mut exact),
                        "seed {seed} case {case} at {at}"
                    );
                }
            }
            skipped += fast.skipped;
        }
        assert!(
            skipped > 50,
            "the streams hardly exercised skipping: {skipped}"
        );
    }

    #[test]
    fn a_character_cut_at_the_end_is_found() {
        assert_eq!(cut_character(b"abc"), 0);
        assert_eq!(cut_character("a\u{e9}".as_bytes()), 0);
        assert_eq!(cut_character(b"a\xc3"), 1);
        assert_eq!(cut_character(b"a\xe4\xb8"), 2);
        assert_eq!(cut_character(b"\xf0\x9f\x98"), 3);
        assert_eq!(cut_character("\u{1f600}".as_bytes()), 0);
        // Not a character's start: nothing to wait for.
        assert_eq!(cut_character(b"\xff"), 0);
        assert_eq!(cut_character(b"\xa9"), 0);
    }

    /// Lines that start above the bottom row move down over old rows before they scroll:
    /// skipping them would leave old text in those rows, so the grid draws them all.
    #[test]
    fn lines_that_start_above_the_bottom_row_are_all_drawn() {
        let size = Size { cols: 20, rows: 5 };
        let mut bytes = b"XXXXXXXXXXXXXXXXXXXX".repeat(10);
        bytes.extend_from_slice(b"\x1b[H\r\n");
        for i in 0..500 {
            bytes.extend_from_slice(format!("p{i}\r\n").as_bytes());
        }
        for i in 0..5 {
            bytes.extend_from_slice(format!("r{i}\r\n").as_bytes());
        }
        let (mut fast, mut exact) = (Screen::new(size), Screen::new(size));
        fast.feed(&bytes);
        exact.feed_all(&bytes);
        assert_eq!(state(&mut fast), state(&mut exact));
        assert_eq!(fast.skipped, 0);
        // From the bottom row, the same lines skip.
        let from_bottom: Vec<u8> = bytes
            .windows(4)
            .position(|w| w == b"\x1b[H\r")
            .map(|at| [&bytes[..at], &bytes[at + 3..]].concat())
            .unwrap();
        let (mut fast, mut exact) = (Screen::new(size), Screen::new(size));
        fast.feed(&from_bottom);
        exact.feed_all(&from_bottom);
        assert_eq!(state(&mut fast), state(&mut exact));
        assert_eq!(fast.skipped, 1);
    }

    /// Sequences that have crashed emulators: huge parameters, cursor moves far off screen,
    /// scroll regions that make no sense, wide characters in the last column, resizes to the
    /// smallest grid in the middle of it all.
    #[test]
    fn hostile_sequences_do_not_panic_at_any_size() {
        let hostile: &[&[u8]] = &[
            b"\x1b[99999;99999H\x1b[99999@\x1b[99999P\x1b[99999X",
            b"\x1b[5;2r\x1b[99999L\x1b[99999M\x1b[99999S\x1b[99999T",
            b"\x1b[0;0r\x1b[65535;65535r\x1bM\x1bM\x1bD\x1bE",
            "\u{4e2d}\u{6587}\u{1f600}\u{0301}\x1b[1;2H\u{4e2d}\u{4e2d}\u{4e2d}".as_bytes(),
            b"\x1b[?1049h\x1b[?1049l\x1b[?47h\x1b[?1047h\x1b[2J\x1b[3J",
            b"\x1b[99999b\x1b[99999E\x1b[99999F\x1b[99999G\x1b[99999d",
            b"\x1bP1$r\x1b\\\x1b]52;c;aGVsbG8=\x07\x1b[>4;2m\x1b[38;2;999;999;999m",
            b"\xff\xfe\xfd\x00\x01\x02\x7f\x1b\x1b\x1b[",
        ];
        for &(cols, rows) in &[
            (0u16, 0u16),
            (1, 1),
            (2, 1),
            (1, 2),
            (2, 2),
            (3, 2),
            (80, 24),
        ] {
            let (size, _) = Size::clamped(cols, rows);
            let mut s = Screen::new(size);
            for seq in hostile {
                s.feed(seq);
                s.feed(b"text at the end of a line that wraps around\r\n");
                s.resize(Size::clamped(1, 1).0);
                s.feed(seq);
                s.resize(size);
            }
            let _ = s.text();
            let _ = s.snapshot();
        }
    }
}
