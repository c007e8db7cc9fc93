//! Journals written by an earlier flowdeck (tests/fixtures/journals/) read the same today: each
//! line parses into the journal's types and writes back byte for byte, and the engine reports
//! those runs as it did.

use flowdeck::engine::journal::{JournalEvent, RunEvent};
use flowdeck::engine::{ContractPhase, Engine, EngineConfig, FinalState, Phase, StepStatus};
use std::path::PathBuf;
use std::time::Duration;

fn journals() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/journals");
    let mut found: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("the journal fixtures")
        .map(|entry| {
            let path = entry.expect("an entry").path();
            let run_id = path
                .file_stem()
                .expect("a name")
                .to_string_lossy()
                .into_owned();
            (run_id, std::fs::read_to_string(&path).expect("a journal"))
        })
        .collect();
    found.sort();
    assert_eq!(found.len(), 2, "the fixtures: {found:?}");
    found
}

#[test]
fn every_line_of_an_earlier_journal_writes_back_byte_for_byte() {
    let mut phases = Vec::new();
    let mut statuses = Vec::new();
    for (run_id, text) in journals() {
        for line in text.lines() {
            let event: JournalEvent =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{run_id}: {e}: {line}"));
            match &event.body {
                RunEvent::ContractChecked { phase, .. } => phases.push(*phase),
                RunEvent::StepFinished { status, .. } => statuses.push(*status),
                _ => {}
            }
            let written = serde_json::to_string(&event).expect("serialized");
            assert_eq!(written, line, "{run_id}");
        }
    }
    // The words became enums; the fixtures hold each kind the runs wrote.
    assert_eq!(
        phases,
        [
            ContractPhase::Arguments,
            ContractPhase::ReturnValues,
            ContractPhase::Arguments
        ]
    );
    assert_eq!(statuses, [StepStatus::Failure, StepStatus::Success]);
}

#[tokio::test]
async fn the_engine_reports_an_earlier_processs_runs_from_their_journals() {
    let folder = tempfile::tempdir().expect("a folder");
    let runs = folder.path().join(".flowdeck/runs");
    std::fs::create_dir_all(&runs).expect("the runs folder");
    for (run_id, text) in journals() {
        std::fs::write(runs.join(format!("{run_id}.jsonl")), text).expect("a journal");
    }
    let engine = Engine::open(
        folder.path(),
        EngineConfig {
            watch: false,
            ..EngineConfig::default()
        },
    )
    .expect("an engine");

    let done = engine
        .run_status("r1795688283215-67a0")
        .expect("its status");
    assert_eq!(done.status, Phase::Finished);
    let result = done.result.expect("its result");
    assert_eq!(result.final_state, FinalState::Completed);
    assert!(result.success);
    assert_eq!(result.states_executed, 2);
    assert_eq!(result.last_state.as_deref(), Some("not_a_repo"));
    assert_eq!(
        result.return_values.get("GIT_HEALTH").map(String::as_str),
        Some("NOT_A_REPO")
    );
    let page = engine
        .run_events("r1795688283215-67a0", 0, 100, Duration::ZERO)
        .await
        .expect("its events");
    assert_eq!(page.events.len(), 10);
    assert!(page.finished);

    let refused = engine
        .run_status("r1795688287057-c10c")
        .expect("its status");
    let result = refused.result.expect("its result");
    assert_eq!(result.final_state, FinalState::ValidationFailed);
    assert!(!result.success);
    assert!(
        result
            .error
            .as_deref()
            .is_some_and(|e| e.contains("LOG_DIR")),
        "{:?}",
        result.error
    );
    let listed = engine.run_list(None, 10);
    assert_eq!(listed.runs.len(), 2, "{listed:?}");
}
