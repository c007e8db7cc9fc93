//! What the screen says of a typed line: the prompt it was typed at, the line as the shell's
//! line editor shows it, and whether a program that reads keys one by one (readline, a
//! prompt library) showed what was typed or hid it.

/// The cursor's row up to the cursor: what a program printed before it reads.
pub fn cursor_line(screen: &vt100::Screen) -> String {
    let (row, col) = screen.cursor_position();
    screen.contents_between(row, 0, row, col)
}

/// The line typed at `prompt` as the screen shows it now: the rows the cursor's row is
/// wrapped with, before and after it, less the prompt.
pub fn edited_line(screen: &vt100::Screen, prompt: &str) -> String {
    let (row, _) = screen.cursor_position();
    let (rows, cols) = screen.size();
    let mut first = row;
    while first > 0 && screen.row_wrapped(first - 1) {
        first -= 1;
    }
    let mut last = row;
    while last + 1 < rows.get() && screen.row_wrapped(last) {
        last += 1;
    }
    let shown = screen.contents_between(first, 0, last, cols.get());
    let line = shown.strip_prefix(prompt).unwrap_or(&shown);
    line.trim_end().to_string()
}

/// Whether a line typed into a program that echoes nothing itself (the terminal's own echo
/// off, keys read one by one) was shown: it is once its text appears in the output that
/// follows; it is taken as hidden once that much output came without it (a password, or
/// `****` in its place).
#[derive(Debug)]
pub struct EchoCheck {
    text: String,
    seen: String,
    limit: usize,
}

impl EchoCheck {
    pub fn new(text: String) -> Self {
        let limit = text.len() * 4 + 256;
        EchoCheck {
            text,
            seen: String::new(),
            limit,
        }
    }

    /// The text, once it was shown.
    pub fn shown(self) -> String {
        self.text
    }

    /// Takes output: `Some(true)` once the text is in it, `Some(false)` once enough came
    /// without it, `None` while it cannot tell.
    pub fn output(&mut self, chunk: &[u8]) -> Option<bool> {
        self.seen
            .push_str(&without_controls(&String::from_utf8_lossy(chunk)));
        if self.seen.contains(&self.text) {
            Some(true)
        } else if self.seen.len() > self.limit {
            Some(false)
        } else {
            None
        }
    }
}

/// Text with its escape sequences and control characters taken out: what a line editor
/// draws the typed characters with is between them.
fn without_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                // CSI: parameters, then a final byte.
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('\x40'..='\x7e').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC: to BEL or ST.
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\x07' || (c == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                _ => {}
            },
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_editors_echo_shows_the_text_and_asterisks_hide_it() {
        let mut shown = EchoCheck::new("print(6*7)".into());
        assert_eq!(shown.output(b"pri"), None);
        assert_eq!(shown.output(b"nt(6\x1b[K*7)\r\n42\r\n>>> "), Some(true));
        let mut hidden = EchoCheck::new("hunter2".into());
        assert_eq!(hidden.output(b"*******\r\n"), None);
        let flood = vec![b'x'; 400];
        assert_eq!(hidden.output(&flood), Some(false));
    }

    #[test]
    fn an_edited_line_is_read_across_its_wrapped_rows_less_its_prompt() {
        let size = |n: u16| std::num::NonZeroU16::new(n).expect("a size");
        let mut parser = vt100::Parser::new(size(5), size(10), 0);
        parser.process(b"$ echo 0123456789abc");
        // The cursor moved back into the first row.
        parser.process(b"\x1b[1;5H");
        assert_eq!(edited_line(parser.screen(), "$ "), "echo 0123456789abc");
    }
}
