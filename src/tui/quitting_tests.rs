//! What `q` and `d` do, attached or hosting, with the person's and agents' work alive.

use super::mode::Mode;
use super::persons_work::persons_work;
use super::state::{App, RunView};
use super::test_support::{key, shell_pane};
use super::update::update;
use crate::engine::Actor;
use crate::engine::run::Phase;
use crossterm::event::KeyCode;

fn agent() -> Actor {
    Actor::Agent {
        client: "claude-code".into(),
        connection: "c1".into(),
    }
}

/// An attached studio with the person's shell s1, an agent's shell s2, the person's run r1
/// (its own terminal s3) and the agent's run r2.
fn app() -> App {
    let mut app = App::new("workflows".into());
    app.attached = true;
    app.studios = 1;
    // A run's own terminal is opened by the run, as the engine opens it.
    let by_r1 = Actor::Run {
        run_id: "r1".into(),
    };
    for (id, by) in [("s1", Actor::person()), ("s2", agent()), ("s3", by_r1)] {
        let mut pane = shell_pane(80, 20);
        pane.session_id = id.into();
        pane.opened_by = Some(by);
        app.panes.push(pane);
    }
    for (id, by, session) in [("r1", Actor::person(), Some("s3")), ("r2", agent(), None)] {
        app.runs.insert(
            id.into(),
            RunView {
                run_id: id.into(),
                workflow: "build".into(),
                session_id: session.map(Into::into),
                actor: Some(by),
                phase: Phase::Running,
                current_state: None,
                prompt: None,
                steps: Default::default(),
                finished: None,
            },
        );
    }
    app
}

#[test]
fn the_persons_work_is_their_terminals_and_runs_never_an_agents() {
    let work = persons_work(&app());
    // s3 is r1's own terminal: it ends with the run.
    assert_eq!(work.sessions, ["s1"]);
    assert_eq!(work.runs, ["r1"]);
    assert_eq!(work.describe(), "1 terminal and 1 run");
}

#[test]
fn q_in_the_last_studio_asks_and_y_ends_the_persons_work_before_quitting() {
    let mut app = app();
    update(&mut app, key(KeyCode::Char('q')));
    assert_eq!((app.mode(), app.quit), (Mode::ConfirmQuit, false));
    let effects = update(&mut app, key(KeyCode::Char('y')));
    assert!(!app.quit, "quits once the work has ended");
    assert_eq!(
        effects,
        vec![super::effect::Effect::EndAndQuit {
            sessions: vec!["s1".into()],
            runs: vec!["r1".into()],
        }]
    );
    update(&mut app, super::update::Event::Ended(Vec::new()));
    assert!(app.quit);
}

#[test]
fn d_at_the_question_detaches_and_n_stays() {
    let mut app = app();
    update(&mut app, key(KeyCode::Char('q')));
    update(&mut app, key(KeyCode::Char('n')));
    assert_eq!((app.mode(), app.quit), (Mode::Normal, false));
    update(&mut app, key(KeyCode::Char('q')));
    let effects = update(&mut app, key(KeyCode::Char('d')));
    assert!(app.quit && effects.is_empty(), "{effects:?}");
}

#[test]
fn with_another_studio_attached_or_only_agents_work_q_just_quits() {
    let mut two = app();
    two.studios = 2;
    update(&mut two, key(KeyCode::Char('q')));
    assert!(two.quit);

    let mut app = app();
    app.panes.retain(|p| p.opened_by != Some(Actor::person()));
    app.runs.shift_remove("r1");
    update(&mut app, key(KeyCode::Char('q')));
    assert!(app.quit);
}

#[test]
fn a_failure_to_end_keeps_the_studio_open_saying_why() {
    let mut app = app();
    update(&mut app, key(KeyCode::Char('q')));
    update(&mut app, key(KeyCode::Char('y')));
    update(
        &mut app,
        super::update::Event::Ended(vec!["session s1: i/o error".into()]),
    );
    assert!(!app.quit);
    assert_eq!(app.message.as_deref(), Some("session s1: i/o error"));
}

#[test]
fn a_studio_hosting_the_folder_cannot_detach_and_asks_whenever_anything_runs() {
    let mut app = app();
    app.attached = false;
    update(&mut app, key(KeyCode::Char('d')));
    assert!(!app.quit);
    assert!(
        app.message
            .as_deref()
            .is_some_and(|m| m.starts_with("cannot detach")),
        "{:?}",
        app.message
    );
    app.panes.retain(|p| p.opened_by != Some(Actor::person()));
    app.runs.shift_remove("r1");
    update(&mut app, key(KeyCode::Char('q')));
    assert_eq!(
        app.mode(),
        Mode::ConfirmQuit,
        "the agent's work would end too"
    );
    update(&mut app, key(KeyCode::Char('y')));
    assert!(app.quit);
}

#[test]
fn the_question_names_each_terminal_and_run_the_person_would_leave_behind() {
    let mut app = app();
    app.panes[0].command = vec!["bash".into()];
    app.runs.get_mut("r1").unwrap().current_state = Some("deploy".into());
    // r1's terminal s3 outlives its run: once the run has ended, the shell is still the
    // person's to end, and the question says which run left it.
    assert_eq!(
        super::persons_work::staying(&app),
        ["terminal s1: bash", "run of build (r1), at deploy"]
    );
    let run = app.runs.get_mut("r1").unwrap();
    run.phase = Phase::Finished;
    app.panes[2].command = vec!["bash".into()];
    assert_eq!(
        super::persons_work::staying(&app),
        [
            "terminal s1: bash",
            "terminal s3: bash, left by the build run"
        ]
    );
}

#[test]
fn the_last_line_says_what_goes_on_and_how_to_come_back() {
    use super::persons_work::farewell;
    let mut app = app();
    app.folder = "/home/ann/proj/workflows".into();
    assert_eq!(
        farewell(&app, "flowdeck").as_deref(),
        Some(
            "flowdeck: the server of /home/ann/proj/workflows goes on with 3 terminals (1 of them an agent's) and 2 runs: `flowdeck` reattaches, `flowdeck stop` ends it"
        )
    );
    app.panes.retain(|p| p.opened_by == Some(agent()));
    app.runs.clear();
    app.studios = 3;
    assert_eq!(
        farewell(&app, "flowdeck proj").as_deref(),
        Some(
            "flowdeck: the server of /home/ann/proj/workflows goes on with 1 terminal (an agent's) and 2 other studios attached: `flowdeck proj` reattaches, `flowdeck stop` ends it"
        )
    );
    app.panes.clear();
    app.studios = 1;
    assert_eq!(
        farewell(&app, "flowdeck").as_deref(),
        Some(
            "flowdeck: nothing left running in /home/ann/proj/workflows; its server ends once no agent uses it"
        )
    );
    // A studio that hosts the folder ends everything with it: nothing goes on to speak of.
    app.attached = false;
    assert_eq!(farewell(&app, "flowdeck"), None);
    // A folder's name reaches the person's terminal without its escape sequences.
    app.attached = true;
    app.folder = "/tmp/\u{1b}]0;pwned\u{7}x".into();
    let line = farewell(&app, "flowdeck").unwrap();
    assert!(
        !line.contains('\u{1b}') && !line.contains('\u{7}'),
        "{line:?}"
    );
}
