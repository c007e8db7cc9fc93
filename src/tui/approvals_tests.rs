//! Approval requests in the studio's state: when they open, how they are answered, and that
//! keys meant for something else never answer them, a request shown in the place of another
//! included.

use super::effect::Effect;
use super::mode::Mode;
use super::state::App;
use super::test_support::{key, shell_pane, summary};
use super::update::{Event, update};
use crate::engine::Approved;
use crate::engine::approval::ApprovalRequest;
use crate::engine::{Actor, Change, EngineEvent, Phase};
use crate::tui::settling::SETTLE;
use crossterm::event::KeyCode;

fn agent() -> Actor {
    Actor::Agent {
        client: "claude-code".into(),
        connection: "c1".into(),
    }
}

fn app() -> App {
    let mut app = App::new("workflows".into());
    app.workflows = vec![summary("build")];
    app.panes = vec![shell_pane(80, 20)];
    app
}

fn request(run_id: &str, before: Option<&str>, now: &str) -> ApprovalRequest {
    ApprovalRequest {
        run_id: run_id.into(),
        workflow: "build".into(),
        version: "v2".into(),
        agent: agent(),
        requested_at: String::new(),
        inline: false,
        content: now.into(),
        last_approved: before.map(|content| Approved {
            version: "v1".into(),
            approved_at: "2026-11-23T10:00:00.000Z".into(),
            by: "you".into(),
            content: content.into(),
        }),
    }
}

fn engine(seq: u64, actor: Actor, change: Change) -> Event {
    Event::Engine(Box::new(EngineEvent {
        seq,
        at: String::new(),
        actor,
        change,
    }))
}

/// The loop's tick once the request on screen may be answered: asked plainly again.
fn asked_again(app: &mut App) {
    let due = app.due().expect("a question settling");
    update(app, Event::Tick(due));
    assert!(
        app.approval_shown
            .as_ref()
            .is_some_and(|s| s.settling.is_none()),
        "{:?}",
        app.approval_shown
    );
}

/// The answer `y` or `n` gives to `request`: its run, by what it showed.
fn decided(request: &ApprovalRequest, approve: bool) -> Vec<Effect> {
    vec![Effect::DecideApproval {
        run_id: request.run_id.clone(),
        fingerprint: request.fingerprint(),
        approve,
    }]
}

/// The agent withdraws `run_id`'s request (its run was cancelled).
fn withdrawn(app: &mut App, seq: u64, run_id: &str) {
    update(
        app,
        engine(
            seq,
            agent(),
            Change::ApprovalSettled {
                run_id: run_id.into(),
                workflow: "build".into(),
                approved: false,
            },
        ),
    );
}

/// The engine announces `run_id`'s request and the studio reads it back.
fn asked(app: &mut App, seq: u64, request: ApprovalRequest) -> Vec<Effect> {
    let effects = update(
        app,
        engine(
            seq,
            agent(),
            Change::ApprovalRequested {
                run_id: request.run_id.clone(),
                workflow: request.workflow.clone(),
                version: request.version.clone(),
            },
        ),
    );
    assert!(effects.contains(&Effect::LoadApprovals), "{effects:?}");
    let mut pending = app
        .approvals
        .iter()
        .map(|v| v.request.clone())
        .collect::<Vec<_>>();
    pending.push(request);
    update(
        app,
        Event::Approvals {
            pending,
            error: None,
        },
    );
    effects
}

#[test]
fn a_request_opens_at_its_first_change_and_y_or_n_answers_it() {
    let mut app = app();
    let before: String = (1..=20).map(|n| format!("line {n}\n")).collect();
    let now = before.replace("line 15\n", "line fifteen\n");
    asked(&mut app, 1, request("r1", Some(&before), &now));
    assert_eq!(app.mode(), Mode::Approve);
    assert_eq!(
        app.approvals[0].top, 11,
        "three lines above the first change"
    );
    assert_eq!(app.runs["r1"].phase, Phase::AwaitingApproval);
    asked_again(&mut app);
    let shown = app.approvals[0].request.clone();
    assert_eq!(
        update(&mut app, key(KeyCode::Char('y'))),
        decided(&shown, true)
    );
    assert_eq!(
        app.mode(),
        Mode::Approve,
        "shown until the engine settles it"
    );
    update(
        &mut app,
        engine(
            2,
            Actor::person(),
            Change::ApprovalSettled {
                run_id: "r1".into(),
                workflow: "build".into(),
                approved: true,
            },
        ),
    );
    assert_eq!(app.mode(), Mode::Normal);
    assert!(app.approvals.is_empty());
    assert_eq!(app.runs["r1"].phase, Phase::Running);

    asked(&mut app, 3, request("r2", None, "text\n"));
    asked_again(&mut app);
    assert_eq!(
        update(&mut app, key(KeyCode::Char('n'))),
        decided(&request("r2", None, "text\n"), false)
    );
}

#[test]
fn a_request_shown_in_the_place_of_a_withdrawn_one_takes_no_key_until_asked_again() {
    let mut app = app();
    let benign = request("r1", None, "benign\n");
    let evil = request("r2", None, "evil\n");
    asked(&mut app, 1, benign.clone());
    asked_again(&mut app);
    asked(&mut app, 2, evil.clone());
    assert_eq!(
        app.approval_shown.as_ref().map(|s| s.run_id.as_str()),
        Some("r1"),
        "the oldest stays on screen"
    );
    assert!(app.due().is_none(), "nothing changed on screen");

    // Benign is withdrawn: evil is on screen at once, under a question that waits.
    withdrawn(&mut app, 3, "r1");
    assert_eq!(app.mode(), Mode::Approve);
    let shown = app.approval_shown.clone().expect("evil on screen");
    assert_eq!(
        (shown.run_id.as_str(), shown.fingerprint.as_str()),
        ("r2", evil.fingerprint().as_str())
    );
    let due = app.due().expect("the loop wakes to ask again");
    // The `y` meant for benign answers nothing; neither does `n`.
    assert!(update(&mut app, key(KeyCode::Char('y'))).is_empty());
    assert!(update(&mut app, key(KeyCode::Char('n'))).is_empty());
    assert!(
        app.message.as_deref().unwrap_or("").contains("new request"),
        "{:?}",
        app.message
    );
    // A tick before its time changes nothing.
    update(&mut app, Event::Tick(due - SETTLE / 2));
    assert!(update(&mut app, key(KeyCode::Char('y'))).is_empty());
    // Asked again: `y` answers evil, by what it showed.
    update(&mut app, Event::Tick(due));
    assert!(app.due().is_none());
    assert_eq!(
        update(&mut app, key(KeyCode::Char('y'))),
        decided(&evil, true)
    );
}

#[test]
fn a_key_read_while_a_request_was_on_screen_names_that_request() {
    let mut app = app();
    let benign = request("r1", None, "benign\n");
    asked(&mut app, 1, benign.clone());
    asked_again(&mut app);
    asked(&mut app, 2, request("r2", None, "evil\n"));
    // The key came before the studio heard of the withdrawal: it names benign, whose
    // fingerprint evil does not have, so the engine decides nothing for evil.
    let effects = update(&mut app, key(KeyCode::Char('y')));
    assert_eq!(effects, decided(&benign, true));
    assert_ne!(
        benign.fingerprint(),
        request("r2", None, "evil\n").fingerprint()
    );
    // The same run with other text (read again) is another request on screen.
    let changed = request("r1", None, "benign, changed\n");
    update(
        &mut app,
        Event::Approvals {
            pending: vec![changed.clone()],
            error: None,
        },
    );
    assert!(update(&mut app, key(KeyCode::Char('y'))).is_empty());
    asked_again(&mut app);
    assert_eq!(
        update(&mut app, key(KeyCode::Char('y'))),
        decided(&changed, true)
    );
}

#[test]
fn a_request_shown_again_after_esc_waits_a_moment_too() {
    let mut app = app();
    asked(&mut app, 1, request("r1", None, "text\n"));
    assert!(
        update(&mut app, key(KeyCode::Char('y'))).is_empty(),
        "the first request shown is new too"
    );
    asked_again(&mut app);
    update(&mut app, key(KeyCode::Esc));
    assert!(app.approval_shown.is_none(), "nothing on screen");
    update(&mut app, key(KeyCode::Char('a')));
    assert_eq!(app.mode(), Mode::Approve);
    assert!(update(&mut app, key(KeyCode::Char('y'))).is_empty());
    asked_again(&mut app);
    assert_eq!(
        update(&mut app, key(KeyCode::Char('y'))),
        decided(&request("r1", None, "text\n"), true)
    );
}

#[test]
fn a_request_never_takes_keys_meant_for_a_pane_and_opens_once_the_person_is_free() {
    let mut app = app();
    update(&mut app, key(KeyCode::Char('i')));
    assert_eq!(app.mode(), Mode::Focus);
    asked(&mut app, 1, request("r1", None, "text\n"));
    assert_eq!(app.mode(), Mode::Focus, "focus is never taken");
    assert!(
        app.message
            .as_deref()
            .unwrap_or("")
            .contains("asks to run build"),
        "{:?}",
        app.message
    );
    // 'y' and 'n' typed meanwhile go to the pane's program.
    let effects = update(&mut app, key(KeyCode::Char('y')));
    assert!(
        effects
            .iter()
            .all(|e| !matches!(e, Effect::DecideApproval { .. })),
        "{effects:?}"
    );
    update(&mut app, Event::Key(super::test_support::ctrl_key('g')));
    assert_eq!(app.mode(), Mode::Approve, "asked once focus mode is left");
}

#[test]
fn esc_sets_requests_aside_a_reopens_them_and_a_withdrawn_one_goes() {
    let mut app = app();
    asked(&mut app, 1, request("r1", None, "text\n"));
    update(&mut app, key(KeyCode::Esc));
    assert_eq!(app.mode(), Mode::Normal);
    assert!(
        app.message
            .as_deref()
            .unwrap_or("")
            .contains("1 run waits for your approval")
    );
    update(&mut app, key(KeyCode::Char('j')));
    assert_eq!(app.mode(), Mode::Normal, "set aside until asked for");
    update(&mut app, key(KeyCode::Char('a')));
    assert_eq!(app.mode(), Mode::Approve);
    update(&mut app, key(KeyCode::Esc));
    // The agent gave up: the request goes, and the studio says so.
    update(
        &mut app,
        engine(
            2,
            Actor::System,
            Change::ApprovalSettled {
                run_id: "r1".into(),
                workflow: "build".into(),
                approved: false,
            },
        ),
    );
    assert!(app.approvals.is_empty());
    assert!(
        app.message.as_deref().unwrap_or("").contains("withdrawn"),
        "{:?}",
        app.message
    );
    update(&mut app, key(KeyCode::Char('a')));
    assert_eq!(app.mode(), Mode::Normal, "nothing waits");
}

#[test]
fn an_answer_that_could_not_be_kept_leaves_the_request_and_says_why() {
    let mut app = app();
    asked(&mut app, 1, request("r1", None, "text\n"));
    let pending = vec![app.approvals[0].request.clone()];
    update(
        &mut app,
        Event::Approvals {
            pending,
            error: Some("cannot answer the approval request: disk full".into()),
        },
    );
    assert_eq!(app.mode(), Mode::Approve);
    assert_eq!(app.approvals.len(), 1);
    assert!(app.message.as_deref().unwrap_or("").contains("disk full"));
}

#[test]
fn a_new_snapshot_reads_the_requests_again() {
    let mut app = app();
    let effects = update(
        &mut app,
        Event::Snapshot(Box::new(crate::engine::Snapshot {
            seq: 7,
            workflows: vec![summary("build")],
            sessions: Vec::new(),
            runs: Vec::new(),
            folder_problem: None,
            approval_mode: true,
            last_runs: Vec::new(),
            attention: Default::default(),
        })),
    );
    assert!(
        effects.contains(&Effect::LoadApprovals),
        "requests made while the studio lagged would be missed: {effects:?}"
    );
}

#[test]
fn the_wheel_scrolls_the_diff_and_a_click_answers_nothing() {
    use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
    let mut app = app();
    let long: String = (1..=60).map(|n| format!("line {n}\n")).collect();
    asked(&mut app, 1, request("r1", None, &long));
    let mouse = |kind| Event::Mouse {
        event: MouseEvent {
            kind,
            column: 3,
            row: 3,
            modifiers: KeyModifiers::NONE,
        },
        at_ms: 0,
        reporting: None,
    };
    let top = app.approvals[0].top;
    update(&mut app, mouse(MouseEventKind::ScrollDown));
    assert_eq!(app.approvals[0].top, top + 1);
    let effects = update(&mut app, mouse(MouseEventKind::Down(MouseButton::Left)));
    assert!(effects.is_empty(), "{effects:?}");
    assert_eq!(app.mode(), Mode::Approve);
    assert_eq!(app.selected, 0, "the list under the overlay is not clicked");
}
