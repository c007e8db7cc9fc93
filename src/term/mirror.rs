//! A copy of a session's screen that can travel: every row's characters with their colours and
//! attributes, where the cursor is, and the modes a front end acts on (the alternate screen,
//! bracketed paste, the mouse reports a program asked for). A studio draws panes from mirrors,
//! whether the engine is in its own process or in the folder's server, so it never holds the
//! live screen while it draws; across a socket only the rows that changed are sent
//! ([`Mirror::changes_since`], [`Mirror::apply`]).
//!
//! A row is its text and runs of styles: each cell's character (a blank cell as a space, the
//! right half of a wide character as nothing) and `(cells, style)` pairs, so a row of plain
//! text costs little more than its characters.

use serde::{Deserialize, Serialize};
use unicode_width::UnicodeWidthChar;

/// One screen, as a front end draws it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mirror {
    pub cols: u16,
    pub rows: u16,
    pub cursor_row: u16,
    pub cursor_col: u16,
    pub cursor_visible: bool,
    /// A full-screen program holds the alternate screen.
    pub alternate: bool,
    /// The program asked for pasted text to be marked (bracketed paste).
    pub bracketed_paste: bool,
    /// Which mouse events the program asked the terminal to report.
    pub mouse: MouseMode,
    /// How it asked them to be encoded.
    pub mouse_encoding: MouseEncoding,
    pub lines: Vec<Row>,
}

/// One row of the screen.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    /// Each cell's character in order: a blank cell is a space, the right half of a wide
    /// character adds nothing, combining marks follow their base.
    pub text: String,
    /// `(cells, style)`: consecutive cells of one style ([`Style`] packed), covering the row.
    pub runs: Vec<(u16, u64)>,
    /// The terminal wrapped this row onto the next (a selection joins them).
    pub wrapped: bool,
}

/// A cell's look: colours and attributes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Style {
    pub fg: Colour,
    pub bg: Colour,
    pub bold: bool,
    pub dim: bool,
    pub italic: bool,
    pub underline: bool,
    pub inverse: bool,
}

/// A colour as the program set it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Colour {
    #[default]
    Default,
    Indexed(u8),
    Rgb(u8, u8, u8),
}

/// Mouse reporting a program asked for (vt100's modes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MouseMode {
    #[default]
    None,
    Press,
    PressRelease,
    ButtonMotion,
    AnyMotion,
}

/// The encoding of mouse reports a program asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MouseEncoding {
    #[default]
    Default,
    Utf8,
    Sgr,
}

/// One cell read from a mirror's row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell<'a> {
    pub col: u16,
    /// The character(s) of the cell; a space for a blank one.
    pub text: &'a str,
    pub style: Style,
    /// The character covers this cell and the next.
    pub wide: bool,
}

/// The rows of a mirror that changed, and everything else about it (small), to bring an
/// older copy up to date.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Changes {
    pub cols: u16,
    pub rows: u16,
    pub cursor_row: u16,
    pub cursor_col: u16,
    pub cursor_visible: bool,
    pub alternate: bool,
    pub bracketed_paste: bool,
    pub mouse: MouseMode,
    pub mouse_encoding: MouseEncoding,
    /// `(row, its new content)`.
    pub changed: Vec<(u16, Row)>,
}

impl Style {
    /// The style in one number: colours in 26 bits each (a kind and 24 bits), then attributes.
    pub fn pack(self) -> u64 {
        let colour = |c: Colour| -> u64 {
            match c {
                Colour::Default => 0,
                Colour::Indexed(i) => (1 << 24) | u64::from(i),
                Colour::Rgb(r, g, b) => {
                    (2 << 24) | (u64::from(r) << 16) | (u64::from(g) << 8) | u64::from(b)
                }
            }
        };
        let flags = [
            self.bold,
            self.dim,
            self.italic,
            self.underline,
            self.inverse,
        ]
        .iter()
        .enumerate()
        .fold(0u64, |acc, (i, on)| acc | (u64::from(*on) << i));
        colour(self.fg) | (colour(self.bg) << 26) | (flags << 52)
    }

    pub fn unpack(packed: u64) -> Style {
        let colour = |bits: u64| -> Colour {
            let value = bits & 0xff_ffff;
            match bits >> 24 & 0b11 {
                1 => Colour::Indexed((value & 0xff) as u8),
                2 => Colour::Rgb((value >> 16) as u8, (value >> 8) as u8, value as u8),
                _ => Colour::Default,
            }
        };
        let flag = |i: u32| packed >> (52 + i) & 1 == 1;
        Style {
            fg: colour(packed & 0x3ff_ffff),
            bg: colour(packed >> 26 & 0x3ff_ffff),
            bold: flag(0),
            dim: flag(1),
            italic: flag(2),
            underline: flag(3),
            inverse: flag(4),
        }
    }

    fn of(cell: &vt100::Cell) -> Style {
        Style {
            fg: cell.fgcolor().into(),
            bg: cell.bgcolor().into(),
            bold: cell.bold(),
            dim: cell.dim(),
            italic: cell.italic(),
            underline: cell.underline(),
            inverse: cell.inverse(),
        }
    }
}

impl From<vt100::Color> for Colour {
    fn from(c: vt100::Color) -> Self {
        match c {
            vt100::Color::Default => Colour::Default,
            vt100::Color::Idx(i) => Colour::Indexed(i),
            vt100::Color::Rgb(r, g, b) => Colour::Rgb(r, g, b),
        }
    }
}

impl Mirror {
    /// A copy of `screen` as it is now.
    pub fn of(screen: &vt100::Screen) -> Mirror {
        let (rows, cols) = screen.size();
        let (rows, cols) = (rows.get(), cols.get());
        let (cursor_row, cursor_col) = screen.cursor_position();
        let lines = (0..rows).map(|r| Row::of(screen, r, cols)).collect();
        Mirror {
            cols,
            rows,
            cursor_row,
            cursor_col,
            cursor_visible: !screen.hide_cursor(),
            alternate: screen.alternate_screen(),
            bracketed_paste: screen.bracketed_paste(),
            mouse: match screen.mouse_protocol_mode() {
                vt100::MouseProtocolMode::None => MouseMode::None,
                vt100::MouseProtocolMode::Press => MouseMode::Press,
                vt100::MouseProtocolMode::PressRelease => MouseMode::PressRelease,
                vt100::MouseProtocolMode::ButtonMotion => MouseMode::ButtonMotion,
                vt100::MouseProtocolMode::AnyMotion => MouseMode::AnyMotion,
            },
            mouse_encoding: match screen.mouse_protocol_encoding() {
                vt100::MouseProtocolEncoding::Default => MouseEncoding::Default,
                vt100::MouseProtocolEncoding::Utf8 => MouseEncoding::Utf8,
                vt100::MouseProtocolEncoding::Sgr => MouseEncoding::Sgr,
            },
            lines,
        }
    }

    /// What brings `older` (`None`: nothing yet) to this mirror: the rows that differ (all of
    /// them after a resize) and the rest.
    pub fn changes_since(&self, older: Option<&Mirror>) -> Changes {
        let same_size = older.is_some_and(|o| o.cols == self.cols && o.rows == self.rows);
        let changed = self
            .lines
            .iter()
            .enumerate()
            .filter(|(i, row)| !same_size || older.and_then(|o| o.lines.get(*i)) != Some(*row))
            .map(|(i, row)| (u16::try_from(i).unwrap_or(u16::MAX), row.clone()))
            .collect();
        Changes {
            cols: self.cols,
            rows: self.rows,
            cursor_row: self.cursor_row,
            cursor_col: self.cursor_col,
            cursor_visible: self.cursor_visible,
            alternate: self.alternate,
            bracketed_paste: self.bracketed_paste,
            mouse: self.mouse,
            mouse_encoding: self.mouse_encoding,
            changed,
        }
    }

    /// Brings this copy up to date with `changes`.
    pub fn apply(&mut self, changes: Changes) {
        if changes.cols != self.cols || changes.rows != self.rows {
            self.lines = vec![Row::default(); usize::from(changes.rows)];
        }
        self.cols = changes.cols;
        self.rows = changes.rows;
        self.cursor_row = changes.cursor_row;
        self.cursor_col = changes.cursor_col;
        self.cursor_visible = changes.cursor_visible;
        self.alternate = changes.alternate;
        self.bracketed_paste = changes.bracketed_paste;
        self.mouse = changes.mouse;
        self.mouse_encoding = changes.mouse_encoding;
        for (i, row) in changes.changed {
            if let Some(line) = self.lines.get_mut(usize::from(i)) {
                *line = row;
            }
        }
    }

    /// The cells of row `row` (none past the last row).
    pub fn cells(&self, row: u16) -> impl Iterator<Item = Cell<'_>> {
        self.lines
            .get(usize::from(row))
            .into_iter()
            .flat_map(Row::cells)
    }

    /// Row `row` as text, trailing blanks left out (selections and copies read it).
    pub fn row_text(&self, row: u64) -> String {
        usize::try_from(row)
            .ok()
            .and_then(|r| self.lines.get(r))
            .map(|r| r.text.trim_end_matches(' ').to_string())
            .unwrap_or_default()
    }

    /// Whether the terminal wrapped row `row` onto the next.
    pub fn row_wrapped(&self, row: u64) -> bool {
        usize::try_from(row)
            .ok()
            .and_then(|r| self.lines.get(r))
            .is_some_and(|r| r.wrapped)
    }
}

impl Row {
    fn of(screen: &vt100::Screen, row: u16, cols: u16) -> Row {
        let mut text = String::with_capacity(usize::from(cols));
        let mut runs: Vec<(u16, u64)> = Vec::new();
        for col in 0..cols {
            let Some(cell) = screen.cell(row, col) else {
                continue;
            };
            if cell.is_wide_continuation() {
                // Covered by the wide character before it: its style run counts it.
                if let Some(last) = runs.last_mut() {
                    last.0 += 1;
                }
                continue;
            }
            let contents = cell.contents();
            if contents.is_empty() {
                text.push(' ');
            } else {
                text.push_str(contents);
            }
            let style = Style::of(cell).pack();
            match runs.last_mut() {
                Some(last) if last.1 == style => last.0 += 1,
                _ => runs.push((1, style)),
            }
        }
        Row {
            text,
            runs,
            wrapped: screen.row_wrapped(row),
        }
    }

    /// The row's cells, from its text and runs.
    pub fn cells(&self) -> impl Iterator<Item = Cell<'_>> {
        let mut styles = self
            .runs
            .iter()
            .flat_map(|(n, style)| std::iter::repeat_n(*style, usize::from(*n)));
        let mut chars = self.text.char_indices().peekable();
        let mut col: u16 = 0;
        std::iter::from_fn(move || {
            let (start, first) = chars.next()?;
            let mut end = start + first.len_utf8();
            // Combining marks and other zero-width characters belong to the cell before.
            while let Some(&(at, next)) = chars.peek() {
                if next.width() != Some(0) || next == ' ' {
                    break;
                }
                end = at + next.len_utf8();
                chars.next();
            }
            let wide = first.width() == Some(2);
            let style = Style::unpack(styles.next().unwrap_or(0));
            if wide {
                // The right half shares the style of the left.
                styles.next();
            }
            let cell = Cell {
                col,
                text: &self.text[start..end],
                style,
                wide,
            };
            col = col.saturating_add(if wide { 2 } else { 1 });
            Some(cell)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(n: u16) -> std::num::NonZeroU16 {
        std::num::NonZeroU16::new(n).expect("not zero")
    }

    fn screen(bytes: &[u8]) -> vt100::Parser {
        let mut parser = vt100::Parser::new(size(6), size(20), 0);
        parser.process(bytes);
        parser
    }

    #[test]
    fn a_mirror_reads_back_every_cell_its_style_and_the_modes() {
        let parser = screen(
            "plain \x1b[1;31mred\x1b[0m 世界 e\u{301}\r\n\x1b[38;2;1;2;3;48;5;200mrgb\x1b[0m\x1b[?2004h\x1b[?1000h\x1b[?1006h"
                .as_bytes(),
        );
        let vt = parser.screen();
        let mirror = Mirror::of(vt);
        assert_eq!((mirror.cols, mirror.rows), (20, 6));
        assert!(mirror.bracketed_paste);
        assert_eq!(mirror.mouse, MouseMode::PressRelease);
        assert_eq!(mirror.mouse_encoding, MouseEncoding::Sgr);
        for row in 0..6 {
            let cells: Vec<Cell> = mirror.cells(row).collect();
            let mut col = 0;
            while col < 20 {
                let cell = vt.cell(row, col).expect("a cell");
                let mine = cells
                    .iter()
                    .find(|c| c.col == col)
                    .unwrap_or_else(|| panic!("no cell at {row},{col}"));
                let theirs = if cell.contents().is_empty() {
                    " "
                } else {
                    cell.contents()
                };
                assert_eq!(mine.text, theirs, "{row},{col}");
                assert_eq!(mine.style, Style::of(cell), "{row},{col}");
                assert_eq!(mine.wide, cell.is_wide(), "{row},{col}");
                col += if cell.is_wide() { 2 } else { 1 };
            }
        }
        assert_eq!(mirror.row_text(0), "plain red 世界 e\u{301}");
        assert_eq!(mirror.row_text(1), "rgb");
    }

    #[test]
    fn changes_bring_an_older_copy_up_to_date_with_only_the_rows_that_differ() {
        let mut parser = screen(b"one\r\ntwo\r\nthree");
        let first = Mirror::of(parser.screen());
        let mut copy = Mirror::default();
        let all = first.changes_since(None);
        assert_eq!(all.changed.len(), 6);
        copy.apply(all);
        assert_eq!(copy, first);
        parser.process(b"\x1b[2;1HTWO\x1b[4;1H");
        let second = Mirror::of(parser.screen());
        let changes = second.changes_since(Some(&first));
        assert_eq!(
            changes.changed.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            [1]
        );
        let text = serde_json::to_string(&changes).expect("serializes");
        copy.apply(serde_json::from_str(&text).expect("reads back"));
        assert_eq!(copy, second);
        parser.screen_mut().set_size(size(3), size(10));
        let smaller = Mirror::of(parser.screen());
        copy.apply(smaller.changes_since(Some(&second)));
        assert_eq!(copy, smaller, "a resize sends every row");
    }

    #[test]
    fn styles_pack_into_one_number_and_back() {
        let styles = [
            Style::default(),
            Style {
                fg: Colour::Rgb(255, 0, 7),
                bg: Colour::Indexed(200),
                bold: true,
                inverse: true,
                ..Style::default()
            },
            Style {
                fg: Colour::Indexed(0),
                bg: Colour::Rgb(0, 0, 0),
                dim: true,
                italic: true,
                underline: true,
                ..Style::default()
            },
        ];
        for style in styles {
            assert_eq!(Style::unpack(style.pack()), style);
        }
    }
}
