//! Runs end to end: real manifests on disk, real bash sessions, the journal on disk.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use flowdeck::engine::{
    Actor, Change, Engine, EngineError, FinalState, Phase, RunRequest, RunResult, WorkflowSource,
    WrittenFinalState,
};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::common;
use common::LONG;
use tokio::sync::broadcast::error::RecvError;

fn engine_in(dir: &Path, max_runs: usize) -> Arc<Engine> {
    common::test_engine(dir, max_runs, true)
}

fn write(dir: &Path, file: &str, text: &str) {
    std::fs::write(dir.join(file), text).unwrap();
}

/// A folder holding one manifest, and an engine on it (at most 8 runs).
fn with_manifest(file: &str, text: &str) -> (tempfile::TempDir, Arc<Engine>) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), file, text);
    let engine = engine_in(dir.path(), 8);
    (dir, engine)
}

fn request(name: &str, inputs: &[(&str, &str)]) -> RunRequest {
    common::run_request(name, inputs)
}

fn assert_final(result: &RunResult, expected: FinalState) {
    assert_eq!(
        result.final_state,
        expected,
        "error: {:?}\nlog: {}",
        result.error,
        serde_json::to_string_pretty(&result.execution_log).unwrap()
    );
}

/// A session opened directly, as an agent would before running a workflow in it.
async fn bash_session(engine: &Engine) -> flowdeck::term::SessionInfo {
    let params = serde_json::from_value(
        serde_json::json!({"command": ["bash", "--norc"], "name": "prepared"}),
    )
    .unwrap();
    engine.open_terminal(&params, &Actor::Cli).await.unwrap()
}

/// Follows a run's journal until it enters `state`.
async fn wait_for_state(engine: &Arc<Engine>, run_id: &str, state: &str) {
    let needle = format!("\"state\":\"{state}\"");
    common::within(LONG, &format!("the run to enter {state}"), async {
        let mut cursor = 0;
        loop {
            let page = engine
                .run_events(run_id, cursor, 100, Duration::from_secs(5))
                .await
                .unwrap();
            cursor = page.next_cursor;
            if page
                .events
                .iter()
                .any(|e| serde_json::to_string(e).unwrap().contains(&needle))
            {
                return;
            }
            assert!(!page.finished, "the run ended before reaching {state}");
        }
    })
    .await;
}

/// Waits for a run to reach a state where it waits for an answer, following its events.
async fn wait_for_prompt(engine: &Arc<Engine>, run_id: &str) {
    common::within(LONG, "the run's prompt", async {
        let mut cursor = 0;
        loop {
            let page = engine
                .run_events(run_id, cursor, 100, Duration::from_secs(5))
                .await
                .unwrap();
            cursor = page.next_cursor;
            if engine.run_status(run_id).unwrap().status == Phase::WaitingForInput {
                return;
            }
            assert!(!page.finished, "the run ended before its prompt");
        }
    })
    .await;
}

#[tokio::test]
async fn the_seed_build_project_runs_a_real_makefile() {
    let dir = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(
        project.path(),
        "Makefile",
        "release:\n\tmkdir -p out && echo built > out/app\n\ndebug:\n\techo debug\n",
    );
    std::fs::copy(
        "tests/fixtures/valid/seed_build_project.json",
        dir.path().join("build_project.json"),
    )
    .unwrap();
    let engine = engine_in(dir.path(), 8);
    let root = project.path().display().to_string();
    let result = engine
        .run(request(
            "build_project",
            &[("PROJECT_ROOT", &root), ("BUILD_TYPE", "release")],
        ))
        .await
        .unwrap();
    assert_final(&result, FinalState::Completed);
    assert!(result.success);
    assert_eq!(result.states_executed, 2);
    assert_eq!(result.return_values["BUILD_STATUS"], "SUCCESS");
    assert_eq!(result.return_values["BUILD_TIME"], "45");
    assert!(project.path().join("out/app").exists(), "make did not run");
    // The seed's log shape: each action once, with the seed's fields.
    let executions: Vec<_> = result
        .execution_log
        .iter()
        .filter(|e| e["phase"] == "execution")
        .collect();
    assert_eq!(executions.len(), 2);
    for e in executions {
        for field in [
            "state",
            "tool",
            "params",
            "result",
            "tool_success",
            "timestamp",
        ] {
            assert!(e.get(field).is_some(), "missing {field} in {e}");
        }
    }
    assert_eq!(
        result.workflow_signature.as_ref().unwrap().arguments.len(),
        2
    );
    // Its own session is closed at the end.
    assert!(engine.list_terminal_sessions().sessions.is_empty());
    // Journaled, listed, with metadata.
    let list = engine.run_list(Some("build_project"), 10);
    assert_eq!(list.runs.len(), 1);
    assert_eq!(
        list.runs[0]
            .final_state
            .as_ref()
            .map(WrittenFinalState::as_str),
        Some("completed")
    );
    let listed = engine.workflow_list();
    let entry = listed
        .workflows
        .iter()
        .find(|w| w.name == "build_project")
        .unwrap();
    assert_eq!(
        (
            entry.runs,
            entry.last_result.as_ref().map(WrittenFinalState::as_str),
        ),
        (1, Some("completed"))
    );
}

const CONTRACT: &str = r#"
name: contract
description: Copies its input to a return value.
arguments:
  MESSAGE: { description: any text }
  MODE: { description: a mode, enum: [fast, slow], default: fast }
return_values:
  ECHOED: { description: the message exported back }
  MODE_USED: { description: the mode }
  SECRET_OUT: { description: a secret, secret: true, required: false }
initial_state: copy
states:
  copy:
    action:
      tool: run_command
      params: { command: 'export ECHOED="$MESSAGE" MODE_USED="$MODE" SECRET_OUT=hidden' }
"#;

#[tokio::test]
async fn inputs_are_exported_literally_and_returned() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "contract.yaml", CONTRACT);
    let engine = engine_in(dir.path(), 8);
    let pwned = std::env::temp_dir().join(format!("flowdeck-pwned-run-{}", std::process::id()));
    let message = format!(
        "it's \"quoted\"\nline two $(touch {p}) `touch {p}` ${{HOME}} ✓",
        p = pwned.display()
    );
    let result = engine
        .run(request("contract", &[("MESSAGE", &message)]))
        .await
        .unwrap();
    assert_final(&result, FinalState::Completed);
    assert_eq!(result.return_values["ECHOED"], message);
    assert_eq!(result.return_values["MODE_USED"], "fast");
    assert_eq!(result.return_values["SECRET_OUT"], "********");
    assert!(!pwned.exists(), "an input was executed");
}

/// Exports its input, sets a variable, types a command of its own, runs one and returns both
/// values: every piece of flowdeck's shell plumbing, around commands a person should see.
const PLUMBING: &str = r#"
name: plumbing
description: Inputs in, a variable set, a command typed, values returned.
arguments:
  MESSAGE: { description: any text }
return_values:
  ECHOED: { description: the input exported back }
  STATUS: { description: set by set_env }
initial_state: mark
states:
  mark:
    action: { tool: set_env, params: { vars: { STATUS: "it's \"ok\" ✓ $(touch PWNED)" } } }
    transitions:
      - next_state: show
  show:
    action: { tool: send_input, params: { input_text: "export ECHOED=\"$MESSAGE\"; echo VISIBLE_$((3 * 3))\n" } }
    transitions:
      - next_state: seen
  seen:
    action: { tool: await_output, params: { pattern: '^VISIBLE_9' } }
    transitions:
      - next_state: ran
  ran:
    action: { tool: run_command, params: { command: "echo RAN_$((2 * 3))" } }
"#;

#[tokio::test]
async fn a_runs_plumbing_stays_off_its_sessions_screen_and_history() {
    let dir = tempfile::tempdir().unwrap();
    let pwned = std::env::temp_dir().join(format!("flowdeck-pwned-quiet-{}", std::process::id()));
    write(
        dir.path(),
        "plumbing.yaml",
        &PLUMBING.replace("PWNED", &pwned.display().to_string()),
    );
    let engine = engine_in(dir.path(), 8);
    let session = bash_session(&engine).await;
    let message =
        "it's \"quoted\"\nline two $(touch PWNED) ✓".replace("PWNED", &pwned.display().to_string());
    let mut req = request("plumbing", &[("MESSAGE", &message)]);
    req.session_id = Some(session.session_id.clone());
    let result = engine.run(req).await.unwrap();
    assert_final(&result, FinalState::Completed);
    assert_eq!(result.return_values["ECHOED"], message);
    assert_eq!(
        result.return_values["STATUS"],
        format!("it's \"ok\" ✓ $(touch {})", pwned.display())
    );
    assert!(!pwned.exists(), "a value was executed");
    for mode in ["screen", "history"] {
        let params = serde_json::from_value(serde_json::json!({ "content_mode": mode })).unwrap();
        let text = engine
            .get_screen_content(&session.session_id, &params, &Actor::Cli)
            .unwrap()
            .content;
        let plumbing: Vec<&str> = text
            .lines()
            .filter(|l| {
                l.contains("__FD")
                    || l.trim_start().starts_with("V:")
                    || l.contains("eval '")
                    || l.contains("history -d")
                    || l.contains("printf '%s%s")
            })
            .collect();
        assert!(
            plumbing.is_empty(),
            "the {mode} shows plumbing: {plumbing:#?}\n{text}"
        );
        // The run's own command is there for a person to see.
        assert!(
            text.contains("export ECHOED=\"$MESSAGE\"; echo VISIBLE_$((3 * 3))"),
            "{mode}:\n{text}"
        );
        assert!(text.lines().any(|l| l == "VISIBLE_9"), "{mode}:\n{text}");
        // The command it ran looks typed: after a prompt, its output under it.
        let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
        let ran = lines.iter().position(|l| {
            l.ends_with("$ echo RAN_$((2 * 3))") || l.ends_with("# echo RAN_$((2 * 3))")
        });
        assert!(
            ran.is_some_and(|i| lines.get(i + 1) == Some(&"RAN_6")),
            "{mode}:\n{text}"
        );
    }
}

#[tokio::test]
async fn missing_invalid_and_unknown_inputs_fail_fast() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "contract.yaml", CONTRACT);
    let engine = engine_in(dir.path(), 8);
    let result = engine
        .run(request("contract", &[("MODE", "warp"), ("EXTRA", "x")]))
        .await
        .unwrap();
    assert_final(&result, FinalState::ValidationFailed);
    assert_eq!(result.states_executed, 0);
    let error = result.error.unwrap();
    assert!(
        error.contains(
            "Missing required environment variables: MESSAGE. Set them with: export MESSAGE=value"
        ),
        "{error}"
    );
    assert!(
        error.contains("MODE: 'warp' is not one of fast, slow"),
        "{error}"
    );
    assert!(error.contains("Unknown inputs: 'EXTRA'"), "{error}");
}

#[tokio::test]
async fn values_no_shell_can_hold_are_refused_before_the_run_naming_the_input() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "contract.yaml", CONTRACT);
    let engine = engine_in(dir.path(), 8);
    let huge = "x".repeat(128 * 1024);
    for (value, expected) in [
        ("a\0b", "'MESSAGE' contains a NUL character"),
        (huge.as_str(), "'MESSAGE' is 131072 bytes"),
    ] {
        match engine
            .start_run(request("contract", &[("MESSAGE", value)]))
            .await
        {
            Err(EngineError::InvalidParams(message)) => {
                assert!(message.contains(expected), "{message}")
            }
            Err(other) => panic!("{other}"),
            Ok(started) => panic!("a run started: {}", started.run_id),
        }
    }
    // Nothing ran, nothing was journaled.
    assert!(engine.run_list(None, 10).runs.is_empty());
    // Just under the limit is fine.
    let fits = "y".repeat(128 * 1024 - 1 - "MESSAGE=".len());
    let result = engine
        .run(request("contract", &[("MESSAGE", &fits)]))
        .await
        .unwrap();
    assert_final(&result, FinalState::Completed);
    assert_eq!(result.return_values["ECHOED"].len(), fits.len());
}

#[tokio::test]
async fn a_run_whose_journal_cannot_be_written_says_so() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "contract.yaml", CONTRACT);
    std::fs::create_dir_all(dir.path().join(".flowdeck")).unwrap();
    // Where the journals go is a file: nothing can be created there.
    std::fs::write(dir.path().join(".flowdeck/runs"), b"").unwrap();
    let engine = engine_in(dir.path(), 8);
    let result = engine
        .run(request("contract", &[("MESSAGE", "hi")]))
        .await
        .unwrap();
    assert_final(&result, FinalState::Completed);
    let problem = result
        .journal_error
        .expect("the result says the journal is missing");
    assert!(problem.contains("could not be created"), "{problem}");
}

#[tokio::test]
async fn arguments_come_from_the_prepared_session_and_returns_must_be_set() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "contract.yaml", CONTRACT);
    write(
        dir.path(),
        "forgetful.yaml",
        "name: forgetful\ndescription: Never sets its return value.\nreturn_values:\n  RESULT: { description: never set }\ninitial_state: a\nstates:\n  a: { action: { tool: run_command, params: { command: 'true' } } }\n",
    );
    let engine = engine_in(dir.path(), 8);
    // The seed's mode: an agent prepared the session with exports.
    let session = bash_session(&engine).await;
    engine
        .run_command(
            &session.session_id,
            &serde_json::from_value(
                serde_json::json!({"command": "export MESSAGE='from the session'"}),
            )
            .unwrap(),
            None,
            &Actor::Cli,
        )
        .await
        .unwrap();
    let mut req = request("contract", &[]);
    req.session_id = Some(session.session_id.clone());
    let result = engine.run(req).await.unwrap();
    assert_final(&result, FinalState::Completed);
    assert_eq!(result.return_values["ECHOED"], "from the session");
    // A given session stays open.
    assert!(
        engine
            .list_terminal_sessions()
            .sessions
            .iter()
            .any(|s| s.session_id == session.session_id)
    );

    let result = engine.run(request("forgetful", &[])).await.unwrap();
    assert_final(&result, FinalState::ReturnValidationFailed);
    assert!(result.error.unwrap().contains("RESULT"));
}

#[tokio::test]
async fn loops_stop_at_max_steps_and_runs_time_out() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "loop.yaml",
        "name: loop\ndescription: Loops forever.\nmax_steps: 7\ninitial_state: a\nstates:\n  a:\n    action: { tool: list_terminal_sessions }\n    transitions: [{ next_state: b }]\n  b:\n    action: { tool: list_terminal_sessions }\n    transitions: [{ next_state: a }]\n",
    );
    write(
        dir.path(),
        "slow.yaml",
        "name: slow\ndescription: Waits longer than it may.\ntimeout_seconds: 0.5\ninitial_state: a\nstates:\n  a:\n    action: { tool: run_command, params: { command: 'sleep 30', timeout: 60 } }\n",
    );
    let engine = engine_in(dir.path(), 8);
    let result = engine.run(request("loop", &[])).await.unwrap();
    assert_final(&result, FinalState::Error);
    assert_eq!(result.states_executed, 7);
    assert!(result.error.unwrap().contains("max_steps (7)"));
    let result = engine.run(request("slow", &[])).await.unwrap();
    assert_final(&result, FinalState::Timeout);
    assert!(result.duration_ms < 20_000.0);
}

#[tokio::test]
async fn not_found_and_never_valid_end_before_any_state() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "broken.yaml",
        "name: broken\ndescription: x\ninitial_state: nowhere\nstates: {}\n",
    );
    // A file that does not parse declares no name: its stem is asked for, and it is said
    // broken where it broke, not "not found" (issue 37, F26).
    write(
        dir.path(),
        "unparsable.yaml",
        "name: unparsable\ndescription: [oops\n",
    );
    let engine = engine_in(dir.path(), 8);
    let result = engine.run(request("no_such_flow", &[])).await.unwrap();
    assert_final(&result, FinalState::WorkflowNotFound);
    let result = engine.run(request("broken", &[])).await.unwrap();
    assert_final(&result, FinalState::DefinitionInvalid);
    let result = engine.run(request("unparsable", &[])).await.unwrap();
    assert_final(&result, FinalState::DefinitionInvalid);
    let error = result.error.unwrap();
    assert!(
        error.contains("unparsable.yaml") && error.contains("line 3: YAML syntax error"),
        "{error}"
    );
    let inline = RunRequest {
        workflow: WorkflowSource::Inline("name: inline\ndescription: x\ninitial_state: a\nstates:\n  a: { action: { tool: nope } }\n".into()),
        ..request("", &[])
    };
    let result = engine.run(inline).await.unwrap();
    assert_final(&result, FinalState::DefinitionInvalid);
    let error = result.error.unwrap();
    assert!(
        error.contains("the manifest is invalid") && error.contains("/states/a/action/tool"),
        "{error}"
    );
    // All are in the history too, but the run of no workflow: nothing ran, nothing is
    // written (issue 37, F28).
    assert_eq!(engine.run_list(None, 10).runs.len(), 3);
}

const WAITER: &str = r#"
name: waiter
description: Asks, then waits on a line that never comes.
initial_state: ask
states:
  ask:
    action:
      tool: prompt
      params:
        prompt: Which environment?
        validation: [{ type: regex, pattern: '^(staging|production)$' }]
        store_as: TARGET_ENV
    transitions:
      - { condition: validation_failed, next_state: ask }
      - { condition: validation_passed, next_state: work }
  work:
    action: { tool: run_command, params: { command: 'sleep 60', timeout: 120 } }
"#;

#[tokio::test]
async fn prompts_pause_and_answers_are_checked_and_runs_cancel() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "waiter.yaml", WAITER);
    let engine = engine_in(dir.path(), 8);
    let started = engine.start_run(request("waiter", &[])).await.unwrap();
    let run_id = started.run_id.clone();
    wait_for_prompt(&engine, &run_id).await;
    assert_eq!(
        engine.run_status(&run_id).unwrap().prompt.as_deref(),
        Some("Which environment?")
    );
    engine
        .answer_prompt(&run_id, "moon".into(), &Actor::Cli)
        .unwrap();
    // validation_failed loops back to the same prompt.
    wait_for_prompt(&engine, &run_id).await;
    engine
        .answer_prompt(&run_id, "staging".into(), &Actor::Cli)
        .unwrap();
    // Now in `sleep 60`: cancel it.
    wait_for_state(&engine, &run_id, "work").await;
    let session = engine.run_status(&run_id).unwrap().session_id.unwrap();
    let session_pid = engine
        .list_terminal_sessions()
        .sessions
        .iter()
        .find(|s| s.session_id == session)
        .unwrap()
        .pid;
    let status = engine.cancel_run(&run_id, &Actor::Cli).await.unwrap();
    assert_eq!(status.status, Phase::Finished);
    let result = common::finished(started).await;
    assert_final(&result, FinalState::Canceled);
    assert_eq!(result.states_executed, 3);
    // The run's own session and its `sleep` are gone.
    assert!(engine.list_terminal_sessions().sessions.is_empty());
    assert!(flowdeck::term::processes::proc_info(session_pid as i32).is_none());
    assert!(matches!(
        engine.answer_prompt(&run_id, "x".into(), &Actor::Cli),
        Err(EngineError::RunNotFound(_))
    ));
    // The journal tells the story, and takes feedback.
    let events = engine
        .run_events(&run_id, 0, 1000, Duration::ZERO)
        .await
        .unwrap();
    assert!(events.finished);
    let kinds: Vec<String> = events
        .events
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(kinds.first().map(String::as_str), Some("run_started"));
    assert_eq!(kinds.last().map(String::as_str), Some("run_finished"));
    assert_eq!(kinds.iter().filter(|k| *k == "answered").count(), 2);
    // Who answered and who cancelled are on the record.
    let lines: Vec<serde_json::Value> = events
        .events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    for answered in lines.iter().filter(|l| l["type"] == "answered") {
        assert_eq!(answered["actor"]["kind"], "cli", "{answered}");
    }
    let finished = lines.last().unwrap();
    assert_eq!(finished["cancelled_by"]["kind"], "cli", "{finished}");
    assert!(
        finished["error"]
            .as_str()
            .unwrap()
            .contains("cancelled by cli"),
        "{finished}"
    );
    assert!(matches!(
        engine
            .run_feedback(&run_id, None, Some("  ".into()), &Actor::Cli)
            .await,
        Err(EngineError::InvalidParams(_))
    ));
    engine
        .run_feedback(
            &run_id,
            Some(0.5),
            Some("cancelled on purpose".into()),
            &Actor::person(),
        )
        .await
        .unwrap();
    let listed = engine.run_list(Some("waiter"), 10);
    assert_eq!(listed.runs[0].feedback.len(), 1);
    let last = engine
        .run_events(&run_id, 0, 1000, Duration::ZERO)
        .await
        .unwrap()
        .events
        .pop()
        .unwrap();
    let last = serde_json::to_value(&last).unwrap();
    assert_eq!(
        (last["type"].as_str(), last["actor"]["kind"].as_str()),
        (Some("feedback"), Some("person")),
        "{last}"
    );
    let mut events = engine.subscribe();
    assert_eq!(
        engine
            .purge_history(Some("waiter"), &Actor::Cli)
            .await
            .removed,
        1
    );
    assert!(engine.run_list(Some("waiter"), 10).runs.is_empty());
    let purged = events.try_recv().unwrap();
    assert_eq!(purged.actor, Actor::Cli);
    assert!(
        matches!(&purged.change, Change::HistoryPurged { workflow: Some(w), removed: 1 } if w == "waiter"),
        "{purged:?}"
    );
}

#[tokio::test]
async fn one_run_per_session_and_a_global_limit() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "waiter.yaml", WAITER);
    let engine = engine_in(dir.path(), 8);
    let session = bash_session(&engine).await;
    let mut req = request("waiter", &[]);
    req.session_id = Some(session.session_id.clone());
    let first = engine.start_run(req.clone()).await.unwrap();
    // Feedback waits for the end of the run.
    assert!(matches!(
        engine
            .run_feedback(&first.run_id, Some(1.0), None, &Actor::Cli)
            .await,
        Err(EngineError::InvalidParams(_))
    ));
    // By name or by id, it is the same session.
    req.session_id = Some(session.name.clone().unwrap_or_default());
    match engine.start_run(req).await {
        Err(EngineError::RunStart(e)) => {
            let message = e.to_string();
            assert!(message.contains(&first.run_id), "{message}");
        }
        other => panic!("{other:?}"),
    }
    engine.cancel_run(&first.run_id, &Actor::Cli).await.unwrap();

    // Ten at once against a limit of eight: two are refused, not queued.
    let mut started = Vec::new();
    let mut refused = 0;
    for _ in 0..10 {
        match engine.start_run(request("waiter", &[])).await {
            Ok(run) => started.push(run),
            Err(EngineError::RunStart(_)) => refused += 1,
            Err(other) => panic!("{other:?}"),
        }
    }
    assert_eq!((started.len(), refused), (8, 2));
    for run in &started {
        engine.cancel_run(&run.run_id, &Actor::Cli).await.unwrap();
    }
    for run in started {
        assert_final(&common::finished(run).await, FinalState::Canceled);
    }
    engine.shutdown().await;
    assert!(engine.list_terminal_sessions().sessions.is_empty());
}

#[tokio::test]
async fn a_run_keeps_the_version_it_started_with() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "waiter.yaml", WAITER);
    let engine = engine_in(dir.path(), 8);
    let mut changes = engine.subscribe();
    let started = engine.start_run(request("waiter", &[])).await.unwrap();
    let run_id = started.run_id.clone();
    wait_for_prompt(&engine, &run_id).await;
    // Edit the manifest on disk mid-run: the prompt's rule now accepts anything, and the
    // next state is gone.
    write(
        dir.path(),
        "waiter.yaml",
        &WAITER
            .replace("'^(staging|production)$'", "'.*'")
            .replace("sleep 60", "true"),
    );
    common::within(LONG, "the edit's workflow_changed", async {
        loop {
            let event = changes.recv().await;
            if let Ok(event) = &event
                && matches!(
                    event.change,
                    flowdeck::engine::Change::WorkflowChanged { .. }
                )
                && event.workflow() == Some("waiter")
            {
                break;
            }
            // Lagged is fine (the change may still come); closed would spin for ever.
            assert!(
                !matches!(event, Err(RecvError::Closed)),
                "the engine's events ended"
            );
        }
    })
    .await;
    engine
        .answer_prompt(&run_id, "moon".into(), &Actor::Cli)
        .unwrap();
    // The old rule still applies: "moon" fails and the prompt comes back.
    wait_for_prompt(&engine, &run_id).await;
    engine.cancel_run(&run_id, &Actor::Cli).await.unwrap();
    let result = common::finished(started).await;
    assert_final(&result, FinalState::Canceled);
    let old = flowdeck::store::files::content_version(WAITER.as_bytes());
    assert_eq!(result.workflow_version.as_deref(), Some(old.as_str()));
}

#[tokio::test]
async fn a_prompt_that_times_out_stops_waiting() {
    let (_dir, engine) = with_manifest(
        "impatient.yaml",
        "name: impatient\ndescription: Asks briefly.\ninitial_state: ask\nstates:\n  ask:\n    timeout_seconds: 0.2\n    action: { tool: prompt, params: { prompt: Quick? } }\n    transitions: [{ condition: timeout, next_state: work }]\n  work:\n    action: { tool: run_command, params: { command: 'sleep 60', timeout: 120 } }\n",
    );
    let started = engine.start_run(request("impatient", &[])).await.unwrap();
    let run_id = started.run_id.clone();
    wait_for_state(&engine, &run_id, "work").await;
    let status = engine.run_status(&run_id).unwrap();
    assert_eq!(status.status, Phase::Running);
    assert_eq!(status.prompt, None);
    assert!(matches!(
        engine.answer_prompt(&run_id, "late".into(), &Actor::Cli),
        Err(EngineError::NoPrompt(_))
    ));
    engine.cancel_run(&run_id, &Actor::Cli).await.unwrap();
    assert_final(&common::finished(started).await, FinalState::Canceled);
}

#[tokio::test]
async fn cancelling_a_run_that_keeps_its_session_still_ends_its_step() {
    let (_dir, engine) = with_manifest("sleeper.yaml", common::SLEEPER);
    let mut req = request("sleeper", &[]);
    req.keep_session = true;
    let started = engine.start_run(req).await.unwrap();
    let run_id = started.run_id.clone();
    common::within(LONG, "the run's first two journal lines", async {
        let mut cursor = 0;
        while cursor < 2 {
            cursor = engine
                .run_events(&run_id, cursor, 100, Duration::from_secs(5))
                .await
                .unwrap()
                .next_cursor;
        }
    })
    .await;
    let session_id = engine.run_status(&run_id).unwrap().session_id.unwrap();
    let shell = engine
        .list_terminal_sessions()
        .sessions
        .iter()
        .find(|s| s.session_id == session_id)
        .unwrap()
        .pid as i32;
    // Wait until `sleep` holds the terminal.
    common::poll_until(LONG, "sleep in the session", || {
        let sleeping = std::fs::read_dir("/proc").unwrap().any(|e| {
            let pid = e.unwrap().file_name();
            let pid = pid.to_str().and_then(|p| p.parse::<i32>().ok());
            pid.and_then(flowdeck::term::processes::proc_info)
                .is_some_and(|p| {
                    p.ppid == shell
                        && flowdeck::term::processes::program_name(p.pid).as_deref()
                            == Some("sleep")
                })
        });
        sleeping.then_some(())
    })
    .await;
    engine.cancel_run(&run_id, &Actor::Cli).await.unwrap();
    assert_final(&common::finished(started).await, FinalState::Canceled);
    // The session stays (keep_session), and its shell is back at its prompt: sleep is gone.
    let back = tokio::time::timeout(Duration::from_secs(10), async {
        while engine.shell_ready(&session_id).await.is_err() {}
    })
    .await;
    assert!(back.is_ok(), "the step's command still runs");
    engine.shutdown().await;
}

/// A run cancelled at once, before its first state (even before its executor first runs),
/// still closes the session it opened.
#[tokio::test]
async fn a_run_cancelled_before_its_first_state_closes_its_session() {
    let (_dir, engine) = with_manifest("sleeper.yaml", common::SLEEPER);
    for _ in 0..5 {
        let started = engine.start_run(request("sleeper", &[])).await.unwrap();
        assert_eq!(engine.list_terminal_sessions().sessions.len(), 1);
        engine
            .cancel_run(&started.run_id, &Actor::Cli)
            .await
            .unwrap();
        let result = common::within(LONG, "the cancelled run's result", started.finished()).await;
        assert_final(&result, FinalState::Canceled);
        assert!(
            engine.list_terminal_sessions().sessions.is_empty(),
            "the run's session is still open"
        );
    }
}

/// A step that waits for its command's output and then for quiet, as a workflow writes it.
#[tokio::test]
async fn a_workflow_step_waits_for_quiet_after_its_pattern() {
    let (_dir, engine) = with_manifest(
        "settle.yaml",
        "name: settle\ndescription: Waits for quiet.\ninitial_state: go\nstates:\n  go:\n    action: { tool: send_input, params: { input_text: \"echo UP; sleep 0.2; echo SETTLED=$((20+22))\\n\" } }\n    transitions: [{ next_state: wait }]\n  wait:\n    action: { tool: await_output, params: { pattern: '^UP', quiet_ms: 1000, timeout: 30 } }\n    transitions:\n      - { condition: success, next_state: read }\n  read:\n    action: { tool: get_screen_content, params: { content_mode: since_input } }\n    transitions:\n      - { condition: pattern_match, pattern: 'SETTLED=42', next_state: done }\n  done:\n    action: { tool: list_terminal_sessions }\n",
    );
    let result = engine.run(request("settle", &[])).await.unwrap();
    assert_final(&result, FinalState::Completed);
    assert_eq!(result.last_state.as_deref(), Some("done"), "{result:?}");
}

/// Issue 36: a quiet step with stop patterns sees the error its command printed before the
/// step began, and takes its failure transition.
#[tokio::test]
async fn a_quiet_step_stopped_by_earlier_output_takes_its_failure_transition() {
    let (_dir, engine) = with_manifest(
        "stop_in_quiet.yaml",
        r#"name: stop_in_quiet
description: Settles after a command, unless it failed.
initial_state: go
states:
  go:
    action: { tool: send_input, params: { input_text: "echo FATAL_42; sleep 30\n" } }
    transitions: [{ next_state: printed }]
  printed:
    action: { tool: await_output, params: { pattern: '^FATAL_42', timeout: 30 } }
    transitions: [{ condition: success, next_state: settle }]
  settle:
    action: { tool: await_output, params: { quiet_ms: 1000, stop_patterns: ['FATAL_\d+'], timeout: 30 } }
    transitions:
      - { condition: success, next_state: carried_on }
      - { condition: failure, next_state: caught }
  carried_on:
    action: { tool: list_terminal_sessions }
  caught:
    action: { tool: list_terminal_sessions }
"#,
    );
    let result = engine.run(request("stop_in_quiet", &[])).await.unwrap();
    assert_final(&result, FinalState::Completed);
    let log = serde_json::to_string_pretty(&result.execution_log).unwrap();
    assert_eq!(result.last_state.as_deref(), Some("caught"), "{log}");
    let settle = result
        .execution_log
        .iter()
        .find(|e| e["phase"] == "execution" && e["state"] == "settle")
        .unwrap_or_else(|| panic!("no settle step: {log}"));
    assert_eq!(settle["result"]["outcome"], "stopped", "{log}");
    let taken = result
        .execution_log
        .iter()
        .find(|e| e["phase"] == "transition" && e["from_state"] == "settle")
        .unwrap_or_else(|| panic!("no transition from settle: {log}"));
    assert_eq!(taken["condition"], "failure", "{log}");
    assert_eq!(taken["to_state"], "caught", "{log}");
}
