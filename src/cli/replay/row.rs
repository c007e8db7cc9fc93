//! One row of the emulated screen as the person's terminal draws it: its characters with
//! their colours and attributes, from the row's first column, with no cursor movement (so
//! that it can be drawn on any row of the person's terminal). vt100's own formatted rows move
//! the cursor to absolute places on a row that wrapped, which is the recording's row, not
//! the one it is drawn on.

/// Row `row` of `screen`, `cols` columns of it, attributes reset at its end.
pub(super) fn formatted(screen: &vt100::Screen, row: u16, cols: u16) -> String {
    let mut line = String::new();
    let mut pen = Pen::default();
    // Blanks are written only before something that follows them on the row.
    let mut blanks = String::new();
    for col in 0..cols {
        let Some(cell) = screen.cell(row, col) else {
            break;
        };
        if cell.is_wide_continuation() {
            continue;
        }
        let wanted = Pen::of(cell);
        let text = match cell.contents() {
            "" => " ",
            text => text,
        };
        if text == " " && wanted.bg == vt100::Color::Default && !wanted.inverse && !wanted.underline
        {
            blanks.push(' ');
            continue;
        }
        if !blanks.is_empty() {
            // Drawn plain: an underline or a background would show on them.
            if pen != Pen::default() {
                line.push_str("\x1b[0m");
                pen = Pen::default();
            }
            line.push_str(&blanks);
            blanks.clear();
        }
        if wanted != pen {
            line.push_str(&wanted.sgr());
            pen = wanted;
        }
        line.push_str(text);
    }
    if pen != Pen::default() {
        line.push_str("\x1b[0m");
    }
    line
}

/// The attributes a cell is drawn with.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Pen {
    fg: vt100::Color,
    bg: vt100::Color,
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
    inverse: bool,
}

impl Pen {
    fn of(cell: &vt100::Cell) -> Pen {
        Pen {
            fg: cell.fgcolor(),
            bg: cell.bgcolor(),
            bold: cell.bold(),
            dim: cell.dim(),
            italic: cell.italic(),
            underline: cell.underline(),
            inverse: cell.inverse(),
        }
    }

    /// The whole pen from the default: `CSI 0;…m`.
    fn sgr(&self) -> String {
        let mut codes = vec!["0".to_string()];
        for (on, code) in [
            (self.bold, "1"),
            (self.dim, "2"),
            (self.italic, "3"),
            (self.underline, "4"),
            (self.inverse, "7"),
        ] {
            if on {
                codes.push(code.into());
            }
        }
        for (color, base) in [(self.fg, 30), (self.bg, 40)] {
            match color {
                vt100::Color::Default => {}
                vt100::Color::Idx(i) if i < 8 => codes.push((base + u16::from(i)).to_string()),
                vt100::Color::Idx(i) if i < 16 => {
                    codes.push((base + 60 + u16::from(i - 8)).to_string());
                }
                vt100::Color::Idx(i) => codes.push(format!("{};5;{i}", base + 8)),
                vt100::Color::Rgb(r, g, b) => codes.push(format!("{};2;{r};{g};{b}", base + 8)),
            }
        }
        format!("\x1b[{}m", codes.join(";"))
    }
}

#[cfg(test)]
mod tests {
    use super::formatted;

    #[test]
    fn a_row_is_its_text_and_attributes_without_moves() {
        let size = |n| std::num::NonZero::new(n).unwrap();
        let mut parser = vt100::Parser::new(size(3), size(20), 0);
        // A row that wraps into the next, colours, a trailing blank with a background.
        parser.process(b"abcdefghijklmnopqrstuv\r\n\x1b[1;31mred\x1b[0m  x\x1b[44m \x1b[0m");
        let screen = parser.screen();
        assert_eq!(formatted(screen, 0, 20), "abcdefghijklmnopqrst");
        assert_eq!(formatted(screen, 1, 20), "uv");
        assert_eq!(
            formatted(screen, 2, 20),
            "\x1b[0;1;31mred\x1b[0m  x\x1b[0;44m \x1b[0m"
        );
        assert_eq!(formatted(screen, 2, 2), "\x1b[0;1;31mre\x1b[0m");
    }
}
