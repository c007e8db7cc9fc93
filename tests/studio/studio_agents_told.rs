//! Agents in the open (issue 37, F16, F17): a studio attached to the folder's server says on
//! its status line when an agent leaves and what it leaves, labels an agent's run ending with
//! the agent's name, shows the last result of runs that ended before it attached, and a
//! terminal it shows is not closed as abandoned. Real binaries: `flowdeck serve`, the studio
//! in a PTY, agents through `flowdeck mcp`.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::line_client::LineServer;
use common::studio::{expect, quit};
use common::{Killed, LONG};
use flowdeck::term::{Content, TermConfig, Terminals};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;

/// A workflow that returns a value.
const ANSWER: &str = "name: answer\ndescription: Returns 42.\ninitial_state: a\nreturn_values:\n  ANSWER: { description: The answer }\nstates:\n  a: { action: { tool: set_env, params: { vars: { ANSWER: '42' } } } }\n";

/// `flowdeck serve ARGS` on `folder`, its socket under `runtime`, once it answers.
fn serve(folder: &Path, runtime: &Path, args: &[&str]) -> Killed {
    let child = common::serve_command(folder, runtime, args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    common::answering(runtime);
    Killed(child)
}

/// The studio on `folder`, attached to the server under `runtime`.
fn studio(
    terminals: &Terminals,
    folder: &Path,
    runtime: &Path,
) -> std::sync::Arc<flowdeck::term::Session> {
    common::studio::with_runtime(terminals, folder, runtime, (120, 32), &[])
}

/// An agent's `flowdeck mcp`, initialized, off the runtime the studio's PTY needs.
async fn agent(folder: &Path, runtime: &Path) -> LineServer {
    let (folder, runtime) = (folder.to_path_buf(), runtime.to_path_buf());
    tokio::task::spawn_blocking(move || common::mcp_agent(&folder, &runtime, &[]))
        .await
        .unwrap()
}

/// `f` given the agent, off the runtime; the agent back and what `f` returned.
async fn with_agent<T: Send + 'static>(
    agent: LineServer,
    f: impl FnOnce(&mut LineServer) -> T + Send + 'static,
) -> (LineServer, T) {
    tokio::task::spawn_blocking(move || {
        let mut agent = agent;
        let out = f(&mut agent);
        (agent, out)
    })
    .await
    .unwrap()
}

/// The agent's `flowdeck mcp` ended, its exit waited for.
async fn gone(agent: LineServer) {
    tokio::task::spawn_blocking(move || drop(agent))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_run_ending_and_its_leaving_are_said_with_its_name() {
    let (folder, runtime) = common::tiny_folder();
    let _server = serve(folder.path(), runtime.path(), &[]);
    let terminals = Terminals::new(TermConfig::default());
    let studio = studio(&terminals, folder.path(), runtime.path());
    expect(&studio, "tiny").await;

    let agent = agent(folder.path(), runtime.path()).await;
    let (agent, _) = with_agent(agent, |a| {
        a.open_bash(2);
        a.call(3, "run_workflow", json!({"workflow_name": "tiny"}))
    })
    .await;
    expect(&studio, r"agent wire's run of tiny ✓ completed in").await;
    gone(agent).await;
    expect(&studio, "agent wire left; its terminal stays").await;
    quit(&studio).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_studio_attaching_shows_the_last_result_of_runs_that_ended_before() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("answer.yaml"), ANSWER).unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let _server = serve(folder.path(), runtime.path(), &[]);
    let agent = agent(folder.path(), runtime.path()).await;
    let (agent, ran) = with_agent(agent, |a| {
        a.call(2, "run_workflow", json!({"workflow_name": "answer"}))
    })
    .await;
    assert_eq!(ran["return_values"]["ANSWER"], "42", "{ran}");

    let terminals = Terminals::new(TermConfig::default());
    let studio = studio(&terminals, folder.path(), runtime.path());
    expect(&studio, r"result: completed in .* · ANSWER=42").await;
    quit(&studio).await;
    gone(agent).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_a_studio_shows_is_not_closed_when_its_agent_has_gone() {
    let (folder, runtime) = common::tiny_folder();
    let _server = serve(
        folder.path(),
        runtime.path(),
        &["--close-abandoned-after", "2s"],
    );
    let agent = agent(folder.path(), runtime.path()).await;
    let (agent, ids) = with_agent(agent, |a| {
        let first = a.open_bash(2);
        a.type_into(3, &first, "echo mark-$((1+1))-one\n");
        let second = a.open_bash(4);
        a.type_into(5, &second, "echo mark-$((1+1))-two\n");
        (first, second)
    })
    .await;
    let terminals = Terminals::new(TermConfig::default());
    let studio = studio(&terminals, folder.path(), runtime.path());
    expect(&studio, r"mark-2-(one|two)").await;
    let screen = studio.content(Content::Screen);
    let (shown, hidden) = match (screen.contains("mark-2-one"), screen.contains("mark-2-two")) {
        (true, false) => (ids.0.clone(), ids.1.clone()),
        (false, true) => (ids.1.clone(), ids.0.clone()),
        _ => panic!("the studio should show one of the two terminals:\n{screen}"),
    };
    gone(agent).await;

    // The hidden one is closed once its time is up; the one on the screen is still held.
    let (dir, run) = (folder.path().to_path_buf(), runtime.path().to_path_buf());
    let after = tokio::task::spawn_blocking(move || {
        common::wait_until(LONG, "the hidden terminal to be closed", || {
            let server = listed(&dir, &run);
            (!holds(&server, &hidden)).then_some(server)
        })
    })
    .await
    .unwrap();
    assert!(holds(&after, &shown), "{after:#}");
    quit(&studio).await;
}

/// The server of `dir` as `flowdeck ls --json` lists it (null while it is not).
fn listed(dir: &Path, runtime: &Path) -> Value {
    common::listed_server(dir, runtime).unwrap_or_default()
}

fn holds(server: &Value, session: &str) -> bool {
    server["terminals"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["session_id"] == json!(session)))
}
