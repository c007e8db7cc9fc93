//! What the studio's unit tests build their states from: keys, workflows, a pane.

use super::update::Event;
use crate::engine::WorkflowStatus;
use crate::engine::authoring::WorkflowSummary;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A key pressed with no modifier.
pub fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// A key pressed with Ctrl.
pub fn ctrl_key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// A valid two-state workflow, as the engine lists it.
pub fn summary(name: &str) -> WorkflowSummary {
    WorkflowSummary {
        name: name.into(),
        file: format!("{name}.yaml"),
        status: WorkflowStatus::Valid,
        description: None,
        states: Some(2),
        version: "v".into(),
        errors: 0,
        warnings: 0,
        runs: 0,
        last_result: None,
        last_run_at: None,
        first_error: None,
    }
}

/// A shell pane as the engine lists one, for tests that need a pane without a session.
pub fn shell_pane(cols: u16, rows: u16) -> crate::engine::SessionInfo {
    crate::engine::SessionInfo {
        session_id: "s1".into(),
        name: None,
        command: vec!["bash".into()],
        pid: 1,
        cols,
        rows,
        created_at_ms: 0,
        running: true,
        exit: None,
        failed: None,
        opened_by: Some(crate::engine::Actor::Person),
        output_bytes: 0,
        history_lines: 0,
        is_shell: true,
        title: String::new(),
    }
}
