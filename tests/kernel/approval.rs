//! Approval mode through the engine (issue 15): an agent's run of manifest content no person
//! approved waits for an approver's answer; people's and the command line's runs never wait;
//! an approval is of exact content, kept on disk, and any change needs a new one.

#![allow(clippy::unwrap_used)]

use crate::common;
use common::{LONG, agent, finished};

use flowdeck::engine::approval::{ApprovalRequest, Approver};
use flowdeck::engine::{
    Actor, Change, Engine, EngineConfig, EngineError, EngineEvent, FinalState, Phase, RunRequest,
    WorkflowSource, WrittenFinalState,
};
use std::path::Path;
use std::sync::Arc;
use tokio::sync::broadcast;

const GREET: &str = "name: greet\ndescription: Says hello.\ninitial_state: hello\nstates:\n  hello:\n    action: { tool: run_command, params: { command: echo hello-approved } }\n";

fn engine(dir: &Path, approve: bool) -> Arc<Engine> {
    Engine::open(
        dir,
        EngineConfig {
            approve_agent_runs: approve,
            ..common::test_config(8, true)
        },
    )
    .unwrap()
}

fn folder_with_greet() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("greet.yaml"), GREET).unwrap();
    dir
}

/// A folder with `greet`, an engine in approval mode on it, and a person to approve.
fn approving() -> (tempfile::TempDir, Arc<Engine>, Approver) {
    let dir = folder_with_greet();
    let engine = engine(dir.path(), true);
    let approver = engine.attach_approver();
    (dir, engine, approver)
}

fn request(source: WorkflowSource, actor: Actor) -> RunRequest {
    RunRequest {
        workflow: source,
        session_id: None,
        inputs: Default::default(),
        keep_session: false,
        host: None,
        actor,
        require_approval: false,
    }
}

fn greet_by(actor: Actor) -> RunRequest {
    request(WorkflowSource::Name("greet".into()), actor)
}

/// The next approval request the engine announces, then its text as the approvers see it.
async fn next_request(
    engine: &Engine,
    events: &mut broadcast::Receiver<EngineEvent>,
) -> ApprovalRequest {
    let run_id = common::within(LONG, "an approval request", async {
        loop {
            match events.recv().await {
                Ok(EngineEvent {
                    change: Change::ApprovalRequested { run_id, .. },
                    ..
                }) => return run_id,
                // Closed would come back at once, for ever.
                Err(broadcast::error::RecvError::Closed) => panic!("the engine's events ended"),
                _ => {}
            }
        }
    })
    .await;
    let pending = engine.approvals_pending();
    pending
        .into_iter()
        .find(|r| r.run_id == run_id)
        .expect("the announced request is pending")
}

#[tokio::test]
async fn an_agents_run_waits_for_approval_and_runs_once_approved() {
    let (dir, engine, approver) = approving();
    let mut events = engine.subscribe();

    let started = engine.start_run(greet_by(agent())).await.unwrap();
    assert_eq!(started.status().status, Phase::AwaitingApproval);
    let asked = next_request(&engine, &mut events).await;
    assert_eq!(asked.workflow, "greet");
    assert_eq!(asked.agent, agent());
    assert_eq!(asked.content, GREET);
    assert_eq!(asked.last_approved, None, "never approved before");
    assert!(!asked.inline);
    assert_eq!(
        engine.run_status(&started.run_id).unwrap().status,
        Phase::AwaitingApproval,
        "the agent sees its run waiting"
    );

    approver
        .decide(
            &started.run_id,
            &asked.fingerprint(),
            true,
            &Actor::person(),
        )
        .unwrap();
    let result = finished(started).await;
    assert_eq!(
        result.final_state,
        FinalState::Completed,
        "{:?}",
        result.error
    );
    assert!(engine.approvals_pending().is_empty());

    // The approval is remembered on disk: the same content runs at once next time, even in
    // another engine on the folder.
    let kept = std::fs::read_to_string(dir.path().join(".flowdeck/approved.json")).unwrap();
    assert!(kept.contains(&asked.version), "{kept}");
    let again = engine.start_run(greet_by(agent())).await.unwrap();
    assert_eq!(again.status().status, Phase::Running);
    assert_eq!(finished(again).await.final_state, FinalState::Completed);
    drop(approver);
    engine.shutdown().await;
    let other = self::engine(dir.path(), true);
    let third = other.start_run(greet_by(agent())).await.unwrap();
    assert_eq!(
        finished(third).await.final_state,
        FinalState::Completed,
        "approved content needs no approver"
    );
    other.shutdown().await;
}

#[tokio::test]
async fn an_answer_decides_only_the_request_it_names_by_its_fingerprint() {
    let (dir, engine, approver) = approving();
    std::fs::write(
        dir.path().join("evil.yaml"),
        GREET.replace("name: greet", "name: evil"),
    )
    .unwrap();
    common::poll_until(LONG, "the engine to see evil", || {
        engine.workflow_get("evil").ok()
    })
    .await;
    let mut events = engine.subscribe();
    let benign = engine.start_run(greet_by(agent())).await.unwrap();
    let shown = next_request(&engine, &mut events).await;
    let evil = engine
        .start_run(request(WorkflowSource::Name("evil".into()), agent()))
        .await
        .unwrap();
    next_request(&engine, &mut events).await;

    // A `y` meant for benign, arriving with evil's run id (its place on screen was taken):
    // refused, and evil still waits, undecided.
    let refused = approver
        .decide(&evil.run_id, &shown.fingerprint(), true, &Actor::person())
        .unwrap_err();
    assert_eq!(refused.code(), "approval_not_shown", "{refused}");
    assert_eq!(evil.status().status, Phase::AwaitingApproval);
    assert_eq!(engine.approvals_pending().len(), 2);

    // Each answered by what it showed.
    let evil_shown = engine
        .approvals_pending()
        .into_iter()
        .find(|r| r.run_id == evil.run_id)
        .expect("evil waits");
    approver
        .decide(
            &evil.run_id,
            &evil_shown.fingerprint(),
            false,
            &Actor::person(),
        )
        .unwrap();
    approver
        .decide(&benign.run_id, &shown.fingerprint(), true, &Actor::person())
        .unwrap();
    assert_eq!(finished(evil).await.final_state, FinalState::NotApproved);
    assert_eq!(finished(benign).await.final_state, FinalState::Completed);
    engine.shutdown().await;
}

#[tokio::test]
async fn a_change_needs_a_new_approval_shown_against_the_last_and_a_denial_is_journaled() {
    let (dir, engine, approver) = approving();
    engine.approve_workflow("greet", &Actor::person()).unwrap();

    let changed = GREET.replace("hello-approved", "something-else");
    std::fs::write(dir.path().join("greet.yaml"), &changed).unwrap();
    common::poll_until(LONG, "the engine to see the change", || {
        engine
            .workflow_get("greet")
            .ok()
            .filter(|d| d.content == changed)
    })
    .await;
    let mut events = engine.subscribe();
    let started = engine.start_run(greet_by(agent())).await.unwrap();
    let asked = next_request(&engine, &mut events).await;
    assert_eq!(asked.content, changed);
    let shown = asked.fingerprint();
    let last = asked
        .last_approved
        .expect("compared with the approved content");
    assert_eq!(last.content, GREET);
    assert_eq!(last.by, "you");

    approver
        .decide(&started.run_id, &shown, false, &Actor::person())
        .unwrap();
    let result = finished(started).await;
    assert_eq!(result.final_state, FinalState::NotApproved);
    let error = result.error.unwrap();
    assert!(error.contains("denied"), "{error}");
    let settled = common::within(LONG, "the settled event", async {
        loop {
            match events.recv().await {
                Ok(EngineEvent {
                    actor,
                    change: Change::ApprovalSettled { approved, .. },
                    ..
                }) => return (actor, approved),
                Err(broadcast::error::RecvError::Closed) => panic!("the engine's events ended"),
                _ => {}
            }
        }
    })
    .await;
    assert_eq!(settled, (Actor::person(), false));
    let history = engine.run_list(Some("greet"), 10);
    assert_eq!(
        history.runs[0]
            .final_state
            .as_ref()
            .map(WrittenFinalState::as_str),
        Some("not_approved"),
        "the denied run is in the history"
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn without_an_approver_an_agents_run_of_unapproved_content_is_refused_at_once() {
    let dir = folder_with_greet();
    let engine = engine(dir.path(), true);
    match engine.start_run(greet_by(agent())).await {
        Err(EngineError::NotApproved { workflow, why }) => {
            assert_eq!(workflow, "greet");
            assert!(why.contains("no studio is attached"), "{why}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(engine.run_list(None, 10).runs.is_empty(), "nothing ran");
    // Approved ahead (as `flowdeck approve` does), it runs.
    engine.approve_workflow("greet", &Actor::Cli).unwrap();
    let started = engine.start_run(greet_by(agent())).await.unwrap();
    assert_eq!(finished(started).await.final_state, FinalState::Completed);
    engine.shutdown().await;
}

#[tokio::test]
async fn people_and_the_command_line_never_wait_and_mode_off_agents_do_not_either() {
    let dir = folder_with_greet();
    let approving = engine(dir.path(), true);
    for actor in [Actor::person(), Actor::Cli] {
        let started = approving.start_run(greet_by(actor)).await.unwrap();
        assert_eq!(finished(started).await.final_state, FinalState::Completed);
    }
    approving.shutdown().await;
    let off = engine(dir.path(), false);
    let started = off.start_run(greet_by(agent())).await.unwrap();
    assert_eq!(finished(started).await.final_state, FinalState::Completed);
    // An agent's connection can ask for approval mode itself, whatever the engine says.
    let mut asking = greet_by(agent());
    asking.require_approval = true;
    assert!(matches!(
        off.start_run(asking).await,
        Err(EngineError::NotApproved { .. })
    ));
    off.shutdown().await;
}

#[tokio::test]
async fn a_waiting_run_cancelled_or_left_without_approver_ends_and_its_request_goes() {
    let (_dir, engine, approver) = approving();
    let mut events = engine.subscribe();

    let started = engine.start_run(greet_by(agent())).await.unwrap();
    let asked = next_request(&engine, &mut events).await;
    engine.cancel_run(&started.run_id, &agent()).await.unwrap();
    let result = finished(started).await;
    assert_eq!(result.final_state, FinalState::Canceled);
    assert!(engine.approvals_pending().is_empty());
    assert!(
        approver
            .decide(&result.run_id, &asked.fingerprint(), true, &Actor::person())
            .is_err(),
        "nothing left to approve"
    );

    // The studio closing denies what still waits: nobody is left to answer.
    let started = engine.start_run(greet_by(agent())).await.unwrap();
    next_request(&engine, &mut events).await;
    drop(approver);
    let result = finished(started).await;
    assert_eq!(result.final_state, FinalState::NotApproved);
    assert!(
        result
            .error
            .as_deref()
            .unwrap_or("")
            .contains("studio closed"),
        "{:?}",
        result.error
    );
    assert!(engine.approvals_pending().is_empty());
    engine.shutdown().await;
}

#[tokio::test]
async fn an_inline_manifest_is_approved_apart_from_the_folders_file_of_its_name() {
    let (_dir, engine, approver) = approving();
    let mut events = engine.subscribe();

    let inline = || request(WorkflowSource::Inline(GREET.into()), agent());
    let started = engine.start_run(inline()).await.unwrap();
    let asked = next_request(&engine, &mut events).await;
    assert!(asked.inline);
    approver
        .decide(
            &started.run_id,
            &asked.fingerprint(),
            true,
            &Actor::person(),
        )
        .unwrap();
    assert_eq!(finished(started).await.final_state, FinalState::Completed);
    let again = engine.start_run(inline()).await.unwrap();
    assert_eq!(again.status().status, Phase::Running, "the same text again");
    finished(again).await;

    // The folder's `greet` has the very same text, yet was never approved as the file.
    let file_run = engine.start_run(greet_by(agent())).await.unwrap();
    assert_eq!(file_run.status().status, Phase::AwaitingApproval);
    let asked = next_request(&engine, &mut events).await;
    approver
        .decide(
            &file_run.run_id,
            &asked.fingerprint(),
            false,
            &Actor::person(),
        )
        .unwrap();
    finished(file_run).await;
    engine.shutdown().await;
}
