//! What the studio's render tests share: the state as the loop builds it from a real engine,
//! one frame drawn into ratatui's `TestBackend`, keys fed with the engine's reads answered, and
//! the redaction of ids and times in snapshots.

use flowdeck::tui::draw;
use flowdeck::tui::state::App;
use flowdeck::tui::theme::Theme;
use flowdeck::tui::update::{Event, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// `tiny` in two quick steps that touch no terminal, so that a plan and a run's journal show
/// more than one state.
pub const TWO_STEPS: &str = "name: tiny\ndescription: Two quick steps.\ninitial_state: look\nstates:\n  look:\n    action: { tool: list_terminal_sessions }\n    transitions: [{ condition: success, next_state: again }]\n  again:\n    action: { tool: list_terminal_sessions }\n";

/// The studio's state as the loop builds it: a snapshot, then the selected workflow's plan.
pub fn studio(engine: &flowdeck::engine::Engine, cols: u16, rows: u16) -> App {
    let mut app = App::new("workflows".into());
    app.size = (cols, rows);
    let effects = update(&mut app, Event::Snapshot(Box::new(engine.snapshot())));
    for effect in effects {
        if let flowdeck::tui::effect::Effect::LoadPlan(workflow) = effect {
            let plan = engine
                .workflow_step_plan(&workflow)
                .map_err(|e| e.to_string());
            update(&mut app, Event::Plan { workflow, plan });
        }
    }
    app
}

/// One frame of the studio, drawn with `theme` into a `cols` x `rows` test terminal.
pub fn drawn(
    engine: &flowdeck::engine::Engine,
    app: &App,
    theme: &Theme,
    cols: u16,
    rows: u16,
) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(cols, rows)).unwrap();
    terminal
        .draw(|frame| draw::draw(frame, app, theme, engine))
        .unwrap();
    terminal
}

pub fn render(engine: &flowdeck::engine::Engine, app: &App, cols: u16, rows: u16) -> String {
    drawn(engine, app, &Theme::default(), cols, rows)
        .backend()
        .to_string()
}

/// No escape, control or bidi character from a file reaches a cell (checked cell by cell:
/// the backend's text form escapes controls itself and would hide them).
pub fn assert_drawn_safe(terminal: &Terminal<TestBackend>) {
    let cells = terminal.backend().buffer().content();
    assert!(cells.iter().all(|c| {
        !c.symbol()
            .chars()
            .any(flowdeck::workflow::names::is_dangerous_char)
    }));
}

/// An engine on a copy of the bundled workflows.
pub fn bundled() -> (tempfile::TempDir, std::sync::Arc<flowdeck::engine::Engine>) {
    let dir = super::bundled_workflows_copy();
    let engine = super::test_engine(dir.path(), 1, false);
    (dir, engine)
}

/// Feeds an event, carrying out the engine reads as the loop does, and the editor's checks
/// at once (the loop runs them after typing pauses).
pub fn feed(engine: &flowdeck::engine::Engine, app: &mut App, event: Event) {
    use flowdeck::tui::effect::Effect;
    let mut pending = vec![event];
    while let Some(event) = pending.pop() {
        for effect in update(app, event) {
            match effect {
                Effect::CheckLater(edits) => pending.push(Event::CheckDue(edits)),
                Effect::Check { edits, text } => pending.push(Event::Checked {
                    edits,
                    draft: Box::new(engine.workflow_draft(&text)),
                }),
                other => {
                    if let Ok(answer) = flowdeck::tui::effects::read(engine, other) {
                        pending.push(answer);
                    }
                }
            }
        }
    }
}

pub fn press(engine: &flowdeck::engine::Engine, app: &mut App, code: crossterm::event::KeyCode) {
    let key = crossterm::event::KeyEvent::new(code, crossterm::event::KeyModifiers::NONE);
    feed(engine, app, Event::Key(key));
}

pub fn redacted(screen: &str) -> String {
    let rules = [
        (r"\br\d+-[0-9a-f]+\b", "RUN-ID"),
        (r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "YYYY-MM-DD hh:mm:ss"),
        (r"\d{4}-\d\d-\d\d \d\d:\d\d", "YYYY-MM-DD hh:mm"),
        (r"\d\d:\d\d:\d\d", "hh:mm:ss"),
        (r"\d+(\.\d)? (ms|s)\b", "N ms"),
        // The shell protocol's random nonce, and the machine's bash version in its prompt.
        (r"(\b|__FD)[0-9a-f]{16}\b", "${1}NONCE"),
        (r"bash-\d+\.\d+", "bash-N.N"),
        // Session numbers (each engine counts from s1) say nothing about the screen drawn.
        (r"\bs\d+ ·", "sN ·"),
        // The placeholders' lengths differ from the text's: the right border moves in.
        (r#"(?m)(\S) +│"$"#, r#"$1 │""#),
    ];
    let mut text = screen.to_string();
    for (pattern, with) in rules {
        text = regex::Regex::new(pattern)
            .unwrap()
            .replace_all(&text, with)
            .into_owned();
    }
    text
}
