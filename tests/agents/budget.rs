//! What an agent pays for flowdeck: the bytes of the tool list a model reads on every turn
//! (budgets, not timings), and waits that answer within the server's ceiling instead of
//! outliving the agent host's time limit.

use crate::common::bundled_workflows_copy;
use crate::common::line_client::LineServer;
use serde_json::{Value, json};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a model reads of a tool: its name, description and input schema.
fn model_visible(tool: &Value) -> usize {
    tool["name"].as_str().map_or(0, str::len)
        + tool["description"].as_str().map_or(0, str::len)
        + tool["inputSchema"].to_string().len()
}

fn tools_list(server: &mut LineServer) -> Value {
    server.initialize();
    server.request(2, "tools/list", json!({}))["result"].clone()
}

#[test]
fn the_default_surface_fits_its_budget_and_all_of_it_one_word_away() {
    let folder = bundled_workflows_copy();
    // `flowdeck mcp` as an agent host starts it: no toolsets named anywhere.
    let mut command = Command::new(env!("CARGO_BIN_EXE_flowdeck"));
    command
        .arg("--workflows")
        .arg(folder.path())
        .arg("mcp")
        .env_remove("FLOWDECK_TOOLSETS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut default = LineServer::spawn(command);
    let listed = tools_list(&mut default);
    let tools = listed["tools"].as_array().expect("tools");
    let mut names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    names.sort_unstable();
    // A tool joins the default set only as a decision: every model pays for it on every turn.
    assert_eq!(
        names,
        [
            "attention",
            "await_output",
            "exit_terminal",
            "get_screen_content",
            "list_terminal_sessions",
            "open_terminal",
            "resize_terminal",
            "run_command",
            "run_events",
            "run_list",
            "run_status",
            "run_workflow",
            "search_output",
            "send_input",
            "workflow_cancel",
            "workflow_list",
            "workflow_next",
            "workflow_preview_inputs",
        ]
    );
    let visible: usize = tools.iter().map(model_visible).sum();
    assert!(
        visible <= 12 * 1024,
        "the default tools' names, descriptions and input schemas take {visible} bytes, over 12 KB"
    );

    let mut all = LineServer::start_with(folder.path(), &["--toolsets", "all"]);
    let listed = tools_list(&mut all);
    let whole = listed.to_string().len();
    assert!(
        whole <= 60 * 1024,
        "tools/list of the bundled folder is {whole} bytes, over 60 KB"
    );
    let tools = listed["tools"].as_array().expect("tools");
    assert!(
        tools.len() > 30,
        "--toolsets all lists every tool: {}",
        tools.len()
    );
    let run_schema = tools
        .iter()
        .find(|t| t["name"] == "run_workflow")
        .map(|t| t["outputSchema"].clone())
        .expect("run_workflow");
    for tool in tools {
        let name = tool["name"].as_str().unwrap_or_default();
        if name.starts_with("wf_") {
            assert_eq!(
                tool["outputSchema"], run_schema,
                "{name} shares run_workflow's result schema"
            );
        }
        // A client checks every result against it, the Python SDK 1.x each subschema on
        // each call: the fields of the result, one level deep.
        let output = tool["outputSchema"].to_string();
        assert!(
            output.len() <= 1024,
            "{name}'s output schema is {} bytes",
            output.len()
        );
        assert!(
            !output.contains("\"$ref\"") && !output.contains("\"description\""),
            "{name}'s output schema goes deeper than its fields or repeats the docs: {output}"
        );
    }
    assert!(
        run_schema.to_string().len() <= 1024,
        "a workflow's tool grows the list by its result schema: {run_schema}"
    );
}

/// A manifest whose one step takes longer than the test's ceiling, then returns a value.
pub(crate) const SLOW: &str = r#"name: slow_step
description: A step longer than the wait ceiling.
return_values:
  RESULT:
    description: the answer
initial_state: work
states:
  work:
    action:
      tool: send_input
      params:
        input_text: "sleep 4; echo done-$((6 * 7))\n"
    transitions:
      - { condition: success, next_state: read }
  read:
    action:
      tool: await_output
      params:
        pattern: 'done-(\d+)'
        timeout: 60
        captures: { RESULT: 1 }
"#;

#[test]
fn a_run_longer_than_the_ceiling_answers_with_its_handle_and_goes_on_to_complete() {
    let folder = bundled_workflows_copy();
    std::fs::write(folder.path().join("slow_step.yaml"), SLOW).expect("a manifest");
    let mut server = LineServer::start_with(folder.path(), &["--max-wait", "1s"]);
    server.initialize();
    let asked = Instant::now();
    let answer = server.request_within(
        Duration::from_secs(20),
        "a run past the ceiling answered",
        3,
        "tools/call",
        json!({"name": "run_workflow", "arguments": {"workflow_name": "slow_step"},
               "_meta": {"progressToken": "slow"}}),
    );
    let took = asked.elapsed();
    let handle = &answer["result"]["structuredContent"];
    assert_ne!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(handle["effective_timeout"], 1.0, "{handle}");
    assert_eq!(handle["next_cursor"], 0, "{handle}");
    let run_id = handle["run_id"].as_str().expect("a run id").to_string();
    assert_eq!(
        handle["status"]["status"], "running",
        "answered before the run ended: {handle}"
    );
    assert!(
        handle["message"]
            .as_str()
            .unwrap_or_default()
            .contains("run_events"),
        "{handle}"
    );
    assert!(
        took < Duration::from_secs(4),
        "answered at the ceiling, not the run's end: {took:?}"
    );

    // The run goes on; followed by its id, it completes with its value.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut after = 0;
    let mut id = 10;
    loop {
        id += 1;
        let page = server.call(
            id,
            "run_events",
            json!({"run_id": run_id, "after": after, "wait_seconds": 120}),
        );
        assert_eq!(
            page["effective_timeout"], 1.0,
            "a longer wait is cut and says so: {page}"
        );
        after = page["next_cursor"].as_u64().expect("a cursor");
        if page["finished"] == true {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the run did not finish within 30 s: {page}"
        );
    }
    let status = server.call(id + 1, "run_status", json!({"run_id": run_id}));
    let result = &status["result"];
    assert_eq!(result["final_state"], "completed", "{status}");
    assert_eq!(result["return_values"]["RESULT"], "42", "{status}");
}

#[test]
fn a_wait_longer_than_the_ceiling_is_cut_and_says_so() {
    let folder = bundled_workflows_copy();
    let mut server = LineServer::start_with(folder.path(), &["--max-wait", "1s"]);
    server.initialize();
    let session = server.open_bash(2);
    let asked = Instant::now();
    let answer = server.request_within(
        Duration::from_secs(20),
        "a clamped await_output answered",
        3,
        "tools/call",
        json!({"name": "await_output", "arguments":
            {"session_id": session, "pattern": "never-printed", "timeout": 120},
            "_meta": {"progressToken": "wait"}}),
    );
    let waited = &answer["result"]["structuredContent"];
    assert_eq!(waited["outcome"], "timeout", "{answer}");
    assert_eq!(waited["effective_timeout"], 1.0, "{waited}");
    assert_eq!(waited["timeout_seconds"], 1.0, "{waited}");
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "{:?}",
        asked.elapsed()
    );

    // A wait within the ceiling is as asked, and says nothing of one.
    let quick = server.call(
        4,
        "run_command",
        json!({"session_id": session, "command": "echo fine", "timeout": 0.9}),
    );
    assert_eq!(quick["exit_code"], 0, "{quick}");
    assert!(quick.get("effective_timeout").is_none(), "{quick}");
}

#[test]
fn a_waiting_call_keeps_telling_the_client_it_waits() {
    let folder = bundled_workflows_copy();
    let mut server = LineServer::start_with(folder.path(), &["--max-wait", "2s"]);
    server.initialize();
    let session = server.open_bash(2);
    server.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "await_output",
            "arguments": {"session_id": session, "pattern": "never-printed", "timeout": 60},
            "_meta": {"progressToken": "beat"}}})
        .to_string(),
    );
    let (answer, before) = server.response_after(3);
    assert_eq!(answer["result"]["structuredContent"]["outcome"], "timeout");
    let beats: Vec<f64> = before
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .filter(|m| m["params"]["progressToken"] == "beat")
        .filter_map(|m| m["params"]["progress"].as_f64())
        .collect();
    assert!(
        beats.len() >= 2,
        "a progress notification every half second of a 2 s wait: {before:#?}"
    );
    assert!(
        beats.windows(2).all(|w| w[0] < w[1]),
        "each notification's progress is above the one before: {beats:?}"
    );
}

#[test]
fn a_toolset_or_a_ceiling_that_is_not_one_is_refused_saying_what_would_be() {
    let folder = bundled_workflows_copy();
    let run = |args: &[&str], env: &[(&str, &str)]| {
        Command::new(env!("CARGO_BIN_EXE_flowdeck"))
            .arg("--workflows")
            .arg(folder.path())
            .arg("mcp")
            .args(args)
            .env_remove("FLOWDECK_TOOLSETS")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .output()
            .expect("flowdeck runs")
    };
    let typo = run(&["--toolsets", "default,termnal"], &[]);
    assert_eq!(typo.status.code(), Some(2), "{typo:?}");
    let said = String::from_utf8_lossy(&typo.stderr);
    assert!(
        said.contains("unknown toolset termnal (did you mean terminal?")
            && said.contains("default (terminal,runs,guided), all"),
        "{said}"
    );
    let off = run(&[], &[("FLOWDECK_MAX_WAIT", "off")]);
    assert_eq!(off.status.code(), Some(2), "{off:?}");
    let said = String::from_utf8_lossy(&off.stderr);
    assert!(
        said.contains("a wait ceiling is a duration such as 50s"),
        "{said}"
    );
    let zero = run(&["--max-wait", "0s"], &[]);
    assert_eq!(zero.status.code(), Some(2), "{zero:?}");
    assert!(
        String::from_utf8_lossy(&zero.stderr).contains("above zero"),
        "{zero:?}"
    );
}
