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
        opened_by: Some(crate::engine::Actor::person()),
        output_bytes: 0,
        history_lines: 0,
        is_shell: true,
        host: None,
        title: String::new(),
    }
}

/// Screens for drawing tests without sessions: every pane is drawn as one whose session is
/// gone.
#[derive(Debug)]
pub struct NoScreens;

impl super::draw::pane::Screens for NoScreens {
    fn with_screen(&self, _: &str, _: &mut dyn FnMut(&crate::engine::panes::Mirror)) -> bool {
        false
    }
}

/// The studio drawn at `cols`x`rows` in the default theme, as text, one line a row.
pub fn drawn_text(app: &super::state::App, cols: u16, rows: u16) -> String {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(cols, rows))
        .expect("a test terminal");
    terminal
        .draw(|frame| super::draw::draw(frame, app, &super::theme::Theme::default(), &NoScreens))
        .expect("drawn");
    let buffer = terminal.backend().buffer();
    (0..rows)
        .map(|y| {
            (0..cols)
                .map(|x| buffer[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The mode help shows the keys of, and its first row shown, while help is open.
pub fn help_open(app: &super::state::App) -> Option<(super::mode::Mode, usize)> {
    match &app.overlay {
        Some(super::overlay::Overlay::Help { of, top }) => Some((*of, *top)),
        _ => None,
    }
}

/// The problems view, while it is open.
pub fn problems_open(app: &super::state::App) -> Option<&super::overlay::ProblemsView> {
    match &app.overlay {
        Some(super::overlay::Overlay::Problems(view)) => Some(view),
        _ => None,
    }
}

/// The palette, while it is open.
pub fn palette_open(app: &super::state::App) -> Option<&super::overlay::Palette> {
    match &app.overlay {
        Some(super::overlay::Overlay::Palette(palette)) => Some(palette),
        _ => None,
    }
}
