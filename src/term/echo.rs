//! Where the output caused by an input begins, past the terminal's echo of that input.
//!
//! `await_output` with `since: last_input` must never match the command line it just typed
//! (`make 2>&1 | tee log; echo BUILD_DONE` contains `BUILD_DONE`). The echo is found by
//! content, not by counting lines, so that a program with echo off (a password prompt, a raw
//! mode program that prints nothing back) loses no real output:
//!
//! - for each line of the input that ended with Enter, the next output line is echo if it
//!   holds that line's visible characters in order (shells add prompts, continuation
//!   prompts, and wrap long lines with extra spaces and carriage returns, but never drop
//!   what was typed); the first line that does not is real output, and the skip ends there;
//! - text typed after the last Enter is echoed in place: output characters that repeat it
//!   exactly are skipped, and the first one that differs is real output.

/// Follows the output after one input and finds where its echo ends.
#[derive(Debug, Clone)]
pub struct EchoSkip {
    /// Visible characters of each input line that ended with Enter.
    lines: Vec<Vec<char>>,
    /// Visible characters typed after the last Enter.
    trailing: Vec<char>,
    line: usize,
    pos: usize,
    /// Global offset where the output line being examined began.
    line_start: u64,
    /// Global offset up to which the output has been examined.
    scanned: u64,
    end: Option<u64>,
    /// The input has not been written yet: there is no echo to look for.
    pending: bool,
}

impl EchoSkip {
    /// Starts following the output at `at` (the stream's end when the input was sent).
    pub fn new(input: &str, at: u64) -> Self {
        let mut lines = Vec::new();
        let mut current = Vec::new();
        let mut after_cr = false;
        for c in input.chars() {
            match c {
                '\n' if after_cr => after_cr = false,
                '\r' | '\n' => {
                    lines.push(std::mem::take(&mut current));
                    after_cr = c == '\r';
                }
                c => {
                    after_cr = false;
                    if is_visible(c) {
                        current.push(c);
                    }
                }
            }
        }
        let nothing_visible = lines.is_empty() && current.is_empty();
        EchoSkip {
            lines,
            trailing: current,
            line: 0,
            pos: 0,
            line_start: at,
            scanned: at,
            end: nothing_visible.then_some(at),
            pending: false,
        }
    }

    /// Skip nothing: output right after `at` counts (no input was sent yet).
    pub fn resolved(at: u64) -> Self {
        EchoSkip::new("", at)
    }

    /// An input sent at `at` and not yet typed: nothing after `at` counts until it is, when
    /// [`EchoSkip::new`] takes over.
    pub fn pending(at: u64) -> Self {
        EchoSkip {
            lines: Vec::new(),
            trailing: Vec::new(),
            line: 0,
            pos: 0,
            line_start: at,
            scanned: at,
            end: None,
            pending: true,
        }
    }

    /// Where the echo ended, once known.
    pub fn end(&self) -> Option<u64> {
        self.end
    }

    /// Where the echo ended if known, else where it began (for reading what has arrived).
    pub fn end_or_start(&self) -> u64 {
        self.end.unwrap_or(self.line_start)
    }

    /// Examines new output: `text` is the stripped stream from global offset `text_start`
    /// to its end.
    pub fn advance(&mut self, text: &str, text_start: u64) {
        if self.end.is_some() || self.pending {
            return;
        }
        let from = self.scanned.saturating_sub(text_start) as usize;
        let Some(new) = text.get(from..) else {
            return;
        };
        let mut offset = text_start + from as u64;
        for c in new.chars() {
            let here = offset;
            offset += c.len_utf8() as u64;
            if self.line < self.lines.len() {
                let expected = &self.lines[self.line];
                let last = self.line + 1 == self.lines.len() && self.trailing.is_empty();
                if c == '\n' {
                    if self.pos == expected.len() {
                        self.line += 1;
                        self.pos = 0;
                        self.line_start = offset;
                    } else {
                        self.end = Some(self.line_start);
                        break;
                    }
                } else if self.pos < expected.len() && c == expected[self.pos] {
                    self.pos += 1;
                } else if last && self.pos == expected.len() && is_visible(c) {
                    // The whole line was echoed and new text follows on the same line: a
                    // full-screen program that quits moves the cursor rather than printing
                    // a newline, and the shell's prompt comes next. The echo ended.
                    self.end = Some(here);
                    break;
                }
                if self.line == self.lines.len() && self.trailing.is_empty() {
                    self.end = Some(offset);
                    break;
                }
            } else if !is_visible(c) && c != '\n' {
                // Redraws of the typed text move the cursor with carriage returns.
            } else if self.pos < self.trailing.len() && c == self.trailing[self.pos] {
                self.pos += 1;
            } else {
                self.end = Some(here);
                break;
            }
        }
        self.scanned = offset;
        if self.end.is_none()
            && self.line == self.lines.len()
            && self.pos == self.trailing.len()
            && !self.trailing.is_empty()
        {
            self.end = Some(offset);
        }
    }
}

fn is_visible(c: char) -> bool {
    !c.is_control() && !c.is_whitespace()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skip(input: &str, output: &str) -> Option<usize> {
        let mut s = EchoSkip::new(input, 100);
        // Feed in two pieces to check that scanning resumes where it stopped.
        let mid = output
            .char_indices()
            .nth(output.chars().count() / 2)
            .map_or(0, |(i, _)| i);
        s.advance(&output[..mid], 100);
        s.advance(output, 100);
        s.end().map(|e| (e - 100) as usize)
    }

    #[test]
    fn a_command_line_echo_is_skipped() {
        let out = "$ echo BUILD_DONE\nBUILD_DONE\n$ ";
        assert_eq!(skip("echo BUILD_DONE\n", out), Some(18));
    }

    #[test]
    fn wrapped_and_prompted_echo_is_skipped() {
        let out = "user@host:~$ echo aaaa bb\r bbb\n> more\nresult\n";
        assert_eq!(skip("echo aaaa bbbbb\nmore\n", out), Some(38));
    }

    #[test]
    fn echo_off_loses_nothing() {
        // A password typed with echo off: the first line out is the program's own.
        assert_eq!(skip("hunter2\n", "\nWelcome\n"), Some(0));
        assert_eq!(skip("hunter2\n", "Access granted\n"), Some(0));
    }

    #[test]
    fn typed_text_without_enter_is_skipped_in_place() {
        assert_eq!(skip("y", "yes? no\n"), Some(1));
        assert_eq!(skip("abc", "abc"), Some(3));
        // Keys that print nothing: output starts at once.
        assert_eq!(skip("\u{1b}[A", "x"), Some(0));
    }

    #[test]
    fn undecided_until_the_echo_line_ends() {
        let mut s = EchoSkip::new("ls\n", 0);
        s.advance("$ l", 0);
        assert_eq!(s.end(), None);
        s.advance("$ ls\nfile\n", 0);
        assert_eq!(s.end(), Some(5));
    }

    #[test]
    fn an_echo_without_a_newline_ends_where_new_text_begins() {
        // vim's command line shows `:q!` after its status message, vim quits without a
        // newline, and the prompt follows.
        assert_eq!(skip(":q!\r", "\"f\" 2L:q!\r$ "), Some(10));
        // A shell's newline still ends the echo after it.
        assert_eq!(skip("ls\n", "$ ls\r\nfile\n"), Some(6));
    }

    #[test]
    fn crlf_input_is_one_enter() {
        assert_eq!(skip("ls\r\n", "ls\nfile\n"), Some(3));
    }
}
