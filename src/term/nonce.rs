//! Nonces for the markers flowdeck has a shell print: random, so that neither a program's
//! output nor the echo of a typed line can fake one.

use std::hash::{BuildHasher, RandomState};
use std::time::SystemTime;

/// 16 hex digits, new each call.
pub fn nonce() -> String {
    // RandomState is seeded from the OS's random source.
    let value = RandomState::new().hash_one(SystemTime::now());
    format!("{value:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonces_differ() {
        assert_ne!(nonce(), nonce());
        assert_eq!(nonce().len(), 16);
    }
}
