//! When a session last changed, for waits that end once a program has settled.
//!
//! An agent driving a full-screen program (an editor, a dashboard, an installer's dialog)
//! often cannot name the text it waits for; it waits until the program has finished
//! drawing. "Finished" is quiet: no output for a while, or, for programs that keep
//! redrawing (a clock, a blinking cursor, a spinner redrawn in place), no change of the
//! screen's text for a while. The reader stamps every batch of output here; the screen's
//! text is compared only while a screen-quiet wait needs it, since drawing and hashing the
//! grid on every batch would slow a flood for nobody.

use super::matcher::QuietOn;
use super::screen::Screen;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Instant;

#[derive(Debug)]
pub struct QuietClock {
    last_output: Instant,
    /// Waits that watch the screen's text; while there are none, it is not looked at.
    screen_watchers: usize,
    screen_hash: u64,
    screen_changed: Instant,
}

impl QuietClock {
    pub fn new() -> Self {
        let now = Instant::now();
        QuietClock {
            last_output: now,
            screen_watchers: 0,
            screen_hash: 0,
            screen_changed: now,
        }
    }

    /// A batch of output was taken into `screen`.
    pub fn output(&mut self, screen: &mut Screen) {
        let now = Instant::now();
        self.last_output = now;
        if self.screen_watchers > 0 {
            let hash = text_hash(screen);
            if hash != self.screen_hash {
                self.screen_hash = hash;
                self.screen_changed = now;
            }
        }
    }

    /// A screen-quiet wait begins: the screen as it is now is what later output must change.
    pub fn watch_screen(&mut self, screen: &mut Screen) {
        if self.screen_watchers == 0 {
            self.screen_hash = text_hash(screen);
        }
        self.screen_watchers += 1;
    }

    pub fn unwatch_screen(&mut self) {
        self.screen_watchers = self.screen_watchers.saturating_sub(1);
    }

    /// The last change of the kind a wait watches.
    pub fn last_change(&self, on: QuietOn) -> Instant {
        match on {
            QuietOn::Output => self.last_output,
            QuietOn::Screen => self.screen_changed,
        }
    }
}

impl Default for QuietClock {
    fn default() -> Self {
        QuietClock::new()
    }
}

/// The screen's text, not its cursor, colours or title.
fn text_hash(screen: &mut Screen) -> u64 {
    let mut hasher = DefaultHasher::new();
    screen.text().hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::screen::Size;

    #[test]
    fn the_screen_clock_moves_only_when_the_text_changes() {
        let mut screen = Screen::new(Size { cols: 20, rows: 4 });
        let mut clock = QuietClock::new();
        screen.feed(b"frame 1");
        clock.watch_screen(&mut screen);
        let before = clock.last_change(QuietOn::Screen);
        // The same text redrawn, the cursor moved and shown again, a new title.
        screen.feed(b"\r\x1b[Kframe 1\x1b[?25l\x1b[2;3H\x1b[?25h\x1b]0;busy\x07");
        clock.output(&mut screen);
        assert_eq!(clock.last_change(QuietOn::Screen), before);
        assert!(clock.last_change(QuietOn::Output) >= before);
        screen.feed(b"\x1b[1;1Hframe 2");
        clock.output(&mut screen);
        assert!(clock.last_change(QuietOn::Screen) > before);
        clock.unwatch_screen();
        let changed = clock.last_change(QuietOn::Screen);
        screen.feed(b"\x1b[1;1Hframe 3");
        clock.output(&mut screen);
        assert_eq!(
            clock.last_change(QuietOn::Screen),
            changed,
            "not looked at with no screen-quiet wait"
        );
    }
}
