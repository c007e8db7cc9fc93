//! A snapshot of every studio view in its main states, drawn from a real engine into
//! ratatui's `TestBackend`: empty folder, broken manifest, filtered list, a plan mid-run with
//! its prompt, a pane with colours, an exited session, the inputs form with an error, the
//! palette, the grid, copy mode, a too-small terminal and each bundled theme. Reviewed
//! snapshots are in tests/snapshots/.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::LONG;
use common::render::{TWO_STEPS, drawn, feed, press, redacted, render, studio};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use flowdeck::engine::{Actor, Change, Engine, Phase, RunRequest, WorkflowSource};
use flowdeck::tui::state::App;
use flowdeck::tui::theme::Theme;
use flowdeck::tui::update::Event;
use flowdeck::workflow::action::OpenTerminalParams;
use std::sync::Arc;

fn engine_on(files: &[(&str, &str)]) -> (tempfile::TempDir, Arc<Engine>) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let engine = common::test_engine(dir.path(), 1, false);
    (dir, engine)
}

fn typed(engine: &Engine, app: &mut App, text: &str) {
    for c in text.chars() {
        press(engine, app, KeyCode::Char(c));
    }
}

/// A pane running `script` under `sh`, at `cols` x `rows`; returns once `ready` says so.
async fn pane(
    engine: &Engine,
    script: &str,
    (cols, rows): (u16, u16),
    ready: impl Fn(&flowdeck::engine::SessionInfo) -> bool,
) -> String {
    let params = OpenTerminalParams {
        command: Some(vec!["sh".into(), "-c".into(), script.into()]),
        cols: Some(cols),
        rows: Some(rows),
        ..Default::default()
    };
    let id = engine
        .open_terminal(&params, &Actor::person())
        .await
        .unwrap()
        .session_id;
    common::poll_until(LONG, "the pane's program", || {
        engine
            .list_terminal_sessions()
            .sessions
            .iter()
            .find(|s| s.session_id == id)
            .filter(|s| ready(s))
            .map(|_| ())
    })
    .await;
    id
}

#[tokio::test]
async fn an_empty_folder_says_so() {
    let (_dir, engine) = engine_on(&[]);
    let app = studio(&engine, 80, 24);
    insta::assert_snapshot!("empty_folder", render(&engine, &app, 80, 24));
}

const BROKEN: &str =
    "name: broken\ninitial_state: a\nstates:\n  a:\n    action: { tool: nope }\n  b: [unclosed\n";

#[tokio::test]
async fn a_broken_manifest_is_listed_with_its_errors_and_its_plan_says_why() {
    let (_dir, engine) = engine_on(&[("broken.yaml", BROKEN), ("tiny.yaml", TWO_STEPS)]);
    let app = studio(&engine, 80, 24);
    insta::assert_snapshot!("broken_manifest", render(&engine, &app, 80, 24));
}

#[tokio::test]
async fn the_list_filtered_as_you_type() {
    let dir = common::bundled_workflows_copy();
    let engine = common::test_engine(dir.path(), 1, false);
    let mut app = studio(&engine, 80, 24);
    press(&engine, &mut app, KeyCode::Char('/'));
    typed(&engine, &mut app, "ma");
    insta::assert_snapshot!("list_filtered", render(&engine, &app, 80, 24));
}

const ASKER: &str = r#"
name: asker
description: Greets, asks which environment, then says it.
initial_state: greet
states:
  greet:
    action: { tool: run_command, params: { command: 'echo hello' } }
    transitions:
      - { condition: success, next_state: ask }
  ask:
    action:
      tool: prompt
      params:
        prompt: Which environment?
        store_as: TARGET_ENV
    transitions:
      - { condition: validation_passed, next_state: say }
  say:
    action: { tool: run_command, params: { command: 'echo "env=$TARGET_ENV"' } }
"#;

#[tokio::test]
async fn the_plan_mid_run_marks_the_current_state_and_the_prompt_asks() {
    let (_dir, engine) = engine_on(&[("asker.yaml", ASKER)]);
    let mut events = engine.subscribe();
    let mut app = studio(&engine, 90, 26);
    engine
        .start_run(RunRequest {
            workflow: WorkflowSource::Name("asker".into()),
            session_id: None,
            inputs: Default::default(),
            keep_session: true,
            host: None,
            actor: Actor::person(),
            require_approval: false,
        })
        .await
        .unwrap();
    // The studio follows the engine's events as its loop does, until the prompt waits.
    common::within(LONG, "the prompt", async {
        loop {
            let event = events.recv().await.unwrap();
            let waiting = matches!(
                &event.change,
                Change::Run {
                    line: flowdeck::engine::RunEvent::WaitingForInput { .. },
                    ..
                }
            );
            feed(&engine, &mut app, Event::Engine(Box::new(event)));
            if waiting {
                break;
            }
        }
    })
    .await;
    assert!(app.runs.values().any(|r| r.phase == Phase::WaitingForInput));
    // The shell's prompt after `echo hello` may come a moment after the step ended: the pane
    // is drawn once its output has settled.
    let session = app
        .runs
        .values()
        .find_map(|r| r.session_id.clone())
        .unwrap();
    let settled = engine
        .await_output(
            &session,
            &serde_json::from_value(serde_json::json!({
                "quiet_ms": 300, "since": "entry", "timeout": 20
            }))
            .unwrap(),
            None,
            &Actor::Cli,
        )
        .await
        .unwrap();
    assert_eq!(settled.result.outcome, flowdeck::term::WaitOutcome::Matched);
    insta::assert_snapshot!("prompt", redacted(&render(&engine, &app, 90, 26)));
    // Put aside (Esc): the plan mid-run, its current state marked.
    press(&engine, &mut app, KeyCode::Esc);
    press(&engine, &mut app, KeyCode::Tab);
    let screen = render(&engine, &app, 90, 26);
    assert!(screen.contains("▶"), "{screen}");
    insta::assert_snapshot!("plan_mid_run", redacted(&screen));
    engine.shutdown().await;
}

/// The cells of a buffer's region as text, with each run of one style named once: what
/// colours and attributes a snapshot can be reviewed for.
fn styled(buffer: &ratatui::buffer::Buffer, area: ratatui::layout::Rect) -> String {
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut last = None;
        for x in area.left()..area.right() {
            let cell = &buffer[(x, y)];
            let style = (cell.fg, cell.bg, cell.modifier);
            if last != Some(style) {
                out.push_str(&format!("‹{:?} {:?} {:?}›", style.0, style.1, style.2));
                last = Some(style);
            }
            out.push_str(cell.symbol());
        }
        out.push('\n');
    }
    out
}

#[tokio::test]
async fn a_pane_draws_its_programs_colours_attributes_and_wide_characters() {
    let (_dir, engine) = engine_on(&[]);
    pane(
        &engine,
        r"printf '\033[31mred\033[0m \033[1;32mbold green\033[0m \033[4munder\033[0m \033[7minverse\033[0m \033[3mitalic\033[0m\n\033[38;5;208m256\033[0m \033[38;2;10;20;30;48;2;200;210;220mrgb\033[0m 日本語\n'; exec sleep 60",
        (40, 4),
        |s| s.output_bytes > 0 && s.history_lines >= 2,
    )
    .await;
    let app = studio(&engine, 42, 14);
    let terminal = drawn(&engine, &app, &Theme::default(), 42, 14);
    let panes = flowdeck::tui::layout::app_slots(&app)[0].inner;
    let area = ratatui::layout::Rect { height: 2, ..panes };
    insta::assert_snapshot!("pane_colours", styled(terminal.backend().buffer(), area));
    engine.shutdown().await;
}

#[tokio::test]
async fn an_exited_session_keeps_its_last_screen_and_shows_its_status() {
    let (_dir, engine) = engine_on(&[]);
    pane(&engine, "echo last words; exit 3", (78, 9), |s| !s.running).await;
    let app = studio(&engine, 80, 24);
    let screen = render(&engine, &app, 80, 24);
    assert!(screen.contains("last words"), "{screen}");
    insta::assert_snapshot!("exited_session", redacted(&screen));
    engine.shutdown().await;
}

const NEEDS_INPUTS: &str = r#"
name: deploy
description: Deploys a build.
initial_state: go
arguments:
  TARGET_ENV:
    description: Where to deploy
    enum: [staging, production]
  REPLICAS:
    description: How many copies
    type: integer
    required: false
    default: 2
  API_TOKEN:
    description: The token to deploy with
    required: true
    secret: true
states:
  go:
    action: { tool: list_terminal_sessions }
"#;

#[tokio::test]
async fn the_inputs_form_shows_what_is_wrong_next_to_each_field() {
    let (_dir, engine) = engine_on(&[("deploy.yaml", NEEDS_INPUTS)]);
    let mut app = studio(&engine, 90, 24);
    press(&engine, &mut app, KeyCode::Char('r'));
    assert_eq!(
        app.mode(),
        flowdeck::tui::mode::Mode::Form,
        "{:?}",
        app.message
    );
    // REPLICAS: not a whole number; the token typed (masked); the environment left out.
    press(&engine, &mut app, KeyCode::Down);
    press(&engine, &mut app, KeyCode::Backspace);
    typed(&engine, &mut app, "two");
    press(&engine, &mut app, KeyCode::Down);
    typed(&engine, &mut app, "s3cret");
    press(&engine, &mut app, KeyCode::Enter);
    assert_eq!(app.mode(), flowdeck::tui::mode::Mode::Form);
    let screen = render(&engine, &app, 90, 24);
    assert!(!screen.contains("s3cret"), "{screen}");
    insta::assert_snapshot!("inputs_form_error", screen);
}

#[tokio::test]
async fn the_palette_lists_the_commands_that_match() {
    let dir = common::bundled_workflows_copy();
    let engine = common::test_engine(dir.path(), 1, false);
    let mut app = studio(&engine, 90, 26);
    feed(
        &engine,
        &mut app,
        Event::Key(KeyEvent::new(KeyCode::Char('p'), KeyModifiers::CONTROL)),
    );
    typed(&engine, &mut app, "pane");
    insta::assert_snapshot!("palette", render(&engine, &app, 90, 26));
}

#[tokio::test]
async fn the_grid_shows_every_pane_and_copy_mode_marks_its_selection() {
    let (_dir, engine) = engine_on(&[]);
    for word in ["one", "two", "three"] {
        pane(
            &engine,
            &format!("echo pane {word}; echo second line; exec sleep 60"),
            (30, 5),
            |s| s.history_lines >= 2,
        )
        .await;
    }
    let mut app = studio(&engine, 90, 24);
    press(&engine, &mut app, KeyCode::Char('g'));
    insta::assert_snapshot!("grid", redacted(&render(&engine, &app, 90, 24)));
    // Copy mode on the selected pane: v, up, v, right three times.
    press(&engine, &mut app, KeyCode::Char('v'));
    assert_eq!(app.mode(), flowdeck::tui::mode::Mode::Copy);
    for code in [KeyCode::Char('k'), KeyCode::Char('0')] {
        press(&engine, &mut app, code);
    }
    let home = app.copy_cursor.unwrap();
    for _ in 0..home.col {
        press(&engine, &mut app, KeyCode::Char('h'));
    }
    press(&engine, &mut app, KeyCode::Char('v'));
    for _ in 0..3 {
        press(&engine, &mut app, KeyCode::Char('l'));
    }
    let terminal = drawn(&engine, &app, &Theme::default(), 90, 24);
    let buffer = terminal.backend().buffer();
    let selected: String = buffer
        .content()
        .iter()
        .filter(|c| c.modifier.contains(ratatui::style::Modifier::REVERSED))
        .map(|c| c.symbol())
        .collect();
    assert_eq!(selected, "pane");
    insta::assert_snapshot!("copy_mode", redacted(&render(&engine, &app, 90, 24)));
    engine.shutdown().await;
}

#[tokio::test]
async fn a_too_small_terminal_gets_a_message() {
    let (_dir, engine) = engine_on(&[("tiny.yaml", TWO_STEPS)]);
    let app = studio(&engine, 30, 8);
    insta::assert_snapshot!("too_small", render(&engine, &app, 30, 8));
}

#[tokio::test]
async fn each_bundled_theme_colours_the_studio() {
    let (_dir, engine) = engine_on(&[("tiny.yaml", TWO_STEPS), ("broken.yaml", BROKEN)]);
    let app = studio(&engine, 48, 12);
    for name in ["dark", "light", "high-contrast"] {
        let text = std::fs::read_to_string(format!("themes/{name}.yaml")).unwrap();
        let (theme, warnings) = Theme::parse(&text).unwrap();
        assert!(warnings.is_empty(), "{name}: {warnings:?}");
        let terminal = drawn(&engine, &app, &theme, 48, 12);
        let area = ratatui::layout::Rect::new(0, 0, 48, 5);
        insta::assert_snapshot!(
            format!("theme_{name}"),
            styled(terminal.backend().buffer(), area)
        );
    }
}

#[tokio::test]
async fn the_inputs_form_offers_the_last_runs_values_but_never_a_secret() {
    let (_dir, engine) = engine_on(&[("deploy.yaml", NEEDS_INPUTS)]);
    let inputs = [
        ("TARGET_ENV", "production"),
        ("REPLICAS", "5"),
        ("API_TOKEN", "s3cret-token"),
    ];
    let result = common::within(
        LONG,
        "the run",
        engine.run(RunRequest {
            actor: Actor::person(),
            ..common::run_request("deploy", &inputs)
        }),
    )
    .await
    .unwrap();
    assert!(result.success, "{result:?}");
    let mut app = studio(&engine, 90, 24);
    press(&engine, &mut app, KeyCode::Char('r'));
    let form = app.form().expect("the inputs form");
    let values: Vec<(&str, &str)> = form
        .fields
        .iter()
        .map(|f| (f.spec.name.as_str(), f.value.as_str()))
        .collect();
    assert_eq!(
        values,
        [
            ("TARGET_ENV", "production"),
            ("REPLICAS", "5"),
            ("API_TOKEN", ""),
            (flowdeck::tui::form::HOST_FIELD, "")
        ]
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn an_approval_request_shows_the_change_against_the_approved_manifest() {
    const DEPLOY: &str = "name: deploy\ndescription: Ships the build.\ninitial_state: ship\nstates:\n  ship:\n    action:\n      tool: run_command\n      params: { command: ./ship --dry-run }\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("deploy.yaml"), DEPLOY).unwrap();
    let engine = Engine::open(
        dir.path(),
        flowdeck::engine::EngineConfig {
            approve_agent_runs: true,
            ..common::test_config(1, false)
        },
    )
    .unwrap();
    let _approver = engine.attach_approver();
    engine.approve_workflow("deploy", &Actor::person()).unwrap();
    let version = engine.workflow_get("deploy").unwrap().version;
    engine
        .workflow_save(
            &DEPLOY.replace("./ship --dry-run", "./ship --prod"),
            Some(&version),
            false,
            &Actor::person(),
        )
        .unwrap();
    let agent = Actor::Agent {
        client: "claude-code".into(),
        connection: "c1".into(),
    };
    engine
        .start_run(RunRequest {
            workflow: WorkflowSource::Name("deploy".into()),
            session_id: None,
            inputs: Default::default(),
            keep_session: false,
            host: None,
            actor: agent,
            require_approval: false,
        })
        .await
        .unwrap();
    let mut app = studio(&engine, 90, 20);
    feed(
        &engine,
        &mut app,
        Event::Approvals {
            pending: engine.approvals_pending(),
            error: None,
        },
    );
    // Just shown: marked new, its answers held a moment (tui/settling.rs).
    insta::assert_snapshot!("approval_new", redacted(&render(&engine, &app, 90, 20)));
    let due = app.due().expect("the request settles");
    feed(&engine, &mut app, Event::Tick(due));
    insta::assert_snapshot!("approval", redacted(&render(&engine, &app, 90, 20)));
    engine.shutdown().await;
}

/// Like the bundled archive_logs: three arrows on `success` that only their guards tell
/// apart, a state with a guard of its own, and a guard with wide characters to cut.
const GUARDED: &str = r#"
name: guarded
description: Checks its arguments, then packs unless told not to.
arguments:
  LOG_DIR: { description: Where the logs are, type: path }
  DAYS: { description: Age in days, type: integer, required: false, default: 7 }
  REGION: { description: Where it runs, required: false, default: here }
  COMPRESSION: { description: gzip or none, required: false, default: gzip }
initial_state: check
states:
  check:
    action: { tool: run_command, params: { command: 'test -d "$LOG_DIR"', timeout: 10 } }
    transitions:
      - condition: success
        when:
          or:
            - { var: LOG_DIR, matches: '^/+$' }
            - { var: LOG_DIR, in: [/proc, /sys, /dev, /run] }
        next_state: refuse
      - { condition: success, when: { var: DAYS, gt: 3650 }, next_state: refuse }
      - { condition: success, next_state: pack }
      - { condition: failure, next_state: refuse }
  pack:
    when: { var: COMPRESSION, not_equals: none }
    action: { tool: run_command, params: { command: 'true', timeout: 10 } }
    transitions:
      - { condition: success, when: { var: REGION, equals: 東京データセンター }, next_state: done }
      - { condition: success, next_state: done }
  refuse:
    action: { tool: set_env, params: { vars: { STATUS: REFUSED } } }
  done:
    action: { tool: set_env, params: { vars: { STATUS: DONE } } }
"#;

#[tokio::test]
async fn the_plan_shows_each_transitions_guard_and_a_states_own() {
    let (_dir, engine) = engine_on(&[("guarded.yaml", GUARDED)]);
    let app = studio(&engine, 150, 30);
    let screen = render(&engine, &app, 150, 30);
    for row in [
        r#"success if LOG_DIR =~ /^/+$/ or LOG_DIR in ["/proc", "/sys", "/dev", "/run"] → refuse"#,
        "success if DAYS > 3650 → refuse",
        "success → pack · failure → refuse",
        r#"only when COMPRESSION != "none""#,
        r#"success if REGION == "東京データセンター" → done"#,
    ] {
        assert!(screen.contains(row), "no {row:?} in\n{screen}");
    }
    insta::assert_snapshot!("plan_guards", screen);
    engine.shutdown().await;
}

#[tokio::test]
async fn a_narrow_plan_shortens_guards_first_and_never_halves_a_character() {
    let (_dir, engine) = engine_on(&[("guarded.yaml", GUARDED)]);
    let app = studio(&engine, 84, 30);
    let screen = render(&engine, &app, 84, 30);
    // The guard gives way; the condition and the target, which tell the rows apart, stay.
    assert!(
        screen.contains("success if LOG_DIR =~ /^/+$/ or… → refuse"),
        "{screen}"
    );
    assert!(
        screen.contains("success if DAYS > 3650 → refuse"),
        "{screen}"
    );
    // 40 cells: `セ` would need two where one is left, so that one stays empty.
    assert!(
        screen.contains(r#"success if REGION == "東京データ… → done"#),
        "{screen}"
    );
    insta::assert_snapshot!("plan_guards_narrow", screen);
    // Narrower still, the rows move left under the state names rather than cut every guard
    // to nothing: the two arrows on `success` to `refuse` still differ.
    let screen = render(&engine, &studio(&engine, 64, 30), 64, 30);
    let arrows: Vec<&str> = screen
        .lines()
        .filter(|row| row.contains("success if") && row.contains("→ refuse"))
        .collect();
    assert_eq!(arrows.len(), 2, "{screen}");
    assert_ne!(arrows[0], arrows[1], "{screen}");
    assert!(!arrows[0].contains("if …"), "{screen}");
    engine.shutdown().await;
}
