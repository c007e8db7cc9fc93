//! Waiting for output: for a pattern, for quiet, for the shell's prompt, with a deadline.

use super::info::AwaitResult;
use super::{Session, Shared};
use crate::term::error::TermError;
use crate::term::matcher::{AwaitSpec, Event, Hit, Quiet, QuietOn, Since, WaitOutcome, Watch};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

impl Session {
    /// Waits until the program has printed something (a shell's first prompt: by then its
    /// line editor owns the terminal, so input typed next is echoed once). Returns whether
    /// output arrived in time.
    pub async fn wait_for_output(&self, timeout: Duration) -> bool {
        let mut activity = self.activity();
        let waited =
            tokio::time::timeout(timeout, activity.wait_for(|a| a.bytes > 0 || a.exited)).await;
        matches!(waited, Ok(Ok(a)) if a.bytes > 0)
    }

    /// For a far shell (remote.rs): waits until the far side says it was reached. False when
    /// the connect command ended first or the session's patience ran out.
    pub async fn wait_until_reached(&self) -> bool {
        let reached = |shared: &Shared| {
            let live = shared.lock();
            match &live.remote {
                Some(remote) if remote.is_ready => Some(true),
                // Ended, not only exited: the connect command's last words (ssh's "Connection
                // refused") are read by then, and they are why it was not reached.
                _ if live.ended || live.failed.is_some() => Some(false),
                None => Some(true),
                Some(_) => None,
            }
        };
        self.decided_within(self.patience(), reached).await
    }

    /// For a far shell: waits until its prompt, set up to carry the marker, is drawn (at
    /// once when it already was). False when it was not within `timeout` (a configuration
    /// that rebuilds the prompt drops the marker; see remote.rs).
    pub async fn wait_for_marked_prompt(&self, timeout: Duration) -> bool {
        let marked = |shared: &Shared| {
            let live = shared.lock();
            let at_prompt = live
                .remote
                .as_ref()
                .is_some_and(|r| r.prompts > 0 && r.at_prompt);
            if live.exit.is_some() {
                Some(false)
            } else {
                at_prompt.then_some(true)
            }
        };
        self.decided_within(timeout, marked).await
    }

    /// Asks `decide` again each time output arrives, until it answers or `timeout` passes
    /// (false). After the session's last output, its last answer stands.
    async fn decided_within(
        &self,
        timeout: Duration,
        decide: impl Fn(&Shared) -> Option<bool>,
    ) -> bool {
        let mut activity = self.activity();
        let waited = tokio::time::timeout(timeout, async {
            loop {
                activity.borrow_and_update();
                if let Some(answer) = decide(&self.shared) {
                    return answer;
                }
                if activity.changed().await.is_err() {
                    return decide(&self.shared).unwrap_or(false);
                }
            }
        })
        .await;
        waited.unwrap_or(false)
    }

    /// For a far shell: whether its far side has been reached (until then, what is typed
    /// answers the connect command: a password, a passphrase). `None` for a local session.
    pub fn far_side_reached(&self) -> Option<bool> {
        self.shared.lock().remote.as_ref().map(|r| r.is_ready)
    }

    /// For a far shell: whether a person can answer its connect command's questions.
    pub fn person_answers(&self) -> bool {
        self.shared.lock().remote.as_ref().is_some_and(|r| r.person)
    }

    /// For a far shell: how long it may take to be reached.
    pub fn patience(&self) -> Duration {
        self.shared
            .lock()
            .remote
            .as_ref()
            .map_or(Duration::ZERO, |r| r.patience)
    }

    /// For a far shell: the line that sets its prompt up to say when it reads (remote.rs).
    pub fn prompt_setup(&self) -> Option<String> {
        self.shared.lock().remote.as_ref().map(|r| r.prompt_setup())
    }

    /// Waits until the shell is back at its prompt: in the foreground and reading its next
    /// line (its line editor has the terminal, or it reads in cooked mode), not just done
    /// with the program it ran. Re-checks when output arrives and, since a shell can start
    /// reading without printing anything, every few milliseconds. Returns whether it is at
    /// its prompt.
    pub async fn wait_for_prompt(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut activity = self.activity();
        let mut look = Duration::from_micros(500);
        loop {
            activity.borrow_and_update();
            if self.exit().is_some() {
                return false;
            }
            if self.require_shell_prompt().is_ok() && self.reading_input() {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            let wait = look.min(left);
            if let Ok(Err(_)) = tokio::time::timeout(wait, activity.changed()).await {
                // No more activity will be published; look again after the pause.
                tokio::time::sleep(wait).await;
            }
            look = (look * 2).min(Duration::from_millis(10));
        }
    }

    /// Waits until the session's shell is back at its prompt, reading its next command, as
    /// the shell itself tells it (a local shell's process reading its terminal; a far
    /// shell's prompt marker), never by the prompt's text; said as a pattern's wait says
    /// how it ended: matched, the program exited, or the time ran out.
    pub async fn await_shell_prompt(&self, timeout: Duration) -> Result<AwaitResult, TermError> {
        let started = Instant::now();
        let far = self.shared.lock().remote.is_some();
        let back = if far {
            self.wait_for_marked_prompt(timeout).await
        } else {
            self.wait_for_prompt(timeout).await
        };
        let live = self.shared.lock();
        let mut result = live.result(self.id(), started, None)?;
        result.outcome = match (back, live.exit.is_some()) {
            (true, _) => WaitOutcome::Matched,
            (false, true) => WaitOutcome::Exited,
            (false, false) => WaitOutcome::Timeout,
        };
        Ok(result)
    }

    /// Waits until the pattern matches (and then, or alone, until the program settles: see
    /// quiet.rs), a stop pattern matches, the program ends or time runs out; fails at once
    /// when the session can no longer read its output. Dropping the future (cancellation)
    /// removes the wait.
    ///
    /// Stop patterns are looked for over the same output as the pattern (`since`), quiet
    /// waits included: an error printed between the input and the wait stops it. After the
    /// pattern matched, they go on from the match.
    pub async fn await_output(&self, spec: AwaitSpec) -> Result<AwaitResult, TermError> {
        let started = Instant::now();
        let deadline = started + spec.timeout;
        let (Some(quiet), pattern) = (spec.quiet, spec.pattern.is_some()) else {
            let event = self.watch(spec, deadline).await;
            return self.shared.lock().result(&self.id, started, event);
        };
        let mut stops = AwaitSpec {
            pattern: None,
            stop_patterns: spec.stop_patterns.clone(),
            since: spec.since,
            timeout: Duration::ZERO,
            typist: spec.typist.clone(),
            quiet: None,
        };
        let matched = if pattern {
            match self.watch(spec, deadline).await {
                Some(Event::Hit(hit)) if hit.stop.is_none() => {
                    // Up to the match, the pattern's own wait held the stop patterns too.
                    stops.since = Since::After(hit.after);
                    Some(hit)
                }
                event => return self.shared.lock().result(&self.id, started, event),
            }
        } else {
            None
        };
        self.settle(stops, quiet, started, deadline, matched).await
    }

    /// Registers a wait, unless its event is already decided (a match in what has arrived,
    /// the program's end, a failure). With `screen`, the screen's text is watched while the
    /// returned guard lives.
    fn register(
        &self,
        spec: AwaitSpec,
        screen: bool,
    ) -> Result<(Registered<'_>, oneshot::Receiver<Event>), Event> {
        let (tx, rx) = oneshot::channel();
        let mut guard = self.shared.lock();
        let live = &mut *guard;
        if let Some(reason) = &live.failed {
            return Err(Event::Failed(reason.clone()));
        }
        live.next_watch += 1;
        let mut watch = Watch::new(live.next_watch, spec, &live.transcript);
        if let Some(hit) = watch.scan(&live.transcript, &mut live.screen, &live.inputs) {
            return Err(Event::Hit(Box::new(hit)));
        }
        if live.ended {
            return Err(Event::Ended);
        }
        if screen {
            live.quiet.watch_screen(&mut live.screen);
        }
        watch.notify = Some(tx);
        let id = watch.id;
        live.watches.push(watch);
        drop(guard);
        let registered = Registered {
            shared: &self.shared,
            id,
            screen,
        };
        Ok((registered, rx))
    }

    /// Registers a wait and waits for its event until `deadline`; `None` when time ran out.
    async fn watch(&self, spec: AwaitSpec, deadline: Instant) -> Option<Event> {
        let (_registered, mut rx) = match self.register(spec, false) {
            Ok(registered) => registered,
            Err(event) => return Some(event),
        };
        let wait = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(wait, &mut rx).await {
            Ok(Ok(event)) => Some(event),
            Ok(Err(_)) => Some(Event::Ended),
            // A hit sent in the same instant as the timeout still counts.
            Err(_) => rx.try_recv().ok(),
        }
    }

    /// Waits until the session has been quiet for `quiet` (after `matched`, the pattern's
    /// match, if there was one); `stops` (stop patterns alone, over their region), the
    /// program's end and the deadline still end the wait. A timer, re-armed to the last
    /// change when output came meanwhile: no polling, and one wake-up per quiet period
    /// however fast the output.
    async fn settle(
        &self,
        stops: AwaitSpec,
        quiet: Quiet,
        started: Instant,
        deadline: Instant,
        matched: Option<Box<Hit>>,
    ) -> Result<AwaitResult, TermError> {
        let from = Instant::now();
        // Registered once; its event (a stop pattern, the end) is awaited across timers.
        let (_registered, mut rx) = match self.register(stops, quiet.on == QuietOn::Screen) {
            Ok(registered) => registered,
            Err(event) => return self.shared.lock().result(&self.id, started, Some(event)),
        };
        loop {
            let last = self.shared.lock().quiet.last_change(quiet.on).max(from);
            let now = Instant::now();
            let settled_at = last + quiet.quiet;
            if now >= settled_at || now >= deadline {
                let live = self.shared.lock();
                let mut result = live.result(&self.id, started, matched.map(Event::Hit))?;
                if now >= settled_at {
                    result.outcome = WaitOutcome::Matched;
                    result.quiet_ms = Some(now.duration_since(last).as_secs_f64() * 1000.0);
                } else {
                    result.outcome = WaitOutcome::Timeout;
                }
                return Ok(result);
            }
            tokio::select! {
                event = &mut rx => {
                    let event = event.unwrap_or(Event::Ended);
                    return self.shared.lock().result(&self.id, started, Some(event));
                }
                () = tokio::time::sleep_until(settled_at.min(deadline).into()) => {}
            }
        }
    }
}

/// Removes a registered wait when the waiting future finishes or is dropped.
struct Registered<'a> {
    shared: &'a Shared,
    id: u64,
    /// The wait watches the screen's text (quiet.rs).
    screen: bool,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        let mut live = self.shared.lock();
        live.watches.retain(|w| w.id != self.id);
        if self.screen {
            live.quiet.unwatch_screen();
        }
    }
}
