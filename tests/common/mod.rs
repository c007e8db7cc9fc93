//! Helpers shared by the tests and benchmarks: a quiet, predictable bash, wait specs, and a
//! copy of the bundled workflows.

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

/// A temporary copy of the bundled `workflows/`, so that runs journal into it rather than the
/// source tree.
pub fn bundled_workflows_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir("workflows").unwrap() {
        let path = entry.unwrap().path();
        if let Some(name) = path.file_name().filter(|_| path.is_file()) {
            std::fs::copy(&path, dir.path().join(name)).unwrap();
        }
    }
    dir
}
