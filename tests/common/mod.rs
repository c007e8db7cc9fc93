//! Helpers shared by the terminal tests and the terminal benchmark: a quiet, predictable bash
//! and wait specs.

#![allow(clippy::unwrap_used, dead_code)]

use flowdeck::term::{AwaitSpec, OpenOptions, Program, Session, Since, Terminals};
use regex::Regex;
use std::sync::Arc;
use std::time::Duration;

/// bash without rc files, with the prompt `$ ` and no history file.
pub fn bash_options() -> OpenOptions {
    OpenOptions {
        program: Program::Command(vec!["bash".into(), "--norc".into(), "--noprofile".into()]),
        env: vec![
            ("PS1".into(), "$ ".into()),
            ("HISTFILE".into(), "/dev/null".into()),
        ],
        ..OpenOptions::default()
    }
}

/// A bash session that has printed its first prompt.
pub async fn bash(t: &Terminals, timeout: Duration) -> Arc<Session> {
    let s = t.open(bash_options()).unwrap();
    assert!(s.wait_for_output(timeout).await, "bash printed no prompt");
    s
}

/// A wait for a pattern in multi-line mode where `\r` ends lines too, as manifests compile.
pub fn spec(pattern: &str, since: Since, timeout: Duration) -> AwaitSpec {
    AwaitSpec {
        pattern: Regex::new(&format!("(?mR){pattern}")).unwrap(),
        stop_patterns: Vec::new(),
        since,
        timeout,
    }
}
