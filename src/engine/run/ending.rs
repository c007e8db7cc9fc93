//! How a run ends, wherever it ends: its last state, a cancel, a panic of its executor, before
//! its first state (a workflow not found, an invalid definition, no terminal for it, a denied
//! approval), or with its flowdeck killed (`interrupted`, recorded by the next one). Every
//! ending goes through [`Engine::end_run`] (or, for an interrupted run, the same record from
//! its journal), so each writes the same facts: the journal's last line, the workflow's run
//! count and last result, and the result returned to whoever follows the run. Every result is
//! built by [`Ending::into_result`], also the one read back from a journal of an earlier
//! process ([`result_from_journal`]).

use super::registry::{ActiveRun, Phase, RunStatus};
use super::request::{Launch, RunRequest};
use super::started::StartedRun;
use crate::engine::Engine;
use crate::engine::events::Actor;
use crate::engine::journal::{self, JournalEvent, JournalWriter, RunEvent, now, span_ms};
use crate::engine::result::{Ending, FinalState, RunResult};
use indexmap::IndexMap;
use serde_json::Value;
use tokio::sync::watch;

impl Engine {
    /// Ends a run: its journal's last line is written and its lock let go, the workflow's run
    /// count and last result are recorded (under a lock file shared with other flowdeck
    /// processes, off the async runtime), and its result is built. The line is returned for
    /// the caller to publish once the run's status is final.
    pub(crate) async fn end_run(
        &self,
        writer: &mut JournalWriter,
        mut ending: Ending,
    ) -> (RunResult, JournalEvent) {
        if let Some(error) = &ending.error
            && !ending
                .execution_log
                .iter()
                .any(|entry| entry.get("phase").and_then(Value::as_str) == Some("error"))
        {
            ending
                .execution_log
                .push(serde_json::json!({"phase": "error", "error": error, "timestamp": now()}));
        }
        let last = writer.append(RunEvent::RunFinished {
            final_state: ending.final_state.into(),
            success: ending.final_state == FinalState::Completed,
            states_executed: ending.states_executed,
            error: ending.error.clone(),
            return_values: ending.return_values.clone(),
            duration_ms: ending.duration_ms,
            cancelled_by: ending.cancelled_by.clone(),
        });
        // Written, and the journal's lock let go, before anyone hears the run has ended.
        writer.finish().await;
        let finished_at = last.at.clone();
        self.attention_run_ended(
            &ending.run_id,
            &ending.workflow_name,
            ending.final_state,
            ending.error.as_deref(),
            ending.session_id.as_deref(),
        );
        self.record_ending(
            &ending.workflow_name,
            &ending.run_id,
            ending.final_state,
            &finished_at,
        )
        .await;
        (ending.into_result(finished_at, writer.failure()), last)
    }

    /// The workflow's run count and last result, recorded off the async runtime: the
    /// metadata file is shared with other flowdeck processes under a lock file. A run of no
    /// workflow (an inline manifest that could not be read) has nothing to record.
    async fn record_ending(&self, workflow: &str, run_id: &str, final_state: FinalState, at: &str) {
        if workflow.is_empty() {
            return;
        }
        let metadata = self.metadata.clone();
        let (workflow, run_id, at) = (workflow.to_string(), run_id.to_string(), at.to_string());
        let recorded = tokio::task::spawn_blocking(move || {
            metadata.record(&workflow, &run_id, final_state, &at);
        })
        .await;
        if let Err(e) = recorded {
            tracing::warn!("run metadata not recorded: {e}");
        }
    }

    /// Ends a registered run that never got going (not approved, cancelled while it waited,
    /// no terminal for it): journaled and finished like any other, so that whoever follows
    /// it gets its result.
    pub(super) async fn end_unlaunched(
        &self,
        launch: &Launch,
        final_state: FinalState,
        error: String,
        cancelled_by: Option<Actor>,
    ) {
        let run = &launch.run;
        let (result, lines) = self
            .journal_unstarted(
                &run.run_id,
                &launch.resolved.workflow.name,
                Some(launch.resolved.version.clone()),
                &launch.request,
                final_state,
                error,
                cancelled_by,
                launch.started_at.clone(),
            )
            .await;
        run.update(|s| s.last_event = lines[1].seq);
        self.runs().finish(run, result);
        for line in lines {
            self.publish_run_line(&launch.request.actor, &run.run_id, line);
        }
    }

    /// The end of a run whose executor panicked: an error with the panic's message, its own
    /// session closed, its journal ended.
    pub(super) async fn panicked_run(
        &self,
        run: &ActiveRun,
        keep: bool,
        version: Option<String>,
        e: tokio::task::JoinError,
    ) -> (RunResult, Option<JournalEvent>) {
        let message = match e.try_into_panic() {
            Ok(panic) => crate::panics::message(&*panic),
            Err(e) => e.to_string(),
        };
        let error = format!("flowdeck failed inside this run (a bug): {message}");
        tracing::error!("run {}: {error}", run.run_id);
        let status = run.snapshot();
        if !keep {
            let actor = Actor::Run {
                run_id: run.run_id.clone(),
            };
            for id in run.take_owned() {
                let _ = self.exit_terminal(&id, &actor).await;
            }
        }
        let mut writer = self.journal().reopen(&run.run_id);
        let mut ending = Ending::unstarted(
            &run.run_id,
            &status.workflow_name,
            version,
            status.session_id,
            FinalState::Error,
            error,
            status.started_at.clone(),
        );
        ending.states_executed = status.states_executed;
        ending.last_state = status.current_state;
        ending.duration_ms = span_ms(&status.started_at, &journal::now());
        let (result, last) = self.end_run(&mut writer, ending).await;
        (result, Some(last))
    }

    /// A run that ends before it is registered (no such workflow, an invalid manifest):
    /// journaled, recorded and published like any other, its status already final.
    pub(super) async fn ended_before_start(
        &self,
        run_id: &str,
        name: &str,
        request: &RunRequest,
        final_state: FinalState,
        error: String,
        started_at: String,
    ) -> StartedRun {
        let (result, lines) = self
            .journal_unstarted(
                run_id,
                name,
                None,
                request,
                final_state,
                error,
                None,
                started_at.clone(),
            )
            .await;
        let last_event = lines[1].seq;
        let started =
            self.finished_unstarted(run_id, name, request, started_at, last_event, result);
        for line in lines {
            self.publish_run_line(&request.actor, run_id, line);
        }
        started
    }

    /// A run of a workflow that does not exist: its result, written nowhere and told to
    /// nobody but its caller (and `run_status`, while this engine lives).
    pub(super) fn not_found(
        &self,
        run_id: &str,
        name: &str,
        request: &RunRequest,
        error: String,
        started_at: String,
    ) -> StartedRun {
        let ending = Ending::unstarted(
            run_id,
            name,
            None,
            request.session_id.clone(),
            FinalState::WorkflowNotFound,
            error,
            started_at.clone(),
        );
        let result = ending.into_result(crate::engine::journal::now(), None);
        self.finished_unstarted(run_id, name, request, started_at, 0, result)
    }

    /// The final status of a run that ended before its first state, recorded among the
    /// finished runs, as its caller holds it.
    fn finished_unstarted(
        &self,
        run_id: &str,
        name: &str,
        request: &RunRequest,
        started_at: String,
        last_event: u64,
        result: RunResult,
    ) -> StartedRun {
        let status = RunStatus {
            run_id: run_id.to_string(),
            workflow_name: name.to_string(),
            status: Phase::Finished,
            session_id: request.session_id.clone(),
            current_state: None,
            states_executed: 0,
            started_at,
            started_by: Some(request.actor.clone()),
            prompt: None,
            last_event,
            result: Some(result),
        };
        self.runs().record_finished(status.clone());
        let (_, receiver) = watch::channel(status);
        StartedRun {
            run_id: run_id.to_string(),
            status: receiver,
        }
    }

    /// The journal and result of a run that ended before its first state.
    #[allow(clippy::too_many_arguments)]
    async fn journal_unstarted(
        &self,
        run_id: &str,
        name: &str,
        version: Option<String>,
        request: &RunRequest,
        final_state: FinalState,
        error: String,
        cancelled_by: Option<Actor>,
        started_at: String,
    ) -> (RunResult, [JournalEvent; 2]) {
        let _ = self.store.meta_dir();
        let mut writer = self.journal().create(run_id);
        let first = writer.append(RunEvent::RunStarted {
            run_id: run_id.to_string(),
            workflow: name.to_string(),
            version: version.clone(),
            session_id: request.session_id.clone(),
            inputs: IndexMap::new(),
            actor: Some(request.actor.clone()),
        });
        let mut ending = Ending::unstarted(
            run_id,
            name,
            version,
            request.session_id.clone(),
            final_state,
            error,
            started_at,
        );
        ending.cancelled_by = cancelled_by;
        let (result, last) = self.end_run(&mut writer, ending).await;
        (result, [first, last])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::run::{RunRequest, WorkflowSource};
    use crate::engine::{EngineConfig, Phase};
    use std::sync::Arc;
    use std::time::Duration;

    const DEADLINE: Duration = Duration::from_secs(30);

    fn manifest(name: &str, states: &str) -> String {
        format!("name: {name}\ndescription: Ends one way.\ninitial_state: first\nstates:\n{states}")
    }

    fn request(name: &str, actor: Actor) -> RunRequest {
        RunRequest {
            workflow: WorkflowSource::Name(name.into()),
            session_id: None,
            inputs: IndexMap::new(),
            keep_session: false,
            host: None,
            actor,
            require_approval: false,
        }
    }

    fn agent() -> Actor {
        Actor::Agent {
            client: "endings".into(),
            connection: "c1".into(),
        }
    }

    fn engine(dir: &std::path::Path, shell: &str, approve: bool) -> Arc<Engine> {
        Engine::open(
            dir,
            EngineConfig {
                run_shell: Some(vec![shell.into(), "--norc".into()]),
                watch: false,
                approve_agent_runs: approve,
                ..EngineConfig::default()
            },
        )
        .expect("an engine")
    }

    async fn ended(engine: &Arc<Engine>, request: RunRequest) -> RunResult {
        let started = engine.start_run(request).await.expect("the run registered");
        tokio::time::timeout(DEADLINE, started.finished())
            .await
            .expect("the run ended")
    }

    /// The workflow's recorded run count and last result, its history and the result its
    /// follower got all say the same.
    fn assert_recorded(engine: &Engine, result: &RunResult, expected: FinalState) {
        let name = &result.workflow_name;
        assert_eq!(result.final_state, expected, "{name}: {:?}", result.error);
        let meta = engine.metadata().get(name);
        let history = engine.run_list(Some(name), 100).runs;
        assert_eq!(meta.runs, 1, "{name}: {meta:?}");
        assert_eq!(history.len(), 1, "{name}: {history:?}");
        assert_eq!(meta.last_run_id.as_deref(), Some(result.run_id.as_str()));
        assert_eq!(meta.last_final_state, Some(expected.into()));
        assert_eq!(meta.last_success, Some(expected == FinalState::Completed));
        assert_eq!(
            meta.last_finished_at.as_deref(),
            Some(result.finished_at.as_str())
        );
        let journaled = &history[0];
        assert_eq!(journaled.final_state, Some(expected.into()));
        assert_eq!(journaled.error, result.error, "{name}");
        assert_eq!(journaled.states_executed, Some(result.states_executed));
        let status = engine.run_status(&result.run_id).expect("its status");
        assert_eq!(status.status, Phase::Finished);
        assert_eq!(
            status.result.as_ref().map(|r| r.final_state),
            Some(expected),
            "{name}"
        );
    }

    #[tokio::test]
    async fn every_ending_records_the_same_facts() {
        let dir = tempfile::tempdir().expect("a folder");
        let quick = "  first: { action: { tool: list_terminal_sessions } }\n";
        for name in ["done", "denied", "withdrawn", "no_shell"] {
            std::fs::write(
                dir.path().join(format!("{name}.yaml")),
                manifest(name, quick),
            )
            .expect("a manifest");
        }
        std::fs::write(
            dir.path().join("buggy.yaml"),
            manifest(
                "buggy",
                "  first: { action: { tool: list_terminal_sessions }, transitions: [{ next_state: panic_for_the_test }] }\n  panic_for_the_test: { action: { tool: list_terminal_sessions } }\n",
            ),
        )
        .expect("a manifest");
        let engine = engine(dir.path(), "bash", true);
        let approver = engine.attach_approver();

        // Its last state.
        let done = ended(&engine, request("done", Actor::Cli)).await;
        assert_recorded(&engine, &done, FinalState::Completed);
        // A panic of its executor.
        let buggy = ended(&engine, request("buggy", Actor::Cli)).await;
        assert_recorded(&engine, &buggy, FinalState::Error);
        // Before it started: no such workflow.
        let ghost = ended(&engine, request("ghost", Actor::Cli)).await;
        assert_eq!(ghost.final_state, FinalState::WorkflowNotFound);
        // Nothing ran: no journal, no history, no run count.
        assert!(engine.run_list(Some("ghost"), 100).runs.is_empty());
        assert_eq!(engine.metadata().get("ghost").runs, 0);
        assert!(engine.journal().read(&ghost.run_id, 0, 10).is_err());
        // A person's no.
        let started = engine
            .start_run(request("denied", agent()))
            .await
            .expect("registered");
        let shown = engine
            .approvals_pending()
            .into_iter()
            .find(|r| r.run_id == started.run_id)
            .expect("its request waits from the start")
            .fingerprint();
        approver
            .decide(&started.run_id, &shown, false, &Actor::person())
            .expect("denied");
        let denied = tokio::time::timeout(DEADLINE, started.finished())
            .await
            .expect("ended");
        assert_recorded(&engine, &denied, FinalState::NotApproved);
        // Cancelled while it waited for approval.
        let started = engine
            .start_run(request("withdrawn", agent()))
            .await
            .expect("registered");
        engine
            .cancel_run(&started.run_id, &Actor::person())
            .await
            .expect("cancelled");
        let withdrawn = tokio::time::timeout(DEADLINE, started.finished())
            .await
            .expect("ended");
        assert_recorded(&engine, &withdrawn, FinalState::Canceled);
        drop(approver);

        // No terminal could be opened for it.
        let broken = engine_with_no_shell(dir.path());
        let no_shell = ended(&broken, request("no_shell", Actor::Cli)).await;
        assert_recorded(&broken, &no_shell, FinalState::Error);
    }

    fn engine_with_no_shell(dir: &std::path::Path) -> Arc<Engine> {
        engine(dir, "/nonexistent/flowdeck-test-shell", false)
    }
}
