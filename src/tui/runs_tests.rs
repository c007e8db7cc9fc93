//! The run view: opening it, choosing a run, and its journal followed live.

use super::effect::Effect;
use super::mode::Mode;
use super::state::App;
use super::test_support::{key, summary};
use super::update::{Event, update};
use crate::engine::journal::{JournalEvent, RunSummary};
use crate::engine::{Actor, Change, EngineEvent, RunEvent, WrittenFinalState};
use crossterm::event::KeyCode;

fn app() -> App {
    let mut app = App::new("workflows".into());
    app.workflows = vec![summary("build")];
    app
}

fn run(id: &str, final_state: Option<&str>) -> RunSummary {
    RunSummary {
        run_id: id.into(),
        workflow: "build".into(),
        started_at: "2026-01-01T10:00:00.000Z".into(),
        session_id: None,
        started_by: None,
        final_state: final_state.map(|word| WrittenFinalState::Unknown(word.to_string())),
        success: final_state.map(|_| true),
        states_executed: None,
        duration_ms: final_state.map(|_| 12.0),
        error: None,
        feedback: Vec::new(),
        recorded: final_state.is_some(),
    }
}

fn step(seq: u64, state: &str) -> JournalEvent {
    JournalEvent {
        seq,
        at: "2026-01-01T10:00:00.000Z".into(),
        body: RunEvent::StepStarted {
            step: 1,
            state: state.into(),
            tool: "run_command".into(),
            params: serde_json::Value::Null,
        },
    }
}

fn live(seq: u64, run_id: &str, journal_seq: u64, state: &str) -> Event {
    Event::Engine(Box::new(EngineEvent {
        seq,
        at: String::new(),
        actor: Actor::person(),
        change: Change::Run {
            run_id: run_id.into(),
            journal_seq,
            line: step(journal_seq, state).body,
        },
    }))
}

/// The view opened on `build` with a run in progress (newest) and a finished one.
fn opened() -> App {
    let mut app = app();
    update(
        &mut app,
        Event::Runs {
            workflow: "build".into(),
            runs: vec![run("r2", None), run("r1", Some("done"))],
        },
    );
    update(
        &mut app,
        Event::RunEvents {
            run_id: "r2".into(),
            events: Ok(vec![step(1, "start")]),
        },
    );
    app
}

#[test]
fn h_asks_for_the_selected_workflows_runs_and_opens_on_the_newest() {
    let mut app = app();
    assert_eq!(
        update(&mut app, key(KeyCode::Char('h'))),
        vec![Effect::LoadRuns("build".into())]
    );
    let effects = update(
        &mut app,
        Event::Runs {
            workflow: "build".into(),
            runs: vec![run("r2", None), run("r1", Some("done"))],
        },
    );
    assert_eq!(app.mode(), Mode::Runs);
    assert_eq!(effects, vec![Effect::LoadRunEvents("r2".into())]);
    update(&mut app, key(KeyCode::Esc));
    assert_eq!(app.mode(), Mode::Normal);
    assert!(app.runs_view().is_none());
}

#[test]
fn selecting_a_run_asks_for_its_journal() {
    let mut app = opened();
    assert_eq!(
        update(&mut app, key(KeyCode::Char('j'))),
        vec![Effect::LoadRunEvents("r1".into())]
    );
    let view = app.runs_view().unwrap();
    assert_eq!(view.run_id.as_deref(), Some("r1"));
    assert!(view.journal.is_empty() && !view.loaded);
    // At the end of the list: nothing more to read.
    assert!(update(&mut app, key(KeyCode::Char('j'))).is_empty());
    // A late answer for the run no longer shown is dropped.
    update(
        &mut app,
        Event::RunEvents {
            run_id: "r2".into(),
            events: Ok(vec![step(1, "late")]),
        },
    );
    assert!(app.runs_view().unwrap().journal.is_empty());
}

#[test]
fn a_live_line_of_the_shown_run_is_appended_and_another_runs_is_not() {
    let mut app = opened();
    let effects = update(&mut app, live(1, "r2", 2, "build"));
    assert!(effects.is_empty(), "no re-read: {effects:?}");
    update(&mut app, live(2, "other", 2, "elsewhere"));
    // A line the read already had is not added twice.
    update(&mut app, live(3, "r2", 1, "start"));
    let view = app.runs_view().unwrap();
    let seqs: Vec<u64> = view.journal.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, vec![1, 2]);
    assert_eq!(view.offset, 0, "following the end");
}

#[test]
fn scrolled_up_the_journal_stays_put_and_end_follows_again() {
    let mut app = opened();
    for seq in 2..=30 {
        update(&mut app, live(seq, "r2", seq, "s"));
    }
    update(&mut app, key(KeyCode::PageUp));
    assert_eq!(app.runs_view().unwrap().offset, 10);
    update(&mut app, live(31, "r2", 31, "s"));
    assert_eq!(app.runs_view().unwrap().offset, 11);
    update(&mut app, key(KeyCode::End));
    assert_eq!(app.runs_view().unwrap().offset, 0);
}

#[test]
fn lines_that_arrive_before_the_read_stay_after_it() {
    let mut app = app();
    update(
        &mut app,
        Event::Runs {
            workflow: "build".into(),
            runs: vec![run("r2", None)],
        },
    );
    update(&mut app, live(1, "r2", 3, "third"));
    update(
        &mut app,
        Event::RunEvents {
            run_id: "r2".into(),
            events: Ok(vec![step(1, "a"), step(2, "b")]),
        },
    );
    let seqs: Vec<u64> = app
        .runs_view()
        .unwrap()
        .journal
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, vec![1, 2, 3]);
}

#[test]
fn a_run_started_while_the_view_is_open_is_listed_on_top() {
    let mut app = opened();
    update(
        &mut app,
        Event::Engine(Box::new(EngineEvent {
            seq: 1,
            at: String::new(),
            actor: Actor::person(),
            change: Change::Run {
                run_id: "r3".into(),
                journal_seq: 1,
                line: RunEvent::RunStarted {
                    run_id: "r3".into(),
                    workflow: "build".into(),
                    version: None,
                    session_id: None,
                    inputs: Default::default(),
                    actor: None,
                },
            },
        })),
    );
    let view = app.runs_view().unwrap();
    let ids: Vec<&str> = view.runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(ids, vec!["r3", "r2", "r1"]);
    assert_eq!(view.selected_run().unwrap().run_id, "r2");
}

#[test]
fn journal_text_is_sanitized() {
    let theme = crate::tui::theme::Theme::default();
    let (text, _) = crate::tui::draw::runs::event_text(
        &RunEvent::Transition {
            from: "a\u{1b}[2J".into(),
            to: Some("b\u{202e}".into()),
            condition: Some("x\u{7}".into()),
        },
        &theme,
        &|actor| actor.label(),
    );
    assert!(
        !text.chars().any(crate::workflow::names::is_dangerous_char),
        "{text:?}"
    );
}

#[test]
fn p_replays_the_selected_run_in_a_new_pane_and_closes_the_view() {
    let mut app = opened();
    update(&mut app, key(KeyCode::Char('j')));
    let effects = update(&mut app, key(KeyCode::Char('p')));
    assert!(
        matches!(&effects[..], [Effect::Replay { run_id, folder, .. }]
            if run_id == "r1" && folder == "workflows"),
        "{effects:?}"
    );
    assert_eq!(app.mode(), Mode::Normal);
    assert!(app.runs_view().is_none());
}
