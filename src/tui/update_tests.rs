//! Keys → commands → state and effects, without a terminal or an engine.

use super::effect::Effect;
use super::form::InputsForm;
use super::mode::{Mode, View};
use super::state::App;
use super::test_support::{key, palette_open, shell_pane, summary};
use super::update::{Event, update};
use crate::engine::authoring::InputSpec;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

fn app() -> App {
    let mut app = App::new("workflows".into());
    app.workflows = vec![summary("build"), summary("deploy"), summary("git_health")];
    app
}

fn ctrl(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

fn input(name: &str, required: bool, kind: &'static str, choices: Option<&[&str]>) -> InputSpec {
    InputSpec {
        name: name.into(),
        description: String::new(),
        required,
        kind: kind.into(),
        default: None,
        choices: choices.map(|c| c.iter().map(|s| s.to_string()).collect()),
        pattern: None,
        secret: false,
        last_value: None,
    }
}

#[test]
fn moving_down_selects_the_next_workflow_and_loads_its_plan() {
    let mut app = app();
    let effects = update(&mut app, key(KeyCode::Char('j')));
    assert_eq!(app.selected, 1);
    assert_eq!(effects, vec![Effect::LoadPlan("deploy".into())]);
    update(&mut app, key(KeyCode::Down));
    update(&mut app, key(KeyCode::Down));
    assert_eq!(app.selected, 2, "the selection stops at the end");
    update(&mut app, key(KeyCode::Up));
    assert_eq!(app.selected, 1);
}

#[test]
fn the_filter_narrows_the_list_as_you_type_and_esc_clears_it() {
    let mut app = app();
    update(&mut app, key(KeyCode::Char('/')));
    assert_eq!(app.mode(), Mode::Filter);
    for c in "git".chars() {
        update(&mut app, key(KeyCode::Char(c)));
    }
    let names: Vec<_> = app.visible().iter().map(|w| w.name.clone()).collect();
    assert_eq!(names, vec!["git_health"]);
    // 'q' is text while filtering, not quit.
    update(&mut app, key(KeyCode::Char('q')));
    assert!(!app.quit);
    assert!(app.visible().is_empty());
    update(&mut app, key(KeyCode::Backspace));
    assert_eq!(app.visible().len(), 1);
    update(&mut app, key(KeyCode::Esc));
    assert_eq!((app.mode(), app.filter.as_str()), (Mode::Normal, ""));
    assert_eq!(app.visible().len(), 3);
}

#[test]
fn r_loads_the_inputs_and_a_workflow_without_inputs_starts_at_once() {
    let mut app = app();
    assert_eq!(
        update(&mut app, key(KeyCode::Char('r'))),
        vec![Effect::LoadInputs {
            workflow: "build".into(),
            on_host: false
        }]
    );
    let effects = update(
        &mut app,
        Event::Inputs {
            workflow: "build".into(),
            inputs: Ok(Vec::new()),
            on_host: false,
        },
    );
    assert!(matches!(&effects[..], [Effect::StartRun { workflow, .. }] if workflow == "build"));
}

#[test]
fn at_opens_the_form_at_its_host_field_even_for_a_workflow_without_inputs() {
    let mut app = app();
    assert_eq!(
        update(&mut app, key(KeyCode::Char('@'))),
        vec![Effect::LoadInputs {
            workflow: "build".into(),
            on_host: true
        }]
    );
    let effects = update(
        &mut app,
        Event::Inputs {
            workflow: "build".into(),
            inputs: Ok(Vec::new()),
            on_host: true,
        },
    );
    assert!(effects.is_empty(), "{effects:?}");
    assert_eq!(app.mode(), Mode::Form);
    for c in "h1,h2".chars() {
        update(&mut app, key(KeyCode::Char(c)));
    }
    let effects = update(&mut app, key(KeyCode::Enter));
    assert!(
        matches!(&effects[..], [Effect::StartRun { workflow, host: Some(h), .. }]
            if workflow == "build" && h == "h1,h2"),
        "{effects:?}"
    );
}

#[test]
fn the_inputs_form_enforces_required_fields_and_types_before_the_run() {
    let mut app = app();
    update(
        &mut app,
        Event::Inputs {
            workflow: "build".into(),
            inputs: Ok(vec![
                input("TARGET", true, "string", None),
                input("JOBS", false, "integer", None),
                input("MODE", false, "string", Some(&["debug", "release"])),
            ]),
            on_host: false,
        },
    );
    assert_eq!(app.mode(), Mode::Form);
    assert!(update(&mut app, key(KeyCode::Enter)).is_empty());
    let form = app.form().unwrap();
    assert_eq!(form.fields[0].error.as_deref(), Some("required"));
    for c in "all".chars() {
        update(&mut app, key(KeyCode::Char(c)));
    }
    update(&mut app, key(KeyCode::Tab));
    update(&mut app, key(KeyCode::Char('x')));
    assert_eq!(
        app.form().unwrap().fields[1].error.as_deref(),
        Some("a whole number")
    );
    update(&mut app, key(KeyCode::Backspace));
    update(&mut app, key(KeyCode::Char('4')));
    update(&mut app, key(KeyCode::Tab));
    update(&mut app, key(KeyCode::Right));
    let effects = update(&mut app, key(KeyCode::Enter));
    let Some(Effect::StartRun {
        workflow,
        inputs,
        host,
    }) = effects.first()
    else {
        panic!("no run started: {effects:?}");
    };
    assert_eq!(workflow, "build");
    let inputs: Vec<_> = inputs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    assert_eq!(inputs, vec!["TARGET=all", "JOBS=4", "MODE=release"]);
    assert_eq!(*host, None, "the host field left empty: here");
    assert_eq!(app.mode(), Mode::Normal);
}

#[test]
fn the_forms_last_field_runs_it_on_hosts() {
    let mut form = InputsForm::new("w".into(), vec![input("TARGET", true, "string", None)]);
    for c in "all".chars() {
        form.type_char(c);
    }
    form.move_by(1);
    assert_eq!(form.fields[1].spec.name, super::form::HOST_FIELD);
    for c in "-oProxy".chars() {
        form.type_char(c);
    }
    assert!(form.submit().is_none(), "an option is never a host");
    assert!(form.fields[1].error.is_some());
    form.fields[1].value = "web-1, web-2".into();
    let submitted = form.submit().unwrap();
    assert_eq!(submitted.host.as_deref(), Some("web-1, web-2"));
    assert_eq!(submitted.inputs.len(), 1, "the host is not an input");
}

#[test]
fn a_form_field_with_choices_is_picked_not_typed() {
    let mut form = InputsForm::new(
        "w".into(),
        vec![input("MODE", true, "string", Some(&["a", "b"]))],
    );
    form.type_char('z');
    assert_eq!(form.fields[0].value, "a");
    form.cycle_choice(-1);
    assert_eq!(form.fields[0].value, "b");
}

#[test]
fn focus_mode_sends_keys_to_the_pane_and_ctrl_g_leaves() {
    let mut app = app();
    assert!(update(&mut app, key(KeyCode::Char('i'))).is_empty());
    assert_eq!(app.mode(), Mode::Normal, "no pane: nothing to focus");
    app.panes.push(shell_pane(80, 10));
    update(&mut app, key(KeyCode::Char('i')));
    assert_eq!((app.mode(), app.view), (Mode::Focus, View::Panes));
    // 'q' and Ctrl-c go to the program in focus mode.
    let effects = update(&mut app, key(KeyCode::Char('q')));
    assert!(matches!(&effects[..], [Effect::SendKeys { session_id, .. }] if session_id == "s1"));
    let effects = update(&mut app, ctrl('c'));
    assert!(matches!(&effects[..], [Effect::SendKeys { .. }]));
    assert!(!app.quit);
    update(&mut app, ctrl('g'));
    assert_eq!(app.mode(), Mode::Normal);
}

#[test]
fn q_quits_at_once_without_runs_and_asks_during_one() {
    let mut app = app();
    update(&mut app, key(KeyCode::Char('q')));
    assert!(app.quit);
    let mut app = app_with_active_run();
    update(&mut app, key(KeyCode::Char('q')));
    assert_eq!((app.mode(), app.quit), (Mode::ConfirmQuit, false));
    update(&mut app, key(KeyCode::Char('n')));
    assert_eq!((app.mode(), app.quit), (Mode::Normal, false));
    update(&mut app, key(KeyCode::Char('q')));
    update(&mut app, key(KeyCode::Char('y')));
    assert!(app.quit);
}

fn app_with_active_run() -> App {
    let mut app = app();
    app.runs.insert(
        "r1".into(),
        super::state::RunView {
            run_id: "r1".into(),
            workflow: "build".into(),
            session_id: None,
            actor: None,
            phase: crate::engine::Phase::Running,
            current_state: None,
            prompt: None,
            steps: Default::default(),
            finished: None,
        },
    );
    app
}

#[test]
fn an_agents_run_is_marked_with_its_name_in_its_pane_and_the_list() {
    let mut app = app();
    app.size = (100, 30);
    let agent = crate::engine::Actor::Agent {
        client: "wire".into(),
        connection: "c1".into(),
    };
    // As a snapshot gives it: the run's status says who started it.
    let status = crate::engine::RunStatus {
        run_id: "r1".into(),
        workflow_name: "deploy".into(),
        status: crate::engine::Phase::Running,
        session_id: Some("s1".into()),
        current_state: None,
        states_executed: 0,
        started_at: "2026-11-24T10:00:00.000Z".into(),
        started_by: Some(agent),
        prompt: None,
        last_event: 1,
        result: None,
    };
    app.runs
        .insert("r1".into(), super::state::RunView::from_status(&status));
    let mut pane = super::test_support::shell_pane(80, 24);
    pane.opened_by = Some(crate::engine::Actor::Run {
        run_id: "r1".into(),
    });
    app.panes = vec![pane];
    assert_eq!(
        super::layout::tab_labels(&app),
        vec!["s1 · deploy (agent: wire)".to_string()]
    );
    let screen = super::test_support::drawn_text(&app, 100, 30);
    assert!(screen.contains("deploy     ● agent: wire"), "{screen}");
    // A person's run is only running.
    if let Some(run) = app.runs.get_mut("r1") {
        run.actor = Some(crate::engine::Actor::person());
    }
    assert_eq!(
        super::layout::tab_labels(&app),
        vec!["s1 · deploy".to_string()]
    );
    let screen = super::test_support::drawn_text(&app, 100, 30);
    assert!(screen.contains("● running"), "{screen}");
    // A run on another machine says which.
    app.panes[0].host = Some("web-1".into());
    assert_eq!(
        super::layout::tab_labels(&app),
        vec!["s1 · deploy @web-1".to_string()]
    );
}

#[test]
fn c_cancels_the_selected_workflows_run() {
    let mut app = app_with_active_run();
    assert_eq!(
        update(&mut app, key(KeyCode::Char('c'))),
        vec![Effect::CancelRun("r1".into())]
    );
}

#[test]
fn the_palette_finds_a_command_by_its_words_and_runs_it_as_its_key_would() {
    let mut app = app();
    update(&mut app, ctrl('p'));
    assert_eq!(app.mode(), Mode::Palette);
    for c in "open a shel".chars() {
        update(&mut app, key(KeyCode::Char(c)));
    }
    let effects = update(&mut app, key(KeyCode::Enter));
    assert_eq!(app.mode(), Mode::Normal);
    assert!(palette_open(&app).is_none());
    assert!(
        matches!(&effects[..], [Effect::OpenShell { .. }]),
        "{effects:?}"
    );
    // `:` opens it too; arrows choose, Esc closes without running anything.
    update(&mut app, key(KeyCode::Char(':')));
    update(&mut app, key(KeyCode::Down));
    assert_eq!(palette_open(&app).map(|p| p.selected), Some(1));
    update(&mut app, key(KeyCode::Backspace));
    assert_eq!(update(&mut app, key(KeyCode::Esc)), Vec::new());
    assert_eq!(app.mode(), Mode::Normal);
}

#[test]
fn every_palette_command_runs_from_the_palette_without_panicking() {
    for (i, entry) in app().palette_matches().iter().enumerate() {
        let mut app = app();
        app.panes.push(shell_pane(78, 10));
        update(&mut app, ctrl('p'));
        for _ in 0..i {
            update(&mut app, key(KeyCode::Down));
        }
        update(&mut app, key(KeyCode::Enter));
        assert_ne!(
            app.mode(),
            Mode::Palette,
            "{:?} left the palette open",
            entry.action
        );
    }
}

#[test]
fn a_run_that_ends_while_the_terminal_is_not_focused_rings_and_retitles() {
    use crate::engine::{Change, EngineEvent, FinalState, RunEvent};
    let mut app = app_with_active_run();
    if let Some(run) = app.runs.get_mut("r1") {
        run.actor = Some(crate::engine::Actor::person());
    }
    let finished = |seq| {
        Event::Engine(Box::new(EngineEvent {
            seq,
            at: String::new(),
            actor: crate::engine::Actor::person(),
            change: Change::Run {
                run_id: "r1".into(),
                journal_seq: seq,
                line: RunEvent::RunFinished {
                    final_state: FinalState::Completed.into(),
                    success: true,
                    states_executed: 1,
                    error: None,
                    return_values: Default::default(),
                    duration_ms: 5.0,
                    cancelled_by: None,
                },
            },
        }))
    };
    update(&mut app, Event::TermFocus(false));
    let effects = update(&mut app, finished(1));
    assert!(
        effects.contains(&Effect::Alert("build ended: completed in 5 ms".into())),
        "{effects:?}"
    );
    assert_eq!(
        update(&mut app, Event::TermFocus(true)),
        vec![Effect::ClearAlert]
    );
    // Focused: the status line says it; no bell.
    app.runs[0].phase = crate::engine::Phase::Running;
    let effects = update(&mut app, finished(2));
    assert!(!effects.iter().any(|e| matches!(e, Effect::Alert(_))));
    assert_eq!(
        app.message.as_deref(),
        Some("build ended: completed in 5 ms")
    );
}

#[test]
fn a_pane_an_agent_opens_comes_to_the_front_unless_the_person_is_typing_in_one() {
    use crate::engine::{Actor, Change, EngineEvent};
    let opened = |seq: u64, id: &str| {
        let mut session = shell_pane(78, 10);
        session.session_id = id.into();
        session.opened_by = Some(Actor::Agent {
            client: "claude-code".into(),
            connection: "c1".into(),
        });
        Event::Engine(Box::new(EngineEvent {
            seq,
            at: String::new(),
            actor: Actor::Agent {
                client: "claude-code".into(),
                connection: "c1".into(),
            },
            change: Change::SessionOpened { session },
        }))
    };
    let mut app = app();
    app.panes.push(shell_pane(78, 10));
    update(&mut app, opened(1, "s2"));
    assert_eq!(
        app.focused_pane().map(|p| p.session_id.as_str()),
        Some("s2")
    );
    assert_eq!(
        app.view,
        super::mode::View::List,
        "the view stays where it was"
    );
    // In focus mode on s2, another agent pane waits in its tab.
    update(&mut app, key(KeyCode::Char('i')));
    assert_eq!(app.mode(), Mode::Focus);
    update(&mut app, opened(2, "s3"));
    assert_eq!(
        app.focused_pane().map(|p| p.session_id.as_str()),
        Some("s2")
    );
    assert_eq!(app.panes.len(), 3);
}

#[test]
fn a_fleets_plan_marks_how_many_hosts_are_at_each_state() {
    let mut app = app();
    let workflow = crate::workflow::test_manifest(
        "name: deploy\ndescription: d\ninitial_state: look\nstates:\n  look: { action: { tool: list_terminal_sessions }, transitions: [ { condition: always, next_state: wait } ] }\n  wait: { action: { tool: list_terminal_sessions } }\n",
    );
    update(&mut app, key(KeyCode::Down));
    update(
        &mut app,
        Event::Plan {
            workflow: "deploy".into(),
            plan: Ok(crate::workflow::plan::plan(&workflow)),
        },
    );
    for (run, session, state, host) in [
        ("r1", "s1", "look", "web-1"),
        ("r2", "s2", "look", "web-2"),
        ("r3", "s3", "wait", "web-3"),
    ] {
        let mut view = super::state::RunView::new(run, "deploy", crate::engine::Phase::Running);
        view.session_id = Some(session.into());
        view.current_state = Some(state.into());
        app.runs.insert(run.into(), view);
        let mut pane = super::test_support::shell_pane(80, 24);
        pane.session_id = session.into();
        pane.host = Some(host.into());
        app.panes.push(pane);
    }
    let screen = super::test_support::drawn_text(&app, 120, 30);
    let line_of = |state: &str| {
        screen
            .lines()
            .find(|l| l.contains(&format!(" {state} ")) && l.contains("list terminal"))
            .unwrap_or_else(|| panic!("no line for {state}:\n{screen}"))
            .to_string()
    };
    assert!(line_of("look").contains("▶ 2 hosts"), "{screen}");
    assert!(line_of("wait").contains("▶ 1 host"), "{screen}");
}

#[test]
fn a_fleets_end_says_how_many_hosts_completed_and_why_the_others_did_not() {
    let run = |host: &str, success: bool, error: Option<&str>| crate::engine::FleetRun {
        host: host.into(),
        success,
        run_id: None,
        final_state: None,
        error: error.map(str::to_string),
        result: None,
    };
    let fleet = crate::engine::FleetResult {
        success: false,
        workflow_name: "deploy".into(),
        completed: 1,
        hosts: 2,
        runs: vec![
            run("web-1", true, None),
            run("down", false, Some("cannot reach down: Connection refused")),
        ],
        duration_ms: 1.0,
    };
    assert_eq!(
        super::update::answers::fleet_said(&fleet),
        "deploy on 1 of 2 hosts: completed; down: cannot reach down: Connection refused"
    );
}
