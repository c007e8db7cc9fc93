//! `flowdeck replay` at a terminal: the recording played by the navigable player
//! (term/recording/play.rs), its screen drawn on the alternate screen with a status line
//! below it, and the keys mapped to the player's moves. The studio's replay pane runs this
//! same command, so its keys are these.
//!
//! What reaches the person's terminal is drawn from the emulated screen (text, colours and
//! attributes, the cursor), never the recorded sequences: a recording cannot set the
//! clipboard or the title, or query the terminal. At the end the alternate screen is left
//! and the last screen the recording showed is written where the replay ran, the person's
//! next prompt below it (nothing when the recorded program was on its own alternate screen:
//! that is gone as it ends).

use super::keys::{Key, Keys};
use super::row;
use crate::term::recording::play::Player;
use anyhow::{Context, Result};
use std::io::Write;
use std::time::Instant;

/// How far `←` and `→` go, in the recording's seconds.
const SKIP: f64 = 5.0;

/// How often the status line's time moves on while nothing else happens.
const CLOCK_TICK: std::time::Duration = std::time::Duration::from_millis(200);

/// What the keys are doing: playing, or typing what `/` searches for.
enum Typing {
    Keys,
    Search(String),
}

/// Plays `player` until its end (`stay`: until `q`, the end shown meanwhile), or `q`.
pub(super) fn replay(mut player: Player, stay: bool, out: &mut impl Write) -> Result<()> {
    out.write_all(ENTER.as_bytes())?;
    let played = {
        let keys = Keys::take();
        let mut drawn = Drawn::default();
        // With no keyboard, nothing could end a stay.
        let stay = stay && keys.raw;
        play(&mut player, &keys, stay, &mut drawn, out)
    };
    out.write_all(LEAVE.as_bytes())?;
    out.write_all(last_screen(&mut player).as_bytes())?;
    out.flush()?;
    played
}

/// The alternate screen, cleared, the cursor home.
const ENTER: &str = "\x1b[?1049h\x1b[H\x1b[2J";
/// Attributes reset, the cursor shown, the person's own screen back.
const LEAVE: &str = "\x1b[0m\x1b[?25h\x1b[?1049l";

fn play(
    player: &mut Player,
    keys: &Keys,
    stay: bool,
    drawn: &mut Drawn,
    out: &mut impl Write,
) -> Result<()> {
    let mut typing = Typing::Keys;
    let mut last_search: Option<String> = None;
    // Said on the status line until the next key.
    let mut said: Option<String> = None;
    let mut clock = Instant::now();
    loop {
        let status = match &typing {
            Typing::Search(text) => format!("/{text}"),
            Typing::Keys => said.clone().unwrap_or_else(|| player.status()),
        };
        drawn
            .draw(player, &status, out)
            .context("cannot write the recording")?;
        let searching = matches!(typing, Typing::Search(_));
        if player.ended() && !player.paused && !searching && !stay {
            return Ok(());
        }
        // Playing stops while a search is typed; while it plays, the status line's time
        // goes on through a long pause too.
        let wait = if searching {
            None
        } else {
            player.due_in().map(|due| due.min(CLOCK_TICK))
        };
        let key = keys.next(wait)?;
        let now = Instant::now();
        if !searching {
            player.forward(now - clock);
        }
        clock = now;
        let Some(key) = key else { continue };
        said = None;
        match (&mut typing, key) {
            (_, Key::Resized) => drawn.forget(),
            (Typing::Search(text), Key::Char(c)) => text.push(c),
            (Typing::Search(text), Key::Backspace) => {
                text.pop();
            }
            (Typing::Search(_), Key::Quit) => typing = Typing::Keys,
            (Typing::Search(text), Key::Enter) => {
                let text = std::mem::take(text);
                typing = Typing::Keys;
                if !text.is_empty() {
                    said = search(player, &text);
                    last_search = Some(text);
                }
            }
            (Typing::Search(_), _) => {}
            (Typing::Keys, Key::Quit | Key::Char('q')) => return Ok(()),
            (Typing::Keys, key) => {
                said = act(player, key, &mut typing, last_search.as_deref());
            }
        }
    }
}

/// What a key does while playing; what to say about it, if anything.
fn act(
    player: &mut Player,
    key: Key,
    typing: &mut Typing,
    last_search: Option<&str>,
) -> Option<String> {
    match key {
        Key::Char(' ') => player.paused = !player.paused,
        // The next event, and paused there.
        Key::Char('.') => {
            player.paused = true;
            player.step();
        }
        Key::Char(']') if !player.next_state() => return Some("no next state".into()),
        Key::Char('[') => player.previous_state(),
        Key::Left => player.skip(-SKIP),
        Key::Right => player.skip(SKIP),
        Key::Char('+' | '=') => player.faster(),
        Key::Char('-' | '_') => player.slower(),
        Key::Char('/') => *typing = Typing::Search(String::new()),
        Key::Char('n') => match last_search {
            Some(text) => return search(player, text),
            None => return Some("nothing searched yet: / searches".into()),
        },
        _ => {}
    }
    None
}

fn search(player: &mut Player, text: &str) -> Option<String> {
    (!player.search(text)).then(|| format!("not found further on: {text}"))
}

/// What the person's terminal shows, row by row, so that only what changed is written.
#[derive(Default)]
struct Drawn {
    rows: Vec<String>,
    status: String,
    /// The person's terminal's size when last drawn.
    size: (u16, u16),
}

impl Drawn {
    /// Draws everything again at the next frame (the terminal was resized).
    fn forget(&mut self) {
        *self = Drawn::default();
    }

    /// Draws the recording's screen where it stands and the status line below it: as many
    /// of its rows as fit above the status line, those around the cursor when not all do;
    /// as many of its columns as fit.
    fn draw(&mut self, player: &mut Player, status: &str, out: &mut impl Write) -> Result<()> {
        let size = crossterm::terminal::size().unwrap_or((80, 24));
        if size != self.size {
            self.forget();
            self.size = size;
            out.write_all(b"\x1b[0m\x1b[2J")?;
        }
        let (cols, rows) = size;
        let recorded = player.size();
        let screen = player.screen();
        let shown_rows = recorded.rows.min(rows.saturating_sub(1));
        let shown_cols = recorded.cols.min(cols);
        let (cursor_row, cursor_col) = screen.cursor_position();
        // The rows around the cursor, when they do not all fit.
        let top = (cursor_row + 1)
            .saturating_sub(shown_rows)
            .min(recorded.rows - shown_rows);
        let mut frame = Vec::new();
        let lines: Vec<String> = (top..top + shown_rows)
            .map(|row| row::formatted(screen, row, shown_cols))
            .collect();
        self.rows.resize(usize::from(rows), String::new());
        for (row, line) in lines.iter().enumerate() {
            if self.rows[row] != *line {
                write!(frame, "\x1b[{};1H\x1b[0m", row + 1)?;
                frame.extend_from_slice(line.as_bytes());
                frame.extend_from_slice(b"\x1b[0m\x1b[K");
                self.rows[row].clone_from(line);
            }
        }
        // Rows the recording no longer reaches (it was resized smaller).
        for row in lines.len()..usize::from(rows.saturating_sub(1)) {
            if !self.rows[row].is_empty() {
                write!(frame, "\x1b[{};1H\x1b[0m\x1b[K", row + 1)?;
                self.rows[row].clear();
            }
        }
        if self.status != status {
            let status: String = status.chars().take(usize::from(cols)).collect();
            write!(frame, "\x1b[{rows};1H\x1b[0;7m{status}\x1b[0m\x1b[K")?;
            self.status = status;
        }
        let visible = (top..top + shown_rows).contains(&cursor_row) && cursor_col < shown_cols;
        if visible && !screen.hide_cursor() {
            write!(
                frame,
                "\x1b[{};{}H\x1b[?25h",
                cursor_row - top + 1,
                cursor_col + 1
            )?;
        } else {
            frame.extend_from_slice(b"\x1b[?25l");
        }
        out.write_all(&frame)?;
        out.flush()?;
        Ok(())
    }
}

/// The recording's last screen as the person's terminal keeps it after the replay: its rows
/// down to the last with text, each ending its line, so that the next prompt comes below.
/// Nothing when the recorded program was on its alternate screen.
fn last_screen(player: &mut Player) -> String {
    let size = player.size();
    let (cols, rows) = (size.cols, size.rows);
    let screen = player.screen();
    if screen.alternate_screen() {
        return String::new();
    }
    let text: Vec<String> = screen.rows(0, cols).collect();
    let Some(last) = text.iter().rposition(|row| !row.trim().is_empty()) else {
        return String::new();
    };
    let mut kept = String::new();
    for row in (0..rows).take(last + 1) {
        kept.push_str(&row::formatted(screen, row, cols));
        kept.push_str("\r\n");
    }
    kept
}
