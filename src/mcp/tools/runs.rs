//! The run tools: starting a run (and following it to its result, with progress, unless
//! `wait: false`), its status, its journal from a cursor, the history, cancelling, feedback
//! and purging.

use super::ceiling::{self, Waited};
use super::{ACK, EXECUTE, READ, REMOVE, WAIT, WRITE};
use super::{
    CallContext, ToolDef, Toolset, off_runtime, ok, output_schema_of, parse, schema_of,
    unknown_tool,
};
use crate::engine::Engine;
use crate::engine::run::{FeedbackRecorded, Purged, RunEvents, RunList, WorkflowSource};
use crate::engine::run::{Following, RunNews};
use crate::engine::{RunEvent, RunRequest, RunResult, RunStatus};
use crate::mcp::args::*;
use crate::mcp::errors::ToolError;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// The answer to `run_workflow` and `wf_<name>`: the run's result when the call waited for it
/// (`wait: true`, the default), else the run as it started.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
// MCP wants an object at the root of an output schema; both shapes are objects.
#[schemars(extend("type" = "object"))]
pub enum RunOutcome {
    Finished(Box<RunResult>),
    Started(Box<RunStarted>),
    /// A fleet (`on` with several hosts) that the call waited for.
    Fleet(Box<crate::engine::FleetResult>),
    /// A fleet started with `wait: false`.
    FleetStarted(Box<FleetStarted>),
}

/// The output schema of `run_workflow` and of every `wf_<name>` tool, generated once: the
/// dynamic tools are listed again whenever the folder changes.
pub fn run_output_schema() -> Arc<JsonObject> {
    static SCHEMA: std::sync::LazyLock<Arc<JsonObject>> =
        std::sync::LazyLock::new(|| Arc::new(output_schema_of::<RunOutcome>()));
    SCHEMA.clone()
}

/// The answer to a fleet started with `wait: false`, or still going when the call reached its
/// wait ceiling: its hosts; each host's run shows in `run_list` and `run_status` once a slot
/// lets it start.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FleetStarted {
    pub hosts: Vec<String>,
    pub parallel: usize,
    pub message: String,
    /// The seconds the call waited, when it stopped waiting at the server's ceiling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_timeout: Option<f64>,
}

/// The answer to a call with `wait: false`, or to one whose run was still going at the
/// server's wait ceiling: the run's id and status; follow it with `run_events` or
/// `run_status`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RunStarted {
    pub run_id: String,
    /// Its status when the call returned.
    pub status: RunStatus,
    /// Where `run_events` reads its journal from (`after`): 0, its start.
    pub next_cursor: u64,
    /// The seconds the call waited, when it stopped waiting at the server's ceiling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_timeout: Option<f64>,
    /// What to do next, when the run goes on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl RunStarted {
    /// A run that goes on after the call answered: at the ceiling when `effective_timeout`.
    fn going_on(run_id: String, status: RunStatus, effective_timeout: Option<f64>) -> Self {
        let message = effective_timeout.map(|secs| {
            format!(
                "still running after {secs} s (the server's wait ceiling): follow it with run_events (run_id {run_id}, after 0) or run_status; workflow_cancel stops it"
            )
        });
        RunStarted {
            run_id,
            status,
            next_cursor: 0,
            effective_timeout,
            message,
        }
    }
}

/// Runs a workflow on a fleet of hosts for a tool call: waits for every host's result, or
/// starts the fleet and returns its hosts at once (its runs then go on whatever the call
/// does). A cancelled waiting call cancels the runs still going.
async fn fleet_run(
    engine: &Arc<Engine>,
    request: RunRequest,
    on: &[String],
    parallel: Option<usize>,
    wait: bool,
    cx: &CallContext,
) -> Result<JsonObject, ToolError> {
    if request.session_id.is_some() || request.keep_session {
        return Err(ToolError::invalid_arguments(
            "run_workflow",
            "a fleet opens a terminal on each host and closes it: `session_id` and `keep_session` apply to one run",
        ));
    }
    let hosts = engine.fleet_hosts(on)?;
    let parallel = parallel.unwrap_or(crate::engine::fleet::DEFAULT_PARALLEL);
    let mut started = FleetStarted {
        message: format!(
            "running on {} hosts, {parallel} at a time; each host's run shows in run_list once it starts",
            hosts.len()
        ),
        hosts: hosts.clone(),
        parallel,
        effective_timeout: None,
    };
    let engine = engine.clone();
    let fleet = tokio::spawn(async move { engine.run_fleet(request, hosts, parallel).await });
    if !wait {
        return ok(RunOutcome::FleetStarted(Box::new(started)));
    }
    // However this call ends before the fleet does (cancelled, its client gone), the fleet's
    // future is dropped, which cancels the runs still going; at the ceiling it is let go.
    let mut fleet = tokio_util::task::AbortOnDropHandle::new(fleet);
    let ceiling = sleep_for(cx.max_wait);
    tokio::pin!(ceiling);
    let waited = super::ceiling::heartbeat(cx, "waiting for the fleet", async {
        tokio::select! {
            done = &mut fleet => Some(done.ok()),
            () = &mut ceiling => None,
            () = cx.cancel.cancelled() => Some(None),
        }
    })
    .await;
    match waited {
        Some(Some(done)) => ok(RunOutcome::Fleet(Box::new(done))),
        Some(None) => Err(ToolError::cancelled("run_workflow")),
        None => {
            drop(fleet.detach());
            let secs = cx.max_wait.map(|d| d.as_secs_f64());
            started.effective_timeout = secs;
            started.message = format!(
                "still running after {} s (the server's wait ceiling) on {} hosts: each host's run shows in run_list and run_status",
                secs.unwrap_or_default(),
                started.hosts.len()
            );
            ok(RunOutcome::FleetStarted(Box::new(started)))
        }
    }
}

/// Sleeps until the call's wait ceiling, for ever when it has none.
async fn sleep_for(ceiling: Option<Duration>) {
    match ceiling {
        Some(ceiling) => tokio::time::sleep(ceiling).await,
        None => std::future::pending().await,
    }
}

/// Runs a workflow for a tool call: waits (with progress) or returns the run id at once. A
/// cancelled call cancels the run it started.
pub async fn run(
    engine: &Arc<Engine>,
    request: RunRequest,
    wait: bool,
    cx: &CallContext,
) -> Result<JsonObject, ToolError> {
    if !wait {
        let started = engine.start_run(request).await?;
        return ok(RunOutcome::Started(Box::new(RunStarted::going_on(
            started.run_id.clone(),
            started.status(),
            None,
        ))));
    }
    // Followed: if this call goes away before the end, the run is cancelled; at the ceiling
    // it is let go, to be followed by its id.
    let mut followed = engine.follow_run(request).await?;
    let run_id = followed.run_id().to_string();
    let ceiling = sleep_for(cx.max_wait);
    tokio::pin!(ceiling);
    let every = ceiling::beat_every(cx);
    let mut beat = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    let mut state = String::from("starting");
    loop {
        tokio::select! {
            () = &mut ceiling => {
                let status = followed.let_go();
                let secs = cx.max_wait.map(|d| d.as_secs_f64());
                return ok(RunOutcome::Started(Box::new(RunStarted::going_on(run_id, status, secs))));
            }
            _ = beat.tick(), if cx.progress.is_some() => cx.tell(format!("{state}: still running")),
            next = followed.next() => match next {
                Following::Ended(result) => {
                    // Approval mode stopped it: a security error, not a run that failed.
                    if result.final_state == crate::engine::FinalState::NotApproved {
                        return Err(ToolError::not_approved(
                            &result.workflow_name,
                            Some(&result.run_id),
                            result.error.clone().unwrap_or_default(),
                        ));
                    }
                    return ok(RunOutcome::Finished(result));
                }
                Following::News(news) => match *news {
                    RunNews::Line(RunEvent::StepStarted { state: entered, tool, .. }) => {
                        state = format!("{entered} ({tool})");
                        cx.tell(state.clone());
                    }
                    RunNews::AwaitingApproval { workflow } => {
                        state = format!("waiting for a person to approve the run of {workflow} in the studio (approval mode)");
                        cx.tell(state.clone());
                    }
                    RunNews::Line(_) => {}
                },
                Following::Missed => {}
            },
            () = cx.cancel.cancelled() => {
                let _ = engine.cancel_run(&run_id, &cx.actor).await;
                return Err(ToolError::cancelled("run_workflow").with("run_id", run_id));
            }
        }
    }
}

/// What `attention` returns: the list (after any `ack`) and what the `ack` did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AttentionSeen {
    #[serde(flatten)]
    pub list: crate::engine::attention::AttentionList,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acknowledged: Option<crate::engine::attention::Acknowledged>,
}

/// This group's tools, in the order clients list them.
pub(super) fn defs() -> Vec<ToolDef> {
    vec![
        tool!(
            "run_workflow",
            Runs,
            "Run a workflow",
            EXECUTE,
            RunArgs => RunOutcome,
            "Run a workflow by name (see workflow_list) or from a manifest's text, with inputs. Waits for the result (final_state, return_values, log) with progress per state, up to the server's wait ceiling; past it, or with wait=false, returns the run_id to follow with run_events."
        ),
        tool!(
            "run_status",
            Runs,
            "Run status",
            READ,
            RunIdArgs => RunStatus,
            "A run's status: running, waiting for an answer (with the question), or finished (with the result)."
        ),
        tool!(
            "run_events",
            Runs,
            "Run events",
            WAIT,
            RunEventsArgs => Waited<RunEvents>,
            "A run's journal after a cursor, waiting for new events: how to follow a run. Pass next_cursor as `after` next time."
        ),
        tool!(
            "run_list",
            Runs,
            "Run history",
            READ,
            RunListArgs => RunList,
            "Runs in progress and past runs, newest first, of one workflow or all."
        ),
        tool!(
            "attention",
            Runs,
            "What needs attention",
            ACK,
            AttentionArgs => AttentionSeen,
            "Every run and terminal by what it asks of a person: needs_you (a prompt or approval waits; answer with workflow_next or in the studio), failed, done, quiet (no output for a while), running; most pressing first. failed and done stay until seen: pass their ids in `ack`. Subscribe to flowdeck://attention to hear of changes."
        ),
        tool!(
            "workflow_cancel",
            Runs,
            "Cancel a run",
            REMOVE,
            RunIdArgs => RunStatus,
            "Cancel a run: its step is interrupted and its processes killed."
        ),
        tool!(
            "run_feedback",
            History,
            "Rate a run",
            WRITE,
            FeedbackArgs => FeedbackRecorded,
            "Rate a run: a score, a text, or both."
        ),
        tool!(
            "workflow_purge_history",
            History,
            "Purge run history",
            REMOVE,
            PurgeArgs => Purged,
            "Delete the run history of one workflow or all; runs in progress stay."
        ),
    ]
}

/// `run_workflow`: one run, here or on a host, or a fleet.
async fn run_workflow(
    e: &Arc<Engine>,
    name: &str,
    args: Value,
    cx: &CallContext,
) -> Result<JsonObject, ToolError> {
    let a: RunArgs = parse(name, args)?;
    let source = match (a.workflow_name, a.content) {
        (Some(n), None) => WorkflowSource::Name(n),
        (None, Some(c)) => WorkflowSource::Inline(c),
        _ => {
            return Err(ToolError::invalid_arguments(
                name,
                "give `workflow_name` or `content`",
            ));
        }
    };
    let inputs = inputs_text(&a.inputs).map_err(|m| ToolError::invalid_arguments(name, m))?;
    let (host, fleet) = match a.on {
        None => (None, None),
        Some(OnHosts::One(host))
            if a.parallel.is_none() && !e.is_fleet_group(&host) && !host.contains(',') =>
        {
            (Some(host), None)
        }
        Some(OnHosts::One(host)) => (None, Some(vec![host])),
        Some(OnHosts::Many(hosts)) => (None, Some(hosts)),
    };
    let request = RunRequest {
        workflow: source,
        session_id: a.session_id,
        inputs,
        keep_session: a.keep_session,
        host,
        actor: cx.actor.clone(),
        require_approval: cx.require_approval,
    };
    match fleet {
        Some(on) => fleet_run(e, request, &on, a.parallel, a.wait.unwrap_or(true), cx).await,
        None => run(e, request, a.wait.unwrap_or(true), cx).await,
    }
}

/// Runs one of this group's tools.
pub(super) async fn call(
    e: &Arc<Engine>,
    name: &str,
    args: Value,
    cx: &CallContext,
) -> Result<JsonObject, ToolError> {
    match name {
        "run_workflow" => run_workflow(e, name, args, cx).await,
        "run_status" => {
            let a: RunIdArgs = parse(name, args)?;
            ok(off_runtime(e, move |e| e.run_status(&a.run_id)).await?)
        }
        "run_events" => {
            let a: RunEventsArgs = parse(name, args)?;
            // Past the ceiling, the engine's own bound (a minute) cuts what is left.
            let (wait, effective_timeout) = ceiling::clamp_secs(a.wait_seconds, 10.0, cx);
            let wait = Duration::try_from_secs_f64(wait).unwrap_or(Duration::MAX);
            let events = e.run_events(&a.run_id, a.after, a.limit.unwrap_or(100), wait);
            ok(ceiling::waited(
                cx,
                "waiting for the run's events",
                effective_timeout,
                events,
            )
            .await?)
        }
        "run_list" => {
            let a: RunListArgs = parse(name, args)?;
            ok(off_runtime(e, move |e| {
                e.run_list(a.workflow_name.as_deref(), a.limit.unwrap_or(50))
            })
            .await)
        }
        "attention" => {
            let a: AttentionArgs = parse(name, args)?;
            let acknowledged = (!a.ack.is_empty()).then(|| e.acknowledge(&a.ack, &cx.actor));
            ok(AttentionSeen {
                list: e.attention(),
                acknowledged,
            })
        }
        "workflow_cancel" => ok(e
            .cancel_run(&parse::<RunIdArgs>(name, args)?.run_id, &cx.actor)
            .await?),
        "run_feedback" => {
            let a: FeedbackArgs = parse(name, args)?;
            ok(e.run_feedback(&a.run_id, a.score, a.text, &cx.actor)
                .await?)
        }
        "workflow_purge_history" => ok(e
            .purge_history(
                parse::<PurgeArgs>(name, args)?.workflow_name.as_deref(),
                &cx.actor,
            )
            .await),
        _ => Err(unknown_tool(name)),
    }
}
