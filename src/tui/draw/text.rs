//! Text from manifests, file names, journals and errors made safe to draw: no escape
//! sequence or bidi control from a workflow may reach the person's terminal.

use crate::workflow::names::sanitize;

pub fn clean(text: &str) -> String {
    sanitize(text)
}

/// `3 ms`, `1.2 s`, `2 min 5 s`.
pub fn duration(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{} ms", ms.round() as u64)
    } else if ms < 60_000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else {
        let s = (ms / 1000.0).round() as u64;
        format!("{} min {} s", s / 60, s % 60)
    }
}

/// How long ago `at` (RFC 3339) was, in the largest whole unit: `now`, `3m`, `2h`, `5d`.
pub fn ago(at: &str, now: chrono::DateTime<chrono::Utc>) -> Option<String> {
    let then = chrono::DateTime::parse_from_rfc3339(at).ok()?;
    let secs = (now - then.with_timezone(&chrono::Utc))
        .num_seconds()
        .max(0);
    Some(match secs {
        0..60 => "now".to_string(),
        60..3600 => format!("{}m", secs / 60),
        3600..86_400 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_are_in_the_largest_whole_unit() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-23T12:00:00Z")
            .map(|t| t.with_timezone(&chrono::Utc))
            .unwrap_or_default();
        let at = |s: &str| ago(s, now);
        assert_eq!(at("2026-11-23T11:59:30Z").as_deref(), Some("now"));
        assert_eq!(at("2026-11-23T11:57:00Z").as_deref(), Some("3m"));
        assert_eq!(at("2026-11-23T09:10:00Z").as_deref(), Some("2h"));
        assert_eq!(at("2026-11-18T12:00:00Z").as_deref(), Some("5d"));
        // From a clock ahead of ours: not in the future.
        assert_eq!(at("2026-11-23T12:05:00Z").as_deref(), Some("now"));
        assert_eq!(at("yesterday"), None);
    }
}
