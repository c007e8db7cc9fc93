//! The studio's side of the attention list (update/inbox.rs): who is rung for, the inbox's
//! keys, the jump to what needs the person, and what going to an item tells the engine.

use super::effect::Effect;
use super::overlay::Overlay;
use super::ring::Ring;
use super::state::{App, RunView};
use super::test_support::{drawn_text, key, shell_pane, summary};
use super::update::{Event, update};
use crate::engine::attention::{AttentionItem, AttentionList, AttentionState, ItemKind};
use crate::engine::events::{Actor, Change, EngineEvent};
use crate::engine::{Phase, Snapshot};
use crossterm::event::KeyCode;

fn item(id: &str, state: AttentionState, workflow: Option<&str>) -> AttentionItem {
    AttentionItem {
        id: id.into(),
        kind: if id.starts_with('r') {
            ItemKind::Run
        } else {
            ItemKind::Terminal
        },
        state,
        workflow: workflow.map(str::to_string),
        session_id: id.starts_with('s').then(|| id.to_string()),
        name: None,
        reason: match state {
            AttentionState::NeedsYou => "asks: Which environment?".into(),
            AttentionState::Failed => "bash ended: exit code 3".into(),
            _ => "completed".into(),
        },
        since: chrono::Utc::now().to_rfc3339(),
        by: None,
    }
}

/// The engine's list told to the studio, as event `seq`.
fn told(app: &mut App, seq: u64, items: Vec<AttentionItem>) -> Vec<Effect> {
    let attention: AttentionList =
        serde_json::from_value(serde_json::json!({"counts": counts(&items), "items": items}))
            .expect("a list");
    update(
        app,
        Event::Engine(Box::new(EngineEvent {
            seq,
            at: String::new(),
            actor: Actor::System,
            change: Change::AttentionChanged { attention },
        })),
    )
}

fn counts(items: &[AttentionItem]) -> serde_json::Value {
    let n = |s| items.iter().filter(|i| i.state == s).count();
    serde_json::json!({
        "needs_you": n(AttentionState::NeedsYou),
        "failed": n(AttentionState::Failed),
        "quiet": n(AttentionState::Quiet),
        "done": n(AttentionState::Done),
        "running": n(AttentionState::Running),
    })
}

fn studio() -> App {
    let mut app = App::new("workflows".into());
    update(
        &mut app,
        Event::Snapshot(Box::new(Snapshot {
            seq: 1,
            workflows: vec![summary("build"), summary("deploy")],
            sessions: vec![shell_pane(80, 24)],
            runs: Vec::new(),
            folder_problem: None,
            approval_mode: false,
            last_runs: Vec::new(),
            attention: AttentionList::default(),
        })),
    );
    app.ring = Ring::Osc9;
    app
}

#[test]
fn the_person_is_rung_once_when_something_starts_needing_them() {
    let mut app = studio();
    let asking = item("r1", AttentionState::NeedsYou, Some("deploy"));
    let effects = told(&mut app, 2, vec![asking.clone()]);
    assert_eq!(
        effects,
        vec![Effect::Ring {
            how: Ring::Osc9,
            text: "deploy needs you: asks: Which environment?".into(),
            title: false,
        }]
    );
    // Still needing them, with something else changed: no second ring.
    let failed = item("s1", AttentionState::Failed, None);
    assert_eq!(
        told(&mut app, 3, vec![asking.clone(), failed.clone()]),
        vec![]
    );
    // Unfocused, the title says it too; off, only the title is set.
    app.term_focused = false;
    app.ring = Ring::Off;
    let second = item("r2", AttentionState::NeedsYou, Some("build"));
    let effects = told(&mut app, 4, vec![asking, second, failed]);
    assert!(
        matches!(&effects[..], [Effect::Ring { how: Ring::Off, title: true, text }] if text.starts_with("build needs you")),
        "{effects:?}"
    );
    assert!(
        app.attention.is_some(),
        "focus coming back clears the title"
    );
}

#[test]
fn the_status_line_counts_what_asks_for_the_person_and_the_inbox_lists_it() {
    let mut app = studio();
    told(
        &mut app,
        2,
        vec![
            item("r1", AttentionState::NeedsYou, Some("deploy")),
            item("s1", AttentionState::Failed, None),
            item("r3", AttentionState::Done, Some("build")),
            item("r4", AttentionState::Running, Some("build")),
        ],
    );
    let screen = drawn_text(&app, 80, 24);
    let status = screen.lines().last().unwrap_or_default();
    assert!(
        status.starts_with(" ◉ 1 needs you · 1 failed · 1 done (!)"),
        "{status}"
    );
    assert!(
        screen.contains("deploy ◉ needs you"),
        "the list marks its workflow:\n{screen}"
    );
    assert_eq!(
        crate::tui::layout::tab_labels(&app),
        vec!["✗ s1 · bash".to_string()],
        "the pane's tab is marked"
    );
    update(&mut app, key(KeyCode::Char('!')));
    let screen = drawn_text(&app, 80, 24);
    assert!(
        screen.contains("Inbox · 1 needs you · 1 failed · 1 done"),
        "{screen}"
    );
    let rows: Vec<&str> = screen
        .lines()
        .filter(|l| l.contains(" run ") || l.contains(" terminal "))
        .collect();
    assert_eq!(rows.len(), 4, "every item, running too:\n{screen}");
    assert!(
        rows[0].contains("◉ needs you") && rows[0].contains("deploy"),
        "{screen}"
    );
    assert!(
        rows[1].contains("✗ failed") && rows[1].contains("exit code 3"),
        "{screen}"
    );
}

#[test]
fn x_clears_what_failed_but_not_what_needs_the_person() {
    let mut app = studio();
    told(
        &mut app,
        2,
        vec![
            item("r1", AttentionState::NeedsYou, Some("deploy")),
            item("s1", AttentionState::Failed, None),
        ],
    );
    update(&mut app, key(KeyCode::Char('!')));
    assert_eq!(update(&mut app, key(KeyCode::Char('x'))), vec![]);
    assert!(
        app.message
            .as_deref()
            .is_some_and(|m| m.contains("only what failed or finished clears")),
        "{:?}",
        app.message
    );
    update(&mut app, key(KeyCode::Char('j')));
    assert_eq!(
        update(&mut app, key(KeyCode::Char('x'))),
        vec![Effect::Acknowledge(vec!["s1".into()])]
    );
}

#[test]
fn enter_goes_to_the_item_and_seeing_what_failed_clears_it() {
    let mut app = studio();
    told(
        &mut app,
        2,
        vec![
            item("s1", AttentionState::Failed, None),
            item("r3", AttentionState::Done, Some("deploy")),
        ],
    );
    app.view = crate::tui::mode::View::List;
    update(&mut app, key(KeyCode::Char('!')));
    let effects = update(&mut app, key(KeyCode::Enter));
    assert!(app.overlay.is_none(), "the inbox closes on the way");
    assert_eq!(
        app.view,
        crate::tui::mode::View::Panes,
        "the terminal in front"
    );
    assert!(
        effects.contains(&Effect::Acknowledge(vec!["s1".into()])),
        "{effects:?}"
    );
    // A run with no terminal left: its workflow selected, its plan (with the result) shown.
    update(&mut app, key(KeyCode::Char('!')));
    update(&mut app, key(KeyCode::Down));
    let effects = update(&mut app, key(KeyCode::Enter));
    assert_eq!(
        app.selected_workflow().map(|w| w.name.as_str()),
        Some("deploy")
    );
    assert!(
        effects.contains(&Effect::LoadPlan("deploy".into())),
        "{effects:?}"
    );
    assert!(effects.contains(&Effect::Acknowledge(vec!["r3".into()])));
}

#[test]
fn u_goes_from_one_question_to_the_next_and_round_again() {
    let mut app = studio();
    for (id, workflow) in [("r1", "deploy"), ("r2", "build")] {
        let mut view = RunView::new(id, workflow, Phase::WaitingForInput);
        view.prompt = Some("Which environment?".into());
        app.runs.insert(id.into(), view);
    }
    told(
        &mut app,
        2,
        vec![
            item("r1", AttentionState::NeedsYou, Some("deploy")),
            item("r2", AttentionState::NeedsYou, Some("build")),
        ],
    );
    let asked = |app: &App| match &app.overlay {
        Some(Overlay::Prompt { run_id, .. }) => Some(run_id.clone()),
        _ => None,
    };
    update(&mut app, key(KeyCode::Char('u')));
    assert_eq!(asked(&app).as_deref(), Some("r1"), "the oldest first");
    update(&mut app, key(KeyCode::Esc));
    update(&mut app, key(KeyCode::Char('u')));
    assert_eq!(asked(&app).as_deref(), Some("r2"));
    update(&mut app, key(KeyCode::Esc));
    update(&mut app, key(KeyCode::Char('u')));
    assert_eq!(asked(&app).as_deref(), Some("r1"), "round again");
    update(&mut app, key(KeyCode::Esc));
    told(&mut app, 3, Vec::new());
    update(&mut app, key(KeyCode::Char('u')));
    assert_eq!(app.message.as_deref(), Some("nothing needs you"));
}

#[test]
fn beside_a_long_message_the_count_takes_its_short_form_and_the_message_is_read_whole() {
    let mut app = studio();
    told(
        &mut app,
        2,
        vec![
            item("r1", AttentionState::NeedsYou, Some("deploy")),
            item("s1", AttentionState::Failed, None),
        ],
    );
    let said = "cannot answer the approval request: this studio may not answer approval requests";
    app.message = Some(said.into());
    let screen = drawn_text(&app, 120, 24);
    let status = screen.lines().last().unwrap_or_default();
    assert!(status.starts_with(" ◉1 ✗1 "), "{status}");
    assert!(status.contains(said), "{status}");
    // With room, the words.
    let screen = drawn_text(&app, 200, 24);
    let status = screen.lines().last().unwrap_or_default();
    assert!(
        status.starts_with(" ◉ 1 needs you · 1 failed (!)"),
        "{status}"
    );
}
