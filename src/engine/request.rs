//! The engine's methods as values: what a front end asks of the engine, in a form that can
//! cross a socket. The studio sends every engine call it makes as a [`Request`], whether the
//! engine is in its own process or in the folder's server; [`Engine::handle`] answers each
//! with the very method a local caller would call, so a key pressed in a studio attached over
//! the socket reaches the same code as one pressed beside the engine.
//!
//! Only calls that answer at once or soon belong here: waits that last as long as the caller
//! likes (`await_output`, following a run) are not a studio's, and the event stream and the
//! screens have their own channels.

use super::authoring::{InputPreview, ManifestValidation, WorkflowDocument, WorkflowList};
use super::editing::Draft;
use super::run::{RunEvents, RunList};
use super::{
    Actor, ClosedSession, Engine, EngineError, Resized, RunRequest, RunStatus, ScreenContent,
    SearchResult, SentInput, SessionInfo, SessionList, Snapshot, WorkflowSource,
};
use crate::engine::approval::ApprovalRequest;
use crate::engine::audit_log::AuditEntry;
use crate::store::Saved;
use crate::store::recovery::Recovered;
use crate::workflow::action::{
    GetScreenContentParams, OpenTerminalParams, SearchOutputParams, SendInputParams,
};
use crate::workflow::plan::Plan;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// One call of a front end on the engine. Who asks is not part of it: the process that owns
/// the connection says who is at the other end (a person's studio, an agent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Request {
    Snapshot,
    WorkflowList,
    WorkflowGet {
        workflow: String,
    },
    /// Where a workflow's file is (a person's own editor opens it).
    WorkflowFilePath {
        workflow: String,
    },
    StepPlan {
        workflow: String,
    },
    PreviewInputs {
        workflow: String,
    },
    /// Violations and plan of a manifest's text as it stands (the editor, as one types).
    Draft {
        text: String,
    },
    ValidateManifest {
        text: String,
    },
    /// Save text to a file of the folder; `expected_version` is what it may replace.
    SaveFile {
        file: String,
        text: String,
        expected_version: Option<String>,
    },
    FromTemplate {
        template: String,
        name: String,
    },
    Duplicate {
        from: String,
        name: String,
    },
    /// A new workflow drafted from what was typed in a shell session (since its mark).
    DraftFromSession {
        session_id: String,
        name: String,
    },
    /// Sets a shell session's mark: a draft holds what is typed after it.
    MarkSession {
        session_id: String,
    },
    Rename {
        from: String,
        to: String,
    },
    Delete {
        workflow: String,
    },
    RecoveryList,
    RecoverySave {
        file: String,
        text: String,
        /// The version of the file the text was typed over (`None`: not known).
        #[serde(default)]
        base_version: Option<String>,
    },
    RecoveryDiscard {
        file: String,
    },
    RunList {
        workflow: Option<String>,
        limit: usize,
    },
    /// A page of a run's journal after line `after`, without waiting for more.
    RunEvents {
        run_id: String,
        after: u64,
        limit: usize,
    },
    StartRun {
        workflow: String,
        inputs: IndexMap<String, String>,
        keep_session: bool,
        /// Run on this host, through ssh (`flowdeck run --on`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<String>,
    },
    /// One workflow on several hosts at once, answered with every host's result once all
    /// ended (`flowdeck run --on h1,h2`).
    RunFleet {
        workflow: String,
        inputs: IndexMap<String, String>,
        /// Hosts and groups of `hosts.conf`.
        on: Vec<String>,
        parallel: usize,
        /// Keep each run's terminal open at the end (the studio shows them).
        #[serde(default)]
        keep_session: bool,
    },
    CancelRun {
        run_id: String,
    },
    /// Where a run stands; once it ended, its result (read from its journal).
    RunStatus {
        run_id: String,
    },
    AnswerPrompt {
        run_id: String,
        answer: String,
    },
    OpenTerminal {
        params: OpenTerminalParams,
    },
    ExitTerminal {
        session_id: String,
    },
    ListTerminalSessions,
    SendInput {
        session_id: String,
        params: SendInputParams,
    },
    ResizeTerminal {
        session_id: String,
        cols: u16,
        rows: u16,
    },
    GetScreenContent {
        session_id: String,
        params: GetScreenContentParams,
    },
    SearchOutput {
        session_id: String,
        params: SearchOutputParams,
    },
    /// Only the asker may type into the session until it lets go (a person's focus mode).
    HoldInput {
        session_id: String,
    },
    ReleaseInput {
        session_id: String,
    },
    AuditTail {
        limit: usize,
    },
    ApprovalsPending,
    /// Every run and terminal with what it asks of a person.
    Attention,
    /// The asker has seen these runs and terminals: their `failed` or `done` items clear.
    Acknowledge {
        ids: Vec<String>,
    },
}

/// What a request gave back: one variant per kind of answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "reply", content = "value", rename_all = "snake_case")]
pub enum Reply {
    /// Done; nothing to say.
    Done,
    Snapshot(Box<Snapshot>),
    Workflows(WorkflowList),
    Document(Box<WorkflowDocument>),
    Path(String),
    Plan(Plan),
    Inputs(InputPreview),
    Draft(Box<Draft>),
    Validation(ManifestValidation),
    Saved(Saved),
    Recovered(Vec<Recovered>),
    Runs(RunList),
    RunEvents(RunEvents),
    /// A run was started: its id.
    Started(String),
    Run(Box<RunStatus>),
    Session(Box<SessionInfo>),
    Closed(ClosedSession),
    Sessions(SessionList),
    Sent(SentInput),
    Resized(Resized),
    Content(ScreenContent),
    Found(SearchResult),
    Audit(Vec<AuditEntry>),
    Approvals(Vec<ApprovalRequest>),
    Fleet(Box<crate::engine::FleetResult>),
    Attention(Box<crate::engine::attention::AttentionList>),
    Acknowledged(crate::engine::attention::Acknowledged),
}

/// Why a request failed: the engine's error code and message, as they cross a socket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct RequestError {
    /// The engine's stable code (`version_conflict`, `session_not_found`, ...), or one of the
    /// connection's own (`disconnected`, `bad_reply`).
    pub code: String,
    pub message: String,
}

impl RequestError {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        RequestError {
            code: code.into(),
            message: message.into(),
        }
    }

    /// A request whose answer was not of the kind it asks for (a bug, or another version).
    pub fn unexpected(reply: &Reply) -> Self {
        RequestError::new(
            "bad_reply",
            format!("the engine answered with {}", reply.kind()),
        )
    }
}

impl From<EngineError> for RequestError {
    fn from(e: EngineError) -> Self {
        RequestError::new(e.code(), e.to_string())
    }
}

impl Reply {
    /// The reply's kind, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Reply::Done => "done",
            Reply::Snapshot(_) => "a snapshot",
            Reply::Workflows(_) => "a workflow list",
            Reply::Document(_) => "a document",
            Reply::Path(_) => "a path",
            Reply::Plan(_) => "a plan",
            Reply::Inputs(_) => "inputs",
            Reply::Draft(_) => "a draft",
            Reply::Validation(_) => "a validation",
            Reply::Saved(_) => "a save",
            Reply::Recovered(_) => "recovery copies",
            Reply::Runs(_) => "a run list",
            Reply::RunEvents(_) => "run events",
            Reply::Started(_) => "a started run",
            Reply::Run(_) => "a run",
            Reply::Session(_) => "a session",
            Reply::Closed(_) => "a closed session",
            Reply::Sessions(_) => "a session list",
            Reply::Sent(_) => "sent input",
            Reply::Resized(_) => "a resize",
            Reply::Content(_) => "screen content",
            Reply::Found(_) => "search results",
            Reply::Audit(_) => "audit entries",
            Reply::Approvals(_) => "approval requests",
            Reply::Fleet(_) => "a fleet's results",
            Reply::Attention(_) => "the attention list",
            Reply::Acknowledged(_) => "what was acknowledged",
        }
    }
}

/// The answer to a request.
pub type Answer = Result<Reply, RequestError>;

impl Request {
    /// Whether the engine answers it from memory at once: no file written or read at length,
    /// no process started or awaited. The rest are answered off the caller's thread.
    pub fn is_quick(&self) -> bool {
        matches!(
            self,
            Request::Snapshot
                | Request::WorkflowList
                | Request::WorkflowGet { .. }
                | Request::WorkflowFilePath { .. }
                | Request::StepPlan { .. }
                | Request::PreviewInputs { .. }
                | Request::AnswerPrompt { .. }
                | Request::ListTerminalSessions
                | Request::SendInput { .. }
                | Request::ResizeTerminal { .. }
                | Request::GetScreenContent { .. }
                | Request::SearchOutput { .. }
                | Request::HoldInput { .. }
                | Request::ReleaseInput { .. }
                | Request::ApprovalsPending
                | Request::MarkSession { .. }
                | Request::Attention
                | Request::Acknowledge { .. }
        )
    }

    /// Whether it changes the folder (a save, a new file, a rename, a deletion, a recovery
    /// copy): answered on the engine's savers, below everything else in priority.
    pub fn changes_folder(&self) -> bool {
        matches!(
            self,
            Request::SaveFile { .. }
                | Request::FromTemplate { .. }
                | Request::Duplicate { .. }
                | Request::DraftFromSession { .. }
                | Request::Rename { .. }
                | Request::Delete { .. }
                | Request::RecoverySave { .. }
                | Request::RecoveryDiscard { .. }
        )
    }
}

impl Request {
    /// Whether answering it waits on a run or a process (starting, cancelling, a journal
    /// read that may wait for a run's status, opening or ending a terminal): only
    /// [`Engine::handle`] answers these.
    pub fn waits(&self) -> bool {
        matches!(
            self,
            Request::RunEvents { .. }
                | Request::StartRun { .. }
                | Request::RunFleet { .. }
                | Request::CancelRun { .. }
                | Request::OpenTerminal { .. }
                | Request::ExitTerminal { .. }
        )
    }
}

impl Engine {
    /// A run, or a fleet of runs, started as `actor` asks.
    async fn start_runs(self: &Arc<Self>, request: Request, actor: &Actor) -> Answer {
        match request {
            Request::StartRun {
                workflow,
                inputs,
                keep_session,
                host,
            } => {
                let started = self
                    .start_run(RunRequest {
                        workflow: WorkflowSource::Name(workflow),
                        session_id: None,
                        inputs,
                        keep_session,
                        host,
                        actor: actor.clone(),
                        require_approval: false,
                    })
                    .await?;
                Ok(Reply::Started(started.run_id))
            }
            Request::RunFleet {
                workflow,
                inputs,
                on,
                parallel,
                keep_session,
            } => {
                let hosts = self.fleet_hosts(&on)?;
                let request = RunRequest {
                    workflow: WorkflowSource::Name(workflow),
                    session_id: None,
                    inputs,
                    keep_session,
                    host: None,
                    actor: actor.clone(),
                    require_approval: false,
                };
                let fleet = self.run_fleet(request, hosts, parallel).await;
                Ok(Reply::Fleet(Box::new(fleet)))
            }
            other => self.handle_now(other, actor),
        }
    }

    /// Answers one request with the method it names, as `actor`. Quick requests are answered
    /// on the caller's task; file work on the blocking pool (changes to the folder on the
    /// engine's savers), so that a slow disk holds up only the request that waits on it.
    pub async fn handle(self: &Arc<Self>, request: Request, actor: &Actor) -> Answer {
        if request.is_quick() {
            return self.handle_now(request, actor);
        }
        match request {
            Request::RunEvents {
                run_id,
                after,
                limit,
            } => Ok(Reply::RunEvents(
                self.run_events(&run_id, after, limit, Duration::ZERO)
                    .await?,
            )),
            request @ (Request::StartRun { .. } | Request::RunFleet { .. }) => {
                self.start_runs(request, actor).await
            }
            Request::CancelRun { run_id } => {
                Ok(Reply::Run(Box::new(self.cancel_run(&run_id, actor).await?)))
            }
            Request::OpenTerminal { params } => Ok(Reply::Session(Box::new(
                self.open_terminal(&params, actor).await?,
            ))),
            Request::ExitTerminal { session_id } => {
                Ok(Reply::Closed(self.exit_terminal(&session_id, actor).await?))
            }
            request if request.changes_folder() => {
                let (engine, actor) = (self.clone(), actor.clone());
                super::save_pool::run(move || engine.handle_sync(request, &actor))
                    .await
                    .unwrap_or_else(|panic| {
                        Err(RequestError::new(
                            "internal",
                            crate::panics::message(panic.as_ref()),
                        ))
                    })
            }
            request => {
                let (engine, actor) = (self.clone(), actor.clone());
                tokio::task::spawn_blocking(move || engine.handle_sync(request, &actor))
                    .await
                    .unwrap_or_else(|e| {
                        Err(RequestError::new(
                            "internal",
                            crate::panics::message(e.into_panic().as_ref()),
                        ))
                    })
            }
        }
    }

    /// Answers a quick request (see [`Request::is_quick`]) on the calling thread; any other is
    /// refused with `not_quick`.
    pub fn handle_now(&self, request: Request, actor: &Actor) -> Answer {
        Ok(match request {
            Request::Snapshot => Reply::Snapshot(Box::new(self.snapshot())),
            Request::WorkflowList => Reply::Workflows(self.workflow_list()),
            Request::WorkflowGet { workflow } => {
                Reply::Document(Box::new(self.workflow_get(&workflow)?))
            }
            Request::WorkflowFilePath { workflow } => {
                Reply::Path(self.workflow_file_path(&workflow)?.display().to_string())
            }
            Request::StepPlan { workflow } => Reply::Plan(self.workflow_step_plan(&workflow)?),
            Request::PreviewInputs { workflow } => {
                Reply::Inputs(self.workflow_preview_inputs(&workflow)?)
            }
            Request::AnswerPrompt { run_id, answer } => {
                self.answer_prompt(&run_id, answer, actor)?;
                Reply::Done
            }
            Request::ListTerminalSessions => Reply::Sessions(self.list_terminal_sessions()),
            Request::SendInput { session_id, params } => {
                Reply::Sent(self.send_input(&session_id, &params, actor)?)
            }
            Request::ResizeTerminal {
                session_id,
                cols,
                rows,
            } => Reply::Resized(self.resize_terminal(&session_id, cols, rows, actor)?),
            Request::GetScreenContent { session_id, params } => {
                Reply::Content(self.get_screen_content(&session_id, &params, actor)?)
            }
            Request::SearchOutput { session_id, params } => {
                Reply::Found(self.search_output(&session_id, &params)?)
            }
            Request::HoldInput { session_id } => {
                self.hold_input(&session_id, actor)?;
                Reply::Done
            }
            Request::ReleaseInput { session_id } => {
                self.release_input(&session_id, actor);
                Reply::Done
            }
            Request::ApprovalsPending => Reply::Approvals(self.approvals_pending()),
            Request::Attention => Reply::Attention(Box::new(self.attention())),
            Request::Acknowledge { ids } => Reply::Acknowledged(self.acknowledge(&ids, actor)),
            Request::MarkSession { session_id } => {
                self.mark_session(&session_id)?;
                Reply::Done
            }
            other => {
                return Err(RequestError::new(
                    "not_quick",
                    format!("{other:?} is not answered at once"),
                ));
            }
        })
    }

    /// Answers on the calling thread any request that waits on no run or process: quick ones
    /// from memory, the rest from the disk; one that [`Request::waits`] is refused with
    /// `not_quick`. Call it where blocking is allowed.
    pub fn handle_sync(&self, request: Request, actor: &Actor) -> Answer {
        Ok(match request {
            Request::Draft { text } => Reply::Draft(Box::new(self.workflow_draft(&text))),
            Request::ValidateManifest { text } => Reply::Validation(self.validate_manifest(&text)),
            Request::SaveFile {
                file,
                text,
                expected_version,
            } => Reply::Saved(self.workflow_save_file(
                &file,
                &text,
                expected_version.as_deref(),
                actor,
            )?),
            Request::FromTemplate { template, name } => {
                Reply::Saved(self.workflow_from_template(&template, &name, actor)?)
            }
            Request::Duplicate { from, name } => {
                Reply::Saved(self.workflow_duplicate(&from, &name, actor)?)
            }
            Request::DraftFromSession { session_id, name } => {
                Reply::Saved(self.save_draft_from_session(&session_id, &name, actor)?)
            }

            Request::Rename { from, to } => {
                Reply::Saved(self.workflow_rename(&from, &to, None, actor)?)
            }
            Request::Delete { workflow } => {
                Reply::Saved(self.workflow_delete(&workflow, None, actor)?)
            }
            Request::RecoveryList => Reply::Recovered(self.recovery_list()),
            Request::RecoverySave {
                file,
                text,
                base_version,
            } => {
                self.recovery_save(&file, &text, base_version.as_deref())?;
                Reply::Done
            }
            Request::RecoveryDiscard { file } => {
                self.recovery_discard(&file)?;
                Reply::Done
            }
            Request::RunList { workflow, limit } => {
                Reply::Runs(self.run_list(workflow.as_deref(), limit))
            }
            Request::RunStatus { run_id } => Reply::Run(Box::new(self.run_status(&run_id)?)),
            Request::AuditTail { limit } => Reply::Audit(self.audit_tail(limit)),
            other => self.handle_now(other, actor)?,
        })
    }
}
