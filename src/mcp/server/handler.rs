//! rmcp's `ServerHandler` for flowdeck: the handshake, tools, resources and their
//! subscriptions, tasks and prompts, each answered by the engine through the server.

// A tool error is built at most once per failed call and returned straight to the client;
// boxing it would buy nothing but indirection.
#![allow(clippy::result_large_err)]

use super::calls::{caught, to_result};
use super::touched::next_touched;
use super::{Callable, FlowdeckServer, INSTRUCTIONS};
use crate::engine::audit_log::{AuditEntry, AuditOutcome, AuditedCall};
use crate::engine::{Actor, Engine};
use crate::mcp::audit::Audit;
use crate::mcp::errors::ToolError;
use crate::mcp::tools::CallContext;
use crate::mcp::{prompts, resources};
// The 2025-era subscribe requests are still served.
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CreateTaskResult,
    GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult, Implementation,
    JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ServerCapabilities, ServerConfig, SubscriptionFilter,
    Task, UpdateTaskParams,
};
#[allow(deprecated)]
use rmcp::model::{SubscribeRequestParams, UnsubscribeRequestParams};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

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
            self.be_present(&engine, &context.peer);
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

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let Some(callable) = self.find(&name) else {
            return Err(no_such_tool(&name));
        };
        let args = Value::Object(request.arguments.unwrap_or_default());
        let correlation_id = self.next_correlation_id();
        let started = Instant::now();
        let loaded = self.loaded().await?;
        let engine = loaded.engine.clone();
        let actor = self.actor(&context.peer);
        // A client of the 2026 protocol may call without `initialize`: present from its
        // first call.
        self.be_present(&engine, &context.peer);
        // Whatever the call does to a terminal, someone is looking at it (abandoned.rs).
        if let Some(session) = args.get("session_id").and_then(Value::as_str) {
            engine.looked_at(session);
        }
        let audited = AuditedCall {
            tool: name.clone(),
            actor: actor.clone(),
            arguments: Audit::redact(&engine, &name, &args),
            correlation_id: correlation_id.clone(),
        };
        if runs_as_task(&name, &callable, &context) {
            let task = self.spawn_task(engine, callable, name, args, actor);
            loaded
                .audit
                .record_later(AuditEntry::task(audited, task.task_id.clone()));
            return Ok(CallToolResponse::Task(CreateTaskResult::new(task)));
        }
        let cx = CallContext {
            cancel: context.ct.clone(),
            progress: progress_reporter(&context),
            actor,
            require_approval: self.inner.options.approve_agent_runs,
            max_wait: Some(self.inner.options.max_wait),
        };
        let outcome = self
            .run_caught(engine, callable, name, args, cx, &correlation_id)
            .await;
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
                    let lists = touched.workflows();
                    if lists && context.accepted().tools_list_changed == Some(true) {
                        let _ = sink.notify_tool_list_changed().await;
                    }
                    if lists && context.accepted().resources_list_changed == Some(true) {
                        let _ = sink.notify_resource_list_changed().await;
                    }
                    for uri in touched.updated(subscribed.iter()) {
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

/// The answer to a call of a tool this server does not offer.
fn no_such_tool(name: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "no tool {} (tools/list shows the tools this server offers)",
            crate::workflow::names::display_safe(name)
        ),
        None,
    )
}

/// Whether the call becomes a SEP-2663 task: only a run does, and only for a client that
/// declared the extension (any other waits for its answer).
fn runs_as_task(name: &str, callable: &Callable, context: &RequestContext<RoleServer>) -> bool {
    let runs_a_workflow = name == "run_workflow" || matches!(callable, Callable::Dynamic(_));
    runs_a_workflow
        && context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks())
}

/// Progress notifications to the client, when it asked for them with a progress token.
fn progress_reporter(context: &RequestContext<RoleServer>) -> Option<Progress> {
    context.meta.get_progress_token().map(|token| {
        let peer = context.peer.clone();
        // One sender per call, in order: MCP wants each notification's progress above the
        // one before, which notifications sent from tasks of their own would not keep.
        let (tell, mut told) = tokio::sync::mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            let mut done = 0u32;
            while let Some(message) = told.recv().await {
                done += 1;
                let param = ProgressNotificationParam::new(token.clone(), f64::from(done))
                    .with_message(message);
                let _ = peer.notify_progress(param).await;
            }
        });
        Box::new(move |message: String| {
            let _ = tell.send(message);
        }) as Progress
    })
}

/// Tells the client what a call is doing: each message a step further.
type Progress = Box<dyn Fn(String) + Send + Sync>;

impl FlowdeckServer {
    /// Tells calls apart in the audit log and in the errors the agent reads, across the
    /// server's processes too.
    fn next_correlation_id(&self) -> String {
        format!(
            "c{}-{}",
            std::process::id(),
            self.inner.calls.fetch_add(1, Ordering::Relaxed) + 1
        )
    }

    /// Starts a run as a task the client polls; cancelling the task cancels the run (dropping
    /// the work drops its `CancelOnDrop` guard).
    fn spawn_task(
        &self,
        engine: Arc<Engine>,
        callable: Callable,
        name: String,
        args: Value,
        actor: Actor,
    ) -> Task {
        let server = self.clone();
        self.inner.tasks.spawn(
            rmcp::task_manager::TaskOptions::new().with_poll_interval_ms(250),
            move |ctx| {
                Box::pin(async move {
                    let cx = CallContext {
                        cancel: tokio_util::sync::CancellationToken::new(),
                        progress: None,
                        actor,
                        require_approval: server.inner.options.approve_agent_runs,
                        max_wait: None,
                    };
                    tokio::select! {
                        outcome = server.run_tool(engine, callable, name, args, cx) => Ok(to_result(outcome)),
                        () = ctx.cancelled() => Err(rmcp::task_manager::TaskExit::Cancelled),
                    }
                })
            },
        )
    }

    /// Runs a call the client waits for: until it ends or the client cancels it, a panic in it
    /// caught as an error, which carries the call's correlation id.
    async fn run_caught(
        &self,
        engine: Arc<Engine>,
        callable: Callable,
        name: String,
        args: Value,
        cx: CallContext,
        correlation_id: &str,
    ) -> Result<JsonObject, ToolError> {
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
            e.correlation_id = correlation_id.to_string();
        }
        outcome
    }
}
