//! The person's terminal, taken over for the studio and given back exactly as it was: on a
//! normal exit, on an error (the guard's drop), on a panic that ends the studio (the hook of
//! containment.rs restores before the message is printed, so the message is readable), and on
//! SIGTERM/SIGHUP (the loop ends normally, so the guard runs).

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture,
};
use crossterm::execute;
use crossterm::terminal::{
    ClearType, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::{Stdout, stdout};
use std::sync::atomic::{AtomicBool, Ordering};

pub type Tui = Terminal<CrosstermBackend<Stdout>>;

/// Whether the terminal is ours right now: restoring twice would write sequences into the
/// person's shell.
static TAKEN: AtomicBool = AtomicBool::new(false);

/// Gives the terminal back when dropped.
#[derive(Debug)]
pub struct Guard(());

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

/// xterm's title stack (`CSI 22;0 t` saves the window and icon titles, `CSI 23;0 t` brings
/// them back): the studio may retitle the terminal to call the person, and gives the title
/// back. Terminals without the stack ignore both.
const SAVE_TITLE: &str = "\x1b[22;0t";
const RESTORE_TITLE: &str = "\x1b[23;0t";

/// Raw mode, the alternate screen, mouse capture, focus reports and bracketed paste.
pub fn enter() -> std::io::Result<(Tui, Guard)> {
    take(true)?;
    let guard = Guard(());
    let terminal = Terminal::new(CrosstermBackend::new(stdout()))?;
    Ok((terminal, guard))
}

/// Raw mode, the alternate screen, focus reports, bracketed paste, and the mouse when
/// `mouse`; once taken, `restore` gives it back.
fn take(mouse: bool) -> std::io::Result<()> {
    enable_raw_mode()?;
    TAKEN.store(true, Ordering::SeqCst);
    execute!(
        stdout(),
        crossterm::style::Print(SAVE_TITLE),
        EnterAlternateScreen,
        EnableFocusChange,
        EnableBracketedPaste
    )?;
    if mouse {
        execute!(stdout(), EnableMouseCapture)?;
    }
    Ok(())
}

/// Whether the studio holds the terminal now (raw mode, the alternate screen).
pub fn is_taken() -> bool {
    TAKEN.load(Ordering::SeqCst)
}

/// Leaves the alternate screen, shows the cursor and turns raw mode off; once.
pub fn restore() {
    if !TAKEN.swap(false, Ordering::SeqCst) {
        return;
    }
    // Each step is tried even when one fails: a half-restored terminal is the worst outcome.
    let _ = execute!(
        stdout(),
        DisableBracketedPaste,
        DisableFocusChange,
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::style::Print(RESTORE_TITLE),
        crossterm::cursor::Show
    );
    let _ = disable_raw_mode();
}

/// Takes the mouse (the studio's clicks, wheel and selection) or leaves it to the terminal.
pub fn capture_mouse(on: bool) -> std::io::Result<()> {
    if on {
        execute!(stdout(), EnableMouseCapture)
    } else {
        execute!(stdout(), DisableMouseCapture)
    }
}

/// Calls the person back to the studio: the bell, and `text` in the terminal's title.
pub fn alert(text: &str) -> std::io::Result<()> {
    let title = format!("flowdeck: {}", super::text::clean(text));
    execute!(
        stdout(),
        crossterm::style::Print("\x07"),
        crossterm::terminal::SetTitle(title)
    )
}

/// Calls the person about `text` as `how` says (the bell, a desktop notification), and with
/// `title` puts it in the terminal's title too. Inside tmux a notification goes through to
/// the outer terminal wrapped in tmux's passthrough (dropped unless `allow-passthrough` is
/// on, like any other sequence tmux does not know).
pub fn ring(how: super::ring::Ring, text: &str, title: bool, tmux: bool) -> std::io::Result<()> {
    let text = super::text::clean(text);
    let mut sequence = how.sequence("flowdeck", &text);
    if tmux && let Some(notification) = sequence.strip_prefix('\x07').filter(|n| !n.is_empty()) {
        sequence = format!(
            "\x07\x1bPtmux;{}\x1b\\",
            notification.replace('\x1b', "\x1b\x1b")
        );
    }
    if title {
        sequence.push_str(&format!("\x1b]2;flowdeck: {text}\x07"));
    }
    execute!(stdout(), crossterm::style::Print(sequence))
}

/// The terminal's own title again (and saved again, for the next alert).
pub fn clear_alert() -> std::io::Result<()> {
    execute!(
        stdout(),
        crossterm::style::Print(RESTORE_TITLE),
        crossterm::style::Print(SAVE_TITLE)
    )
}

/// Hands the terminal to the person's editor (`$VISUAL`, else `$EDITOR`, else `vi`) on
/// `path`, waits for it, and takes the terminal back with a full redraw. The command is run
/// by `sh`, so an editor set as `code --wait` works.
pub fn run_external_editor(tui: &mut Tui, path: &str, mouse: bool) -> Result<(), String> {
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string());
    restore();
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("flowdeck-editor")
        .arg(path)
        .status();
    // Everything is drawn again: a blank frame over a cleared screen, so the next frame
    // differs in every cell. (`Terminal::clear` would ask the terminal where its cursor is,
    // which crossterm cannot read back while its event stream is paused.)
    let taken = take(mouse)
        .and_then(|()| execute!(stdout(), crossterm::terminal::Clear(ClearType::All)))
        .and_then(|()| {
            tui.draw(|frame| frame.render_widget(ratatui::widgets::Clear, frame.area()))
                .map(|_| ())
        });
    if let Err(e) = taken {
        return Err(format!("cannot take the terminal back: {e}"));
    }
    match status {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("{editor} ended with {s}")),
        Err(e) => Err(format!("cannot start {editor}: {e}")),
    }
}
