//! The person's terminal, taken over for the studio and given back exactly as it was: on a
//! normal exit, on an error (the guard's drop), on a panic (the hook restores before the
//! message is printed, so the message is readable), and on SIGTERM/SIGHUP (the loop ends
//! normally, so the guard runs).

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
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

/// Raw mode, the alternate screen, mouse capture and bracketed paste.
pub fn enter() -> std::io::Result<(Tui, Guard)> {
    install_panic_hook();
    enable_raw_mode()?;
    TAKEN.store(true, Ordering::SeqCst);
    let guard = Guard(());
    execute!(
        stdout(),
        EnterAlternateScreen,
        EnableMouseCapture,
        EnableBracketedPaste
    )?;
    let terminal = Terminal::new(CrosstermBackend::new(stdout()))?;
    Ok((terminal, guard))
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
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = disable_raw_mode();
}

fn install_panic_hook() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}
