//! `flowdeck replay`: plays a run's recording (term/recording/) in this terminal, with the
//! pauses it had (sped up, idle time capped), navigable (navigate.rs: states, seconds back
//! and forth, search, speed), or writes its plain text when stdout is not a terminal. Only
//! what draws the screen reaches the person's terminal (the recording is drawn from the
//! emulated screen; piped, recording/safe.rs's plain text) unless `--raw` asks for the bytes
//! as they were recorded (raw.rs). `--at STATE` starts where the run entered that state.

mod keys;
mod navigate;
mod raw;
mod row;

use crate::engine::journal::{Journal, is_run_id, runs_dir};
use crate::term::recording::cast::{CastEvent, CastReader};
use crate::term::recording::play::{Player, Timeline};
use crate::term::recording::safe::Plain;
use anyhow::{Result, bail};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
    /// Start where the run entered this state (its recording's first marker of that name).
    pub at: Option<String>,
    /// At a terminal, stay on the last screen at the end until `q` (the studio's pane).
    pub stay: bool,
}

pub fn replay(folder: &Path, args: &ReplayArgs, out: &mut impl Write) -> Result<ExitCode> {
    let (path, others) = recording_of(folder, args)?;
    if !std::io::stdout().is_terminal() {
        piped(&path, args, out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.raw {
        if args.at.is_some() {
            bail!(
                "--at at a terminal plays the drawn screen, not the raw stream: leave out --raw, or pipe it (flowdeck replay RUN_ID --raw --at STATE | ...)"
            );
        }
        let reader = CastReader::open(&path)?;
        note_the_size((reader.header.width, reader.header.height), false);
        raw::replay(reader, args, out)?;
    } else {
        let timeline = Timeline::load(&path)?;
        let mut player = Player::new(timeline, args.speed, args.idle_limit);
        if let Some(state) = &args.at
            && !player.go_to_state(state)
        {
            let marks = player.timeline().marks().iter().map(|m| m.name.as_str());
            bail!(no_such_state(&args.what, state, marks));
        }
        let header = &player.timeline().header;
        note_the_size((header.width, header.height), true);
        navigate::replay(player, args.stay, out)?;
    }
    for (session, _) in others {
        eprintln!(
            "flowdeck: the run also recorded session {session}: flowdeck replay {} --session {session}",
            args.what
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// What a recording says in a pipe: its plain text, or its output stream as recorded
/// (`--raw`), from the start or from the state `--at` names. Read as it goes: a recording
/// may be as large as its cap.
fn piped(path: &Path, args: &ReplayArgs, out: &mut impl Write) -> Result<()> {
    let mut plain = Plain::default();
    // Reached the state `--at` names (at once without it), and the states passed before.
    let mut reached = args.at.is_none();
    let mut passed = Vec::new();
    for event in CastReader::open(path)? {
        match event? {
            CastEvent::Marker(_, name) if !reached => {
                reached = args.at.as_deref() == Some(name.as_str());
                passed.push(name);
            }
            CastEvent::Output(_, text) if reached => {
                let text = if args.raw { text } else { plain.push(&text) };
                out.write_all(text.as_bytes())?;
            }
            _ => {}
        }
    }
    if let (false, Some(state)) = (reached, &args.at) {
        bail!(no_such_state(
            &args.what,
            state,
            passed.iter().map(String::as_str)
        ));
    }
    if !args.raw {
        out.write_all(plain.finish().as_bytes())?;
    }
    out.flush()?;
    Ok(())
}

/// `--at` named a state the recording has no marker of: the ones it has.
fn no_such_state<'a>(what: &str, state: &str, marks: impl Iterator<Item = &'a str>) -> String {
    let mut names: Vec<&str> = Vec::new();
    for name in marks {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let known = if names.is_empty() {
        "it has no state markers (recorded by a flowdeck from before them, or not a run's recording)"
            .to_string()
    } else {
        format!("its states: {}", names.join(", "))
    };
    format!("the recording of {what} never entered a state {state}: {known}")
}

/// Says, before playing, what a terminal smaller than the recording leaves out.
fn note_the_size(recorded: (u16, u16), navigable: bool) {
    if let Ok(here) = crossterm::terminal::size()
        && let Some(note) = size_note(recorded, here, navigable)
    {
        eprintln!("{note}");
    }
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

/// What a terminal smaller than the recording changes, said before the replay. Navigable,
/// long lines are cut, and the rows around the cursor are shown when not all fit (the
/// status line takes a row too, unsaid: the cursor's row is always shown). Raw, long lines
/// wrap and the bottom rows do not fit (a full-screen program draws over itself there; a
/// shell's lines only scroll sooner). `None` when the recording fits.
fn size_note(recorded: (u16, u16), here: (u16, u16), navigable: bool) -> Option<String> {
    let ((width, height), (cols, rows)) = (recorded, here);
    let narrower = (cols < width).then(|| match navigable {
        true => "long lines are cut".to_string(),
        false => "long lines wrap".to_string(),
    });
    let shorter = (rows < height).then(|| match (navigable, height - rows) {
        (true, _) => format!(
            "{} of its {height} rows fit (those around its cursor are shown)",
            rows.saturating_sub(1)
        ),
        (false, 1) => "its bottom row does not fit".to_string(),
        (false, n) => format!("its bottom {n} rows do not fit"),
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
        assert_eq!(size_note((120, 30), (158, 40), false), None);
        assert_eq!(size_note((120, 30), (120, 30), false), None);
        assert_eq!(size_note((120, 30), (120, 30), true), None);
        assert_eq!(
            size_note((120, 30), (158, 22), false).as_deref(),
            Some(
                "flowdeck: the recording is 120x30 and this terminal 158x22: its bottom 8 rows do not fit"
            )
        );
        assert_eq!(
            size_note((120, 30), (80, 40), false).as_deref(),
            Some("flowdeck: the recording is 120x30 and this terminal 80x40: long lines wrap")
        );
        assert_eq!(
            size_note((120, 30), (80, 29), false).as_deref(),
            Some(
                "flowdeck: the recording is 120x30 and this terminal 80x29: long lines wrap, and its bottom row does not fit"
            )
        );
        assert_eq!(
            size_note((120, 30), (80, 25), true).as_deref(),
            Some(
                "flowdeck: the recording is 120x30 and this terminal 80x25: long lines are cut, and 24 of its 30 rows fit (those around its cursor are shown)"
            )
        );
    }
}
