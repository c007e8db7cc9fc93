//! Selected text in a pane: where a selection reaches (a double click takes whole words, a
//! triple click whole lines) and the text it covers. Pure functions over the lines' text, so
//! drawing (which highlights it) and copying (which reads it) agree, for the live screen and
//! the history alike. Columns are cells: a wide character covers two.

use unicode_width::UnicodeWidthChar;

/// A place in a pane's content: a row of the live screen, or a line of the history (its
/// number, 1 = the session's first line), and a column in cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Point {
    pub line: u64,
    pub col: u16,
}

/// What a selection's ends stand on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// The live screen: `Point::line` is a screen row (0 = top).
    Screen,
    /// The history view: `Point::line` is a history line number.
    History,
}

/// How far a selection reaches from where it was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Char,
    /// A double click: whole words at both ends.
    Word,
    /// A triple click: whole lines.
    Line,
}

/// Text selected inside one pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub session_id: String,
    pub surface: Surface,
    pub anchor: Point,
    pub head: Point,
    pub unit: Unit,
    /// The mouse button is still down.
    pub dragging: bool,
}

impl Selection {
    /// The two ends, first one first.
    pub fn ordered(&self) -> (Point, Point) {
        if self.anchor <= self.head {
            (self.anchor, self.head)
        } else {
            (self.head, self.anchor)
        }
    }
}

/// A left click, when and where, to count double and triple clicks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Click {
    pub at_ms: u64,
    pub x: u16,
    pub y: u16,
    pub count: u8,
}

/// A selection's reach: its first and last cell, both included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub start: Point,
    pub end: Point,
}

/// Characters a double click keeps together: words, and the paths, URLs and options
/// people copy from a terminal.
fn in_word(c: char) -> bool {
    c.is_alphanumeric() || "_-./~:@%+=?&#".contains(c)
}

/// Each character of `text` with the cell it starts at and its width in cells.
fn cells(text: &str) -> impl Iterator<Item = (char, u16, u16)> + '_ {
    text.chars().scan(0u16, |at, c| {
        let width = c.width().unwrap_or(0) as u16;
        let start = *at;
        *at = at.saturating_add(width);
        Some((c, start, width))
    })
}

/// The cells of `text`'s word around `col`: (first, last). A click off any word selects the
/// one cell clicked.
fn word_at(text: &str, col: u16) -> (u16, u16) {
    let chars: Vec<(char, u16, u16)> = cells(text).filter(|c| c.2 > 0).collect();
    let Some(at) = chars
        .iter()
        .position(|&(_, start, width)| col >= start && col < start + width)
    else {
        return (col, col);
    };
    if !in_word(chars[at].0) {
        return (chars[at].1, chars[at].1 + chars[at].2 - 1);
    }
    let first = (0..=at)
        .rev()
        .take_while(|&i| in_word(chars[i].0))
        .last()
        .unwrap_or(at);
    let last = (at..chars.len())
        .take_while(|&i| in_word(chars[i].0))
        .last()
        .unwrap_or(at);
    (chars[first].1, chars[last].1 + chars[last].2 - 1)
}

/// Where `selection` reaches, its unit applied; `line_text` gives a line's text.
pub fn bounds(selection: &Selection, line_text: &mut dyn FnMut(u64) -> String) -> Bounds {
    let (mut start, mut end) = selection.ordered();
    match selection.unit {
        Unit::Char => {}
        Unit::Word => {
            start.col = word_at(&line_text(start.line), start.col).0;
            end.col = word_at(&line_text(end.line), end.col).1;
        }
        Unit::Line => {
            start.col = 0;
            end.col = u16::MAX;
        }
    }
    Bounds { start, end }
}

/// The cells of `line` inside `bounds`: (first, last), both included.
pub fn cells_in_line(bounds: Bounds, line: u64) -> Option<(u16, u16)> {
    if line < bounds.start.line || line > bounds.end.line {
        return None;
    }
    let first = if line == bounds.start.line {
        bounds.start.col
    } else {
        0
    };
    let last = if line == bounds.end.line {
        bounds.end.col
    } else {
        u16::MAX
    };
    Some((first, last))
}

/// The text inside `bounds`: lines joined by newlines (a line the terminal wrapped joins the
/// next without one), trailing blanks of each line dropped, as terminals copy.
pub fn text(
    bounds: Bounds,
    line_text: &mut dyn FnMut(u64) -> String,
    wrapped: &dyn Fn(u64) -> bool,
) -> String {
    let mut out = String::new();
    for line in bounds.start.line..=bounds.end.line {
        let Some((first, last)) = cells_in_line(bounds, line) else {
            continue;
        };
        let text = line_text(line);
        let part: String = cells(&text)
            .filter(|&(_, start, width)| start + width.max(1) > first && start <= last)
            .map(|(c, _, _)| c)
            .collect();
        let joined = line < bounds.end.line && wrapped(line);
        if joined {
            out.push_str(&part);
        } else {
            out.push_str(part.trim_end());
            if line < bounds.end.line {
                out.push('\n');
            }
        }
    }
    out
}

/// Whether a selection is just the cell clicked (a click, not a drag): nothing to copy.
pub fn is_click(selection: &Selection) -> bool {
    selection.unit == Unit::Char && selection.anchor == selection.head
}

/// A point moved by a cursor key, kept inside `lines` (first, last) and `width` cells.
pub fn moved(p: Point, dx: i32, dy: i64, lines: (u64, u64), width: u16) -> Point {
    let line = p
        .line
        .saturating_add_signed(dy)
        .clamp(lines.0, lines.1.max(lines.0));
    let col = (i32::from(p.col) + dx).clamp(0, i32::from(width.saturating_sub(1)));
    Point {
        line,
        col: col as u16,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(anchor: (u64, u16), head: (u64, u16), unit: Unit) -> Selection {
        Selection {
            session_id: "s1".into(),
            surface: Surface::Screen,
            anchor: Point {
                line: anchor.0,
                col: anchor.1,
            },
            head: Point {
                line: head.0,
                col: head.1,
            },
            unit,
            dragging: false,
        }
    }

    const LINES: [&str; 3] = ["$ ls /usr/share   ", "日本 words here", "cat ./a-file.txt"];

    fn line(n: u64) -> String {
        LINES
            .get(n as usize)
            .copied()
            .unwrap_or_default()
            .to_string()
    }

    fn copy(s: &Selection) -> String {
        let b = bounds(s, &mut line);
        text(b, &mut line, &|_| false)
    }

    #[test]
    fn a_drag_copies_from_cell_to_cell_across_lines_backwards_too() {
        assert_eq!(copy(&sel((0, 2), (0, 3), Unit::Char)), "ls");
        assert_eq!(copy(&sel((1, 5), (0, 5), Unit::Char)), "/usr/share\n日本 w");
        // Wide characters take two cells: cell 2 is the second character.
        assert_eq!(copy(&sel((1, 2), (1, 3), Unit::Char)), "本");
    }

    #[test]
    fn a_double_click_takes_the_word_with_its_path_characters() {
        assert_eq!(copy(&sel((0, 8), (0, 8), Unit::Word)), "/usr/share");
        assert_eq!(copy(&sel((2, 6), (2, 6), Unit::Word)), "./a-file.txt");
        // Off any word: the cell itself.
        assert_eq!(copy(&sel((0, 1), (0, 1), Unit::Word)), "");
    }

    #[test]
    fn a_triple_click_takes_whole_lines_without_trailing_blanks() {
        assert_eq!(
            copy(&sel((0, 4), (1, 0), Unit::Line)),
            "$ ls /usr/share\n日本 words here"
        );
    }

    #[test]
    fn a_wrapped_line_is_joined_to_the_next() {
        let s = sel((0, 0), (1, 1), Unit::Char);
        let b = bounds(&s, &mut line);
        assert_eq!(text(b, &mut line, &|l| l == 0), "$ ls /usr/share   日");
    }

    #[test]
    fn the_cursor_stays_inside_the_content() {
        let p = Point { line: 5, col: 0 };
        assert_eq!(moved(p, -1, -10, (3, 9), 80), Point { line: 3, col: 0 });
        assert_eq!(moved(p, 200, 10, (3, 9), 80), Point { line: 9, col: 79 });
    }
}
