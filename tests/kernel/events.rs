//! The engine's event stream as the front ends' contract: one event per change, numbered in
//! order, published after the state it announces is visible, with who caused it; and a
//! snapshot plus the events after it rebuilds the state, however busy the engine is.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use flowdeck::engine::{
    Actor, Change, Engine, EngineEvent, Phase, RunEvent, RunRequest, WorkflowSource,
};
use flowdeck::workflow::action::OpenTerminalParams;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::Receiver;

use crate::common;
use common::{LONG, QUICK, agent};

fn engine(dir: &Path) -> Arc<Engine> {
    common::test_engine(dir, 8, true)
}

fn bash() -> OpenTerminalParams {
    OpenTerminalParams {
        command: Some(vec!["bash".into(), "--norc".into(), "--noprofile".into()]),
        ..OpenTerminalParams::default()
    }
}

/// The next event that is not output activity (which comes whenever a program prints), within
/// [`LONG`] however much activity comes before it.
async fn next(events: &mut Receiver<EngineEvent>) -> EngineEvent {
    common::within(LONG, "an event other than output activity", async {
        loop {
            let event = events.recv().await.unwrap();
            if !matches!(event.change, Change::SessionActivity { .. }) {
                return event;
            }
        }
    })
    .await
}

#[tokio::test]
async fn each_change_is_one_event_in_order_after_its_state_is_visible() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("quick.yaml"), QUICK).unwrap();
    let e = engine(dir.path());
    let mut events = e.subscribe();
    let mut last_seq = 0;
    let mut check_order = |event: &EngineEvent| {
        assert!(event.seq > last_seq, "{event:?} after {last_seq}");
        last_seq = event.seq;
    };

    // A session: opened, resized, closed; each visible when announced.
    let info = e.open_terminal(&bash(), &agent()).await.unwrap();
    let opened = next(&mut events).await;
    check_order(&opened);
    assert_eq!(opened.actor, agent());
    assert!(
        matches!(&opened.change, Change::SessionOpened { session } if session.session_id == info.session_id)
    );
    assert!(
        e.snapshot()
            .sessions
            .iter()
            .any(|s| s.session_id == info.session_id)
    );
    e.resize_terminal(&info.session_id, 90, 20, &agent())
        .unwrap();
    let resized = next(&mut events).await;
    check_order(&resized);
    assert!(matches!(
        resized.change,
        Change::SessionResized {
            cols: 90,
            rows: 20,
            ..
        }
    ));
    e.exit_terminal(&info.session_id, &Actor::person())
        .await
        .unwrap();
    // The program's exit may be announced before the close.
    let mut closed = next(&mut events).await;
    check_order(&closed);
    if matches!(closed.change, Change::SessionExited { .. }) {
        closed = next(&mut events).await;
        check_order(&closed);
    }
    assert!(
        matches!(&closed.change, Change::SessionClosed { session_id } if *session_id == info.session_id)
    );
    assert_eq!(closed.actor, Actor::person());
    assert!(e.snapshot().sessions.is_empty());

    // A run: its session first, then its journal's lines; the last one after its final status.
    let started = e
        .start_run(RunRequest {
            workflow: WorkflowSource::Name("quick".into()),
            session_id: None,
            inputs: Default::default(),
            keep_session: false,
            host: None,
            actor: agent(),
            require_approval: false,
        })
        .await
        .unwrap();
    let run_id = started.run_id.clone();
    let mut lines = Vec::new();
    let mut session_of_run = None;
    common::within(LONG, "the run's last journal line", async {
        loop {
            let event = next(&mut events).await;
            check_order(&event);
            match &event.change {
                Change::SessionOpened { session } => {
                    assert_eq!(
                        event.actor,
                        Actor::Run {
                            run_id: run_id.clone()
                        }
                    );
                    session_of_run = Some(session.session_id.clone());
                }
                Change::Run {
                    run_id: id,
                    line,
                    journal_seq,
                } => {
                    assert_eq!(id, &run_id);
                    assert_eq!(
                        *journal_seq,
                        lines.len() as u64 + 1,
                        "journal lines in order"
                    );
                    if let RunEvent::RunStarted {
                        session_id, actor, ..
                    } = line
                    {
                        assert_eq!(
                            session_id, &session_of_run,
                            "the run starts with its session"
                        );
                        assert_eq!(actor.as_ref(), Some(&agent()));
                    }
                    lines.push(line.clone());
                    if let RunEvent::RunFinished { final_state, .. } = line {
                        assert_eq!(final_state, "completed");
                        let status = e.run_status(&run_id).unwrap();
                        assert_eq!(status.status, Phase::Finished);
                        assert!(
                            status.result.is_some(),
                            "announced before the result was visible"
                        );
                        break;
                    }
                }
                Change::SessionExited { .. } | Change::SessionClosed { .. } => {}
                other => panic!("unexpected {other:?}"),
            }
        }
    })
    .await;
    let kinds: Vec<String> = lines
        .iter()
        .map(|l| {
            serde_json::to_value(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "run_started",
            "step_started",
            "step_finished",
            "transition",
            "run_finished"
        ]
    );
    // The journal holds exactly the published lines.
    let journal = e.run_events(&run_id, 0, 100, Duration::ZERO).await.unwrap();
    assert_eq!(
        journal
            .events
            .iter()
            .map(|j| j.body.clone())
            .collect::<Vec<_>>(),
        lines
    );

    // A manifest written on disk: the watcher's change, with the workflow listed.
    // Whole at once, as an editor saves: a file caught between its creation and its write is
    // first an unnamed entry, and this test is about who made the change, not about that.
    let whole = dir.path().join(".other.yaml.tmp");
    std::fs::write(&whole, QUICK.replace("quick", "other")).unwrap();
    std::fs::rename(&whole, dir.path().join("other.yaml")).unwrap();
    common::within(LONG, "the watcher's workflow_added", async {
        loop {
            let event = next(&mut events).await;
            check_order(&event);
            if let Change::WorkflowAdded { name, .. } = &event.change {
                assert_eq!(name, "other");
                assert_eq!(event.actor, Actor::System);
                assert!(e.snapshot().workflows.iter().any(|w| w.name == "other"));
                break;
            }
        }
    })
    .await;

    // Saved, renamed and deleted through the engine: each change names who made it.
    let saved = e
        .workflow_save(&QUICK.replace("quick", "mine"), None, false, &agent())
        .unwrap();
    let event = common::within(LONG, "mine's workflow_added", async {
        loop {
            let event = next(&mut events).await;
            check_order(&event);
            if matches!(&event.change, Change::WorkflowAdded { name, .. } if name == "mine") {
                return event;
            }
        }
    })
    .await;
    assert_eq!(event.actor, agent());
    e.workflow_rename("mine", "yours", saved.version.as_deref(), &Actor::person())
        .unwrap();
    let mut renamed = Vec::new();
    common::within(LONG, "the rename's two events", async {
        while renamed.len() < 2 {
            let event = next(&mut events).await;
            check_order(&event);
            match &event.change {
                Change::WorkflowRemoved { name, .. } if name == "mine" => {
                    renamed.push(event.actor.clone())
                }
                Change::WorkflowAdded { name, .. } if name == "yours" => {
                    renamed.push(event.actor.clone())
                }
                _ => {}
            }
        }
    })
    .await;
    assert_eq!(renamed, [Actor::person(), Actor::person()]);
    e.workflow_delete("yours", None, &Actor::Cli).unwrap();
    let event = common::within(LONG, "yours' workflow_removed", async {
        loop {
            let event = next(&mut events).await;
            check_order(&event);
            if matches!(&event.change, Change::WorkflowRemoved { name, .. } if name == "yours") {
                return event;
            }
        }
    })
    .await;
    assert_eq!(event.actor, Actor::Cli);
}

/// The sessions and runs an observer believes exist.
#[derive(Debug, Default, PartialEq)]
struct Model {
    sessions: BTreeSet<String>,
    runs: BTreeSet<String>,
}

impl Model {
    fn apply(&mut self, event: &EngineEvent) {
        match &event.change {
            Change::SessionOpened { session } => {
                self.sessions.insert(session.session_id.clone());
            }
            Change::SessionClosed { session_id } => {
                self.sessions.remove(session_id);
            }
            Change::Run {
                run_id,
                line: RunEvent::RunStarted { .. },
                ..
            } => {
                self.runs.insert(run_id.clone());
            }
            Change::Run {
                run_id,
                line: RunEvent::RunFinished { .. },
                ..
            } => {
                self.runs.remove(run_id);
            }
            _ => {}
        }
    }

    fn of(engine: &Engine) -> (u64, Model) {
        let snapshot = engine.snapshot();
        let model = Model {
            sessions: snapshot
                .sessions
                .into_iter()
                .map(|s| s.session_id)
                .collect(),
            runs: snapshot.runs.into_iter().map(|r| r.run_id).collect(),
        };
        (snapshot.seq, model)
    }
}

#[tokio::test]
async fn a_snapshot_and_the_events_after_it_rebuild_the_state_under_concurrent_activity() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("quick.yaml"), QUICK).unwrap();
    let e = engine(dir.path());
    let mut events = e.subscribe();
    // Busy from several tasks at once: sessions opened and closed, runs started.
    let mut work = Vec::new();
    for task in 0..4 {
        let e = e.clone();
        work.push(tokio::spawn(async move {
            for round in 0..3 {
                let info = e.open_terminal(&bash(), &Actor::person()).await.unwrap();
                if (task + round) % 2 == 0 {
                    e.exit_terminal(&info.session_id, &Actor::person())
                        .await
                        .unwrap();
                }
                let run = e
                    .start_run(RunRequest {
                        workflow: WorkflowSource::Name("quick".into()),
                        session_id: None,
                        inputs: Default::default(),
                        keep_session: false,
                        host: None,
                        actor: Actor::Cli,
                        require_approval: false,
                    })
                    .await
                    .unwrap();
                run.finished().await;
            }
        }));
    }
    // An observer that arrives in the middle of it all.
    tokio::time::sleep(Duration::ZERO).await;
    let (at, mut model) = Model::of(&e);
    let mut applied = 0;
    // The number of the last event received.
    let mut seen = 0;
    // Applied while the work goes on.
    let done = async {
        for w in work {
            w.await.unwrap();
        }
    };
    tokio::pin!(done);
    common::within(LONG, "the busy tasks to end", async {
        loop {
            tokio::select! {
                () = &mut done => break,
                event = events.recv() => {
                    let event = event.unwrap();
                    seen = event.seq;
                    if event.seq > at {
                        model.apply(&event);
                        applied += 1;
                    }
                }
            }
        }
    })
    .await;
    // Then up to a snapshot of the quiet engine: every event up to its number applied, the
    // model is that snapshot. (A change is visible an instant before its event is out, so a
    // snapshot taken in that instant is retried.)
    let deadline = tokio::time::Instant::now() + LONG;
    let truth = loop {
        let (seq, truth) = Model::of(&e);
        while seen < seq {
            let event = tokio::time::timeout(LONG, events.recv())
                .await
                .unwrap()
                .unwrap();
            seen = event.seq;
            if event.seq > at {
                model.apply(&event);
                applied += 1;
            }
        }
        if model == truth {
            break truth;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "after {applied} events past seq {at}: {model:?} is not {truth:?}"
        );
        tokio::task::yield_now().await;
    };
    assert_eq!(truth.sessions.len(), 6, "{truth:?}");
    assert!(truth.runs.is_empty());
}

#[tokio::test]
async fn a_runs_session_refuses_everyone_elses_input_until_the_run_ends() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("waits.yaml"),
        "name: waits\ndescription: Waits.\ninitial_state: a\nstates:\n  a: { action: { tool: run_command, params: { command: 'sleep 60', timeout: 120 } } }\n",
    )
    .unwrap();
    let e = engine(dir.path());
    let mut events = e.subscribe();
    let run = e
        .start_run(RunRequest {
            workflow: WorkflowSource::Name("waits".into()),
            session_id: None,
            inputs: Default::default(),
            keep_session: true,
            host: None,
            actor: Actor::Cli,
            require_approval: false,
        })
        .await
        .unwrap();
    let session = common::within(LONG, "the run's first step", async {
        loop {
            let event = next(&mut events).await;
            if let Change::Run {
                line: RunEvent::StepStarted { .. },
                ..
            } = event.change
            {
                return e.run_status(&run.run_id).unwrap().session_id.unwrap();
            }
        }
    })
    .await;
    let typed: flowdeck::workflow::action::SendInputParams =
        serde_json::from_value(serde_json::json!({"input_text": "echo intruder\n"})).unwrap();
    let refused = e.send_input(&session, &typed, &agent()).unwrap_err();
    assert_eq!(refused.code(), "session_busy");
    let message = refused.to_string();
    assert!(
        message.contains(&run.run_id) && message.contains("cancel"),
        "{message}"
    );
    // The attempt is an event, by whoever tried.
    let rejected = next(&mut events).await;
    assert_eq!(rejected.actor, agent());
    assert!(
        matches!(&rejected.change, Change::SessionInputRejected { session_id, .. } if *session_id == session)
    );
    // Commands and reads type into the session too.
    let command: flowdeck::workflow::action::RunCommandParams =
        serde_json::from_value(serde_json::json!({"command": "true"})).unwrap();
    assert_eq!(
        e.run_command(&session, &command, None, &Actor::person())
            .await
            .unwrap_err()
            .code(),
        "session_busy"
    );
    // Once the run has ended, the session (kept) takes anyone's input again.
    e.cancel_run(&run.run_id, &Actor::Cli).await.unwrap();
    common::finished(run).await;
    e.send_input(&session, &typed, &agent()).unwrap();
    e.shutdown().await;
}

/// Shutting down closes every session, and says so for each.
#[tokio::test]
async fn shutdown_announces_every_session_it_closes() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path());
    let mut opened = Vec::new();
    for _ in 0..2 {
        opened.push(e.open_terminal(&bash(), &agent()).await.unwrap().session_id);
    }
    // Each session remembers who opened it.
    let listed = e.snapshot().sessions;
    assert_eq!(listed.len(), 2);
    assert!(
        listed.iter().all(|s| s.opened_by == Some(agent())),
        "{listed:?}"
    );
    let mut events = e.subscribe();
    e.shutdown().await;
    let mut closed = Vec::new();
    common::within(LONG, "every session's close", async {
        while closed.len() < opened.len() {
            let event = next(&mut events).await;
            if let Change::SessionClosed { session_id } = event.change {
                assert_eq!(event.actor, Actor::System);
                closed.push(session_id);
            }
        }
    })
    .await;
    closed.sort();
    opened.sort();
    assert_eq!(closed, opened);
    assert!(e.snapshot().sessions.is_empty());
}
