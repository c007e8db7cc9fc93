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
