//! Starting a run: the workflow resolved (by name, or an inline manifest checked), the run
//! registered, approved when approval mode asks for it, its session opened, its journal
//! begun, and its executor spawned in a task of its own so that a panic in it ends the run
//! instead of the engine.

use super::approval::{ApprovalRequest, Decision};
use super::executor::{self, RunPlan, SessionChoice};
use super::registry::{ActiveRun, Phase, RunStatus};
use crate::engine::contract;
use crate::engine::events::Actor;
use crate::engine::journal::{self, RunEvent};
use crate::engine::result::FinalState;
use crate::engine::{Engine, EngineError};
use crate::store::StoreError;
use crate::workflow::action::OpenTerminalParams;
use crate::workflow::source::Format;
use crate::workflow::validate::check_bytes;
use crate::workflow::violation::Severity;
use chrono::Utc;
use std::sync::Arc;

use super::request::{Launch, Resolved, RunRequest, WorkflowSource};
use super::started::StartedRun;

impl Engine {
    /// Starts a run. A workflow that does not exist or was never valid ends at once with
    /// `workflow_not_found` (journaled nowhere: nothing ran) / `definition_invalid`; a busy
    /// session or the run limit is an error.
    pub async fn start_run(
        self: &Arc<Self>,
        request: RunRequest,
    ) -> Result<StartedRun, EngineError> {
        // Values no shell can hold are refused before anything starts, naming the input.
        for (name, value) in &request.inputs {
            if let Some(problem) = contract::env_value_problem(name, value) {
                return Err(EngineError::InvalidParams(problem));
            }
        }
        let started = Utc::now();
        // Reserved on disk: no other run, here or in another flowdeck, can have this id.
        let run_id = self.journal().reserve(started);
        let started_at = journal::now();
        let requested_name = match &request.workflow {
            WorkflowSource::Name(n) => n.clone(),
            WorkflowSource::Inline(_) => String::new(),
        };
        let resolved = match self.resolve(&request.workflow) {
            Ok(found) => found,
            // No such workflow: nothing ran, so nothing is written (no journal, no history, no
            // run count), whichever front end asked: `flowdeck run` and an agent alike.
            Err((FinalState::WorkflowNotFound, error)) => {
                self.journal().release(&run_id);
                return Ok(self.not_found(&run_id, &requested_name, &request, error, started_at));
            }
            Err((final_state, error)) => {
                return Ok(self
                    .ended_before_start(
                        &run_id,
                        &requested_name,
                        &request,
                        final_state,
                        error,
                        started_at,
                    )
                    .await);
            }
        };
        let (run, request, approval) = match self.register(&run_id, request, &resolved, &started_at)
        {
            Ok(registered) => registered,
            Err(e) => {
                self.journal().release(&run_id);
                return Err(e);
            }
        };
        // No wait from the run's registration to here: a caller that follows the run holds it
        // (cancel-on-drop) from the first instant.
        let receiver = run.status.subscribe();
        let launch = Launch {
            run,
            request,
            resolved,
            started_at,
        };
        match approval {
            None => self.launch(launch).await,
            Some(approval) => {
                // Pending from now: whoever reads the run's status can answer it at once.
                let decided = self.ask_approval(&launch.run, approval);
                let engine = self.clone();
                tokio::spawn(async move { engine.launch_once_approved(launch, decided).await });
            }
        }
        Ok(StartedRun {
            run_id,
            status: receiver,
        })
    }

    /// Registers a resolved run: its session found (a name becomes the session's id, so that
    /// one run per session holds whichever was given; an unknown one is the caller's mistake,
    /// reported before anything runs), whether it needs a person's approval decided, and its
    /// status put in the registry, where the run limit and one run per session hold.
    fn register(
        &self,
        run_id: &str,
        mut request: RunRequest,
        resolved: &Resolved,
        started_at: &str,
    ) -> Result<(Arc<ActiveRun>, RunRequest, Option<ApprovalRequest>), EngineError> {
        if let Some(session) = &request.session_id {
            request.session_id = Some(self.terminals().get(session)?.id().to_string());
        }
        let approval = self.approval_needed(
            run_id,
            &request.workflow,
            resolved,
            &request.actor,
            request.require_approval,
        )?;
        let status = RunStatus {
            run_id: run_id.to_string(),
            workflow_name: resolved.workflow.name.clone(),
            status: if approval.is_some() {
                Phase::AwaitingApproval
            } else {
                Phase::Running
            },
            session_id: request.session_id.clone(),
            current_state: None,
            states_executed: 0,
            started_at: started_at.to_string(),
            started_by: Some(request.actor.clone()),
            prompt: None,
            last_event: 0,
            result: None,
        };
        let run = self.runs().start(status)?;
        Ok((run, request, approval))
    }

    /// Waits for the person's answer, then starts the run or ends it unstarted, saying why.
    async fn launch_once_approved(
        self: Arc<Self>,
        launch: Launch,
        decided: tokio::sync::oneshot::Receiver<Decision>,
    ) {
        let decision = self.await_approval(&launch.run, decided).await;
        match decision {
            Some(Decision::Approved { .. }) => {
                launch.run.update(|s| s.status = Phase::Running);
                self.launch(launch).await;
            }
            Some(Decision::Denied { why, .. }) => {
                self.end_unlaunched(&launch, FinalState::NotApproved, why, None)
                    .await;
            }
            None => {
                let by = launch.run.canceller().unwrap_or(Actor::System);
                let why = format!("cancelled by {by} while it waited for approval");
                self.end_unlaunched(&launch, FinalState::Canceled, why, Some(by))
                    .await;
            }
        }
    }

    /// The session a run works in: the one it was given, or its own, opened now so that the run
    /// starts with it (its first event names it) and owns it from the first instant. `Err`
    /// says why no terminal could be opened for it.
    fn run_session(&self, launch: &mut Launch) -> Result<SessionChoice, String> {
        let host = match &launch.request.host {
            Some(host) => Some(host.clone()),
            None => launch.resolved.workflow.host_for(&launch.request.inputs)?,
        };
        if let Some(id) = launch.request.session_id.clone() {
            if launch.request.host.is_some() {
                return Err(
                    "a run is given a session or a host to open one on, not both".to_string(),
                );
            }
            return Ok(SessionChoice::Given(id));
        }
        let params = OpenTerminalParams {
            command: self.config().run_shell.clone().filter(|_| host.is_none()),
            host,
            ..OpenTerminalParams::default()
        };
        let actor = Actor::Run {
            run_id: launch.run.run_id.clone(),
        };
        // On a host, ssh may ask a person who started the run in the studio (a password),
        // in the run's pane; anyone else's run fails at such a question at once.
        let opened = self
            .open_session_with(&params, &actor, launch.request.actor.is_person())
            .map_err(|e| format!("cannot open a terminal for the run: {e}"))?;
        let id = opened.id().to_string();
        self.runs().set_session(&launch.run, Some(id.clone()));
        launch.request.session_id = Some(id.clone());
        Ok(SessionChoice::Opened {
            id,
            keep: launch.request.keep_session,
        })
    }

    /// Opens the run's session (unless it was given one), starts its journal and its executor.
    async fn launch(self: &Arc<Self>, mut launch: Launch) {
        let session = match self.run_session(&mut launch) {
            Ok(session) => session,
            Err(why) => {
                self.end_unlaunched(&launch, FinalState::Error, why, None)
                    .await;
                return;
            }
        };
        let Launch {
            run,
            request,
            resolved,
            started_at,
        } = launch;
        let run_id = run.run_id.clone();
        let _ = self.store.meta_dir();
        let mut writer = self.journal().create(&run_id);
        let Resolved {
            workflow, version, ..
        } = resolved;
        let first = writer.append(RunEvent::RunStarted {
            run_id: run_id.clone(),
            workflow: workflow.name.clone(),
            version: Some(version.clone()),
            session_id: request.session_id.clone(),
            inputs: crate::engine::contract::masked(&workflow, &request.inputs),
            actor: Some(request.actor.clone()),
        });
        // Sessions the run opened are closed here if its executor dies (unless kept).
        let keep = request.keep_session;
        let plan = RunPlan {
            run_id: run_id.clone(),
            workflow,
            version: Some(version.clone()),
            inputs: request.inputs,
            session,
            started_at,
        };
        let engine = self.clone();
        let actor = request.actor;
        tokio::spawn(async move {
            // Announced once written, so that whoever hears of it can read it.
            writer.written().await;
            run.update(|s| s.last_event = first.seq);
            engine.publish_run_line(&actor, &run.run_id, first);
            // The executor runs in a task of its own: a panic in it ends the run as an error
            // (its slot and session freed) instead of leaving it running forever.
            let work = tokio::spawn(executor::execute(engine.clone(), run.clone(), plan, writer));
            let (result, last) = match work.await {
                Ok(done) => done,
                Err(e) => engine.panicked_run(&run, keep, Some(version), e).await,
            };
            engine.runs().finish(&run, result);
            if let Some(line) = last {
                engine.publish_run_line(&actor, &run.run_id, line);
            }
        });
    }

    /// The names of a workflow's secret inputs (and secret return values), for whoever writes
    /// down requests about it; none when it cannot be found or read.
    pub fn secret_names(&self, source: &WorkflowSource) -> Vec<String> {
        let Ok(Resolved { workflow, .. }) = self.resolve(source) else {
            return Vec::new();
        };
        workflow
            .arguments
            .iter()
            .filter(|(_, a)| a.secret)
            .map(|(k, _)| k.clone())
            .chain(
                workflow
                    .return_values
                    .iter()
                    .filter(|(_, r)| r.secret)
                    .map(|(k, _)| k.clone()),
            )
            .collect()
    }

    /// Masks the secret values of every run in progress wherever they appear in `value`.
    pub fn redact_run_secrets(&self, value: &mut serde_json::Value) {
        for run in self.runs().all_active() {
            run.secrets().redact_value(value);
        }
    }

    fn resolve(&self, source: &WorkflowSource) -> Result<Resolved, (FinalState, String)> {
        match source {
            WorkflowSource::Name(name) => self
                .store
                .runnable_good(name)
                .map(|good| Resolved {
                    workflow: good.workflow,
                    version: good.version,
                    content: good.bytes,
                })
                .map_err(|e| match e {
                    StoreError::NotFound(_) => (
                        FinalState::WorkflowNotFound,
                        format!(
                            "workflow {} not found (list the workflows to see their names)",
                            crate::workflow::names::display_safe(name)
                        ),
                    ),
                    other => (FinalState::DefinitionInvalid, other.to_string()),
                }),
            WorkflowSource::Inline(content) => {
                let checked = check_bytes(content.as_bytes(), Format::sniff(content));
                let errors: Vec<String> = checked
                    .violations
                    .iter()
                    .filter(|v| v.severity == Severity::Error)
                    .map(|v| v.to_line("manifest"))
                    .collect();
                match (checked.workflow, errors.is_empty()) {
                    (Some(w), true) => Ok(Resolved {
                        workflow: Arc::new(w),
                        version: crate::store::files::content_version(content.as_bytes()),
                        content: Arc::from(content.as_bytes()),
                    }),
                    _ => Err((
                        FinalState::DefinitionInvalid,
                        format!("the manifest is invalid:\n{}", errors.join("\n")),
                    )),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Change;
    use crate::engine::EngineConfig;
    use indexmap::IndexMap;
    use std::time::Duration;

    #[tokio::test]
    async fn a_panicking_run_ends_as_an_error_and_frees_its_slot_and_session() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        std::fs::write(
            dir.path().join("buggy.yaml"),
            "name: buggy\ndescription: Hits a bug.\ninitial_state: second\nstates:\n  second: { action: { tool: open_terminal, params: { command: [bash, --norc] } }, transitions: [{ next_state: panic_for_the_test }] }\n  panic_for_the_test: { action: { tool: list_terminal_sessions } }\n",
        )
        .expect("the manifest");
        let engine = Engine::open(
            dir.path(),
            EngineConfig {
                max_runs: 1,
                run_shell: Some(vec!["bash".into(), "--norc".into()]),
                watch: false,
                ..EngineConfig::default()
            },
        )
        .expect("the engine");
        let request = || RunRequest {
            workflow: WorkflowSource::Name("buggy".into()),
            session_id: None,
            inputs: IndexMap::new(),
            keep_session: false,
            host: None,
            actor: Actor::Cli,
            require_approval: false,
        };
        let mut events = engine.subscribe();
        let result = tokio::time::timeout(Duration::from_secs(30), engine.run(request()))
            .await
            .expect("the run ended")
            .expect("the run started");
        assert_eq!(result.final_state, FinalState::Error);
        let error = result.error.unwrap_or_default();
        assert!(error.contains("a bug, injected by a test"), "{error}");
        // Both sessions it opened (its own, and one a step opened) are closed, each with its
        // event, and its slot is free: the next run (limit 1) starts.
        assert!(engine.terminals().is_empty());
        let (mut opened, mut closed) = (Vec::new(), Vec::new());
        while let Ok(event) = events.try_recv() {
            match event.change {
                Change::SessionOpened { session } => opened.push(session.session_id),
                Change::SessionClosed { session_id } => closed.push(session_id),
                _ => {}
            }
        }
        assert_eq!(opened.len(), 2, "{opened:?}");
        closed.sort();
        opened.sort();
        assert_eq!(closed, opened);
        let again = engine.start_run(request()).await.expect("the slot is free");
        let events = engine
            .run_events(&result.run_id, 0, 100, Duration::ZERO)
            .await
            .expect("its journal");
        assert!(events.finished);
        let last = events.events.last().map(|e| e.body.clone());
        assert!(
            matches!(&last, Some(RunEvent::RunFinished { final_state, .. }) if final_state == "error"),
            "{last:?}"
        );
        again.finished().await;
    }
}
