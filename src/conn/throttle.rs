//! A log line that a client can make repeat (one per accept, per connection, per line it
//! sends) is said at most once per period; the lines held back meanwhile are counted, and the
//! next line said gives their number. A flood of bad connections costs a line every period,
//! not a line each.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One kind of log line, said at most once per period. Usable from a `static`: the lines a
/// client can repeat are counted across every connection.
#[derive(Debug)]
pub struct Throttle {
    every: Duration,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    said: Option<Instant>,
    held: u64,
}

/// How many lines like the one being said were held back since the last said; shown as a
/// note at its end (nothing when none were).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held(pub u64);

impl std::fmt::Display for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            0 => Ok(()),
            1 => write!(f, " (and 1 more like it, held back)"),
            n => write!(f, " (and {n} more like it, held back)"),
        }
    }
}

impl Throttle {
    pub const fn new(every: Duration) -> Self {
        Throttle {
            every,
            state: Mutex::new(State {
                said: None,
                held: 0,
            }),
        }
    }

    /// Whether to say this line now, with the count of those held back before it; `None`
    /// when it is held back (and counted).
    pub fn allow(&self) -> Option<Held> {
        self.allow_at(Instant::now())
    }

    fn allow_at(&self, now: Instant) -> Option<Held> {
        let mut state = self.lock();
        if state
            .said
            .is_some_and(|said| now.saturating_duration_since(said) < self.every)
        {
            state.held += 1;
            return None;
        }
        state.said = Some(now);
        Some(Held(std::mem::take(&mut state.held)))
    }

    /// The lines held back and not yet told, taken: for a last line when the trouble ends.
    pub fn take_held(&self) -> Held {
        Held(std::mem::take(&mut self.lock().held))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_a_period_says_how_many_were_held_back() {
        let throttle = Throttle::new(Duration::from_secs(10));
        let start = Instant::now();
        assert_eq!(throttle.allow_at(start), Some(Held(0)));
        for n in 1..=5 {
            let at = start + Duration::from_secs(n);
            assert_eq!(throttle.allow_at(at), None, "held back at {n} s");
        }
        let later = start + Duration::from_secs(10);
        assert_eq!(throttle.allow_at(later), Some(Held(5)));
        assert_eq!(throttle.allow_at(later), None);
        assert_eq!(throttle.take_held(), Held(1));
        assert_eq!(throttle.take_held(), Held(0));
        assert_eq!(Held(0).to_string(), "");
        assert_eq!(Held(3).to_string(), " (and 3 more like it, held back)");
    }
}
