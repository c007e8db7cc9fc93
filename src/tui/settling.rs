//! A question whose subject changes while it is on screen (another approval request in the
//! place of the one shown, a file that changed again while the editor asks about it) takes no
//! answer for a moment, and says so. A key pressed then was meant for what was there before:
//! taken at once, `y` would approve a request nobody saw, `o` overwrite a change nobody saw.
//!
//! Not a sleep: the question notes when it may be answered, the loop wakes at the earliest
//! such instant ([`App::due`](super::state::App::due)) and sends [`Event::Tick`](super::update::Event::Tick), and the
//! tick ends every moment that is over, which redraws the question as it asks normally. Keys
//! count again only after that tick, so the plain question is drawn before they do.

use std::time::{Duration, Instant};

/// How long a changed question takes no answer: enough to see that it changed, short enough
/// not to be in the way.
pub const SETTLE: Duration = Duration::from_millis(700);

/// [`SETTLE`]; in debug builds `FLOWDECK_TEST_SETTLE_MS` may lengthen it, so that a test on a
/// loaded machine can press a key inside the moment for sure (tests/studio/studio_agent.rs).
fn settle() -> Duration {
    #[cfg(debug_assertions)]
    {
        static LONGER: std::sync::OnceLock<Option<Duration>> = std::sync::OnceLock::new();
        let longer = LONGER.get_or_init(|| {
            std::env::var("FLOWDECK_TEST_SETTLE_MS")
                .ok()
                .and_then(|ms| ms.parse().ok())
                .map(Duration::from_millis)
        });
        if let Some(longer) = *longer {
            return longer.max(SETTLE);
        }
    }
    SETTLE
}

/// A question that changed at some instant and takes answers again from `until`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settling {
    pub until: Instant,
}

impl Settling {
    /// A question that changed at `now`.
    pub fn from(now: Instant) -> Self {
        Settling {
            until: now + settle(),
        }
    }

    pub fn over(&self, now: Instant) -> bool {
        now >= self.until
    }
}
