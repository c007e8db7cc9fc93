//! What was done by hand in a shell session: each command line typed at the shell's prompt,
//! the lines typed into the program it started, and how it ended. A workflow is drafted from
//! it (workflow/draft.rs).
//!
//! The session tells this what it types, as the writer types it, with what it can see then:
//! whether the shell itself reads (its process group in the foreground) and how the
//! terminal reads (whole lines or key by key, echoing or not), and the screen. A command line
//! is the typed text when it was typed whole; when it was edited (a key that moves, deletes
//! or completes), the line as the screen shows it at Enter, which is what the shell's line
//! editor hands the shell.
//!
//! A local bash says the rest itself (markers.rs): `PS0` prints a *start* marker once it read
//! a whole command (the lines of a `for` loop, a heredoc or a `\`-continued line are one),
//! and `PROMPT_COMMAND` a *status* marker with `$?` before each prompt. Where they do not
//! come (another shell, a far shell, a configuration that replaced them), each line typed at
//! the prompt is a command, taken to have succeeded once the shell reads its next line.
//!
//! Text typed where it was not shown is never kept: typed while the terminal read whole lines
//! without echoing them (`read -s`, getpass), at a prompt that asks for a password, or into a
//! program that reads key by key and did not show it (a masked prompt), or a value the
//! session was told is a secret. Bounded: the last [`MAX_DEEDS`] commands are kept.

mod markers;
mod shown;
pub mod startup;

use super::mask::Needles;
use markers::{Marker, Markers};
use shown::{EchoCheck, cursor_line, edited_line};
use std::collections::VecDeque;
use std::time::Instant;

/// Commands kept, the oldest let go first.
pub const MAX_DEEDS: usize = 1000;
/// Lines typed into one program that are kept.
const MAX_REPLIES: usize = 200;
/// The longest line kept: a longer one is dropped whole, never kept cut (a command cut short
/// could do something else).
const MAX_LINE: usize = 16 * 1024;
/// What a secret the session was told of is replaced with in a command line.
const MASK: &str = "***";

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
    /// Not shown as it was typed: a secret, never kept.
    pub hidden: bool,
}

/// What the session sees as input is typed.
#[derive(Debug, Clone, Copy)]
pub struct Seen {
    /// The shell itself reads the terminal (at its prompt, or its own `read`); `None`:
    /// nobody can tell (a far shell that is not at a marked prompt).
    pub at_prompt: Option<bool>,
    /// The terminal hands over whole lines (canonical mode): no line editor reads.
    pub canonical: bool,
    /// The terminal echoes what is typed.
    pub echo: bool,
}

/// The line being typed.
#[derive(Debug, Default)]
struct Typing {
    bytes: Vec<u8>,
    /// The cursor's row text before the first key: the prompt it was typed at.
    prompt: Option<String>,
    /// A key of it was typed where the terminal hid it.
    hidden: bool,
    /// Longer than [`MAX_LINE`].
    overflow: bool,
}

#[derive(Debug)]
pub struct Deeds {
    /// The shell's process on this machine (its process group is in the foreground while it
    /// reads its next line); `None` for a far shell.
    pub shell: Option<i32>,
    /// Inputs that are flowdeck's plumbing (framed commands), not deeds.
    plumbing: Vec<u64>,
    markers: Markers,
    done: VecDeque<Deed>,
    /// The command running, and since when.
    running: Option<(Deed, Instant)>,
    typing: Typing,
    /// Lines read at the prompt that its start marker has not begun yet: one command.
    composing: Vec<String>,
    /// Replies typed before the command they answer began (lines typed together with it).
    queued: Vec<Reply>,
    /// A reply typed into a program that reads key by key, with its text until it is shown.
    check: Option<EchoCheck>,
    /// A command with replies ended: the prompt's line is taken when the next line begins.
    wants_prompt_after: bool,
    /// Status markers seen: the shell says when a command ended.
    marked: bool,
    /// The shell says when a command begins (start markers are expected, or came).
    starts: bool,
    /// A start marker came.
    started_once: bool,
    /// A status marker came since the last command line: the shell reads its next one.
    prompted: bool,
    /// Without start markers: commands ended by a line typed ahead of their status marker,
    /// by their number among all kept; each marker still to come is theirs, in order.
    owed: VecDeque<u64>,
    /// Commands kept so far, the ones let go included.
    kept: u64,
    /// Values never kept (a run's secrets, typed by its steps).
    secrets: Vec<String>,
}

impl Deeds {
    pub fn new(nonce: &str) -> Self {
        Deeds {
            shell: None,
            plumbing: Vec::new(),
            markers: Markers::new(nonce),
            done: VecDeque::new(),
            running: None,
            typing: Typing::default(),
            composing: Vec::new(),
            queued: Vec::new(),
            check: None,
            wants_prompt_after: false,
            marked: false,
            starts: false,
            started_once: false,
            prompted: false,
            owed: VecDeque::new(),
            kept: 0,
            secrets: Vec::new(),
        }
    }

    /// The shell was given `PS0`: its start markers say when a command begins. Until the
    /// first comes, a status marker after lines no start began says it does not print them
    /// (a configuration replaced `PS0`).
    pub fn expect_starts(&mut self) {
        self.starts = true;
    }

    /// bash's `PROMPT_COMMAND` (markers.rs), followed by `inherited`.
    pub fn prompt_command(&self, inherited: Option<&str>) -> String {
        self.markers.prompt_command(inherited)
    }

    /// bash's `PS0` (markers.rs), followed by `inherited`.
    pub fn ps0(&self, inherited: Option<&str>) -> String {
        self.markers.ps0(inherited)
    }

    /// Output as it comes: the shell's markers, and the echo a reply waits for.
    pub fn output(&mut self, chunk: &[u8]) {
        if let Some(check) = self.check.as_mut()
            && let Some(shown) = check.output(chunk)
        {
            self.settle_check(shown);
        }
        for marker in self.markers.scan(chunk) {
            match marker {
                Marker::Start => self.started(),
                Marker::Status(code) => {
                    self.marked = true;
                    self.status(code);
                }
            }
        }
    }

    /// A command's exit status, as a far shell's prompt marker carries it (remote.rs).
    pub fn told_status(&mut self, status: i32) {
        self.marked = true;
        self.status(status);
    }

    /// Values to keep out of what is kept: replies that hold one are hidden, command lines
    /// have it masked.
    pub fn learn_secrets(&mut self, secrets: &[String]) {
        for secret in secrets {
            if !secret.is_empty() && !self.secrets.contains(secret) {
                self.secrets.push(secret.clone());
            }
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

    /// Bytes as they are typed, with what the session sees then. A line after the first in
    /// one input was typed before anyone could read it: whoever reads it, it is kept only as
    /// a reply that was shown.
    pub fn typed(&mut self, bytes: &[u8], seen: Seen, screen: &vt100::Screen) {
        let mut first = true;
        for &b in bytes {
            match b {
                b'\r' | b'\n' => {
                    self.line_ended(seen, first, screen);
                    first = false;
                }
                // Ctrl-C and Ctrl-U drop what was typed on the line.
                0x03 | 0x15 => self.typing = Typing::default(),
                _ => {
                    if self.typing.prompt.is_none() {
                        self.typing.prompt = Some(cursor_line(screen));
                        if self.wants_prompt_after && self.at_prompt(seen) {
                            self.take_prompt_after(screen);
                        }
                    }
                    self.typing.hidden |= !seen.echo && seen.canonical;
                    if self.typing.bytes.len() < MAX_LINE {
                        self.typing.bytes.push(b);
                    } else {
                        self.typing.overflow = true;
                    }
                }
            }
        }
    }

    /// A framed command flowdeck ran in the shell (`run_command`) ended: it is a deed too.
    pub fn ran(&mut self, line: &str, exit: Option<i32>, seconds: f64) {
        if !self.starts {
            self.close(Some(0));
        }
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
        self.composing.clear();
        self.queued.clear();
        self.check = None;
        self.wants_prompt_after = false;
    }

    /// What was done since the session opened or the last mark, the command running last
    /// (`ended`: the shell has exited, and a command no marker ended succeeded).
    pub fn list(&self, screen: &vt100::Screen, ended: bool) -> Vec<Deed> {
        let mut all: Vec<Deed> = self.done.iter().cloned().collect();
        if let Some((deed, since)) = &self.running {
            let mut deed = deed.clone();
            deed.seconds = since.elapsed().as_secs_f64();
            if ended && !self.marked {
                deed.exit = Some(0);
            }
            // A reply still waiting to be seen shown is hidden.
            all.push(deed);
        }
        if self.wants_prompt_after
            && let Some(last) = all.last_mut()
            && last.prompt_after.is_none()
        {
            last.prompt_after = Some(cursor_line(screen));
        }
        let secrets = Needles::new(&self.secrets);
        for deed in &mut all {
            deed.line = secrets.mask(&deed.line, MASK).into_owned();
            if let Some(prompt) = &mut deed.prompt_after {
                *prompt = secrets.mask(prompt, MASK).into_owned();
            }
            for reply in &mut deed.replies {
                reply.prompt = secrets.mask(&reply.prompt, MASK).into_owned();
                if secrets.mask(&reply.text, MASK) != reply.text {
                    reply.text.clear();
                    reply.hidden = true;
                }
            }
        }
        all
    }

    fn line_ended(&mut self, seen: Seen, first: bool, screen: &vt100::Screen) {
        let typing = std::mem::take(&mut self.typing);
        if typing.overflow {
            return;
        }
        let prompt = typing.prompt.clone().unwrap_or_else(|| cursor_line(screen));
        let hidden = typing.hidden || asks_for_a_secret(&prompt);
        if first && !hidden && self.at_prompt(seen) {
            let line = line_text(&typing, screen);
            self.command_line(line, screen);
            return;
        }
        // A reply: shown when the terminal echoed it; to be seen shown when a program that
        // reads key by key, or nobody yet, reads it; never kept when hidden.
        let mut reply = Reply {
            prompt,
            text: String::new(),
            hidden: true,
        };
        if !hidden {
            let text = line_text(&typing, screen);
            let (row, _) = screen.cursor_position();
            let on_screen = screen
                .contents_between(row, 0, row, screen.size().1.get())
                .contains(&text);
            if (first && seen.echo) || on_screen {
                reply.text = text;
                reply.hidden = false;
            } else {
                self.settle_check(false);
                self.check = Some(EchoCheck::new(text));
            }
        }
        // What was typed while hidden goes no further than this function.
        drop(typing);
        match self.running.as_mut() {
            Some((deed, _)) if deed.replies.len() < MAX_REPLIES => deed.replies.push(reply),
            Some(_) => self.check = None,
            None if self.starts && !self.composing.is_empty() => self.queued.push(reply),
            None => self.check = None,
        }
    }

    /// A line read by the shell at its prompt.
    fn command_line(&mut self, line: String, screen: &vt100::Screen) {
        if self.wants_prompt_after {
            self.take_prompt_after(screen);
        }
        if self.starts {
            // Its start marker says when the command it belongs to is whole.
            if !(line.trim().is_empty() && self.composing.is_empty()) {
                self.composing.push(line);
            }
            return;
        }
        // The rest of a line continued with a backslash: the same command.
        if !self.prompted
            && let Some((deed, _)) = self.running.as_mut()
            && continued(&deed.line)
        {
            deed.line.push('\n');
            deed.line.push_str(&line);
            return;
        }
        // Every line read at the prompt is an Enter the shell answers with a prompt.
        self.prompted = false;
        if line.trim().is_empty() {
            return;
        }
        // No marker said how the last command ended: the shell reads again, so it did. Where
        // its marker is on its way (a line typed ahead), it says so when it comes.
        let ahead = self.marked && self.running.is_some();
        self.close(Some(0));
        if ahead {
            self.owed.push_back(self.kept.saturating_sub(1));
        }
        self.running = Some((deed_of(line), Instant::now()));
    }

    /// The start marker: the lines read since the last one are a whole command, which runs.
    fn started(&mut self) {
        self.starts = true;
        self.started_once = true;
        self.prompted = false;
        if self.running.is_some() {
            self.close(None);
        }
        let line = std::mem::take(&mut self.composing).join("\n");
        let mut deed = deed_of(line);
        deed.replies = std::mem::take(&mut self.queued);
        self.running = Some((deed, Instant::now()));
    }

    /// Whether a line typed now is read by the shell at its prompt. Where it prints
    /// markers: the shell reading with its line editor (its own `read` reads whole lines),
    /// or a status marker since the last line; without: the shell reading at all.
    fn at_prompt(&self, seen: Seen) -> bool {
        let editing = seen.at_prompt == Some(true) && !seen.canonical;
        if self.starts {
            editing
        } else if self.marked {
            self.prompted || editing
        } else {
            seen.at_prompt != Some(false)
        }
    }

    /// A status marker: without start markers, the exit status of the oldest command still
    /// owed one; else of the command running, which ends. Lines read since the last start
    /// and none begun were given up (Ctrl-C at a continuation prompt).
    fn status(&mut self, status: i32) {
        if !self.starts
            && let Some(number) = self.owed.pop_front()
        {
            let back = usize::try_from(self.kept.saturating_sub(1).saturating_sub(number))
                .unwrap_or(usize::MAX);
            let at = self.done.len().checked_sub(back.saturating_add(1));
            if let Some(deed) = at.and_then(|at| self.done.get_mut(at)) {
                deed.exit = Some(status);
            }
            return;
        }
        self.prompted = true;
        if self.running.is_some() {
            self.close(Some(status));
        } else if self.starts && !self.started_once && !self.composing.is_empty() {
            // A whole command ran with no start marker: the shell prints none.
            self.starts = false;
            let mut deed = deed_of(std::mem::take(&mut self.composing).join("\n"));
            deed.replies = std::mem::take(&mut self.queued);
            deed.exit = Some(status);
            self.keep(deed);
        } else if self.starts {
            self.composing.clear();
            self.queued.clear();
        }
    }

    /// The reply waiting to be seen shown is settled: its text kept, or not.
    fn settle_check(&mut self, shown: bool) {
        let Some(check) = self.check.take() else {
            return;
        };
        if !shown {
            return;
        }
        let target = match self.running.as_mut() {
            Some((deed, _)) if !deed.replies.is_empty() => Some(deed),
            _ => self.done.back_mut(),
        };
        if let Some(reply) = target.and_then(|d| d.replies.last_mut())
            && reply.hidden
        {
            reply.text = check.shown();
            reply.hidden = false;
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
        // A command of flowdeck's own (a framed line) begins and ends with no line typed.
        if deed.line.trim().is_empty() {
            return;
        }
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

fn deed_of(line: String) -> Deed {
    Deed {
        line,
        exit: None,
        seconds: 0.0,
        replies: Vec::new(),
        prompt_after: None,
    }
}

/// Whether a prompt asks for a password, a passphrase or another secret.
fn asks_for_a_secret(prompt: &str) -> bool {
    let prompt = prompt.to_lowercase();
    [
        "password",
        "passphrase",
        "passcode",
        "pin:",
        "token:",
        "secret",
    ]
    .iter()
    .any(|word| prompt.contains(word))
}

/// Whether a command line goes on on the next line: it ends with a backslash that is not
/// itself escaped.
fn continued(line: &str) -> bool {
    line.bytes().rev().take_while(|b| *b == b'\\').count() % 2 == 1
}

/// The line as typed, when it was typed whole (printable text only); else as the screen
/// shows it now, after the prompt it was typed at.
fn line_text(typing: &Typing, screen: &vt100::Screen) -> String {
    if let Ok(text) = std::str::from_utf8(&typing.bytes)
        && !text.chars().any(char::is_control)
    {
        return text.to_string();
    }
    edited_line(screen, typing.prompt.as_deref().unwrap_or_default())
}

#[cfg(test)]
mod tests;
