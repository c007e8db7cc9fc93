//! `flowdeck replay --raw` at a terminal: the recorded output as it was, every sequence
//! included, streamed with its pauses (space pauses, `.` steps, `q` stops). Not navigable:
//! going back would mean drawing the screen again, which is no longer the raw stream. The
//! terminal is put back as it was found at the end.

use super::ReplayArgs;
use super::keys::{Key, Keys};
use crate::term::recording::cast::{CastEvent, CastReader};
use crate::term::recording::safe::Safe;
use anyhow::{Context, Result};
use std::io::Write;
use std::time::{Duration, Instant};

/// Plays `reader` at this terminal, and leaves the terminal as it found it.
pub(super) fn replay(reader: CastReader, args: &ReplayArgs, out: &mut impl Write) -> Result<()> {
    out.write_all(KEEP_TITLE.as_bytes())?;
    let mut shown = Shown::default();
    let played = {
        let keys = Keys::take();
        play(reader, args, &keys, &mut shown, out)
    };
    out.write_all(shown.restore().as_bytes())?;
    out.flush()?;
    played
}

/// Where the recording, written as it is, left the terminal, for the end to leave it as it
/// was found.
struct Shown {
    /// Reads every sequence (what it would let through is not used): it knows which modes
    /// the recording turned on, the alternate screen among them.
    safe: Safe,
    /// The last text written ended a line.
    ends_line: bool,
}

impl Default for Shown {
    fn default() -> Shown {
        Shown {
            safe: Safe::default(),
            ends_line: true,
        }
    }
}

impl Shown {
    fn of(&mut self, text: &str) -> String {
        self.safe.filter(text);
        if let Some(last) = text.chars().last() {
            self.ends_line = last == '\n';
        }
        text.to_string()
    }

    /// What puts the terminal back as it was found: the modes a recorded program may have
    /// left on turned off; those whose reset moves the cursor (scroll margins, origin mode,
    /// the alternate screen) only if the recording turned them on; and the cursor below what
    /// was played, or where the alternate screen found it.
    fn restore(&self) -> String {
        let modes = self.safe.modes();
        let mut restore = String::from(RESTORE);
        if modes.margins {
            restore.push_str("\x1b[r");
        }
        if modes.origin {
            restore.push_str("\x1b[?6l");
        }
        if modes.alternate {
            restore.push_str("\x1b[?1049l");
        } else if !self.ends_line {
            restore.push_str("\r\n");
        }
        restore
    }
}

/// The window's title and icon name, kept on the terminal's title stack (xterm's, tmux's)
/// while a recording plays: one played with `--raw` may set them.
const KEEP_TITLE: &str = "\x1b[22;0t";

/// Modes a recorded program may have left on, turned off at the end so that the terminal
/// is the person's again (none of these moves the cursor; [`Shown::restore`] adds those
/// that do, when needed). First CAN and ST end any sequence a recording stopped inside (an
/// OSC title cut at a chunk), so that what follows is not taken into it; then the title
/// taken back from the stack, attributes, the character set, the cursor shown, bracketed
/// paste, mouse and focus reporting, the kitty keyboard protocol, application cursor keys
/// and keypad, autowrap and insert mode.
const RESTORE: &str = concat!(
    "\x18\x1b\\",
    "\x1b[23;0t",
    "\x1b[0m\x1b(B\x1b[?25h\x1b[?2004l",
    "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1004l",
    "\x1b[<u\x1b[?1l\x1b>\x1b[?7h\x1b[4l",
);

/// The longest pause a replay plays (a recording's times are any JSON number).
const LONGEST_PAUSE: f64 = 24.0 * 3600.0;

/// Plays the events at their times: each pause divided by the speed, none longer than the
/// idle limit; the person's own pauses do not count.
fn play(
    reader: CastReader,
    args: &ReplayArgs,
    keys: &Keys,
    shown: &mut Shown,
    out: &mut impl Write,
) -> Result<()> {
    // When the recording would have begun, had it played without the person's pauses.
    let mut clock = Instant::now();
    // Where in the recording the next event stands, in played seconds.
    let mut played = 0.0_f64;
    let mut last = 0.0_f64;
    let mut paused = false;
    for event in reader {
        let event = event?;
        let gap = (event.time() - last).max(0.0);
        last = event.time();
        let pause = args.idle_limit.map_or(gap, |limit| gap.min(limit)) / args.speed;
        played += pause.min(LONGEST_PAUSE);
        let at = Duration::try_from_secs_f64(played).unwrap_or(Duration::MAX);
        loop {
            if paused {
                let since = Instant::now();
                match keys.next(None)? {
                    Some(Key::Char(' ')) => {
                        paused = false;
                        clock += since.elapsed();
                    }
                    // This event now, and paused again.
                    Some(Key::Char('.')) => {
                        clock = Instant::now().checked_sub(at).unwrap_or(clock);
                        break;
                    }
                    Some(Key::Quit | Key::Char('q')) => return Ok(()),
                    _ => {}
                }
                continue;
            }
            let wait = clock.checked_add(at).map_or(Duration::MAX, |due| {
                due.saturating_duration_since(Instant::now())
            });
            if wait.is_zero() {
                break;
            }
            match keys.next(Some(wait))? {
                None => break,
                Some(Key::Quit | Key::Char('q')) => return Ok(()),
                Some(Key::Char(' ')) => paused = true,
                Some(_) => {}
            }
        }
        if let CastEvent::Output(_, text) = event {
            out.write_all(shown.of(&text).as_bytes())
                .context("cannot write the recording")?;
            out.flush()?;
        }
    }
    Ok(())
}
