//! The message of a caught panic, for the error that reports it (a run or a session that a
//! bug ended is reported as failed, never left hanging).

use std::any::Any;

/// The text a `panic!` was given, or a note that it had none.
pub fn message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}
