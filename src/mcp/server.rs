//! The MCP handler: tools (static and dynamic), resources, prompts and change notifications,
//! each a thin adapter over an engine method. Every call runs in its own task, so a panic
//! becomes an error result, never a dead server; every call is audited.

// A tool error is built at most once per failed call and returned straight to the client;
// boxing it would buy nothing but indirection.
#![allow(clippy::result_large_err)]

use super::audit::Audit;
use super::dynamic::{self, PREFIX};
use super::errors::ToolError;
use super::tools::{self, CallContext, ToolDef, Toolset};

use super::{McpOptions, prompts, resources};
use crate::engine::audit_log::{AuditEntry, AuditOutcome, AuditedCall};
use crate::engine::run::WorkflowSource;
use crate::engine::{Actor, Engine, RunRequest};
use rmcp::model::*;
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

const INSTRUCTIONS: &str = "flowdeck runs terminal workflows: YAML/JSON state machines that drive real terminals.\n\
- To run one: workflow_list, then workflow_preview_inputs and run_workflow (or the wf_<name> tool) with inputs; the result has final_state and return_values.\n\
- To write one: get_workflow_schema (or the resource flowdeck://spec), workflow_validate until it has no errors, then workflow_save; fix what workflow_validate reports at its line and column.\n\
- To drive a terminal yourself: open_terminal, then run_command (shell commands, exit status) or send_input + await_output (interactive programs); get_screen_content reads the screen; exit_terminal when done.\n\
- Long runs: run_workflow with wait=false, then run_events with the cursor. Errors come back as results with error_code and suggested_action.";

/// The server.
#[derive(Clone)]
pub struct FlowdeckServer {
    inner: Arc<Inner>,
}

/// The engine, opened in the background so that the handshake does not wait for the folder
/// to load, and the audit log that needs it.
struct Loaded {
    engine: Arc<Engine>,
    audit: Arc<Audit>,
}

/// Opens the engine (blocking: it reads and validates the folder).
pub type Opener = Arc<dyn Fn() -> Result<Arc<Engine>, String> + Send + Sync>;

struct Inner {
    loaded: tokio::sync::OnceCell<Loaded>,
    opener: Opener,
    options: McpOptions,
    statics: Vec<ToolDef>,
    /// The static tools as listed, schemas generated on the first `tools/list` rather than
    /// before the handshake.
    listed_statics: std::sync::OnceLock<Vec<Tool>>,
    subscriptions: Mutex<HashSet<String>>,
    forwarding: AtomicBool,
    calls: AtomicU64,
    /// SEP-2663 tasks: runs started as tasks by clients that declared the extension.
    tasks: rmcp::task_manager::TaskManager,
    /// This connection's name in actors: unique among the engine's connections.
    connection: String,
}

impl std::fmt::Debug for FlowdeckServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlowdeckServer").finish_non_exhaustive()
    }
}

/// A tool the client can call.
enum Callable {
    Static,
    Dynamic(String),
}

impl FlowdeckServer {
    /// A server over an engine that is already open.
    pub fn with_engine(engine: Arc<Engine>, options: McpOptions) -> Self {
        let opener: Opener = Arc::new(move || Ok(engine.clone()));
        Self::new(opener, options)
    }

    /// A server whose engine `opener` opens on first need (or when [`Self::start_loading`]
    /// is called).
    pub fn new(opener: Opener, options: McpOptions) -> Self {
        let statics = tools::catalog()
            .into_iter()
            .filter(|t| options.toolsets.contains(&t.toolset))
            .filter(|t| !options.read_only || t.hints.read_only)
            .collect();
        FlowdeckServer {
            inner: Arc::new(Inner {
                loaded: tokio::sync::OnceCell::new(),
                opener,
                options,
                statics,
                listed_statics: std::sync::OnceLock::new(),
                subscriptions: Mutex::new(HashSet::new()),
                forwarding: AtomicBool::new(false),
                calls: AtomicU64::new(0),
                tasks: rmcp::task_manager::TaskManager::new(),
                connection: {
                    static NEXT: AtomicU64 = AtomicU64::new(1);
                    format!(
                        "mcp-{}-{}",
                        std::process::id(),
                        NEXT.fetch_add(1, Ordering::Relaxed)
                    )
                },
            }),
        }
    }

    async fn loaded(&self) -> Result<&Loaded, ErrorData> {
        self.inner
            .loaded
            .get_or_try_init(|| async {
                let opener = self.inner.opener.clone();
                let engine = tokio::task::spawn_blocking(move || opener())
                    .await
                    .map_err(|e| e.to_string())
                    .and_then(|r| r)
                    .map_err(|e| {
                        ErrorData::internal_error(
                            format!("cannot open the workflows folder: {e}"),
                            None,
                        )
                    })?;
                let audit = Arc::new(Audit::new(&engine));
                Ok(Loaded { engine, audit })
            })
            .await
    }

    async fn engine(&self) -> Result<Arc<Engine>, ErrorData> {
        Ok(self.loaded().await?.engine.clone())
    }

    /// Starts opening the engine now, alongside the handshake.
    pub fn start_loading(&self) {
        let server = self.clone();
        tokio::spawn(async move {
            if let Err(e) = server.loaded().await {
                tracing::error!("{}", e.message);
            }
        });
    }

    /// The engine, if it has been opened.
    pub fn engine_if_loaded(&self) -> Option<Arc<Engine>> {
        self.inner.loaded.get().map(|l| l.engine.clone())
    }

    /// The agent this connection serves: its client's name from `initialize` (or the 2026-era
    /// request metadata), and the connection.
    fn actor(&self, peer: &Peer<RoleServer>) -> Actor {
        let client = peer
            .peer_info()
            .map(|info| info.client_info.name.clone())
            .filter(|name| !name.trim().is_empty())
            .unwrap_or_else(|| "unnamed client".into());
        Actor::Agent {
            client: crate::workflow::names::sanitize(&client),
            connection: self.inner.connection.clone(),
        }
    }

    fn dynamic_enabled(&self) -> bool {
        // A dynamic tool runs a workflow: never in read-only mode.
        self.inner.options.toolsets.contains(&Toolset::Dynamic) && !self.inner.options.read_only
    }

    fn all_tools(&self, engine: &Engine) -> Vec<Tool> {
        let mut list: Vec<Tool> = self
            .inner
            .listed_statics
            .get_or_init(|| self.inner.statics.iter().map(static_tool).collect())
            .clone();
        if self.dynamic_enabled() {
            for d in dynamic::tools(engine, &self.inner.options.dynamic_filters) {
                list.push(
                    Tool::new(d.tool_name.clone(), d.description, Arc::new(d.schema))
                        .with_title(format!("Run {}", d.workflow))
                        .with_raw_output_schema(tools::run_output_schema())
                        .annotate(
                            ToolAnnotations::with_title(format!("Run {}", d.workflow))
                                .read_only(false)
                                .destructive(true)
                                .idempotent(false)
                                .open_world(true),
                        ),
                );
            }
        }
        list
    }

    fn find(&self, name: &str) -> Option<Callable> {
        if self.inner.statics.iter().any(|t| t.name == name) {
            return Some(Callable::Static);
        }
        let workflow = name.strip_prefix(PREFIX)?;
        (self.dynamic_enabled()
            && dynamic::matches_filter(&self.inner.options.dynamic_filters, workflow))
        .then(|| Callable::Dynamic(workflow.to_string()))
    }

    /// Forwards engine changes to a legacy (2025-era) client, once per connection.
    fn start_forwarding(&self, engine: &Engine, peer: Peer<RoleServer>) {
        if self.inner.forwarding.swap(true, Ordering::SeqCst) {
            return;
        }
        let server = self.clone();
        let mut events = engine.subscribe();
        tokio::spawn(async move {
            while let Some(touched) = next_touched(&mut events).await {
                if !touched.is_empty() {
                    let _ = peer.notify_tool_list_changed().await;
                    let _ = peer.notify_resource_list_changed().await;
                    let uris = touched.names().flat_map(|name| server.updated_uris(name));
                    for uri in uris.collect::<std::collections::BTreeSet<_>>() {
                        let _ = peer
                            .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                            .await;
                    }
                }
                if peer.is_transport_closed() {
                    break;
                }
            }
        });
    }

    /// The subscribed resources a change to workflow `name` (to any, for `None`) touches.
    fn updated_uris(&self, name: Option<&str>) -> Vec<String> {
        let subscribed = self
            .inner
            .subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        subscribed
            .iter()
            .filter(|uri| is_about(uri, name))
            .cloned()
            .collect()
    }

    async fn run_tool(
        &self,
        engine: Arc<Engine>,
        callable: Callable,
        name: String,
        args: Value,
        cx: CallContext,
    ) -> Result<JsonObject, ToolError> {
        let engine = &engine;
        match callable {
            Callable::Static => tools::call(engine, &name, args, &cx).await,
            Callable::Dynamic(workflow) => {
                let Value::Object(mut map) = args else {
                    return Err(ToolError::invalid_arguments(
                        &name,
                        "arguments must be an object",
                    ));
                };
                let session_id = match map.remove("session_id") {
                    Some(Value::String(s)) => Some(s),
                    None | Some(Value::Null) => None,
                    Some(_) => {
                        return Err(ToolError::invalid_arguments(
                            &name,
                            "session_id must be a string",
                        ));
                    }
                };
                let wait = match map.remove("wait") {
                    Some(Value::Bool(b)) => b,
                    None | Some(Value::Null) => true,
                    Some(_) => {
                        return Err(ToolError::invalid_arguments(
                            &name,
                            "wait must be a boolean",
                        ));
                    }
                };
                let inputs = map
                    .iter()
                    .map(|(k, v)| super::args::input_text(v).map(|t| (k.clone(), t)))
                    .collect::<Result<_, _>>()
                    .map_err(|m| ToolError::invalid_arguments(&name, m))?;
                let request = RunRequest {
                    workflow: WorkflowSource::Name(workflow),
                    session_id,
                    inputs,
                    keep_session: false,
                    actor: cx.actor.clone(),
                    require_approval: cx.require_approval,
                };
                tools::run(engine, request, wait, &cx).await
            }
        }
    }
}

/// A static tool as `tools/list` shows it.
fn static_tool(t: &ToolDef) -> Tool {
    Tool::new(t.name, t.description, Arc::new((t.schema)()))
        .with_title(t.title)
        .with_raw_output_schema(Arc::new((t.output_schema)()))
        .annotate(
            ToolAnnotations::with_title(t.title)
                .read_only(t.hints.read_only)
                .destructive(t.hints.destructive)
                .idempotent(t.hints.idempotent)
                .open_world(t.hints.open_world),
        )
}

/// Runs a tool's work in its own task, so that a panic in it becomes an error result for that
/// call (with the panic's message, as the engine reports a run a bug ended) and never takes
/// the server down.
async fn caught<F>(tool: &str, work: F) -> Result<JsonObject, ToolError>
where
    F: std::future::Future<Output = Result<JsonObject, ToolError>> + Send + 'static,
{
    match tokio::spawn(work).await {
        Ok(outcome) => outcome,
        Err(e) => {
            let message = match e.try_into_panic() {
                Ok(panic) => crate::panics::message(&*panic),
                Err(e) => e.to_string(),
            };
            tracing::error!("tool {tool} panicked: {message}");
            Err(ToolError::internal(format!(
                "flowdeck failed inside {tool} (a bug): {message}"
            )))
        }
    }
}

/// A call's answer. A success is `structuredContent` (with the same JSON as text), which
/// matches the tool's output schema. An error carries its payload only as JSON text: clients
/// check `structuredContent` against the output schema even when `isError` is set (the
/// TypeScript SDK does), and the error payload is not the tool's output.
fn to_result(outcome: Result<JsonObject, ToolError>) -> CallToolResult {
    match outcome {
        Ok(object) => CallToolResult::structured(Value::Object(object)),
        Err(error) => {
            let text = serde_json::to_string(&error).unwrap_or_else(|_| {
                json!({"error_code": error.error_code, "message": error.message}).to_string()
            });
            CallToolResult::error(vec![ContentBlock::text(text)])
        }
    }
}

impl ServerHandler for FlowdeckServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_resources_list_changed()
                .enable_prompts()
                .enable_tasks()
                .build(),
        )
        .with_server_info(Implementation::new("flowdeck", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let Ok(engine) = self.engine().await {
            self.start_forwarding(&engine, context.peer);
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let engine = self.engine().await?;
        self.start_forwarding(&engine, context.peer);
        Ok(ListToolsResult {
            tools: self.all_tools(&engine),
            ..Default::default()
        })
    }

    #[expect(clippy::too_many_lines, reason = "issue 23 splits it by its jobs")]
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let Some(callable) = self.find(&name) else {
            return Err(ErrorData::invalid_params(
                format!(
                    "no tool {} (tools/list shows the tools this server offers)",
                    crate::workflow::names::display_safe(&name)
                ),
                None,
            ));
        };
        let args = Value::Object(request.arguments.unwrap_or_default());
        let correlation_id = format!(
            "c{}-{}",
            std::process::id(),
            self.inner.calls.fetch_add(1, Ordering::Relaxed) + 1
        );
        let started = Instant::now();
        let loaded = self.loaded().await?;
        let engine = loaded.engine.clone();
        let actor = self.actor(&context.peer);
        let audited = AuditedCall {
            tool: name.clone(),
            actor: actor.clone(),
            arguments: Audit::redact(&engine, &name, &args),
            correlation_id: correlation_id.clone(),
        };
        let runs_a_workflow = name == "run_workflow" || matches!(callable, Callable::Dynamic(_));
        if runs_a_workflow
            && context
                .client_capabilities()
                .is_some_and(|c| c.supports_tasks())
        {
            // SEP-2663: the run becomes a task the client polls; cancelling the task cancels
            // the run (dropping the work drops its CancelOnDrop guard).
            let server = self.clone();
            let task_name = name.clone();
            let task = self.inner.tasks.spawn(
                rmcp::task_manager::TaskOptions::new().with_poll_interval_ms(250),
                move |ctx| {
                    Box::pin(async move {
                        let cx = CallContext {
                            cancel: tokio_util::sync::CancellationToken::new(),
                            progress: None,
                            actor,
                            require_approval: server.inner.options.approve_agent_runs,
                        };
                        tokio::select! {
                            outcome = server.run_tool(engine, callable, task_name, args, cx) => Ok(to_result(outcome)),
                            () = ctx.cancelled() => Err(rmcp::task_manager::TaskExit::Cancelled),
                        }
                    })
                },
            );
            loaded
                .audit
                .record_later(AuditEntry::task(audited, task.task_id.clone()));
            return Ok(CallToolResponse::Task(CreateTaskResult::new(task)));
        }
        let progress: Option<Box<dyn Fn(f64, String) + Send + Sync>> =
            context.meta.get_progress_token().map(|token| {
                let peer = context.peer.clone();
                Box::new(move |done: f64, message: String| {
                    let peer = peer.clone();
                    let param =
                        ProgressNotificationParam::new(token.clone(), done).with_message(message);
                    tokio::spawn(async move {
                        let _ = peer.notify_progress(param).await;
                    });
                }) as Box<dyn Fn(f64, String) + Send + Sync>
            });
        let cx = CallContext {
            cancel: context.ct.clone(),
            progress,
            actor,
            require_approval: self.inner.options.approve_agent_runs,
        };
        let server = self.clone();
        let task_name = name.clone();
        let work = async move {
            let cancel = cx.cancel.clone();
            tokio::select! {
                outcome = server.run_tool(engine, callable, task_name.clone(), args, cx) => outcome,
                () = cancel.cancelled() => Err(ToolError::cancelled(&task_name)),
            }
        };
        let mut outcome = caught(&name, work).await;
        if let Err(e) = &mut outcome {
            e.correlation_id = correlation_id.clone();
        }
        let how = match &outcome {
            Ok(_) => AuditOutcome::Ok,
            Err(e) => AuditOutcome::Failed(e.error_code.to_string()),
        };
        let took = started.elapsed().as_secs_f64() * 1000.0;
        loaded
            .audit
            .record_later(AuditEntry::ended(audited, how, took));
        Ok(to_result(outcome).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult {
            resources: resources::list(&*self.engine().await?),
            ..Default::default()
        })
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult {
            resource_templates: resources::templates(),
            ..Default::default()
        })
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let actor = self.actor(&context.peer);
        match resources::read(&*self.engine().await?, &request.uri, &actor).await {
            Some(contents) => Ok(ReadResourceResult::new(vec![contents]).into()),
            None => Err(ErrorData::resource_not_found(
                format!(
                    "no resource {}",
                    crate::workflow::names::display_safe(&request.uri)
                ),
                Some(json!({"uri": request.uri})),
            )),
        }
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let engine = self.engine().await?;
        self.start_forwarding(&engine, context.peer);
        self.inner
            .subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(request.uri);
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner
            .subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // Prompts never change; everything else can be followed.
        let mut accepted = requested.clone();
        accepted.prompts_list_changed = None;
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut events = self.engine().await?.subscribe();
        let subscribed: Vec<String> = context
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                touched = next_touched(&mut events) => {
                    let Some(touched) = touched else {
                        return Ok(());
                    };
                    if touched.is_empty() {
                        continue;
                    }
                    let sink = context.sink();
                    if context.accepted().tools_list_changed == Some(true) {
                        let _ = sink.notify_tool_list_changed().await;
                    }
                    if context.accepted().resources_list_changed == Some(true) {
                        let _ = sink.notify_resource_list_changed().await;
                    }
                    let about = |uri: &&String| touched.names().any(|name| is_about(uri, name));
                    for uri in subscribed.iter().filter(about) {
                        let _ = sink.notify_resource_updated(uri.clone()).await;
                    }
                }
            }
        }
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(
            self.inner.tasks.get_task(&request.task_id)?,
        ))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner
            .tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.tasks.cancel_task(&request.task_id)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult {
            prompts: prompts::list(),
            ..Default::default()
        })
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let args: Map<String, Value> = request.arguments.unwrap_or_default();
        match prompts::get_prompt(&*self.engine().await?, &request.name, &args) {
            Ok(result) => Ok(result.into()),
            Err(message) => Err(ErrorData::invalid_params(
                message,
                Some(json!({"prompt": request.name})),
            )),
        }
    }
}

/// The workflows that the next engine events touched: the first event waited for, then every
/// one already queued behind it, so that a storm of saves costs each client one set of
/// notifications (list changed is list changed, however many times) rather than one per save.
/// `None` once the engine is gone. Both MCP listeners (the 2025 protocol's notifications and
/// the 2026 `subscriptions/listen` stream) use it.
async fn next_touched(
    events: &mut broadcast::Receiver<crate::engine::EngineEvent>,
) -> Option<Touched> {
    let mut touched = Touched::default();
    touched.add(events.recv().await)?;
    loop {
        match events.try_recv() {
            Err(TryRecvError::Empty) => return Some(touched),
            event => touched.add(event.map_err(|e| match e {
                TryRecvError::Lagged(n) => RecvError::Lagged(n),
                _ => RecvError::Closed,
            }))?,
        }
    }
}

/// Workflows that events touched: named ones, or any of them when changes were missed.
#[derive(Debug, Default)]
struct Touched {
    any: bool,
    names: std::collections::BTreeSet<String>,
}

impl Touched {
    /// Adds what one event touched; `None` once the engine is gone.
    fn add(&mut self, event: Result<crate::engine::EngineEvent, RecvError>) -> Option<()> {
        match event {
            Ok(event) => match (&event.change, event.workflow()) {
                // Changes were missed: anything may have changed.
                (crate::engine::Change::WorkflowsResync { .. }, _) => self.any = true,
                (_, Some(name)) => {
                    self.names.insert(name.to_string());
                }
                (_, None) => {}
            },
            // This listener fell behind: the same.
            Err(RecvError::Lagged(_)) => self.any = true,
            Err(RecvError::Closed) => return None,
        }
        Some(())
    }

    fn is_empty(&self) -> bool {
        !self.any && self.names.is_empty()
    }

    /// Each workflow touched by name, or `None` alone (any workflow) when changes were missed.
    fn names(&self) -> Box<dyn Iterator<Item = Option<&str>> + '_> {
        if self.any {
            Box::new(std::iter::once(None))
        } else {
            Box::new(self.names.iter().map(|n| Some(n.as_str())))
        }
    }
}

/// Whether resource `uri` is about workflow `name` (about any workflow, for `None`).
fn is_about(uri: &str, name: Option<&str>) -> bool {
    uri == resources::WORKFLOWS
        || match name {
            Some(name) => uri.strip_prefix(resources::WORKFLOW_PREFIX) == Some(name),
            None => uri.starts_with(resources::WORKFLOW_PREFIX),
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_burst_of_changes_is_told_once_and_missed_changes_touch_every_workflow() {
        let hub = crate::engine::events::EventHub::default();
        let mut events = hub.subscribe();
        let removed = |name: &str| crate::engine::Change::WorkflowRemoved {
            name: name.into(),
            file_name: format!("{name}.yaml"),
        };
        for name in ["deploy", "build", "deploy"] {
            hub.publish(crate::engine::Actor::System, removed(name));
        }
        let session = crate::engine::Change::SessionClosed {
            session_id: "s1".into(),
        };
        hub.publish(crate::engine::Actor::System, session.clone());
        let touched = next_touched(&mut events).await.expect("events");
        let names: Vec<_> = touched.names().collect();
        assert_eq!(names, [Some("build"), Some("deploy")], "one each, at once");

        hub.publish(crate::engine::Actor::System, session);
        assert!(next_touched(&mut events).await.expect("events").is_empty());

        hub.publish(
            crate::engine::Actor::System,
            crate::engine::Change::WorkflowsResync { missed: 3 },
        );
        hub.publish(crate::engine::Actor::System, removed("deploy"));
        let touched = next_touched(&mut events).await.expect("events");
        assert_eq!(touched.names().collect::<Vec<_>>(), [None], "any workflow");
        drop(hub);
        assert!(
            next_touched(&mut events).await.is_none(),
            "the engine is gone"
        );

        let one = format!("{}deploy", resources::WORKFLOW_PREFIX);
        let other = format!("{}deployer", resources::WORKFLOW_PREFIX);
        assert!(is_about(&one, Some("deploy")));
        assert!(!is_about(&other, Some("deploy")));
        assert!(is_about(resources::WORKFLOWS, Some("deploy")));
        assert!(is_about(&other, None) && is_about(&one, None));
        assert!(!is_about("flowdeck://sessions", None));
    }

    #[test]
    fn the_tool_list_serializes_with_an_output_schema_for_every_tool() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("hello.yaml"),
            "name: hello\ndescription: Greets.\ninitial_state: a\nstates:\n  a: { action: { tool: list_terminal_sessions } }\n",
        )
        .unwrap();
        let config = crate::engine::EngineConfig {
            watch: false,
            ..Default::default()
        };
        let engine = Engine::open(dir.path(), config).unwrap();
        let server = FlowdeckServer::with_engine(engine.clone(), McpOptions::default());
        let list = ListToolsResult {
            tools: server.all_tools(&engine),
            ..Default::default()
        };
        let value = serde_json::to_value(&list).unwrap();
        let tools = value["tools"].as_array().unwrap();
        assert_eq!(tools.len(), tools::catalog().len() + 1);
        assert!(tools.iter().any(|t| t["name"] == "wf_hello"));
        for tool in tools {
            assert_eq!(tool["outputSchema"]["type"], "object", "{}", tool["name"]);
        }
        // Listed again (the folder changed), the statics are the same.
        assert_eq!(
            serde_json::to_value(server.all_tools(&engine)).unwrap(),
            value["tools"]
        );
    }

    #[tokio::test]
    async fn a_panicking_handler_becomes_an_error_result() {
        let outcome = caught("boom", async {
            if std::env::var_os("FLOWDECK_NEVER_SET").is_none() {
                panic!("a bug in a handler");
            }
            Ok(JsonObject::new())
        })
        .await;
        let error = outcome.unwrap_err();
        assert_eq!(error.error_code, "INTERNAL_ERROR");
        assert!(error.retryable);
        assert_eq!(
            error.message,
            "flowdeck failed inside boom (a bug): a bug in a handler"
        );
        // And the next call works.
        let fine = json!({"ok": true}).as_object().cloned().unwrap();
        assert_eq!(
            caught("fine", async { Ok(fine) }).await.unwrap()["ok"],
            true
        );
    }
}
