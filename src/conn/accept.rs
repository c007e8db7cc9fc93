//! Accepting connections when accepting fails. A listener whose process is out of descriptors
//! (EMFILE, ENFILE) stays readable: the connection waits in the queue, and every accept fails
//! again at once. Tried again at once, the loop took a whole core and wrote a log line per
//! turn (56 MB in 5 s). Here it pauses instead, from [`FIRST_PAUSE`] doubling to
//! [`LONGEST_PAUSE`] while failures go on, and says so at most once per [`SAY_EVERY`] with
//! the count; descriptors freed meanwhile (a connection ends) let the waiting connections in
//! at the next try.

use super::throttle::Throttle;
use std::time::Duration;

/// The pause after the first failure in a row.
pub const FIRST_PAUSE: Duration = Duration::from_millis(100);

/// The longest pause: a connection that could be accepted waits no longer than this.
pub const LONGEST_PAUSE: Duration = Duration::from_secs(1);

/// How often failures to accept are said, at most.
pub const SAY_EVERY: Duration = Duration::from_secs(10);

/// An accept loop's memory of its failures.
#[derive(Debug)]
pub struct Acceptor {
    /// What is accepted, for the log ("an MCP client").
    what: &'static str,
    /// The pause after the next failure, once one failed.
    pause: Option<Duration>,
    said: Throttle,
}

impl Acceptor {
    pub fn new(what: &'static str) -> Self {
        Acceptor {
            what,
            pause: None,
            said: Throttle::new(SAY_EVERY),
        }
    }

    /// The next connection `accept` gives, trying again after a pause whenever it fails.
    /// Cancel-safe: dropped during a pause (the loop had something else to do), the next call
    /// tries at once and then pauses longer.
    pub async fn next<T, F, Fut>(&mut self, mut accept: F) -> T
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = std::io::Result<T>>,
    {
        loop {
            match accept().await {
                Ok(accepted) => {
                    self.recovered();
                    return accepted;
                }
                Err(e) => {
                    let pause = self.failed(&e);
                    tokio::time::sleep(pause).await;
                }
            }
        }
    }

    /// Counts a failure (said when its period allows) and gives the pause before the next try.
    fn failed(&mut self, e: &std::io::Error) -> Duration {
        let pause = self
            .pause
            .map_or(FIRST_PAUSE, |last| (last * 2).min(LONGEST_PAUSE));
        self.pause = Some(pause);
        if let Some(held) = self.said.allow() {
            tracing::warn!(
                "accepting {} failed: {e}; trying again in at most {} s{held}",
                self.what,
                LONGEST_PAUSE.as_secs()
            );
        }
        pause
    }

    fn recovered(&mut self) {
        if self.pause.take().is_some() {
            let held = self.said.take_held();
            tracing::info!("accepting {} again{held}", self.what);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::ErrorKind;

    #[test]
    fn pauses_double_to_the_longest_and_start_over_after_a_success() {
        let mut acceptor = Acceptor::new("a test client");
        let e = std::io::Error::from(ErrorKind::Other);
        let pauses: Vec<u64> = (0..6)
            .map(|_| acceptor.failed(&e).as_millis() as u64)
            .collect();
        assert_eq!(pauses, [100, 200, 400, 800, 1000, 1000]);
        acceptor.recovered();
        assert_eq!(acceptor.failed(&e), FIRST_PAUSE);
    }

    #[tokio::test]
    async fn an_accept_that_fails_is_tried_again_after_a_pause_not_at_once() {
        let mut acceptor = Acceptor::new("a test client");
        let mut tries = 0;
        let started = std::time::Instant::now();
        let accepted = acceptor
            .next(|| {
                tries += 1;
                let outcome = if tries < 3 {
                    // EMFILE: out of descriptors.
                    Err(std::io::Error::from_raw_os_error(24))
                } else {
                    Ok(tries)
                };
                std::future::ready(outcome)
            })
            .await;
        assert_eq!(accepted, 3);
        assert!(started.elapsed() >= Duration::from_millis(100 + 200));
    }
}
