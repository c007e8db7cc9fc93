//! Text a run keeps in its log and journal, bounded: one step's output cannot bloat them.

use serde::Serialize;
use serde_json::Value;

/// Longest text kept for one string in the execution log.
const LOG_TEXT: usize = 16 * 1024;

/// A result for the log: long strings shortened so that one step cannot bloat it.
pub(super) fn to_log_value(result: &impl Serialize) -> Value {
    fn bound(v: &mut Value) {
        match v {
            Value::String(s) if s.len() > LOG_TEXT => *s = shorten(s, LOG_TEXT),
            Value::Array(items) => items.iter_mut().for_each(bound),
            Value::Object(map) => map.values_mut().for_each(bound),
            _ => {}
        }
    }
    let mut value = serde_json::to_value(result).unwrap_or(Value::Null);
    bound(&mut value);
    value
}

/// The end of a text, at most `max` bytes, with a marker when cut.
pub(super) fn shorten(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[...{} bytes cut...]{}", start, &text[start..])
}
