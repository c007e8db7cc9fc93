//! A bug in the studio's own code must not take down the engine it hosts: agents relayed to
//! this process keep their terminals and runs whatever the studio's drawing or key handling
//! does. So the loop runs each update, effect and frame under [`contain`], which catches a
//! panic and hands back its message for the status line; and the panic hook, which runs for
//! every panic in the process (also the ones the engine catches on its worker threads and
//! survives), gives the person's terminal back only for a panic that will end the studio: one
//! of its loop, outside [`contain`]. Every other panic is written to the studio's log
//! (log.rs) with a backtrace, never to stderr, which is the screen the studio draws on.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;
use std::thread::ThreadId;

thread_local! {
    /// Whether this thread is inside [`contain`]: its panic is caught and the studio goes on.
    static CONTAINED: Cell<bool> = const { Cell::new(false) };
}

/// The thread the studio's loop runs on; a panic there outside [`contain`] ends the studio.
static LOOP_THREAD: OnceLock<ThreadId> = OnceLock::new();

/// Runs `work`, turning a panic in it into its message. The panic hook logs it and leaves the
/// terminal as it is.
pub fn contain<T>(work: impl FnOnce() -> T) -> Result<T, String> {
    let outer = CONTAINED.with(|c| c.replace(true));
    let outcome = catch_unwind(AssertUnwindSafe(work));
    CONTAINED.with(|c| c.set(outer));
    outcome.map_err(|payload| crate::panics::message(payload.as_ref()))
}

/// Installs the hook (once) and records the calling thread as the studio's loop.
pub fn install_hook() {
    let _ = LOOP_THREAD.set(std::thread::current().id());
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let on_loop = LOOP_THREAD.get() == Some(&std::thread::current().id());
            let contained = CONTAINED.with(Cell::get);
            let location = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            let message = crate::panics::message(info.payload());
            let backtrace = std::backtrace::Backtrace::force_capture();
            tracing::error!(
                "panic at {location}: {message} ({}){}\n{backtrace}",
                std::thread::current().name().unwrap_or("unnamed thread"),
                if contained || !on_loop {
                    "; caught, the studio goes on"
                } else {
                    ""
                }
            );
            if !super::terminal::is_taken() {
                previous(info);
            } else if on_loop && !contained {
                // The studio ends: the person's terminal first, so that the message is read.
                super::terminal::restore();
                previous(info);
            }
        }));
    });
}

/// How many panics in a row the studio lives with before it gives up its screen: a view that
/// panics on every frame would otherwise loop forever.
const GIVE_UP_AFTER: u32 = 3;

/// Panics caught in a row (a frame drawn whole ends the row).
#[derive(Debug, Default)]
pub struct Faults {
    in_a_row: u32,
}

/// What the loop does after a caught panic.
#[derive(Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Say so on the status line and take a fresh snapshot.
    CarryOn,
    /// Start the view over from a fresh state (the same view keeps failing).
    Reset,
    /// Leave the studio's screen; the engine goes on serving agents.
    GiveUp,
}

impl Faults {
    pub fn caught(&mut self) -> Recovery {
        self.in_a_row += 1;
        match self.in_a_row {
            1 => Recovery::CarryOn,
            n if n < GIVE_UP_AFTER => Recovery::Reset,
            _ => Recovery::GiveUp,
        }
    }

    /// A frame was drawn whole: the studio works again.
    pub fn drawn(&mut self) {
        self.in_a_row = 0;
    }
}

/// A fault injected on purpose, so that tests can prove the studio survives its own bugs
/// (debug builds only: `FLOWDECK_INJECT_PANIC=update|draw|worker`, then F12 in the studio).
/// `update` panics handling that key, `draw` makes every frame from then on panic, `worker`
/// panics in a task on the runtime's worker threads, as an engine task caught by tokio does.
#[cfg(debug_assertions)]
pub mod inject {
    use std::sync::atomic::{AtomicBool, Ordering};

    static DRAW: AtomicBool = AtomicBool::new(false);

    fn kind() -> Option<String> {
        std::env::var("FLOWDECK_INJECT_PANIC").ok()
    }

    /// Called with every key before it is handled.
    pub fn on_key(key: &crossterm::event::KeyEvent) {
        if key.code != crossterm::event::KeyCode::F(12) {
            return;
        }
        match kind().as_deref() {
            Some("update") => panic!("injected: a bug in handling a key"),
            Some("draw") => DRAW.store(true, Ordering::SeqCst),
            Some("worker") => {
                tokio::spawn(async { panic!("injected: a bug in a worker task") });
            }
            _ => {}
        }
    }

    /// Called before every frame.
    pub fn on_draw() {
        if DRAW.load(Ordering::SeqCst) {
            panic!("injected: a bug in drawing");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_inside_is_its_message_and_the_thread_goes_on() {
        assert_eq!(contain(|| 7), Ok(7));
        let caught = contain(|| -> u8 { panic!("a bug with {}", "detail") });
        assert_eq!(caught, Err("a bug with detail".to_string()));
        assert!(!CONTAINED.with(Cell::get), "left as it was");
        let nested = contain(|| contain(|| -> u8 { panic!("inner") }).is_err());
        assert_eq!(nested, Ok(true));
        assert!(!CONTAINED.with(Cell::get));
    }

    #[test]
    fn a_row_of_faults_carries_on_then_resets_then_gives_up() {
        let mut faults = Faults::default();
        assert_eq!(faults.caught(), Recovery::CarryOn);
        assert_eq!(faults.caught(), Recovery::Reset);
        assert_eq!(faults.caught(), Recovery::GiveUp);
        faults.drawn();
        assert_eq!(
            faults.caught(),
            Recovery::CarryOn,
            "a frame drawn whole ends the row"
        );
    }
}
