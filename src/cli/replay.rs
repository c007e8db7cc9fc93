//! `flowdeck replay`: plays a run's recording (term/recording/) in this terminal, with the
//! pauses it had (sped up, idle time capped), or writes its plain text when stdout is not a
//! terminal. Only what draws the screen reaches the person's terminal (recording/safe.rs:
//! no clipboard, title, hyperlink or query sequences) unless `--raw` asks for the bytes as
//! they were recorded.

use crate::engine::journal::{Journal, is_run_id, runs_dir};
use crate::term::recording::cast::{CastEvent, CastReader};
use crate::term::recording::safe::{Plain, Safe};
use anyhow::{Context, Result, bail};
use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// How the recording is played.
#[derive(Debug, Clone)]
pub struct ReplayArgs {
    /// A run id, or the path of an asciicast file.
    pub what: String,
    /// Another session of the run than the one it began in.
    pub session: Option<String>,
    pub speed: f64,
    /// The longest pause played; `None`: pauses as they were.
    pub idle_limit: Option<f64>,
    /// The recorded output as it is, sequences and all, rather than only what draws.
    pub raw: bool,
}

/// What of the recording reaches the terminal: what draws, or everything (`--raw`); and
/// where that left the terminal, for the end to leave it as it was found.
struct Shown {
    raw: bool,
    /// Reads every sequence, passed on or not: it knows whether the alternate screen is on.
    safe: Safe,
    /// The last text written ended a line.
    ends_line: bool,
}

impl Shown {
    fn new(raw: bool) -> Shown {
        Shown {
            raw,
            safe: Safe::default(),
            ends_line: true,
        }
    }

    fn of(&mut self, text: &str) -> String {
        let safe = self.safe.filter(text);
        let shown = if self.raw { text.to_string() } else { safe };
        if let Some(last) = shown.chars().last() {
            self.ends_line = last == '\n';
        }
        shown
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

pub fn replay(folder: &Path, args: &ReplayArgs, out: &mut impl Write) -> Result<ExitCode> {
    let (path, others) = recording_of(folder, args)?;
    let reader = CastReader::open(&path)?;
    if !std::io::stdout().is_terminal() {
        let mut plain = Plain::default();
        for event in reader {
            if let CastEvent::Output(_, text) = event? {
                let text = if args.raw { text } else { plain.push(&text) };
                out.write_all(text.as_bytes())?;
            }
        }
        if !args.raw {
            out.write_all(plain.finish().as_bytes())?;
        }
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Ok(here) = crossterm::terminal::size()
        && let Some(note) = size_note((reader.header.width, reader.header.height), here)
    {
        eprintln!("{note}");
    }
    out.write_all(KEEP_TITLE.as_bytes())?;
    let mut shown = Shown::new(args.raw);
    let played = {
        let keys = Keys::take();
        play(reader, args, &keys, &mut shown, out)
    };
    out.write_all(shown.restore().as_bytes())?;
    out.flush()?;
    played?;
    for (session, _) in others {
        eprintln!(
            "flowdeck: the run also recorded session {session}: flowdeck replay {} --session {session}",
            args.what
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The recording to play, and the run's other sessions' recordings (by session).
fn recording_of(folder: &Path, args: &ReplayArgs) -> Result<(PathBuf, Vec<(String, PathBuf)>)> {
    let given = Path::new(&args.what);
    if !is_run_id(&args.what) {
        if given.is_file() {
            return Ok((given.to_path_buf(), Vec::new()));
        }
        bail!(
            "{} is neither a run id (r…, as `flowdeck run` and the studio's runs view show them) nor a recording file",
            args.what
        );
    }
    let journal = Journal::new(runs_dir(folder));
    let all = journal.recordings(&args.what);
    let Some(first) = all.first().cloned() else {
        bail!(
            "run {} has no recording in {} (recorded with FLOWDECK_RECORDINGS=off, by a flowdeck before recordings, purged, or a run of another workflows folder)",
            args.what,
            runs_dir(folder).display()
        );
    };
    let session_of = |p: &PathBuf| {
        p.file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix(args.what.as_str()))
            .and_then(|rest| rest.strip_prefix('.'))
            .and_then(|rest| rest.strip_suffix(".cast"))
            .map(str::to_string)
    };
    let others: Vec<(String, PathBuf)> = all[1..]
        .iter()
        .filter_map(|p| Some((session_of(p)?, p.clone())))
        .collect();
    match &args.session {
        None => Ok((first, others)),
        Some(session) => match others.iter().find(|(s, _)| s == session) {
            Some((_, path)) => Ok((path.clone(), Vec::new())),
            None => bail!(
                "run {} recorded no session {session} of its own; its other sessions: {}",
                args.what,
                if others.is_empty() {
                    "none".to_string()
                } else {
                    others
                        .iter()
                        .map(|(s, _)| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
        },
    }
}

/// What the person asks for while a recording plays.
enum Key {
    Pause,
    Step,
    Quit,
}

/// The keyboard, in raw mode while a recording plays (when stdin is a terminal): space
/// pauses, `.` steps while paused, `q` or Ctrl-C stops.
struct Keys {
    raw: bool,
}

impl Keys {
    fn take() -> Keys {
        let raw = std::io::stdin().is_terminal() && crossterm::terminal::enable_raw_mode().is_ok();
        Keys { raw }
    }

    /// A key pressed within `wait` (`None`: for as long as it takes).
    fn next(&self, wait: Option<Duration>) -> Result<Option<Key>> {
        if !self.raw {
            if let Some(wait) = wait {
                std::thread::sleep(wait);
            }
            return Ok(None);
        }
        // A wait too long to have an end is one without.
        let deadline = wait.and_then(|w| Instant::now().checked_add(w));
        loop {
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if left.is_some_and(|l| l.is_zero()) {
                return Ok(None);
            }
            if !event::poll(left.unwrap_or(Duration::from_secs(3600)))? {
                continue;
            }
            if let Event::Key(KeyEvent {
                code,
                modifiers,
                kind: KeyEventKind::Press,
                ..
            }) = event::read()?
            {
                match code {
                    KeyCode::Char(' ') => return Ok(Some(Key::Pause)),
                    KeyCode::Char('.') => return Ok(Some(Key::Step)),
                    KeyCode::Char('q') | KeyCode::Esc => return Ok(Some(Key::Quit)),
                    KeyCode::Char('c') if modifiers.contains(KeyModifiers::CONTROL) => {
                        return Ok(Some(Key::Quit));
                    }
                    _ => {}
                }
            }
        }
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        if self.raw {
            // Answers the terminal gave to queries in the recording (its attributes, the
            // cursor's place) must not reach the person's shell as typed text.
            let _ =
                rustix::termios::tcflush(std::io::stdin(), rustix::termios::QueueSelector::IFlush);
            let _ = crossterm::terminal::disable_raw_mode();
        }
    }
}

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
                    Some(Key::Pause) => {
                        paused = false;
                        clock += since.elapsed();
                    }
                    // This event now, and paused again.
                    Some(Key::Step) => {
                        clock = Instant::now().checked_sub(at).unwrap_or(clock);
                        break;
                    }
                    Some(Key::Quit) => return Ok(()),
                    None => {}
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
                Some(Key::Quit) => return Ok(()),
                Some(Key::Pause) => paused = true,
                Some(Key::Step) => {}
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

/// What a terminal smaller than the recording changes, said before the replay: narrower,
/// long lines wrap; shorter, the recording's bottom rows do not fit (a full-screen program
/// draws over itself there; a shell's lines only scroll sooner). `None` when the recording fits.
fn size_note(recorded: (u16, u16), here: (u16, u16)) -> Option<String> {
    let ((width, height), (cols, rows)) = (recorded, here);
    let narrower = (cols < width).then_some("long lines wrap".to_string());
    let shorter = (rows < height).then(|| match height - rows {
        1 => "its bottom row does not fit".to_string(),
        n => format!("its bottom {n} rows do not fit"),
    });
    let effects: Vec<String> = [narrower, shorter].into_iter().flatten().collect();
    (!effects.is_empty()).then(|| {
        format!(
            "flowdeck: the recording is {width}x{height} and this terminal {cols}x{rows}: {}",
            effects.join(", and ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::size_note;

    #[test]
    fn the_size_note_says_what_a_smaller_terminal_changes_and_only_that() {
        assert_eq!(size_note((120, 30), (158, 40)), None);
        assert_eq!(size_note((120, 30), (120, 30)), None);
        assert_eq!(
            size_note((120, 30), (158, 22)).as_deref(),
            Some(
                "flowdeck: the recording is 120x30 and this terminal 158x22: its bottom 8 rows do not fit"
            )
        );
        assert_eq!(
            size_note((120, 30), (80, 40)).as_deref(),
            Some("flowdeck: the recording is 120x30 and this terminal 80x40: long lines wrap")
        );
        assert_eq!(
            size_note((120, 30), (80, 29)).as_deref(),
            Some(
                "flowdeck: the recording is 120x30 and this terminal 80x29: long lines wrap, and its bottom row does not fit"
            )
        );
    }
}
