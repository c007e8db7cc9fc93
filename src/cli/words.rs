//! How `flowdeck ls`, `stop` and `runs` say a length of time and who did something, the same
//! way in all three.

use crate::actor::Actor;
use crate::workflow::names::sanitize;
use std::time::Duration;

/// A length of time as a person reads it: `850ms`, `12s`, `3m 05s`, `2h 07m`, `3d 4h`.
pub(super) fn lasting(span: Duration) -> String {
    let secs = span.as_secs();
    match secs {
        0 => format!("{}ms", span.as_millis()),
        1..60 => format!("{secs}s"),
        60..3600 => format!("{}m {:02}s", secs / 60, secs % 60),
        3600..86400 => format!("{}h {:02}m", secs / 3600, secs % 3600 / 60),
        _ => format!("{}d {}h", secs / 86400, secs % 86400 / 3600),
    }
}

/// Who did something, for a list: `person at pts/3`, `agent claude-code`, `cli`; `-` when a
/// journal of an older flowdeck did not say.
pub(super) fn who(actor: Option<&Actor>) -> String {
    let said = match actor {
        None => return "-".into(),
        Some(Actor::Person { at }) if at.is_empty() => "person".into(),
        Some(Actor::Person { at }) => format!("person at {at}"),
        Some(Actor::Agent { client, .. }) => format!("agent {client}"),
        Some(Actor::Cli) => "cli".into(),
        Some(Actor::Run { run_id }) => format!("run {run_id}"),
        Some(Actor::System) => "flowdeck".into(),
    };
    sanitize(&said)
}

/// `1 terminal`, `2 runs`.
pub(super) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_actors_read_as_people_say_them() {
        assert_eq!(lasting(Duration::from_millis(850)), "850ms");
        assert_eq!(lasting(Duration::from_secs(12)), "12s");
        assert_eq!(lasting(Duration::from_secs(185)), "3m 05s");
        assert_eq!(lasting(Duration::from_secs(2 * 3600 + 7 * 60)), "2h 07m");
        assert_eq!(lasting(Duration::from_secs(3 * 86400 + 4 * 3600)), "3d 4h");
        let agent = Actor::Agent {
            client: "claude\u{1b}[2J".into(),
            connection: "c1".into(),
        };
        assert_eq!(who(Some(&agent)), "agent claude\\u{1b}[2J");
        assert_eq!(who(Some(&Actor::Cli)), "cli");
        assert_eq!(who(None), "-");
        assert_eq!(count(1, "run", "runs"), "1 run");
        assert_eq!(count(0, "run", "runs"), "0 runs");
    }
}
