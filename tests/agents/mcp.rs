//! `flowdeck mcp` spoken to by rmcp's own client, spawning the real binary.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use rmcp::model::*;
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;
use tokio::sync::mpsc;

use crate::common;
use common::LONG;

/// A client that reports the notifications it receives.
#[derive(Clone)]
struct Observer {
    tx: mpsc::UnboundedSender<String>,
    version: ProtocolVersion,
}

impl ClientHandler for Observer {
    async fn on_tool_list_changed(&self, _c: NotificationContext<RoleClient>) {
        let _ = self.tx.send("tools/list_changed".into());
    }
    async fn on_resource_updated(
        &self,
        p: ResourceUpdatedNotificationParam,
        _c: NotificationContext<RoleClient>,
    ) {
        let _ = self.tx.send(format!("updated {}", p.uri));
    }
    async fn on_progress(&self, p: ProgressNotificationParam, _c: NotificationContext<RoleClient>) {
        let _ = self
            .tx
            .send(format!("progress {}", p.message.unwrap_or_default()));
    }
    fn get_info(&self) -> ClientConfig {
        ClientConfig::default().with_protocol_version(self.version.clone())
    }
}

type Client = RunningService<RoleClient, Observer>;

fn command(workflows: &Path, extra: &[&str]) -> tokio::process::Command {
    let workflows = workflows.to_path_buf();
    let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    tokio::process::Command::new(env!("CARGO_BIN_EXE_flowdeck")).configure(move |c| {
        c.arg("--workflows")
            .arg(&workflows)
            .arg("mcp")
            .args(&extra)
            // Every tool, unless a test names its toolsets.
            .env("FLOWDECK_TOOLSETS", "all")
            .env("SHELL", "/bin/bash");
    })
}

async fn connect(workflows: &Path, extra: &[&str]) -> (Client, mpsc::UnboundedReceiver<String>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let observer = Observer {
        tx,
        version: ProtocolVersion::V_2025_11_25,
    };
    let transport = TokioChildProcess::new(command(workflows, extra)).unwrap();
    (observer.serve(transport).await.unwrap(), rx)
}

fn folder() -> tempfile::TempDir {
    common::bundled_workflows_copy()
}

async fn call<S: rmcp::Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
    tool: &str,
    args: Value,
) -> (bool, Value) {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .unwrap();
    if result.is_error == Some(true) {
        return (true, error_payload(tool, &result));
    }
    (false, result.structured_content.unwrap_or(Value::Null))
}

/// An error result's payload: the JSON text of its one content item. It carries no
/// structuredContent, which clients would check against the tool's output schema.
fn error_payload(tool: &str, result: &CallToolResult) -> Value {
    assert!(
        result.structured_content.is_none(),
        "{tool}: an error result with structuredContent: {result:?}"
    );
    let [content] = result.content.as_slice() else {
        panic!("{tool}: an error result without exactly one content item: {result:?}")
    };
    let text = &content.as_text().unwrap().text;
    serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("{tool}: error text is not JSON ({e}): {text}"))
}

async fn ok(client: &Client, tool: &str, args: Value) -> Value {
    let (error, value) = call(client, tool, args).await;
    assert!(!error, "{tool} failed: {value:#}");
    value
}

/// The next notification that starts with `what`, within [`LONG`] however many others come
/// before it.
async fn next_notification(rx: &mut mpsc::UnboundedReceiver<String>, what: &str) -> String {
    common::within(LONG, &format!("a {what} notification"), async {
        loop {
            let n = rx.recv().await.expect("the client's notifications ended");
            if n.starts_with(what) {
                return n;
            }
        }
    })
    .await
}

const STATIC_TOOLS: [&str; 30] = [
    "open_terminal",
    "send_input",
    "get_screen_content",
    "search_output",
    "await_output",
    "list_terminal_sessions",
    "exit_terminal",
    "run_command",
    "resize_terminal",
    "get_workflow_schema",
    "create_workflow",
    "workflow_list",
    "workflow_get",
    "workflow_validate",
    "workflow_save",
    "workflow_rename",
    "workflow_delete",
    "workflow_preview_inputs",
    "workflow_resolve_inputs",
    "workflow_preview_rendered",
    "workflow_step_plan",
    "workflow_draft_from_session",
    "run_workflow",
    "run_status",
    "run_events",
    "run_list",
    "workflow_cancel",
    "run_feedback",
    "workflow_purge_history",
    "workflow_next",
];

#[tokio::test]
async fn every_tool_is_listed_with_an_object_schema_and_annotations() {
    let dir = folder();
    let (client, _rx) = connect(dir.path(), &[]).await;
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "flowdeck");
    assert!(
        info.instructions
            .as_deref()
            .unwrap_or("")
            .contains("run_workflow")
    );
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for name in STATIC_TOOLS {
        assert!(names.contains(&name), "missing {name}");
    }
    let dynamic: Vec<&&str> = names.iter().filter(|n| n.starts_with("wf_")).collect();
    assert_eq!(dynamic.len(), 7, "{dynamic:?}");
    for tool in &tools {
        assert_eq!(
            tool.input_schema.get("type"),
            Some(&json!("object")),
            "{}",
            tool.name
        );
        assert!(
            tool.description.as_deref().is_some_and(|d| d.len() > 20),
            "{}",
            tool.name
        );
        let a = tool.annotations.as_ref().unwrap();
        assert!(
            a.read_only_hint.is_some() && a.destructive_hint.is_some(),
            "{}",
            tool.name
        );
    }
    let annotation = |n: &str| {
        tools
            .iter()
            .find(|t| t.name == n)
            .unwrap()
            .annotations
            .clone()
            .unwrap()
    };
    assert_eq!(annotation("get_screen_content").read_only_hint, Some(true));
    assert_eq!(annotation("exit_terminal").destructive_hint, Some(true));
    assert_eq!(annotation("run_command").open_world_hint, Some(true));
    // The dynamic tool's schema is the workflow's arguments.
    let make = tools.iter().find(|t| t.name == "wf_make_build").unwrap();
    let props = make.input_schema.get("properties").unwrap();
    assert_eq!(props["JOBS"]["type"], "integer");
    assert_eq!(
        make.input_schema.get("required"),
        Some(&json!(["PROJECT_ROOT"]))
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn terminal_tools_drive_a_real_shell() {
    let dir = folder();
    let (client, _rx) = connect(dir.path(), &[]).await;
    let opened = ok(
        &client,
        "open_terminal",
        json!({"command": ["bash", "--norc"], "name": "agent"}),
    )
    .await;
    let id = opened["session_id"].as_str().unwrap().to_string();
    ok(
        &client,
        "send_input",
        json!({"session_id": id, "input_text": "echo MARK_$((6*7))\n"}),
    )
    .await;
    let waited = ok(
        &client,
        "await_output",
        json!({"session_id": id, "pattern": "^MARK_42$", "timeout": 20}),
    )
    .await;
    assert_eq!(waited["outcome"], "matched");
    // Quiet alone: the prompt is back and nothing more comes.
    let settled = ok(
        &client,
        "await_output",
        json!({"session_id": id, "quiet_ms": 100, "quiet_on": "screen", "timeout": 20}),
    )
    .await;
    assert_eq!(settled["outcome"], "matched", "{settled}");
    assert!(settled["quiet_ms"].as_f64().unwrap() >= 100.0, "{settled}");
    let ran = ok(
        &client,
        "run_command",
        json!({"session_id": "agent", "command": "printf 'a\\nb'; exit_code=5; (exit $exit_code)"}),
    )
    .await;
    assert_eq!(
        (ran["exit_code"].clone(), ran["output"].clone()),
        (json!(5), json!("a\nb"))
    );
    let screen = ok(&client, "get_screen_content", json!({"session_id": id})).await;
    assert!(screen["content"].as_str().unwrap().contains("MARK_42"));
    let found = ok(
        &client,
        "search_output",
        json!({"session_id": "agent", "pattern": "^MARK_(\\d+)$", "order": "oldest_first"}),
    )
    .await;
    assert_eq!(found["total_hits"], 1, "{found:#}");
    assert_eq!(found["hits"][0]["text"], "MARK_42");
    assert_eq!(found["hits"][0]["column"], 0);
    assert!(found["hits"][0]["line"].as_u64().unwrap() >= 2);
    let (error, payload) = call(
        &client,
        "search_output",
        json!({"session_id": id, "pattern": "(a{1000}){1000}"}),
    )
    .await;
    assert!(error);
    assert_eq!(payload["error_code"], "INVALID_PATTERN");
    assert_eq!(payload["context"]["pattern"], "(a{1000}){1000}");
    let resized = ok(
        &client,
        "resize_terminal",
        json!({"session_id": id, "cols": 0, "rows": 0}),
    )
    .await;
    assert_eq!(resized["clamped"], true);
    // An agent-fixable mistake is a result with a payload, not a protocol error.
    let (error, payload) = call(
        &client,
        "await_output",
        json!({"session_id": id, "pattern": "(unclosed"}),
    )
    .await;
    assert!(error);
    assert_eq!(payload["error_code"], "INVALID_PATTERN");
    assert!(payload["correlation_id"].as_str().unwrap().starts_with('c'));
    let (error, payload) = call(
        &client,
        "send_input",
        json!({"session_id": "nope", "input_text": "x"}),
    )
    .await;
    assert!(error);
    assert_eq!(payload["error_code"], "SESSION_NOT_FOUND");
    assert!(
        payload["suggested_action"]
            .as_str()
            .unwrap()
            .contains("list_terminal_sessions")
    );
    let (error, payload) = call(&client, "send_input", json!({"session_id": id, "typo": 1})).await;
    assert!(error);
    assert_eq!(payload["error_code"], "INVALID_ARGUMENTS");
    let listed = ok(&client, "list_terminal_sessions", json!({})).await;
    assert_eq!(listed["sessions"].as_array().unwrap().len(), 1);
    let closed = ok(&client, "exit_terminal", json!({"session_id": id})).await;
    assert_eq!(closed["teardown"]["survivors"], 0);
    // An unknown tool is a protocol error.
    let unknown = client
        .call_tool(CallToolRequestParams::new("no_such_tool"))
        .await;
    assert!(unknown.is_err());
    client.cancel().await.unwrap();
}

const HELLO: &str = r#"{
  "name": "hello", "description": "Greets someone.", "initial_state": "greet",
  "arguments": {"WHO": {"description": "who to greet"}},
  "return_values": {"GREETING": {"description": "the greeting"}},
  "states": {
    "greet": {"action": {"tool": "run_command", "params": {"command": "export GREETING=\"hello $WHO\""}},
              "transitions": [{"condition": "success", "next_state": "done"}]},
    "done": {"action": {"tool": "get_screen_content"}}
  }
}"#;

#[tokio::test]
async fn an_agent_authors_fixes_runs_and_reads_a_workflow() {
    let dir = tempfile::tempdir().unwrap();
    let (client, mut rx) = connect(dir.path(), &[]).await;
    let schema = ok(&client, "get_workflow_schema", json!({})).await;
    assert!(schema["schema"]["properties"]["states"].is_object());
    assert_eq!(schema["tools"].as_array().unwrap().len(), 9);
    // A broken definition is refused with its violations.
    let mut definition: Value = serde_json::from_str(HELLO).unwrap();
    definition["states"]["greet"]["transitions"][0]["next_state"] = json!("dnoe");
    let created = ok(
        &client,
        "create_workflow",
        json!({"workflow_definition": definition}),
    )
    .await;
    assert_eq!(created["success"], false);
    let errors = created["validation_errors"].as_array().unwrap();
    assert!(
        errors
            .iter()
            .any(|e| e.as_str().unwrap().contains("did you mean 'done'")),
        "{errors:?}"
    );
    // Fixed, it is stored, and the tool list follows the folder.
    let created = ok(
        &client,
        "create_workflow",
        json!({"workflow_definition": serde_json::from_str::<Value>(HELLO).unwrap()}),
    )
    .await;
    assert_eq!(
        (created["success"].clone(), created["stored_file"].clone()),
        (json!(true), json!("hello.json"))
    );
    next_notification(&mut rx, "tools/list_changed").await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "wf_hello"));

    let doc = ok(&client, "workflow_get", json!({"name": "hello"})).await;
    let version = doc["version"].as_str().unwrap().to_string();
    assert_eq!(doc["format"], "json");
    // A save with a stale version is a conflict that says what to do.
    let (error, payload) = call(
        &client,
        "workflow_save",
        json!({"content": doc["content"], "expected_version": "0".repeat(64)}),
    )
    .await;
    assert!(error);
    assert_eq!(payload["error_code"], "WORKFLOW_VERSION_CONFLICT");
    assert_eq!(payload["code"], -32006);
    assert_eq!(payload["retryable"], true);
    let saved = ok(
        &client,
        "workflow_save",
        json!({"content": doc["content"], "expected_version": version}),
    )
    .await;
    assert_eq!(saved["name"], "hello");
    let checked = ok(&client, "workflow_validate", json!({"content": "name: x\ndescription: d\ninitial_state: a\nstates: {a: {action: {tool: sned_input}}}\n"})).await;
    assert_eq!(checked["valid"], false);
    assert!(checked["violations"][0]["line"].is_number());

    let inputs = ok(
        &client,
        "workflow_resolve_inputs",
        json!({"name": "hello", "inputs": {}}),
    )
    .await;
    assert_eq!(
        (inputs["ready"].clone(), inputs["required_missing"].clone()),
        (json!(false), json!(["WHO"]))
    );
    let rendered = ok(
        &client,
        "workflow_preview_rendered",
        json!({"name": "hello", "inputs": {"WHO": "world"}}),
    )
    .await;
    assert_eq!(
        rendered["steps"][0]["renders"],
        "export GREETING=\"hello world\""
    );
    let plan = ok(&client, "workflow_step_plan", json!({"name": "hello"})).await;
    assert_eq!(plan["steps"].as_array().unwrap().len(), 2);

    // Run it, waiting, with progress per state.
    let result = ok(
        &client,
        "run_workflow",
        json!({"workflow_name": "hello", "inputs": {"WHO": "agent"}}),
    )
    .await;
    assert_eq!(result["final_state"], "completed", "{result:#}");
    assert_eq!(result["return_values"]["GREETING"], "hello agent");
    assert!(
        next_notification(&mut rx, "progress")
            .await
            .contains("greet")
    );
    // The dynamic tool does the same.
    let result = ok(&client, "wf_hello", json!({"WHO": "tool"})).await;
    assert_eq!(result["return_values"]["GREETING"], "hello tool");
    // Without waiting: a run id, then its status, events, history and feedback.
    let started = ok(
        &client,
        "run_workflow",
        json!({"workflow_name": "hello", "inputs": {"WHO": "later"}, "wait": false}),
    )
    .await;
    let run_id = started["run_id"].as_str().unwrap().to_string();
    common::within(LONG, "the run's events to end", async {
        let mut cursor = 0;
        let mut finished = false;
        while !finished {
            let page = ok(
                &client,
                "run_events",
                json!({"run_id": run_id, "after": cursor, "wait_seconds": 10}),
            )
            .await;
            cursor = page["next_cursor"].as_u64().unwrap();
            finished = page["finished"].as_bool().unwrap();
        }
    })
    .await;
    let status = ok(&client, "run_status", json!({"run_id": run_id})).await;
    assert_eq!(status["status"], "finished");
    ok(
        &client,
        "run_feedback",
        json!({"run_id": run_id, "score": 1, "text": "worked"}),
    )
    .await;
    let (error, payload) = call(&client, "run_feedback", json!({"run_id": run_id})).await;
    assert!(error, "{payload}");
    let history = ok(&client, "run_list", json!({"workflow_name": "hello"})).await;
    assert_eq!(history["runs"].as_array().unwrap().len(), 3);

    // Resources.
    let resources = client.list_all_resources().await.unwrap();
    for uri in [
        "flowdeck://spec",
        "flowdeck://schema",
        "flowdeck://workflows",
        "flowdeck://tools",
        "flowdeck://workflows/hello",
    ] {
        assert!(resources.iter().any(|r| r.uri == uri), "missing {uri}");
        let read = client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .unwrap();
        assert!(!read.contents.is_empty());
    }
    let run = client
        .read_resource(ReadResourceRequestParams::new(format!(
            "flowdeck://runs/{run_id}"
        )))
        .await
        .unwrap();
    let ResourceContents::TextResourceContents { text, .. } = &run.contents[0] else {
        panic!()
    };
    assert!(text.contains("run_finished"));
    assert!(
        client
            .read_resource(ReadResourceRequestParams::new("flowdeck://nothing"))
            .await
            .is_err()
    );
    let templates = client.list_all_resource_templates().await.unwrap();
    assert_eq!(templates.len(), 3);

    // Prompts embed what they need.
    let prompts = client.list_all_prompts().await.unwrap();
    assert_eq!(prompts.len(), 6);
    for (name, args) in [
        ("workflow_author", json!({"goal": "deploy the app"})),
        (
            "workflow_extend",
            json!({"name": "hello", "change": "add a timeout"}),
        ),
        ("workflow_fix_validation", json!({"name": "hello"})),
        ("workflow_run_with_inputs", json!({"name": "hello"})),
        ("format_command", json!({"request": "greet bob"})),
        ("clarify_params", json!({"name": "hello"})),
    ] {
        let Value::Object(args) = args else {
            unreachable!()
        };
        let got = client
            .get_prompt(GetPromptRequestParams::new(name).with_arguments(args))
            .await
            .unwrap();
        let text = serde_json::to_string(&got.messages).unwrap();
        assert!(text.len() > 200, "{name}: {text}");
    }
    assert!(
        client
            .get_prompt(GetPromptRequestParams::new("workflow_extend"))
            .await
            .is_err()
    );

    // Renamed and deleted, and the audit log saw everything, secrets aside.
    ok(
        &client,
        "workflow_rename",
        json!({"name": "hello", "new_name": "greeter"}),
    )
    .await;
    ok(&client, "workflow_delete", json!({"name": "greeter"})).await;
    let purged = ok(&client, "workflow_purge_history", json!({})).await;
    assert!(purged["removed"].as_u64().unwrap() >= 3);
    let audit = std::fs::read_to_string(dir.path().join(".flowdeck/audit.jsonl")).unwrap();
    assert!(audit.lines().count() > 20);
    let deleted: Value = audit
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["tool"] == "workflow_delete")
        .unwrap();
    // Who called: this client, as the engine's events name it.
    assert_eq!(deleted["actor"]["kind"], "agent", "{deleted}");
    assert!(deleted["actor"]["client"].is_string(), "{deleted}");
    assert!(deleted["actor"]["connection"].is_string(), "{deleted}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn read_only_and_toolsets_limit_what_is_offered() {
    let dir = folder();
    let (client, _rx) = connect(dir.path(), &["--read-only"]).await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(
        tools
            .iter()
            .all(|t| t.annotations.as_ref().unwrap().read_only_hint == Some(true))
    );
    assert!(
        !tools
            .iter()
            .any(|t| t.name == "run_workflow" || t.name.starts_with("wf_"))
    );
    let refused = client
        .call_tool(CallToolRequestParams::new("workflow_delete"))
        .await;
    assert!(refused.is_err());
    client.cancel().await.unwrap();

    let names = tool_names(
        dir.path(),
        &["--toolsets", "terminal", "--dynamic-filter", "git_*"],
    )
    .await;
    assert_eq!(names.len(), 9, "{names:?}");
    let names = tool_names(
        dir.path(),
        &["--toolsets", "dynamic", "--dynamic-filter", "git_*"],
    )
    .await;
    assert_eq!(names, ["wf_git_health"]);
}

/// The tools a server started with `extra` offers.
async fn tool_names(workflows: &Path, extra: &[&str]) -> Vec<String> {
    let (client, _rx) = connect(workflows, extra).await;
    let names = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    client.cancel().await.unwrap();
    names
}

#[tokio::test]
async fn cancelling_a_wait_and_a_run_stops_what_they_started() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sleeper.yaml"), common::SLEEPER).unwrap();
    let (client, _rx) = connect(dir.path(), &[]).await;
    let opened = ok(
        &client,
        "open_terminal",
        json!({"command": ["bash", "--norc"]}),
    )
    .await;
    let id = opened["session_id"].as_str().unwrap().to_string();
    // A long await_output, cancelled by the client.
    let Value::Object(args) = json!({"session_id": id, "pattern": "never", "timeout": 300}) else {
        unreachable!()
    };
    let handle = client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(
                CallToolRequestParams::new("await_output").with_arguments(args),
            )),
            rmcp::service::PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    handle.cancel(Some("test".into())).await.unwrap();
    // The server is still there and the session still answers.
    ok(
        &client,
        "run_command",
        json!({"session_id": id, "command": "true"}),
    )
    .await;

    // A run waited on, cancelled: its session and its `sleep` are gone.
    let Value::Object(args) = json!({"workflow_name": "sleeper"}) else {
        unreachable!()
    };
    let handle = client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(
                CallToolRequestParams::new("run_workflow").with_arguments(args),
            )),
            rmcp::service::PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let pid = common::within(LONG, "the run's session", async {
        loop {
            let listed = ok(&client, "list_terminal_sessions", json!({})).await;
            if let Some(s) = listed["sessions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["session_id"] != json!(id))
            {
                return s["pid"].as_u64().unwrap();
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    handle.cancel(Some("test".into())).await.unwrap();
    let history = common::within(LONG, "the cancelled run to leave the active list", async {
        loop {
            let history = ok(&client, "run_list", json!({"workflow_name": "sleeper"})).await;
            if history["active"].as_array().unwrap().is_empty() {
                break history;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert_eq!(history["runs"][0]["final_state"], "canceled");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    assert!(status.is_empty(), "the run's shell survived: {status}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_2026_protocol_discovers_and_listens() {
    let dir = folder();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let observer = Observer {
        tx,
        version: ProtocolVersion::V_2026_07_28,
    };
    let transport = TokioChildProcess::new(command(dir.path(), &[])).unwrap();
    let client = observer
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "run_workflow"));
    let listed = ok(&client, "workflow_list", json!({})).await;
    assert_eq!(listed["workflows"].as_array().unwrap().len(), 7);
    let _subscription = client
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .unwrap();
    std::fs::write(dir.path().join("added.yaml"), "name: added\ndescription: d\ninitial_state: a\nstates:\n  a: { action: { tool: list_terminal_sessions } }\n").unwrap();
    next_notification(&mut rx, "tools/list_changed").await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "wf_added"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn two_hundred_concurrent_calls_with_large_answers() {
    let dir = tempfile::tempdir().unwrap();
    let big = "x".repeat(64 * 1024);
    std::fs::write(
        dir.path().join("big.yaml"),
        format!("name: big\ndescription: {big}\ninitial_state: a\nstates:\n  a: {{ action: {{ tool: list_terminal_sessions }} }}\n"),
    )
    .unwrap();
    let (client, _rx) = connect(dir.path(), &[]).await;
    let calls = (0..200).map(|_| {
        let client = &client;
        async move { ok(client, "workflow_get", json!({"name": "big"})).await }
    });
    let results = futures::future::join_all(calls).await;
    assert_eq!(results.len(), 200);
    assert!(
        results
            .iter()
            .all(|r| r["content"].as_str().unwrap().len() > 64 * 1024)
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn subscribed_resources_are_updated_when_their_file_changes() {
    let dir = folder();
    let (client, mut rx) = connect(dir.path(), &[]).await;
    #[allow(deprecated)]
    client
        .subscribe(SubscribeRequestParams::new(
            "flowdeck://workflows/git_health",
        ))
        .await
        .unwrap();
    let path = dir.path().join("git_health.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("version: \"1.0.0\"", "version: \"1.0.1\""),
    )
    .unwrap();
    let update = next_notification(&mut rx, "updated").await;
    assert_eq!(update, "updated flowdeck://workflows/git_health");
    let read = client
        .read_resource(ReadResourceRequestParams::new(
            "flowdeck://workflows/git_health",
        ))
        .await
        .unwrap();
    let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!()
    };
    assert!(text.contains("1.0.1"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn runs_become_tasks_for_clients_that_declare_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.json"), HELLO).unwrap();
    std::fs::write(dir.path().join("sleeper.yaml"), common::SLEEPER).unwrap();
    let config = ClientConfig::new(
        ClientCapabilities::builder().enable_tasks().build(),
        Implementation::new("tasks", "0"),
    )
    .with_protocol_version(ProtocolVersion::V_2025_11_25);
    let client = config
        .serve(TokioChildProcess::new(command(dir.path(), &[])).unwrap())
        .await
        .unwrap();
    let Value::Object(args) = json!({"workflow_name": "hello", "inputs": {"WHO": "task"}}) else {
        unreachable!()
    };
    let response = client
        .call_tool_once(CallToolRequestParams::new("run_workflow").with_arguments(args))
        .await
        .unwrap();
    let CallToolResponse::Task(created) = response else {
        panic!("expected a task, got {response:?}")
    };
    let task_id = created.task.task_id.clone();
    let done = common::within(LONG, "the task to end", async {
        loop {
            let info = client
                .peer()
                .get_task(GetTaskParams::new(task_id.clone()))
                .await
                .unwrap();
            if info.task.status().is_terminal() {
                break info.task;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    let TaskPayload::Completed { result } = done.payload else {
        panic!("{:?}", done.payload)
    };
    let result: CallToolResult = serde_json::from_value(Value::Object(result)).unwrap();
    let structured = result.structured_content.unwrap();
    assert_eq!(structured["final_state"], "completed");
    assert_eq!(structured["return_values"]["GREETING"], "hello task");

    // Cancelling the task cancels the run.
    let response = client
        .call_tool_once(CallToolRequestParams::new("wf_sleeper"))
        .await
        .unwrap();
    let CallToolResponse::Task(created) = response else {
        panic!("expected a task")
    };
    let run = common::within(LONG, "the task's run to start its step", async {
        loop {
            let (_, listed) = call(&client, "run_list", json!({"workflow_name": "sleeper"})).await;
            if let Some(run) = listed["active"].as_array().unwrap().first()
                && run["states_executed"] == json!(1)
            {
                break run["run_id"].as_str().unwrap().to_string();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    client
        .peer()
        .cancel_task(CancelTaskParams::new(created.task.task_id.clone()))
        .await
        .unwrap();
    common::within(LONG, "the cancelled run to finish", async {
        loop {
            let (_, status) = call(&client, "run_status", json!({"run_id": run})).await;
            if status["status"] == "finished" {
                assert_eq!(status["result"]["final_state"], "canceled");
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn guided_steps_are_answered_through_workflow_next_and_runs_cancel() {
    let dir = folder();
    let (client, _rx) = connect(dir.path(), &[]).await;
    let inputs = ok(
        &client,
        "workflow_preview_inputs",
        json!({"name": "guided_review"}),
    )
    .await;
    assert_eq!(inputs["inputs"][0]["name"], "REPO_DIR");
    // workrail's view: the next step of the plan for what is done so far.
    let next = ok(
        &client,
        "workflow_next",
        json!({"workflowId": "guided_review", "completedSteps": ["show_changes"]}),
    )
    .await;
    assert_eq!(next["isComplete"], false);
    let step = next["step"]["id"].as_str().unwrap().to_string();
    assert_eq!(step, "ask_summary");
    assert!(
        !next["guidance"]["validationCriteria"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    // workrail's step output validation, with the step's own rules.
    let checked = ok(
        &client,
        "workflow_validate",
        json!({"workflowId": "guided_review", "stepId": step, "output": "TODO"}),
    )
    .await;
    assert_eq!(checked["valid"], false);
    assert!(!checked["issues"].as_array().unwrap().is_empty());
    let (error, payload) = call(
        &client,
        "workflow_validate",
        json!({"workflowId": "guided_review", "stepId": "nope", "output": "x"}),
    )
    .await;
    assert!(error);
    assert_eq!(payload["error_code"], "STEP_NOT_FOUND");

    // A live run pauses at its first question; workflow_next answers it.
    let started = ok(
        &client,
        "run_workflow",
        json!({"workflow_name": "guided_review", "wait": false}),
    )
    .await;
    let run_id = started["run_id"].as_str().unwrap().to_string();
    let wait_for_question = || async {
        common::within(LONG, "the run's question", async {
            loop {
                let status = ok(&client, "run_status", json!({"run_id": run_id})).await;
                if status["status"] == "waiting_for_input" {
                    return status["prompt"].as_str().unwrap().to_string();
                }
                assert_ne!(status["status"], "finished", "{status}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
    };
    assert!(
        wait_for_question()
            .await
            .starts_with("Summarize the change")
    );
    let answered = ok(
        &client,
        "workflow_next",
        json!({"workflowId": "guided_review", "run_id": run_id, "answer": "Adds retries to the uploader because uploads failed on bad networks."}),
    )
    .await;
    assert_eq!(answered["answered"], true);
    assert!(wait_for_question().await.starts_with("Rate the risk"));
    let cancelled = ok(&client, "workflow_cancel", json!({"run_id": run_id})).await;
    assert_eq!(cancelled["result"]["final_state"], "canceled");
    assert_eq!(cancelled["result"]["states_executed"], 3);
    let (error, payload) = call(&client, "workflow_cancel", json!({"run_id": run_id})).await;
    assert!(error);
    assert_eq!(payload["error_code"], "RUN_FINISHED");
    client.cancel().await.unwrap();
}

/// The output schemas a server lists, compiled, and the tools whose results were checked.
struct OutputSchemas {
    validators: std::collections::HashMap<String, jsonschema::Validator>,
    checked: std::collections::BTreeSet<String>,
}

impl OutputSchemas {
    async fn listed(client: &Client) -> Self {
        let mut validators = std::collections::HashMap::new();
        for tool in client.list_all_tools().await.unwrap() {
            let schema = tool
                .output_schema
                .unwrap_or_else(|| panic!("{} declares no outputSchema", tool.name));
            assert_eq!(schema.get("type"), Some(&json!("object")), "{}", tool.name);
            // Formats are checked too, as the TypeScript SDK does (Ajv with ajv-formats).
            let validator = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .should_validate_formats(true)
                .build(&Value::Object(schema.as_ref().clone()))
                .unwrap_or_else(|e| {
                    panic!("{}: the outputSchema does not compile: {e}", tool.name)
                });
            validators.insert(tool.name.to_string(), validator);
        }
        OutputSchemas {
            validators,
            checked: Default::default(),
        }
    }

    /// Calls a tool that must succeed and checks its structuredContent against the tool's
    /// outputSchema.
    async fn call(&mut self, client: &Client, tool: &str, args: Value) -> Value {
        let value = ok(client, tool, args).await;
        let validator = &self.validators[tool];
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| format!("{e} (at `{}`)", e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{tool}: structuredContent does not match the outputSchema:\n{}\n{value:#}",
            errors.join("\n")
        );
        self.checked.insert(tool.to_string());
        value
    }

    /// Follows a run with `run_status` until it waits for input: the statuses seen, in order.
    async fn follow_until_waiting(&mut self, client: &Client, run_id: &str) -> Vec<Value> {
        let mut seen = Vec::new();
        common::within(LONG, "the run to wait for input", async {
            loop {
                let status = self
                    .call(client, "run_status", json!({"run_id": run_id}))
                    .await;
                if seen.last() != Some(&status["status"]) {
                    seen.push(status["status"].clone());
                }
                if status["status"] == "waiting_for_input" {
                    return seen;
                }
                assert_ne!(status["status"], "finished", "{status:#}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
    }
}

/// Asks one question after a second's work, so that a run is seen running, then waiting.
const ASKER: &str = r#"
name: asker
description: Asks for a sentence after a pause.
initial_state: pause
arguments:
  WHO: { description: who answers, required: false, default: someone }
return_values:
  ANSWER: { description: the answer, required: false }
states:
  pause:
    description: Work a little first
    action: { tool: run_command, params: { command: "sleep 1" } }
    transitions: [{ condition: success, next_state: ask }]
  ask:
    action:
      tool: prompt
      params:
        prompt: Say something of at least five characters.
        store_as: ANSWER
        validation: [{ type: length, min: 5, message: At least five characters. }]
    transitions:
      - { condition: validation_passed, next_state: done }
      - { condition: validation_failed, next_state: ask }
  done:
    action: { tool: set_env, params: { vars: { DONE: "yes" } } }
"#;

#[tokio::test]
async fn every_result_matches_its_tools_output_schema() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.json"), HELLO).unwrap();
    std::fs::write(dir.path().join("asker.yaml"), ASKER).unwrap();
    // Broken and never valid: listed with no description or states.
    std::fs::write(
        dir.path().join("broken.yaml"),
        "name: broken\ninitial_state: nowhere\n",
    )
    .unwrap();
    let (client, _rx) = connect(dir.path(), &[]).await;
    let mut out = OutputSchemas::listed(&client).await;
    assert!(out.validators.contains_key("wf_hello"));
    // The schemas do constrain: a result of the wrong shape is refused.
    assert!(!out.validators["resize_terminal"].is_valid(&json!({"cols": "wide"})));
    assert!(!out.validators["run_workflow"].is_valid(&json!({"run_id": 5})));

    // Terminal tools, including a session whose program has exited.
    let opened = out
        .call(
            &client,
            "open_terminal",
            json!({"command": ["bash", "--norc"], "name": "schema"}),
        )
        .await;
    let id = opened["session_id"].as_str().unwrap().to_string();
    out.call(
        &client,
        "send_input",
        json!({"session_id": id, "input_text": "echo OUT_$((2*3))\n"}),
    )
    .await;
    out.call(
        &client,
        "await_output",
        json!({"session_id": id, "pattern": "OUT_(?<n>\\d)", "timeout": 20}),
    )
    .await;
    let waited = out
        .call(
            &client,
            "await_output",
            json!({"session_id": id, "pattern": "never", "timeout": 0.2}),
        )
        .await;
    assert_eq!(waited["outcome"], "timeout");
    let drafted = out
        .call(
            &client,
            "workflow_draft_from_session",
            json!({"session_id": id, "name": "schema_draft"}),
        )
        .await;
    assert_eq!(drafted["commands"], 1, "{drafted}");
    for mode in ["screen", "history", "tail", "since_input"] {
        out.call(
            &client,
            "get_screen_content",
            json!({"session_id": id, "content_mode": mode, "lines": 5}),
        )
        .await;
    }
    // A search with context, and its next page through the cursor.
    let searched = out
        .call(
            &client,
            "search_output",
            json!({"session_id": id, "pattern": "OUT_|\\$", "context": 1, "limit": 1}),
        )
        .await;
    assert_eq!(searched["hits"][0]["source"], "history");
    let cursor = searched["next_cursor"].as_str().unwrap().to_string();
    let next = out
        .call(
            &client,
            "search_output",
            json!({"session_id": id, "pattern": "OUT_|\\$", "context": 1, "limit": 1, "cursor": cursor}),
        )
        .await;
    assert!(next["hits"][0]["line"].as_u64() < searched["hits"][0]["line"].as_u64());
    out.call(
        &client,
        "run_command",
        json!({"session_id": id, "command": "false"}),
    )
    .await;
    out.call(
        &client,
        "resize_terminal",
        json!({"session_id": id, "cols": 5000, "rows": 40}),
    )
    .await;
    let ended = ok(
        &client,
        "open_terminal",
        json!({"command": ["sh", "-c", "exit 3"]}),
    )
    .await["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let exited = out
        .call(
            &client,
            "await_output",
            json!({"session_id": ended, "pattern": "never", "timeout": 20}),
        )
        .await;
    assert_eq!(exited["outcome"], "exited");
    out.call(&client, "get_screen_content", json!({"session_id": ended}))
        .await;
    out.call(&client, "list_terminal_sessions", json!({})).await;
    out.call(&client, "exit_terminal", json!({"session_id": ended}))
        .await;

    // Authoring, valid and broken workflows alike.
    out.call(&client, "get_workflow_schema", json!({})).await;
    let mut broken_definition: Value = serde_json::from_str(HELLO).unwrap();
    broken_definition["name"] = json!("hello_two");
    broken_definition["initial_state"] = json!("nowhere");
    let refused = out
        .call(
            &client,
            "create_workflow",
            json!({"workflow_definition": broken_definition}),
        )
        .await;
    assert_eq!(refused["success"], false);
    let mut definition: Value = serde_json::from_str(HELLO).unwrap();
    definition["name"] = json!("hello_two");
    out.call(
        &client,
        "create_workflow",
        json!({"workflow_definition": definition}),
    )
    .await;
    let listed = out.call(&client, "workflow_list", json!({})).await;
    assert!(
        listed["workflows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["status"] == "invalid")
    );
    out.call(&client, "workflow_get", json!({"name": "broken"}))
        .await;
    let doc = out
        .call(&client, "workflow_get", json!({"name": "hello"}))
        .await;
    out.call(
        &client,
        "workflow_validate",
        json!({"content": doc["content"]}),
    )
    .await;
    out.call(
        &client,
        "workflow_validate",
        json!({"content": "name: x\ninitial_state: a\nstates: {a: {action: {tool: nope}}}\n"}),
    )
    .await;
    let step_check = out
        .call(
            &client,
            "workflow_validate",
            json!({"workflowId": "asker", "stepId": "ask", "output": "no"}),
        )
        .await;
    assert_eq!(step_check["valid"], false);
    let scratch = "name: scratch\ndescription: d\ninitial_state: a\nstates:\n  a: { action: { tool: list_terminal_sessions } }\n";
    let saved = out
        .call(&client, "workflow_save", json!({"content": scratch}))
        .await;
    out.call(
        &client,
        "workflow_save",
        json!({"content": scratch.replace("description: d", "description: e"), "expected_version": saved["version"]}),
    )
    .await;
    out.call(
        &client,
        "workflow_rename",
        json!({"name": "scratch", "new_name": "scratched"}),
    )
    .await;
    out.call(&client, "workflow_delete", json!({"name": "scratched"}))
        .await;
    out.call(&client, "workflow_preview_inputs", json!({"name": "hello"}))
        .await;
    out.call(
        &client,
        "workflow_resolve_inputs",
        json!({"name": "hello", "session_id": id}),
    )
    .await;
    let resolved = out
        .call(
            &client,
            "workflow_resolve_inputs",
            json!({"name": "asker", "inputs": {}}),
        )
        .await;
    assert_eq!(resolved["ready"], true);
    out.call(
        &client,
        "workflow_preview_rendered",
        json!({"name": "hello", "inputs": {"WHO": "x"}}),
    )
    .await;
    out.call(&client, "workflow_step_plan", json!({"name": "asker"}))
        .await;

    // Runs: both shapes of run_workflow, and the dynamic tool's.
    let finished = out
        .call(
            &client,
            "run_workflow",
            json!({"workflow_name": "hello", "inputs": {"WHO": "schema"}}),
        )
        .await;
    assert_eq!(finished["final_state"], "completed", "{finished:#}");
    let not_found = out
        .call(&client, "run_workflow", json!({"workflow_name": "absent"}))
        .await;
    assert_eq!(not_found["final_state"], "workflow_not_found");
    out.call(&client, "wf_hello", json!({"WHO": "dynamic"}))
        .await;
    out.call(&client, "wf_hello", json!({"WHO": "later", "wait": false}))
        .await;

    // A run seen running, waiting for input, answered through workflow_next, and finished.
    let started = out
        .call(
            &client,
            "run_workflow",
            json!({"workflow_name": "asker", "wait": false}),
        )
        .await;
    let run_id = started["run_id"].as_str().unwrap().to_string();
    let seen = out.follow_until_waiting(&client, &run_id).await;
    assert_eq!(seen, [json!("running"), json!("waiting_for_input")]);
    let history = out
        .call(&client, "run_list", json!({"workflow_name": "asker"}))
        .await;
    assert_eq!(history["active"].as_array().unwrap().len(), 1);
    out.call(
        &client,
        "workflow_next",
        json!({"workflowId": "asker", "completedSteps": ["pause"]}),
    )
    .await;
    let answered = out
        .call(
            &client,
            "workflow_next",
            json!({"workflowId": "asker", "run_id": run_id, "answer": "a full sentence"}),
        )
        .await;
    assert_eq!(answered["answered"], true);
    let complete = out
        .call(
            &client,
            "workflow_next",
            json!({"workflowId": "asker", "completedSteps": ["pause", "ask", "done"]}),
        )
        .await;
    assert_eq!(complete["isComplete"], true);
    common::within(LONG, "the answered run to finish", async {
        loop {
            let status = out
                .call(&client, "run_status", json!({"run_id": run_id}))
                .await;
            if status["status"] == "finished" {
                assert_eq!(status["result"]["final_state"], "completed", "{status:#}");
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    out.call(
        &client,
        "run_feedback",
        json!({"run_id": run_id, "score": 0.5, "text": "fine"}),
    )
    .await;
    // Every kind of journal event, a page at a time.
    let mut kinds = std::collections::BTreeSet::new();
    common::within(LONG, "the journal's last page", async {
        let mut cursor = 0;
        loop {
            let page = out
                .call(
                    &client,
                    "run_events",
                    json!({"run_id": run_id, "after": cursor, "limit": 3, "wait_seconds": 0}),
                )
                .await;
            let events = page["events"].as_array().unwrap();
            kinds.extend(
                events
                    .iter()
                    .map(|e| e["type"].as_str().unwrap().to_string()),
            );
            if events.is_empty() {
                break;
            }
            cursor = page["next_cursor"].as_u64().unwrap();
        }
    })
    .await;
    for kind in [
        "run_started",
        "contract_checked",
        "step_started",
        "step_finished",
        "transition",
        "waiting_for_input",
        "answered",
        "run_finished",
        "feedback",
    ] {
        assert!(kinds.contains(kind), "no {kind} event in {kinds:?}");
    }

    // A run cancelled while it waits.
    let started = ok(
        &client,
        "run_workflow",
        json!({"workflow_name": "asker", "wait": false}),
    )
    .await;
    let cancelled_run = started["run_id"].as_str().unwrap().to_string();
    out.follow_until_waiting(&client, &cancelled_run).await;
    let cancelled = out
        .call(&client, "workflow_cancel", json!({"run_id": cancelled_run}))
        .await;
    assert_eq!(cancelled["result"]["final_state"], "canceled");
    out.call(&client, "run_list", json!({})).await;

    // A run of an earlier server, read from the journal by another one.
    let (other, _other_rx) = connect(dir.path(), &[]).await;
    let mut other_out = OutputSchemas::listed(&other).await;
    let old = other_out
        .call(&other, "run_status", json!({"run_id": run_id}))
        .await;
    // Its result is the journal's last line, the same facts the first server answered.
    assert_eq!(old["result"]["final_state"], "completed", "{old}");
    assert_eq!(old["result"]["run_id"], run_id.as_str(), "{old}");
    other.cancel().await.unwrap();

    out.call(&client, "exit_terminal", json!({"session_id": id}))
        .await;
    out.call(&client, "workflow_purge_history", json!({})).await;
    let unchecked: Vec<&str> = STATIC_TOOLS
        .into_iter()
        .filter(|t| !out.checked.contains(*t))
        .collect();
    assert!(unchecked.is_empty(), "never checked: {unchecked:?}");
    client.cancel().await.unwrap();
}

/// An agent drafts a workflow from what was typed in a shell session through `flowdeck mcp`:
/// a plain command and one that failed (its failure branch kept), and a `run_command` of its
/// own; the draft is valid as returned, and nothing is saved. A session that runs no shell,
/// and a name that is no workflow's, are refused with the reason.
#[tokio::test]
async fn a_draft_is_made_from_what_was_typed_in_a_shell_session() {
    let dir = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let (client, _rx) = connect(dir.path(), &[]).await;
    let opened = ok(
        &client,
        "open_terminal",
        json!({"command": ["bash", "--norc", "--noprofile"], "env": {"PS1": "$ "}}),
    )
    .await;
    let id = opened["session_id"].as_str().unwrap().to_string();
    let made = format!("{}/made", work.path().display());
    for line in [format!("mkdir -p {made}"), "ls /no/such/place".into()] {
        ok(
            &client,
            "send_input",
            json!({"session_id": id, "input_text": format!("{line}\n")}),
        )
        .await;
    }
    ok(
        &client,
        "await_output",
        json!({"session_id": id, "pattern": "No such file", "timeout": 20}),
    )
    .await;
    ok(
        &client,
        "run_command",
        json!({"session_id": id, "command": "echo by-the-agent"}),
    )
    .await;
    let drafted = ok(
        &client,
        "workflow_draft_from_session",
        json!({"session_id": id, "name": "made_by_hand", "description": "Makes a folder."}),
    )
    .await;
    let yaml = drafted["content"].as_str().unwrap();
    assert_eq!(drafted["commands"], 3, "{yaml}");
    assert!(
        yaml.contains(&format!("command: mkdir -p {made}")),
        "{yaml}"
    );
    assert!(yaml.contains("command: ls /no/such/place"), "{yaml}");
    assert!(yaml.contains("condition: failure"), "{yaml}");
    assert!(yaml.contains("command: echo by-the-agent"), "{yaml}");
    assert!(yaml.contains("description: Makes a folder."), "{yaml}");
    let checked = ok(&client, "workflow_validate", json!({"content": yaml})).await;
    assert_eq!(checked["valid"], true, "{checked}");
    assert!(
        !dir.path().join("made_by_hand.yaml").exists(),
        "nothing is saved"
    );

    let cat = ok(&client, "open_terminal", json!({"command": ["cat"]})).await;
    let (failed, error) = call(
        &client,
        "workflow_draft_from_session",
        json!({"session_id": cat["session_id"], "name": "from_cat"}),
    )
    .await;
    assert!(failed, "{error}");
    assert!(error.to_string().contains("not a shell"), "{error}");
    let (failed, error) = call(
        &client,
        "workflow_draft_from_session",
        json!({"session_id": id, "name": "Not A Name"}),
    )
    .await;
    assert!(failed, "{error}");
    assert!(
        error.to_string().contains("is not a workflow name"),
        "{error}"
    );
    client.cancel().await.unwrap();
}
