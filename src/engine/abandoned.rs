//! The policy on what nobody watches: a terminal an agent opened, whose agent has gone and
//! that nobody has looked at (no studio showed it, no tool call read or wrote it, no run uses
//! it) for [`super::EngineConfig::close_abandoned_after`] (24 h unless configured), is
//! abandoned: it is closed, told as [`Change::SessionAbandoned`] then `session_closed`, and
//! written down in the audit log with why. Until then `flowdeck ls` shows it and when it
//! will close ([`Engine::abandoned`]).

use super::{Actor, Change, Engine};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// How long nobody must have looked at a gone agent's terminal before it is closed, unless
/// configured.
pub const DEFAULT_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// A terminal whose agent has gone and that nobody looks at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Abandoned {
    pub session_id: String,
    pub name: Option<String>,
    /// The agent that opened it, by its client's name.
    pub agent: String,
    /// How long until it is closed, if nobody looks at it meanwhile.
    pub closes_in_ms: u64,
}

/// `24h`, `90m`, `30s`, `500ms`, `2d` (a whole number and a unit), or `off`: `None`.
pub fn parse_after(text: &str) -> Result<Option<Duration>, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration: write 24h, 90m, 30s, 500ms or off"))?;
    let unit_ms: u64 = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60 * 1000,
        "h" => 60 * 60 * 1000,
        "d" => 24 * 60 * 60 * 1000,
        _ => {
            return Err(format!(
                "`{text}` has no unit of ms, s, m, h or d (24h, 90m, 30s, 500ms, or off)"
            ));
        }
    };
    let ms = number
        .checked_mul(unit_ms)
        .filter(|&ms| ms > 0)
        .ok_or_else(|| format!("`{text}` is not a duration above zero that flowdeck can hold"))?;
    Ok(Some(Duration::from_millis(ms)))
}

/// A duration as [`parse_after`] reads it, in its largest whole unit: `24h`, `90m`, `30s`,
/// `500ms`.
pub fn words(after: Duration) -> String {
    let ms = after.as_millis();
    let units = [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1000),
    ];
    for (unit, size) in units {
        if ms >= size && ms.is_multiple_of(size) {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

impl Engine {
    /// The terminals abandoned now, with how long until each is closed (nothing when the
    /// policy is off).
    pub fn abandoned(&self) -> Vec<Abandoned> {
        let Some(after) = self.config.close_abandoned_after else {
            return Vec::new();
        };
        let in_use: Vec<String> = self
            .runs()
            .list_active()
            .into_iter()
            .filter_map(|r| r.session_id)
            .collect();
        let now = Instant::now();
        let sessions = self.terminals().list();
        self.presence
            .keep_only(&sessions.iter().map(|s| s.session_id.as_str()).collect());
        sessions
            .into_iter()
            .filter_map(|s| {
                let Some(Actor::Agent { client, connection }) = &s.opened_by else {
                    return None;
                };
                if self.presence.connected(connection)
                    || self.presence.shown(&s.session_id)
                    || in_use.contains(&s.session_id)
                {
                    return None;
                }
                let unwatched =
                    now.saturating_duration_since(self.presence.last_looked(&s.session_id));
                Some(Abandoned {
                    agent: client.clone(),
                    closes_in_ms: u64::try_from(after.saturating_sub(unwatched).as_millis())
                        .unwrap_or(u64::MAX),
                    session_id: s.session_id,
                    name: s.name,
                })
            })
            .collect()
    }

    /// Closes each terminal abandoned for long enough; returns how many it closed.
    pub async fn close_abandoned(&self) -> usize {
        let due: Vec<Abandoned> = self
            .abandoned()
            .into_iter()
            .filter(|a| a.closes_in_ms == 0)
            .collect();
        let mut closed = 0;
        for abandoned in due {
            let after = self.config.close_abandoned_after.unwrap_or(DEFAULT_AFTER);
            tracing::info!(
                "closing terminal {} of agent {}: nobody has looked at it for {} ms since its agent left",
                abandoned.session_id,
                abandoned.agent,
                after.as_millis()
            );
            self.publish(
                Actor::System,
                Change::SessionAbandoned {
                    session_id: abandoned.session_id.clone(),
                    name: abandoned.name.clone(),
                    agent: abandoned.agent.clone(),
                    unwatched_ms: u64::try_from(after.as_millis()).unwrap_or(u64::MAX),
                },
            );
            self.audit_abandoned(&abandoned, after);
            match self
                .exit_terminal(&abandoned.session_id, &Actor::System)
                .await
            {
                Ok(_) => {
                    closed += 1;
                    self.presence.forget(&abandoned.session_id);
                }
                Err(e) => tracing::warn!(
                    "cannot close abandoned terminal {}: {e}",
                    abandoned.session_id
                ),
            }
        }
        closed
    }

    /// Closes abandoned terminals as they become due, for as long as the engine lives: the
    /// folder's server starts it (a studio hosting its own engine ends with its terminals).
    pub fn watch_abandoned(self: &Arc<Self>) {
        let Some(after) = self.config.close_abandoned_after else {
            return;
        };
        // Often enough that a terminal closes within a tenth of the policy's time of being
        // due, never more than once a minute nor more often than every 10 ms.
        let tick = (after / 10).clamp(Duration::from_millis(10), Duration::from_secs(60));
        let engine: Weak<Engine> = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(tick);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let Some(engine) = engine.upgrade() else {
                    return;
                };
                engine.close_abandoned().await;
            }
        });
    }

    /// The audit log's line for it, beside the tool calls: who closed what and why.
    fn audit_abandoned(&self, abandoned: &Abandoned, after: Duration) {
        let entry = super::audit_log::AuditEntry {
            at: super::journal::now(),
            tool: "close_abandoned_terminal".into(),
            actor: Some(Actor::System),
            arguments: serde_json::json!({
                "session_id": abandoned.session_id,
                "name": abandoned.name,
                "agent": abandoned.agent,
                "why": format!(
                    "its agent {} left and nobody looked at it for {} ms",
                    abandoned.agent,
                    after.as_millis()
                ),
            }),
            outcome: super::audit_log::AuditOutcome::Ok,
            task_id: None,
            duration_ms: None,
            correlation_id: None,
        };
        if let Err(e) = self.append_audit(&entry) {
            tracing::warn!("cannot write the closing of an abandoned terminal down: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_with_their_unit_and_off_turns_the_policy_off() {
        assert_eq!(parse_after("24h"), Ok(Some(Duration::from_secs(86_400))));
        assert_eq!(parse_after("500ms"), Ok(Some(Duration::from_millis(500))));
        assert_eq!(parse_after("2d"), Ok(Some(Duration::from_secs(172_800))));
        assert_eq!(parse_after(" off "), Ok(None));
        assert!(parse_after("12").is_err());
        assert!(parse_after("0s").is_err());
        assert!(parse_after("h").is_err());
        assert!(parse_after("99999999999999999999d").is_err());
    }
}
