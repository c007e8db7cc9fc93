//! The MCP handler: tools (static and dynamic), resources, prompts and change notifications,
//! each a thin adapter over an engine method. Every call runs in its own task, so a panic
//! becomes an error result, never a dead server; every call is audited. Here: the server and
//! its calls; the handler rmcp drives in `handler.rs`, a call's outcome in `calls.rs`, the
//! change notifications' bursts in `touched.rs`.

// A tool error is built at most once per failed call and returned straight to the client;
// boxing it would buy nothing but indirection.
#![allow(clippy::result_large_err)]

mod calls;
mod handler;
mod touched;

use calls::static_tool;
use touched::next_touched;

use super::audit::Audit;
use super::dynamic::{self, PREFIX};
use super::errors::ToolError;
use super::tools::{self, CallContext, ToolDef, Toolset};

use super::McpOptions;
use crate::engine::run::WorkflowSource;
use crate::engine::{Actor, Engine, RunRequest};
use rmcp::model::*;
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::Value;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

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
    /// The agent attached to the engine, from its `initialize` (or first call) until it
    /// leaves (host.rs) or this server is dropped (an HTTP session ended).
    presence: Mutex<Option<crate::engine::presence::Presence>>,
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
            .filter(|t| t.offered_in(&options.toolsets))
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
                presence: Mutex::new(None),
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

    /// The agent is attached to the engine, told once, under the name its client gave.
    fn be_present(&self, engine: &Arc<Engine>, peer: &Peer<RoleServer>) {
        let mut presence = self
            .inner
            .presence
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if presence.is_none() {
            *presence = Some(engine.arrive(self.actor(peer)));
        }
    }

    /// The agent left (its connection ended): told now, not when the last task holding this
    /// server ends.
    pub fn leave(&self) {
        let presence = self
            .inner
            .presence
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        drop(presence);
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
        (self.dynamic_enabled() && self.inner.options.dynamic_filters.matches(workflow))
            .then(|| Callable::Dynamic(workflow.to_string()))
    }

    /// Forwards engine changes to a legacy (2025-era) client, once per connection.
    fn start_forwarding(&self, engine: &Engine, peer: Peer<RoleServer>) {
        if self.inner.forwarding.swap(true, Ordering::SeqCst) {
            return;
        }
        // Held weakly: an HTTP session's server is dropped when the session ends, and with it
        // the agent's presence, which this task must not keep.
        let server = Arc::downgrade(&self.inner);
        let mut events = engine.subscribe();
        tokio::spawn(async move {
            while let Some(touched) = next_touched(&mut events).await {
                let Some(inner) = server.upgrade() else {
                    break;
                };
                let server = FlowdeckServer { inner };
                if !touched.is_empty() {
                    if touched.workflows() {
                        let _ = peer.notify_tool_list_changed().await;
                        let _ = peer.notify_resource_list_changed().await;
                    }
                    for uri in server.updated_uris(&touched) {
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

    /// The subscribed resources a burst of changes touched.
    fn updated_uris(&self, touched: &touched::Touched) -> std::collections::BTreeSet<String> {
        let subscribed = self
            .inner
            .subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        touched.updated(subscribed.iter())
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
                    host: None,
                    actor: cx.actor.clone(),
                    require_approval: cx.require_approval,
                };
                tools::run(engine, request, wait, &cx).await
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::calls::caught;
    use super::touched::is_about;
    use super::*;
    use crate::mcp::resources;
    use serde_json::json;

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
