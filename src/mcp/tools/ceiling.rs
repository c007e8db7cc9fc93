//! Waits that fit inside agent hosts' time limits. Hosts give up on a tool call at about 60 s
//! (Claude Code's desktop app, whatever `MCP_TOOL_TIMEOUT` says; the TypeScript SDK's default
//! request timeout), and a call they gave up on is a run the agent never hears the end of. So
//! every call that waits answers by the server's ceiling (50 s unless `--max-wait` says
//! otherwise): a longer wait asked for is cut to it, and the answer says so in
//! `effective_timeout`; a run still going by then is answered with its handle and goes on.
//! While a call waits, a progress notification every few seconds keeps hosts that reset
//! their timer on progress from giving up sooner.

use super::CallContext;
use schemars::JsonSchema;
use serde::Serialize;
use std::future::Future;
use std::time::Duration;

/// The ceiling when nobody set one: below the 60 s hosts commonly allow a call.
pub const DEFAULT_MAX_WAIT: Duration = Duration::from_secs(50);

/// How often a waiting call tells the client it is still at it: every 5 s, and at least four
/// times within a short ceiling.
pub fn beat_every(cx: &CallContext) -> Duration {
    const HEARTBEAT: Duration = Duration::from_secs(5);
    cx.max_wait
        .map_or(HEARTBEAT, |ceiling| HEARTBEAT.min(ceiling / 4))
        .max(Duration::from_millis(100))
}

/// A result of a call that waited, with the wait it was given when that was shorter than the
/// one asked for.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Waited<T> {
    #[serde(flatten)]
    pub result: T,
    /// Seconds the call waited at most, when that was less than asked (the server's ceiling).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_timeout: Option<f64>,
}

/// A wait asked for, cut to the call's ceiling: the wait to use, and the ceiling in seconds
/// when it cut the wait.
pub fn clamp(asked: Duration, cx: &CallContext) -> (Duration, Option<f64>) {
    match cx.max_wait {
        Some(ceiling) if asked > ceiling => (ceiling, Some(ceiling.as_secs_f64())),
        _ => (asked, None),
    }
}

/// A wait asked for in seconds (`None` for the tool's default), cut to the ceiling. A
/// negative or NaN wait is no wait; one too large for a `Duration` is the ceiling's to cut.
pub fn clamp_secs(asked: Option<f64>, default: f64, cx: &CallContext) -> (f64, Option<f64>) {
    let asked = asked.unwrap_or(default);
    let asked = if asked.is_nan() { 0.0 } else { asked.max(0.0) };
    let duration = Duration::try_from_secs_f64(asked).unwrap_or(Duration::MAX);
    match clamp(duration, cx) {
        (cut, Some(effective)) => (cut.as_secs_f64(), Some(effective)),
        _ => (asked, None),
    }
}

/// Runs `work`, telling the client every few seconds that the call still waits (when it asked
/// for progress).
pub async fn heartbeat<T>(cx: &CallContext, what: &str, work: impl Future<Output = T>) -> T {
    if cx.progress.is_none() {
        return work.await;
    }
    tokio::pin!(work);
    let started = tokio::time::Instant::now();
    let every = beat_every(cx);
    let mut beat = tokio::time::interval_at(started + every, every);
    loop {
        tokio::select! {
            done = &mut work => return done,
            _ = beat.tick() => {
                cx.tell(format!("{what}: {} s", started.elapsed().as_secs()));
            }
        }
    }
}

/// Waits for `work` with the heartbeat: its result, with the wait it was given when the
/// ceiling cut the one asked for.
pub async fn waited<T, E>(
    cx: &CallContext,
    what: &str,
    effective_timeout: Option<f64>,
    work: impl Future<Output = Result<T, E>>,
) -> Result<Waited<T>, E> {
    Ok(Waited {
        result: heartbeat(cx, what, work).await?,
        effective_timeout,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_ceiling(max_wait: Option<Duration>) -> CallContext {
        CallContext {
            max_wait,
            ..CallContext::for_tests()
        }
    }

    #[test]
    fn a_longer_wait_is_cut_to_the_ceiling_and_says_so() {
        let cx = with_ceiling(Some(Duration::from_secs(50)));
        assert_eq!(clamp_secs(Some(120.0), 30.0, &cx), (50.0, Some(50.0)));
        assert_eq!(clamp_secs(None, 30.0, &cx), (30.0, None));
        assert_eq!(
            clamp_secs(Some(f64::INFINITY), 30.0, &cx),
            (50.0, Some(50.0))
        );
        assert_eq!(clamp_secs(Some(-1.0), 30.0, &cx), (0.0, None));
        assert_eq!(clamp_secs(Some(f64::NAN), 30.0, &cx), (0.0, None));
        // A task is polled, not waited on: it has no ceiling.
        let task = with_ceiling(None);
        assert_eq!(clamp_secs(Some(120.0), 30.0, &task), (120.0, None));
    }
}
