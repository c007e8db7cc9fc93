//! What was done by hand in a shell session: each command line typed at the shell's prompt,
//! the lines typed into the program it started, and how it ended. A workflow is drafted from
//! it (workflow/draft.rs).
//!
//! The session tells this what it types, as the writer types it, with what it can see then:
//! whether the shell itself reads (at its prompt) or a program it started does, whether the
//! terminal echoes, and the screen. The command line is the typed text when it was typed
//! whole; when it was edited (a key that moves, deletes or completes), the line as the screen
//! shows it when Enter is pressed, which is what the shell's line editor hands the shell.
//!
//! How a command ended comes from the shell: a local bash prints a status marker before each
//! prompt (`PROMPT_COMMAND`, [`Deeds::prompt_command`]), an OSC sequence no terminal draws,
//! with the session's nonce and `$?`. Where no marker comes (another shell, or a
//! configuration that replaced `PROMPT_COMMAND`), a command is taken to have succeeded once
//! the shell reads its next line.
//!
//! Bounded: the last [`MAX_DEEDS`] commands are kept. Text typed while the terminal did not
//! echo (a password) is never kept: only that something was typed there.

use std::collections::VecDeque;
use std::time::Instant;

/// Commands kept, the oldest let go first.
pub const MAX_DEEDS: usize = 1000;
/// Lines typed into one program that are kept.
const MAX_REPLIES: usize = 200;
/// The longest line kept: a longer one is a paste, not a command to draft.
const MAX_LINE: usize = 16 * 1024;

/// One command line typed at the shell's prompt, and what followed.
#[derive(Debug, Clone, PartialEq)]
pub struct Deed {
    pub line: String,
    /// Its exit status once the shell was back at its prompt; `None` while it runs.
    pub exit: Option<i32>,
    pub seconds: f64,
    /// Lines typed into the program it started, in order.
    pub replies: Vec<Reply>,
    /// The prompt's line when the shell read its next line after an interactive program.
    pub prompt_after: Option<String>,
}

/// A line typed into a program while it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The line the cursor was on when typing began: the program's prompt.
    pub prompt: String,
    /// What was typed (empty when it was hidden).
    pub text: String,
    /// Typed while the terminal did not echo: a secret, never kept.
    pub hidden: bool,
}

/// What the session sees as a line is typed.
#[derive(Debug, Clone, Copy)]
pub struct Seen {
    /// The shell itself reads the terminal (at its prompt, or its own `read`); `None`:
    /// nobody can tell.
    pub at_prompt: Option<bool>,
    /// The terminal hands over whole lines (canonical mode): no line editor reads, as at
    /// bash's prompt, but the shell's `read` or a plain program.
    pub canonical: bool,
    /// The terminal reads whole lines without echoing them (`read -s`, getpass).
    pub hidden: bool,
}

/// The line being typed.
#[derive(Debug, Default)]
struct Typing {
    bytes: Vec<u8>,
    /// The cursor's row text before the first key: the prompt it was typed at.
    prompt: Option<String>,
}

#[derive(Debug)]
pub struct Deeds {
    /// The shell's process on this machine (its process group is in the foreground while it
    /// reads its next line); `None` for a far shell.
    pub shell: Option<i32>,
    /// Inputs that are flowdeck's plumbing (framed commands), not deeds.
    plumbing: Vec<u64>,
    marker: Vec<u8>,
    /// The end of the last chunk, when it could begin a marker.
    carry: Vec<u8>,
    done: VecDeque<Deed>,
    /// The command running, and since when.
    running: Option<(Deed, Instant)>,
    typing: Typing,
    /// A command with replies ended: the prompt's line is taken when the next line begins.
    wants_prompt_after: bool,
    /// Status markers seen: the shell says when it is at its prompt.
    marked: bool,
    /// A status marker came since the last command line: the shell reads its next one.
    prompted: bool,
    /// Commands ended by a line typed ahead of their status marker, by their number among
    /// all kept: each marker still to come is theirs, in order.
    owed: VecDeque<u64>,
    /// Commands kept so far, the ones let go included.
    kept: u64,
}

impl Deeds {
    pub fn new(nonce: &str) -> Self {
        Deeds {
            shell: None,
            plumbing: Vec::new(),
            marker: format!("\x1b]{};flowdeck-status;{nonce};", super::remote::OSC).into_bytes(),
            carry: Vec::new(),
            done: VecDeque::new(),
            running: None,
            typing: Typing::default(),
            wants_prompt_after: false,
            marked: false,
            prompted: false,
            owed: VecDeque::new(),
            kept: 0,
        }
    }

    /// bash's `PROMPT_COMMAND` that prints the status marker before each prompt, followed by
    /// `inherited` (one the environment had). bash keeps `$?` for its prompt across it; what
    /// follows it gets `$?` back too.
    pub fn prompt_command(&self, inherited: Option<&str>) -> String {
        let marker = String::from_utf8_lossy(&self.marker).replace('\x1b', "\\033");
        let print = |status: &str| format!("printf '{marker}%s\\007' \"{status}\"");
        match inherited.filter(|c| !c.trim().is_empty()) {
            None => print("$?"),
            Some(theirs) => format!(
                "__flowdeck_status=$?; {}; (exit $__flowdeck_status); {theirs}",
                print("$__flowdeck_status")
            ),
        }
    }

    /// Output as it comes: a status marker ends the command running.
    pub fn output(&mut self, chunk: &[u8]) {
        if self.carry.is_empty() && !chunk.contains(&0x1b) {
            return;
        }
        let mut data = std::mem::take(&mut self.carry);
        data.extend_from_slice(chunk);
        let mut at = 0;
        while let Some(start) = find(&data[at..], b"\x1b]").map(|i| at + i) {
            let rest = &data[start..];
            if rest.len() < self.marker.len() {
                if self.marker.starts_with(rest) {
                    self.carry = rest.to_vec();
                    return;
                }
                at = start + 2;
                continue;
            }
            if !rest.starts_with(&self.marker) {
                at = start + 2;
                continue;
            }
            let digits = &rest[self.marker.len()..];
            match digits.iter().position(|b| *b == 0x07) {
                Some(end) => {
                    let status = std::str::from_utf8(&digits[..end])
                        .ok()
                        .and_then(|s| s.parse::<i32>().ok());
                    if let Some(status) = status {
                        self.marked = true;
                        self.status(status);
                    }
                    at = start + self.marker.len() + end + 1;
                }
                // Cut by the chunk's end (a status has at most a few digits).
                None if digits.len() < 12 => {
                    self.carry = rest.to_vec();
                    return;
                }
                None => at = start + 2,
            }
        }
        if data.last() == Some(&0x1b) {
            self.carry = vec![0x1b];
        }
    }

    /// Input `seq` is flowdeck's plumbing: not a deed when it is typed.
    pub fn plumbing(&mut self, seq: u64) {
        // Withdrawn plumbing is never typed: the oldest is let go.
        if self.plumbing.len() >= 64 {
            self.plumbing.remove(0);
        }
        self.plumbing.push(seq);
    }

    /// Whether input `seq`, typed now, is plumbing (it is then forgotten).
    pub fn is_plumbing(&mut self, seq: u64) -> bool {
        let before = self.plumbing.len();
        self.plumbing.retain(|s| *s != seq);
        self.plumbing.len() != before
    }

    /// Bytes as they are typed, with what the session sees then.
    pub fn typed(&mut self, bytes: &[u8], seen: Seen, screen: &vt100::Screen) {
        for &b in bytes {
            match b {
                b'\r' | b'\n' => self.line_ended(seen, screen),
                // Ctrl-C and Ctrl-U drop what was typed on the line.
                0x03 | 0x15 => {
                    self.typing = Typing::default();
                }
                _ => {
                    if self.typing.prompt.is_none() {
                        self.typing.prompt = Some(cursor_line(screen));
                        if self.wants_prompt_after && self.at_prompt(seen) {
                            self.take_prompt_after(screen);
                        }
                    }
                    if self.typing.bytes.len() < MAX_LINE {
                        self.typing.bytes.push(b);
                    }
                }
            }
        }
    }

    /// A framed command flowdeck ran in the shell (`run_command`) ended: it is a deed too.
    pub fn ran(&mut self, line: &str, exit: Option<i32>, seconds: f64) {
        self.close(Some(0));
        self.keep(Deed {
            line: line.to_string(),
            exit,
            seconds,
            replies: Vec::new(),
            prompt_after: None,
        });
    }

    /// Forgets what was done so far: a draft starts here.
    pub fn mark(&mut self) {
        // Markers owed to commands let go are still to come: the numbers stay valid.
        self.done.clear();
        self.running = None;
        self.typing = Typing::default();
        self.wants_prompt_after = false;
    }

    /// What was done since the session opened or the last mark, the command running last.
    pub fn list(&self, screen: &vt100::Screen) -> Vec<Deed> {
        let mut all: Vec<Deed> = self.done.iter().cloned().collect();
        if let Some((deed, since)) = &self.running {
            let mut deed = deed.clone();
            deed.seconds = since.elapsed().as_secs_f64();
            all.push(deed);
        }
        if self.wants_prompt_after
            && let Some(last) = all.last_mut()
            && last.prompt_after.is_none()
        {
            last.prompt_after = Some(cursor_line(screen));
        }
        all
    }

    fn line_ended(&mut self, seen: Seen, screen: &vt100::Screen) {
        let typing = std::mem::take(&mut self.typing);
        let prompt = typing.prompt.clone().unwrap_or_else(|| cursor_line(screen));
        if self.at_prompt(seen) {
            if self.wants_prompt_after {
                self.take_prompt_after(screen);
            }
            let line = line_text(&typing, screen);
            // The rest of a line continued with a backslash: the same command.
            if !self.prompted
                && let Some((deed, _)) = self.running.as_mut()
                && continued(&deed.line)
            {
                deed.line.push('\n');
                deed.line.push_str(&line);
                return;
            }
            if line.trim().is_empty() {
                return;
            }
            // No marker said how the last command ended: the shell reads again, so it did. Where
            // its marker is on its way (a line typed ahead), it says so when it comes.
            let ahead = self.marked && !self.prompted && self.running.is_some();
            self.close(Some(0));
            if ahead {
                self.owed.push_back(self.kept - 1);
            }
            self.prompted = false;
            self.running = Some((
                Deed {
                    line,
                    exit: None,
                    seconds: 0.0,
                    replies: Vec::new(),
                    prompt_after: None,
                },
                Instant::now(),
            ));
            return;
        }
        let Some((deed, _)) = self.running.as_mut() else {
            return;
        };
        if deed.replies.len() >= MAX_REPLIES {
            return;
        }
        let hidden = seen.hidden;
        let text = if hidden {
            String::new()
        } else {
            line_text(&typing, screen)
        };
        // What was typed while hidden goes no further than this function.
        drop(typing);
        deed.replies.push(Reply {
            prompt,
            text,
            hidden,
        });
    }

    /// Whether a line typed now is read by the shell at its prompt: its markers say so
    /// where it prints them, or, when its marker is still on its way (a line typed ahead),
    /// the shell reading with its line editor (its own `read` reads whole lines); without
    /// markers, the shell reading at all.
    fn at_prompt(&self, seen: Seen) -> bool {
        if self.marked {
            self.prompted || (seen.at_prompt == Some(true) && !seen.canonical)
        } else {
            seen.at_prompt != Some(false)
        }
    }

    /// A status marker: the exit status of the oldest command still owed one, else of the
    /// command running, which ends.
    fn status(&mut self, status: i32) {
        let Some(number) = self.owed.pop_front() else {
            self.prompted = true;
            self.close(Some(status));
            return;
        };
        let back = usize::try_from(self.kept - 1 - number).unwrap_or(usize::MAX);
        let at = self.done.len().checked_sub(back + 1);
        if let Some(deed) = at.and_then(|at| self.done.get_mut(at)) {
            deed.exit = Some(status);
        }
    }

    fn close(&mut self, status: Option<i32>) {
        if let Some((mut deed, since)) = self.running.take() {
            deed.exit = status;
            deed.seconds = since.elapsed().as_secs_f64();
            self.wants_prompt_after = !deed.replies.is_empty();
            self.keep(deed);
        }
    }

    fn keep(&mut self, deed: Deed) {
        if self.done.len() >= MAX_DEEDS {
            self.done.pop_front();
        }
        self.done.push_back(deed);
        self.kept += 1;
    }

    fn take_prompt_after(&mut self, screen: &vt100::Screen) {
        self.wants_prompt_after = false;
        if let Some(last) = self.done.back_mut()
            && last.prompt_after.is_none()
        {
            last.prompt_after = Some(cursor_line(screen));
        }
    }
}

/// Whether a command line goes on on the next line: it ends with a backslash that is not
/// itself escaped.
fn continued(line: &str) -> bool {
    line.bytes().rev().take_while(|b| *b == b'\\').count() % 2 == 1
}

/// The cursor's row up to the cursor: what a program printed before it reads.
fn cursor_line(screen: &vt100::Screen) -> String {
    let (row, col) = screen.cursor_position();
    screen.contents_between(row, 0, row, col)
}

/// The line as typed, when it was typed whole (printable text only); else as the screen
/// shows it now, after the prompt it was typed at.
fn line_text(typing: &Typing, screen: &vt100::Screen) -> String {
    if let Ok(text) = std::str::from_utf8(&typing.bytes)
        && !text.chars().any(char::is_control)
    {
        return text.to_string();
    }
    let (row, _) = screen.cursor_position();
    let (_, cols) = screen.size();
    let mut first = row;
    while first > 0 && screen.row_wrapped(first - 1) {
        first -= 1;
    }
    let shown = screen.contents_between(first, 0, row, cols.get());
    let prompt = typing.prompt.as_deref().unwrap_or_default();
    let line = shown.strip_prefix(prompt).unwrap_or(&shown);
    line.trim_end().to_string()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen_with(text: &str) -> vt100::Parser {
        let size = |n: u16| std::num::NonZeroU16::new(n).expect("a size");
        let mut parser = vt100::Parser::new(size(24), size(80), 0);
        parser.process(text.as_bytes());
        parser
    }

    const TYPED: Seen = Seen {
        at_prompt: Some(true),
        canonical: false,
        hidden: false,
    };
    const INTO_PROGRAM: Seen = Seen {
        at_prompt: Some(false),
        canonical: false,
        hidden: false,
    };

    fn status(deeds: &Deeds, code: i32) -> Vec<u8> {
        let mut bytes = deeds.marker.clone();
        bytes.extend_from_slice(format!("{code}\x07").as_bytes());
        bytes
    }

    #[test]
    fn a_status_marker_ends_the_command_however_the_output_is_cut() {
        let parser = screen_with("$ ");
        for cut in 0..40 {
            let mut deeds = Deeds::new("abc123");
            deeds.typed(b"false\r", TYPED, parser.screen());
            let mut stream = b"out\r\n".to_vec();
            stream.extend(status(&deeds, 1));
            stream.extend_from_slice(b"$ ");
            let cut = cut.min(stream.len());
            deeds.output(&stream[..cut]);
            deeds.output(&stream[cut..]);
            let list = deeds.list(parser.screen());
            assert_eq!(list.len(), 1, "cut at {cut}");
            assert_eq!(list[0].line, "false");
            assert_eq!(list[0].exit, Some(1), "cut at {cut}");
        }
        let mut deeds = Deeds::new("abc123");
        deeds.typed(b"true\r", TYPED, parser.screen());
        deeds.output(b"\x1b]7770;flowdeck-status;other;3\x07");
        assert_eq!(deeds.list(parser.screen())[0].exit, None, "another nonce");
    }

    #[test]
    fn an_edited_line_is_read_from_the_screen_and_ctrl_c_drops_a_line() {
        let mut parser = screen_with("$ ");
        let mut deeds = Deeds::new("n");
        deeds.typed(b"ech", TYPED, parser.screen());
        parser.process(b"ech");
        // Tab completed it on the screen.
        deeds.typed(b"\t", TYPED, parser.screen());
        parser.process(b"o ");
        deeds.typed(b"hi", TYPED, parser.screen());
        parser.process(b"hi");
        deeds.typed(b"\r", TYPED, parser.screen());
        deeds.typed(b"oops\x03", TYPED, parser.screen());
        deeds.typed(b"\r", TYPED, parser.screen());
        let list = deeds.list(parser.screen());
        assert_eq!(list.len(), 1, "{list:?}");
        assert_eq!(list[0].line, "echo hi");
    }

    #[test]
    fn lines_typed_into_a_program_are_its_replies_and_a_hidden_one_is_not_kept() {
        let mut parser = screen_with("$ ");
        let mut deeds = Deeds::new("n");
        deeds.typed(b"python3\r", TYPED, parser.screen());
        parser.process(b"python3\r\n>>> ");
        deeds.typed(b"print(6*7)\r", INTO_PROGRAM, parser.screen());
        parser.process(b"print(6*7)\r\n42\r\nPassword: ");
        let hidden = Seen {
            at_prompt: Some(false),
            canonical: true,
            hidden: true,
        };
        deeds.typed(b"hunter2\r", hidden, parser.screen());
        parser.process(b"\r\n");
        let marker = status(&deeds, 0);
        deeds.output(&marker);
        parser.process(b"$ ");
        deeds.typed(b"ls\r", TYPED, parser.screen());
        let list = deeds.list(parser.screen());
        assert_eq!(list.len(), 2);
        let python = &list[0];
        assert_eq!(python.exit, Some(0));
        assert_eq!(python.replies.len(), 2);
        assert_eq!(python.replies[0].prompt, ">>> ");
        assert_eq!(python.replies[0].text, "print(6*7)");
        assert_eq!(python.replies[1].prompt, "Password: ");
        assert!(python.replies[1].hidden);
        assert_eq!(python.replies[1].text, "");
        assert_eq!(python.prompt_after.as_deref(), Some("$ "));
        assert!(!format!("{:?}", deeds).contains("hunter2"));
        assert_eq!(list[1].line, "ls");
        assert_eq!(list[1].exit, None, "still running");
    }

    #[test]
    fn a_line_continued_with_a_backslash_is_one_command() {
        let parser = screen_with("$ ");
        let mut deeds = Deeds::new("n");
        let marker = status(&deeds, 0);
        deeds.output(&marker);
        deeds.typed(b"printf '%s\\n' a \\\r", TYPED, parser.screen());
        deeds.typed(b"  b\r", TYPED, parser.screen());
        deeds.output(&marker);
        deeds.typed(b"echo c \\\\\r", TYPED, parser.screen());
        deeds.output(&marker);
        deeds.typed(b"echo d\r", TYPED, parser.screen());
        let lines: Vec<String> = deeds
            .list(parser.screen())
            .into_iter()
            .map(|d| d.line)
            .collect();
        assert_eq!(lines, ["printf '%s\\n' a \\\n  b", "echo c \\\\", "echo d"]);
    }

    #[test]
    fn a_line_typed_ahead_of_the_status_marker_is_a_command_but_one_the_shells_read_takes_is_not() {
        let parser = screen_with("$ ");
        let mut deeds = Deeds::new("n");
        let marker = status(&deeds, 0);
        deeds.output(&marker);
        deeds.typed(b"mkdir out\r", TYPED, parser.screen());
        // The shell's line editor reads again; its marker is still on its way.
        deeds.typed(b"cd out\r", TYPED, parser.screen());
        deeds.output(&status(&deeds, 1));
        assert_eq!(deeds.list(parser.screen())[0].exit, Some(1), "mkdir's own");
        assert_eq!(deeds.list(parser.screen())[1].exit, None, "cd still runs");
        deeds.output(&marker);
        assert_eq!(deeds.list(parser.screen())[1].exit, Some(0));
        deeds.typed(b"read -rs PW\r", TYPED, parser.screen());
        // The shell itself reads, whole lines: its `read`, not its prompt.
        let read = Seen {
            at_prompt: Some(true),
            canonical: true,
            hidden: true,
        };
        deeds.typed(b"secret\r", read, parser.screen());
        let lines: Vec<String> = deeds
            .list(parser.screen())
            .iter()
            .map(|d| d.line.clone())
            .collect();
        assert_eq!(lines, ["mkdir out", "cd out", "read -rs PW"]);
        let read = &deeds.list(parser.screen())[2];
        assert_eq!(read.replies.len(), 1);
        assert!(read.replies[0].hidden);
    }

    #[test]
    fn without_markers_a_command_succeeded_once_the_shell_reads_again_and_a_mark_forgets() {
        let parser = screen_with("% ");
        let mut deeds = Deeds::new("n");
        deeds.typed(b"make\r", TYPED, parser.screen());
        deeds.typed(b"\r", TYPED, parser.screen());
        deeds.typed(b"make test\r", TYPED, parser.screen());
        let list = deeds.list(parser.screen());
        assert_eq!(list.len(), 2, "an empty line is no command");
        assert_eq!(list[0].exit, Some(0));
        deeds.mark();
        assert!(deeds.list(parser.screen()).is_empty());
        deeds.ran("mkdir -p out", Some(0), 0.1);
        assert_eq!(deeds.list(parser.screen())[0].line, "mkdir -p out");
    }

    #[test]
    fn the_prompt_command_prints_the_status_and_keeps_it_for_what_follows() {
        let deeds = Deeds::new("n0");
        assert_eq!(
            deeds.prompt_command(None),
            "printf '\\033]7770;flowdeck-status;n0;%s\\007' \"$?\""
        );
        let chained = deeds.prompt_command(Some("history -a"));
        assert!(chained.starts_with("__flowdeck_status=$?; printf"));
        assert!(chained.ends_with("(exit $__flowdeck_status); history -a"));
        assert!(chained.contains("\"$__flowdeck_status\""));
    }
}
