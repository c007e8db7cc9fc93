//! The engine's methods as values (`engine::request`): every request a studio sends is
//! answered by the method it names, and every answer and event crosses a socket whole: what
//! is serialized and read back says exactly what the engine said.

#![allow(clippy::unwrap_used)]

use flowdeck::engine::request::{Reply, Request};
use flowdeck::engine::{Actor, EngineEvent};
use flowdeck::workflow::action::{
    ContentMode, GetScreenContentParams, OpenTerminalParams, SearchOrder, SearchOutputParams,
    SendInputParams,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::common;
use common::QUICK;

/// `value` read back from its JSON is the same JSON: nothing is lost or renamed on the way.
fn crosses_whole<T: Serialize + DeserializeOwned>(value: &T) -> T {
    let text = serde_json::to_string(value).unwrap();
    let back: T =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text} does not read back: {e}"));
    assert_eq!(
        serde_json::to_value(&back).unwrap(),
        serde_json::to_value(value).unwrap(),
        "changed on the way"
    );
    back
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_reaches_its_method_and_its_answer_and_events_cross_whole() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("quick.yaml"), QUICK).unwrap();
    std::fs::write(
        dir.path().join("broken.yaml"),
        "name: broken\ninitial_state: a\nstates: 3\n",
    )
    .unwrap();
    let engine = common::test_engine(dir.path(), 4, false);
    let mut events = engine.subscribe();
    let person = Actor::person();
    let ask = |request: Request| {
        let engine = engine.clone();
        let request = crosses_whole(&request);
        async move {
            let answer = engine.handle(request, &Actor::person()).await;
            match answer {
                Ok(reply) => Ok(crosses_whole(&reply)),
                Err(e) => Err(crosses_whole(&e)),
            }
        }
    };

    let Reply::Snapshot(snapshot) = ask(Request::Snapshot).await.unwrap() else {
        panic!("not a snapshot")
    };
    assert_eq!(snapshot.workflows.len(), 2);
    let Reply::Plan(plan) = ask(Request::StepPlan {
        workflow: "quick".into(),
    })
    .await
    .unwrap() else {
        panic!("not a plan")
    };
    assert_eq!(plan.steps.len(), 1);
    let Reply::Document(document) = ask(Request::WorkflowGet {
        workflow: "broken".into(),
    })
    .await
    .unwrap() else {
        panic!("not a document")
    };
    assert!(!document.violations.is_empty(), "a broken file's errors");
    let missing = ask(Request::StepPlan {
        workflow: "nope".into(),
    })
    .await
    .unwrap_err();
    assert_eq!(missing.code, "workflow_not_found", "{missing:?}");

    // A save with a stale version is a conflict, told by its code.
    let Reply::Saved(saved) = ask(Request::SaveFile {
        file: "quick.yaml".into(),
        text: QUICK.replace("Says hi.", "Says hello."),
        expected_version: document_version(&engine, "quick"),
    })
    .await
    .unwrap() else {
        panic!("not a save")
    };
    let stale = ask(Request::SaveFile {
        file: "quick.yaml".into(),
        text: QUICK.into(),
        expected_version: Some("0".repeat(64)),
    })
    .await
    .unwrap_err();
    assert_eq!(stale.code, "version_conflict", "{stale:?}");
    assert!(saved.version.is_some());

    // A shell, typed into, read and searched.
    let Reply::Session(session) = ask(Request::OpenTerminal {
        params: OpenTerminalParams {
            command: Some(vec!["bash".into(), "--norc".into(), "--noprofile".into()]),
            ..OpenTerminalParams::default()
        },
    })
    .await
    .unwrap() else {
        panic!("not a session")
    };
    let id = session.session_id.clone();
    ask(Request::HoldInput {
        session_id: id.clone(),
    })
    .await
    .unwrap();
    ask(Request::SendInput {
        session_id: id.clone(),
        params: SendInputParams {
            input_text: Some("echo crossed-$((6*7))\n".into()),
            ..SendInputParams::default()
        },
    })
    .await
    .unwrap();
    let tail = GetScreenContentParams {
        session_id: None,
        content_mode: Some(ContentMode::Tail),
        lines: Some(20),
    };
    common::poll_until(common::LONG, "the echo", || {
        let content = engine.get_screen_content(&id, &tail, &person).ok()?;
        content.content.contains("crossed-42").then_some(())
    })
    .await;
    let Reply::Found(found) = ask(Request::SearchOutput {
        session_id: id.clone(),
        params: SearchOutputParams {
            session_id: None,
            pattern: "crossed-4.".into(),
            ignore_case: false,
            context: None,
            order: Some(SearchOrder::NewestFirst),
            limit: Some(10),
            cursor: None,
        },
    })
    .await
    .unwrap() else {
        panic!("not search results")
    };
    assert!(!found.found.hits.is_empty());
    ask(Request::ReleaseInput {
        session_id: id.clone(),
    })
    .await
    .unwrap();

    // A run, from start to its journal.
    let Reply::Started(run_id) = ask(Request::StartRun {
        workflow: "quick".into(),
        inputs: Default::default(),
        keep_session: false,
        host: None,
    })
    .await
    .unwrap() else {
        panic!("not a started run")
    };
    let events_of_run = common::poll_until(common::LONG, "the run's end", || {
        let list = engine.run_list(Some("quick"), 5);
        list.runs
            .iter()
            .any(|r| r.run_id == run_id && r.final_state.is_some())
            .then_some(())
    })
    .await;
    let () = events_of_run;
    let Reply::RunEvents(page) = ask(Request::RunEvents {
        run_id: run_id.clone(),
        after: 0,
        limit: 100,
    })
    .await
    .unwrap() else {
        panic!("not run events")
    };
    assert!(page.events.len() >= 2, "{page:?}");
    let Reply::Runs(runs) = ask(Request::RunList {
        workflow: Some("quick".into()),
        limit: 5,
    })
    .await
    .unwrap() else {
        panic!("not a run list")
    };
    assert_eq!(runs.runs[0].run_id, run_id);
    let Reply::Closed(_) = ask(Request::ExitTerminal { session_id: id }).await.unwrap() else {
        panic!("not closed")
    };

    // Everything the engine told on the way crosses whole too.
    let mut told = Vec::new();
    while let Ok(event) = events.try_recv() {
        told.push(crosses_whole::<EngineEvent>(&event));
    }
    let kinds: std::collections::BTreeSet<String> = told
        .iter()
        .map(|e| serde_json::to_value(e).unwrap()["event"].to_string())
        .collect();
    for kind in [
        "session_opened",
        "run",
        "session_closed",
        "workflow_changed",
    ] {
        assert!(
            kinds.contains(&format!("\"{kind}\"")),
            "{kind} among {kinds:?}"
        );
    }
    engine.shutdown().await;
}

fn document_version(engine: &flowdeck::engine::Engine, workflow: &str) -> Option<String> {
    engine.workflow_get(workflow).ok().map(|d| d.version)
}
