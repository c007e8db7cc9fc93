//! The studio attached to the folder's server (issue 22): with `flowdeck serve` up first, the
//! studio opens on it (it used to refuse), shows what an agent does there, drives its own
//! shell over the socket (keys in order, wide characters, colours), and leaves it running when
//! it quits: a studio that attaches later finds the shell with its history. The server killed
//! ends the studio with a message and the terminal given back. Real binaries throughout: the
//! studio in a PTY, the agent through `flowdeck mcp`.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::LONG;
use common::line_client::LineServer;
use common::studio::{detach, expect, expect_gone, open, quit};
use flowdeck::term::{Content, TermConfig, Terminals, WaitOutcome};
use serde_json::json;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// `flowdeck serve` on `folder`, its socket under `runtime`, once it answers.
fn serve(folder: &Path, runtime: &Path) -> Child {
    let child = common::serve_command(folder, runtime, &[])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    common::answering(runtime);
    child
}

use common::Killed as Server;

/// The studio on `folder`, with the server's socket folder.
fn studio(
    terminals: &Terminals,
    folder: &Path,
    runtime: &Path,
) -> std::sync::Arc<flowdeck::term::Session> {
    studio_with(terminals, folder, runtime, (110, 32), &[])
}

/// [`studio`] at `size`, with `env` set for it.
fn studio_with(
    terminals: &Terminals,
    folder: &Path,
    runtime: &Path,
    size: (u16, u16),
    env: &[(&str, &str)],
) -> std::sync::Arc<flowdeck::term::Session> {
    common::studio::with_runtime(terminals, folder, runtime, size, env)
}

/// An agent's `flowdeck mcp`, initialized.
async fn agent(folder: &Path, runtime: &Path) -> LineServer {
    let mut command = Command::new(env!("CARGO_BIN_EXE_flowdeck"));
    command
        .arg("--workflows")
        .arg(folder)
        .arg("mcp")
        .env("XDG_RUNTIME_DIR", runtime)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    tokio::task::spawn_blocking(move || {
        let mut agent = LineServer::spawn(command);
        agent.initialize();
        agent
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_studio_attaches_to_a_served_folder_drives_it_and_leaves_it_running() {
    let (folder, runtime) = common::tiny_folder();
    let mut server = Server(serve(folder.path(), runtime.path()));
    let terminals = Terminals::new(TermConfig::default());
    let first = studio(&terminals, folder.path(), runtime.path());
    expect(&first, "tiny").await;

    // What an agent does on the server shows in the attached studio.
    let agent = agent(folder.path(), runtime.path()).await;
    let line = "printf 'agent-\\033[1;31m%s\\033[0m\\n' $((6*7))\n";
    let (mut agent, _) = common::agent_terminal(agent, Some(line)).await;
    expect(&first, r"\(agent: wire\)").await;
    expect(&first, "agent-42").await;

    // The person's own shell, typed into over the socket: every key in order.
    first.send_text("t", "test").unwrap();
    expect(&first, r"\[s2 · ").await;
    first.send_text("i", "test").unwrap();
    expect(&first, "FOCUS").await;
    first
        .send_text("echo typed-in-order-$((6*7)) 世界 ✓\r", "test")
        .unwrap();
    expect(&first, "typed-in-order-42 世界 ✓").await;
    first.send_text("\u{7}", "test").unwrap();

    // The agent sees the person's shell on the same engine.
    let mut agent = tokio::task::spawn_blocking(move || {
        let sessions = agent.call(4, "list_terminal_sessions", json!({}));
        assert_eq!(
            sessions["sessions"].as_array().map(Vec::len),
            Some(2),
            "{sessions}"
        );
        agent
    })
    .await
    .unwrap();

    // Detaching ends the studio, not the engine's work.
    detach(&first).await;
    let mut agent = tokio::task::spawn_blocking(move || {
        let sessions = agent.call(5, "list_terminal_sessions", json!({}));
        let alive = sessions["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["running"] == true)
            .count();
        assert_eq!(alive, 2, "{sessions}");
        agent
    })
    .await
    .unwrap();

    // A studio attached later finds both shells, the person's with its history.
    let second = studio(&terminals, folder.path(), runtime.path());
    expect(&second, r"s1 · .*s2 · ").await;
    second.send_text("]", "test").unwrap();
    expect(&second, "typed-in-order-42").await;

    // The server killed: the studio says so and ends, its terminal given back.
    server.0.kill().unwrap();
    server.0.wait().unwrap();
    let ended = second
        .await_output(common::studio::on_screen("never printed"))
        .await
        .unwrap();
    assert_eq!(
        ended.outcome,
        WaitOutcome::Exited,
        "{}",
        second.content(Content::Screen)
    );
    assert_ne!(second.exit().and_then(|e| e.code), Some(0));
    let text = second.content(Content::History);
    assert!(text.contains("server"), "{text}");
    drop(agent.stdin.take());
    let _ = tokio::task::spawn_blocking(move || agent.exit_status()).await;
}

/// Agent first: the agent host started `flowdeck mcp` long before the person opens the
/// studio. The studio attaches to the server the agent's relay started and shows the agent's
/// terminal with what it printed before the studio existed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_studio_opened_after_an_agent_sees_the_agents_terminal() {
    let (folder, runtime) = common::tiny_folder();
    let agent = agent(folder.path(), runtime.path()).await;
    let (mut agent, _) =
        common::agent_terminal(agent, Some("echo before-the-studio-$((6*7))\n")).await;
    let terminals = Terminals::new(TermConfig::default());
    let studio = studio(&terminals, folder.path(), runtime.path());
    expect(&studio, r"\(agent: wire\)").await;
    expect(&studio, "before-the-studio-42").await;
    quit(&studio).await;
    drop(agent.stdin.take());
    let _ = tokio::task::spawn_blocking(move || agent.exit_status()).await;
}

/// What the server may hold for a studio that stopped reading during a flood: its socket
/// buffer, one copy of each screen shown, the event buffer it shares with everyone. Far less
/// than what the flood printed meanwhile.
const STOPPED_STUDIO_RSS: u64 = 150 * 1024 * 1024;

/// A studio stopped (Ctrl-Z, a frozen ssh) while a pane it shows floods: the engine and the
/// agents go on, the server's memory stays bounded, and the studio resumed shows the screen
/// as it is then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_studio_holds_up_nothing_and_shows_the_latest_screen_when_it_resumes() {
    let (folder, runtime) = common::tiny_folder();
    let server = Server(serve(folder.path(), runtime.path()));
    let server_pid = server.0.id();
    let terminals = Terminals::new(TermConfig::default());
    let studio = studio(&terminals, folder.path(), runtime.path());
    expect(&studio, "tiny").await;

    // The agent floods a terminal, which comes to the studio's front.
    let agent = agent(folder.path(), runtime.path()).await;
    let (mut agent, flood) = common::agent_terminal(agent, Some("yes flooding-the-pane\n")).await;
    expect(&studio, "flooding-the-pane").await;

    // The studio stops reading.
    let stopped = nix::unistd::Pid::from_raw(studio.pid() as i32);
    nix::sys::signal::kill(stopped, nix::sys::signal::Signal::SIGSTOP).unwrap();

    // Meanwhile an agent's echo round trips go through, the flood goes on, and the server's
    // memory stays bounded.
    let (mut agent, flood) = tokio::task::spawn_blocking(move || {
        let opened = agent.call(
            4,
            "open_terminal",
            json!({"command": ["bash", "--norc", "--noprofile"], "env": {"PS1": "$ "}}),
        );
        let echo = opened["session_id"].as_str().unwrap().to_string();
        for n in 0..50u64 {
            agent.call(
                100 + 2 * n,
                "send_input",
                json!({"session_id": echo, "input_text": format!("echo round-{n}\n")}),
            );
            let waited = agent.call(
                101 + 2 * n,
                "await_output",
                json!({"session_id": echo, "pattern": format!("(?m)^round-{n}$"), "timeout": 30}),
            );
            assert_eq!(waited["outcome"], "matched", "{waited}");
        }
        let flooded = agent.call(5, "list_terminal_sessions", json!({}));
        let lines = flooded["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["session_id"] == flood.as_str())
            .map(|s| s["history_lines"].as_u64().unwrap_or(0))
            .unwrap_or(0);
        assert!(lines > 1000, "the flood went on: {flooded}");
        (agent, flood)
    })
    .await
    .unwrap();
    let rss = common::rss_of(server_pid);
    eprintln!(
        "the server with a stopped studio during a flood: {} MB resident",
        rss >> 20
    );
    assert!(
        rss < STOPPED_STUDIO_RSS,
        "the server holds {rss} bytes for a stopped studio"
    );

    // The flood ends and something else is printed; the studio, resumed, shows that.
    let mut agent = tokio::task::spawn_blocking(move || {
        agent.call(
            6,
            "send_input",
            json!({"session_id": flood, "keys": [{"ctrl": "c"}]}),
        );
        agent.call(
            7,
            "send_input",
            json!({"session_id": flood, "input_text": "clear; echo after-the-stop-$((6*7))\n"}),
        );
        agent
    })
    .await
    .unwrap();
    nix::sys::signal::kill(stopped, nix::sys::signal::Signal::SIGCONT).unwrap();
    // The agent's newest terminal came to the front meanwhile, as it is now; the flood's
    // pane, shown again, is as it is now too.
    expect(&studio, "round-49").await;
    studio.send_text("[", "test").unwrap();
    expect(&studio, "after-the-stop-42").await;
    quit(&studio).await;
    drop(agent.stdin.take());
    let _ = tokio::task::spawn_blocking(move || agent.exit_status()).await;
}

/// A studio of another version (the binary rebuilt under a running server) is refused in its
/// first exchange, says both versions and how to end the old server, and never takes the
/// terminal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_studio_of_another_version_is_told_both_versions_and_how_to_end_the_server() {
    let (folder, runtime) = common::tiny_folder();
    let server = Server(serve(folder.path(), runtime.path()));
    let terminals = Terminals::new(TermConfig::default());
    let env = [("FLOWDECK_FAKE_VERSION", "9.9.9-new")];
    let studio = studio_with(&terminals, folder.path(), runtime.path(), (110, 32), &env);
    let ended = studio
        .await_output(common::studio::on_screen("never printed"))
        .await
        .unwrap();
    assert_eq!(ended.outcome, WaitOutcome::Exited);
    assert_eq!(studio.exit().and_then(|e| e.code), Some(2));
    let said = studio.content(Content::History);
    let ours = env!("CARGO_PKG_VERSION");
    for part in [
        "this flowdeck is version 9.9.9-new".to_string(),
        format!("is version {ours}"),
        format!("kill {}", server.0.id()),
    ] {
        assert!(said.contains(&part), "{part:?} in {said}");
    }
}

/// Studio first, as a person starts it: the studio starts the folder's server itself (it
/// used to host the engine, so quitting took the agents' terminals with it). `d` detaches and
/// a later studio finds the person's shell with its history; `q` in the last studio asks
/// about the person's shell only, `n` stays, `y` ends it and never the agent's terminal; the
/// server ends by itself once nothing is attached and nothing lives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn studio_first_detach_and_come_back_then_quit_asks_and_ends_only_the_persons_work() {
    let (folder, runtime) = common::tiny_folder();
    let terminals = Terminals::new(TermConfig::default());
    let first = studio(&terminals, folder.path(), runtime.path());
    expect(&first, "tiny").await;
    let server = common::server_pid(runtime.path());
    first.send_text("t", "test").unwrap();
    expect(&first, r"\[s1 · ").await;
    first.send_text("i", "test").unwrap();
    expect(&first, "FOCUS").await;
    first.send_text("echo kept-$((6*7))\r", "test").unwrap();
    expect(&first, "kept-42").await;
    // A shell that keeps printing through the detach: 120 lines over 6 s.
    first
        .send_text(
            "for i in $(seq 1 120); do echo tick-$i; sleep 0.05; done; echo ticked-$((6*7))\r",
            "test",
        )
        .unwrap();
    expect(&first, r"tick-\d").await;
    first.send_text("\u{7}", "test").unwrap();
    expect_gone(&first, "FOCUS").await;
    detach(&first).await;
    // The terminal keeps one line: what goes on in the server, and how to come back or end it.
    let left = first.content(Content::Screen).replace('\n', "");
    assert!(
        regex::Regex::new(
            r"flowdeck: the server of \S+ goes on with 1 terminal: `flowdeck \S+` reattaches, `flowdeck stop` ends it"
        )
        .unwrap()
        .is_match(&left),
        "the studio's last line: {left}"
    );

    // The server goes on with the shell, which goes on printing with no studio attached; an
    // agent opens a terminal of its own there.
    let agent = agent(folder.path(), runtime.path()).await;
    let agent = tokio::task::spawn_blocking(move || {
        let mut agent = agent;
        let sessions = agent.call(2, "list_terminal_sessions", json!({}));
        assert_eq!(sessions["sessions"][0]["running"], true, "{sessions}");
        let printed = agent.call(
            6,
            "await_output",
            json!({"session_id": "s1", "pattern": r"tick-\d+|ticked-42", "since": "entry", "timeout": 30}),
        );
        assert_eq!(printed["outcome"], "matched", "{printed}");
        agent.call(
            3,
            "open_terminal",
            json!({"command": ["bash", "--norc", "--noprofile"], "env": {"PS1": "$ "}}),
        );
        agent
    })
    .await
    .unwrap();

    // A studio attached later finds the person's shell with its history.
    let second = studio(&terminals, folder.path(), runtime.path());
    expect(&second, r"s1 · .*s2 · ").await;
    // Whichever pane it opened on, the person's shell is one `[` away at most.
    if !second.content(Content::Screen).contains("[s1 · ") {
        second.send_text("[", "test").unwrap();
        expect(&second, r"\[s1 · ").await;
    }
    expect(&second, "ticked-42").await;
    // Its history from the start: `Home` is the oldest line.
    second.send_text("\u{1b}[H", "test").unwrap();
    expect(&second, "kept-42").await;
    second.send_text("\u{1b}[F", "test").unwrap();
    expect(&second, "ticked-42").await;

    // `q` asks about the person's shell alone; `n` stays.
    second.send_text("q", "test").unwrap();
    expect(&second, "Still running, started by you:").await;
    expect(&second, "• terminal s1: bash").await;
    expect(
        &second,
        "y end them and quit · d leave them running · n stay",
    )
    .await;
    assert!(
        !second.content(Content::Screen).contains("terminal s2"),
        "the agent's terminal is not the person's to end:\n{}",
        second.content(Content::Screen)
    );
    second.send_text("n", "test").unwrap();
    expect_gone(&second, "end them and quit").await;
    // `y` ends it, and the studio exits once it has ended.
    second.send_text("q", "test").unwrap();
    expect(&second, r"y end them and quit").await;
    second.send_text("y", "test").unwrap();
    let ended = second
        .await_output(common::studio::on_screen("never printed"))
        .await
        .unwrap();
    assert_eq!(ended.outcome, WaitOutcome::Exited, "{ended:#?}");
    assert_eq!(second.exit().and_then(|e| e.code), Some(0));

    // The agent's terminal still runs; the person's is gone.
    let mut agent = tokio::task::spawn_blocking(move || {
        let mut agent = agent;
        let sessions = agent.call(4, "list_terminal_sessions", json!({}));
        let running: Vec<&str> = sessions["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["running"] == true)
            .filter_map(|s| s["session_id"].as_str())
            .collect();
        assert_eq!(running, ["s2"], "{sessions}");
        agent.call(5, "exit_terminal", json!({"session_id": "s2"}));
        agent
    })
    .await
    .unwrap();
    // Nothing attached, nothing lives: the server ends by itself.
    drop(agent.stdin.take());
    let _ = tokio::task::spawn_blocking(move || agent.exit_status()).await;
    common::wait_until(LONG, "the idle server to end by itself", || {
        common::has_ended(server).then_some(())
    });
}

/// The socket's folder unusable (a file is in its place): no server can be started for the
/// folder. The studio opens all the same, hosting the folder itself, and says why agents
/// cannot reach it; it cannot detach, and `q` asks before ending its shell. An agent's
/// `flowdeck mcp` fails with the reason instead of starting a second engine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_socket_folder_unusable_the_studio_hosts_the_folder_and_says_agents_cannot_reach_it()
 {
    let (folder, runtime) = common::tiny_folder();
    // A file where the sockets' folder belongs (as root, permissions would not stop anything).
    std::fs::write(runtime.path().join("flowdeck"), "not a folder").unwrap();
    let terminals = Terminals::new(TermConfig::default());
    let studio = studio(&terminals, folder.path(), runtime.path());
    expect(&studio, "agents cannot reach this studio").await;
    // The whole reason is in the studio's log (the status line shows what fits).
    common::wait_until(LONG, "the reason in the studio's log", || {
        std::fs::read_to_string(folder.path().join(".flowdeck/studio.log"))
            .ok()
            .filter(|log| log.contains("not a private folder"))
    });
    studio.send_text("t", "test").unwrap();
    expect(&studio, r"\[s1 · ").await;
    studio.send_text("d", "test").unwrap();
    expect(
        &studio,
        "cannot detach: this studio hosts the folder itself",
    )
    .await;

    let refused = Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(folder.path())
        .arg("mcp")
        .env("XDG_RUNTIME_DIR", runtime.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!refused.status.success(), "{refused:?}");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("not a private folder"), "{said}");
    assert!(
        refused.stdout.is_empty(),
        "stdout is the protocol's: {refused:?}"
    );

    studio.send_text("q", "test").unwrap();
    expect(&studio, r"This studio hosts the folder: quitting ends").await;
    studio.send_text("y", "test").unwrap();
    let ended = studio
        .await_output(common::studio::on_screen("never printed"))
        .await
        .unwrap();
    assert_eq!(ended.outcome, WaitOutcome::Exited, "{ended:#?}");
    assert_eq!(studio.exit().and_then(|e| e.code), Some(0));
}

/// `FLOWDECK_HTTP` names a port another program holds: the server the studio starts serves
/// its socket without HTTP, and the studio says so on its status line (an agent configured
/// for that port may be talking to that program).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_http_cannot_take_is_said_on_the_studios_status_line() {
    let (folder, runtime) = common::tiny_folder();
    let squatter = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = squatter.local_addr().unwrap().to_string();
    let terminals = Terminals::new(TermConfig::default());
    let env = [("FLOWDECK_HTTP", addr.as_str())];
    let studio = studio_with(&terminals, folder.path(), runtime.path(), (160, 32), &env);
    expect(&studio, "cannot serve MCP over HTTP on 127.0.0.1").await;
    quit(&studio).await;
    let server = common::background_server_of(folder.path());
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(server as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
}

/// A studio killed with -9 (no goodbye): the server drops it and nothing else changes. The
/// person's shell runs on, an agent's calls go through, and the next studio finds the shell.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_studio_killed_with_9_is_dropped_and_nothing_else_changes() {
    let (folder, runtime) = common::tiny_folder();
    let _server = Server(serve(folder.path(), runtime.path()));
    let terminals = Terminals::new(TermConfig::default());
    let first = studio(&terminals, folder.path(), runtime.path());
    expect(&first, "tiny").await;
    first.send_text("t", "test").unwrap();
    expect(&first, r"\[s1 · ").await;
    first.send_text("i", "test").unwrap();
    expect(&first, "FOCUS").await;
    first.send_text("echo survived-$((6*7))\r", "test").unwrap();
    expect(&first, "survived-42").await;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(first.pid() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let gone = first
        .await_output(common::studio::on_screen("never printed"))
        .await
        .unwrap();
    assert_eq!(gone.outcome, WaitOutcome::Exited, "{gone:#?}");

    let agent = agent(folder.path(), runtime.path()).await;
    let mut agent = tokio::task::spawn_blocking(move || {
        let mut agent = agent;
        let sessions = agent.call(2, "list_terminal_sessions", json!({}));
        assert_eq!(sessions["sessions"][0]["running"], true, "{sessions}");
        // The studio held the shell's input (focus mode) when it died: the hold went with
        // its connection, and the agent may type.
        agent.call(
            3,
            "send_input",
            json!({"session_id": "s1", "input_text": "echo after-$((6*7))\n"}),
        );
        agent
    })
    .await
    .unwrap();
    let second = studio(&terminals, folder.path(), runtime.path());
    expect(&second, "survived-42").await;
    expect(&second, "after-42").await;
    quit(&second).await;
    drop(agent.stdin.take());
    let _ = tokio::task::spawn_blocking(move || agent.exit_status()).await;
}

/// The studio on `folder` in a terminal of `cols` x `rows`.
fn studio_sized(
    terminals: &Terminals,
    folder: &Path,
    runtime: &Path,
    (cols, rows): (u16, u16),
) -> std::sync::Arc<flowdeck::term::Session> {
    let program = vec![
        env!("CARGO_BIN_EXE_flowdeck").to_string(),
        "--workflows".into(),
        folder.display().to_string(),
    ];
    let xdg = ("XDG_RUNTIME_DIR".to_string(), runtime.display().to_string());
    open(terminals, program, None, (cols, rows), vec![xdg])
}

/// Two people at once (item 5): both studios show the same live state. While one types in
/// focus mode the pane's input is theirs: the other's focus mode and an agent's input are
/// refused with a busy answer naming who types. The pane follows the size of the studio
/// that last typed into it, and the other studio says it draws it cropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_studios_share_the_live_state_and_the_one_typing_owns_the_input_and_the_size() {
    let (folder, runtime) = common::tiny_folder();
    let _server = Server(serve(folder.path(), runtime.path()));
    let terminals = Terminals::new(TermConfig::default());
    let a = studio_sized(&terminals, folder.path(), runtime.path(), (110, 32));
    let b = studio_sized(&terminals, folder.path(), runtime.path(), (130, 40));
    expect(&a, "tiny").await;
    expect(&b, "tiny").await;

    // A opens a shell and types in it: B sees it, sized for A and so drawn with room to spare.
    a.send_text("t", "test").unwrap();
    expect(&a, r"\[s1 · ").await;
    expect(&b, r"\[s1 · ").await;
    a.send_text("i", "test").unwrap();
    expect(&a, "FOCUS").await;
    a.send_text("echo from-a-$((6*7))\r", "test").unwrap();
    expect(&a, "from-a-42").await;
    expect(&b, "from-a-42").await;
    expect(&b, r"smaller: \d+x\d+, sized by another studio").await;

    // B cannot take the input while A types; neither can an agent. Both are told who types.
    b.send_text("i", "test").unwrap();
    expect(&b, r"being typed into by the person at pts/\d+").await;
    assert!(
        !b.content(Content::Screen).contains("FOCUS"),
        "B stayed in focus mode"
    );
    let agent = agent(folder.path(), runtime.path()).await;
    let agent = tokio::task::spawn_blocking(move || {
        let mut agent = agent;
        let refused = agent.request(
            2,
            "tools/call",
            json!({"name": "send_input", "arguments": {"session_id": "s1", "input_text": "echo agent\n"}}),
        );
        assert_eq!(refused["result"]["isError"], true, "{refused}");
        let text = refused["result"]["content"][0]["text"].as_str().unwrap().to_string();
        assert!(text.contains("SESSION_BUSY"), "{text}");
        assert!(text.contains("person at pts/"), "{text}");
        agent
    })
    .await
    .unwrap();

    // A lets go; B types: the pane takes B's size, and now A draws it cropped.
    a.send_text("\u{7}", "test").unwrap();
    expect_gone(&a, "FOCUS").await;
    b.send_text("i", "test").unwrap();
    expect(&b, "FOCUS").await;
    b.send_text("echo from-b-$((6*7))\r", "test").unwrap();
    expect(&b, "from-b-42").await;
    expect(&a, "from-b-42").await;
    expect(&a, r"cropped: \d+x\d+, sized by another studio").await;
    expect_gone(&b, "sized by another studio").await;
    // B's output fills its taller pane: A, drawing it cropped, shows the rows around the
    // cursor (the latest lines and the prompt), not the top rows.
    b.send_text("seq 1 80; echo tail-$((6*7))\r", "test")
        .unwrap();
    expect(&b, r"(?m)^\W*tail-42").await;
    expect(&a, r"(?m)^\W*tail-42").await;
    b.send_text("\u{7}", "test").unwrap();
    detach(&b).await;
    quit(&a).await;
    let mut agent = agent;
    drop(agent.stdin.take());
    let _ = tokio::task::spawn_blocking(move || agent.exit_status()).await;
}

/// The server's log folder full (its log writes fail with `ENOSPC`: the log is `/dev/full`,
/// which fails every write the way a full disk does): the server goes on serving, an agent's
/// terminal works, the studio that attaches says the server's log has a hole and why, and
/// `flowdeck run` says so on its stderr and runs all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_servers_log_folder_full_everything_works_and_the_studio_says_the_log_has_a_hole()
{
    use std::os::unix::fs::DirBuilderExt;
    let (folder, runtime) = common::tiny_folder();
    let state = folder.path().join(".flowdeck");
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&state)
        .unwrap();
    std::os::unix::fs::symlink("/dev/full", state.join("server.log")).unwrap();

    // The agent starts the folder's server, whose every log line fails from its first.
    let agent = agent(folder.path(), runtime.path()).await;
    let mut agent = tokio::task::spawn_blocking(move || {
        let mut agent = agent;
        let id = agent.open_bash(2);
        agent.type_into(3, &id, "echo logless-$((6*7))\n");
        let read = agent.call(
            4,
            "await_output",
            json!({"session_id": id, "pattern": "logless-42", "since": "screen", "timeout": 30}),
        );
        assert_eq!(read["outcome"], "matched", "{read}");
        agent
    })
    .await
    .unwrap();
    let server = common::background_server_of(folder.path());

    let terminals = Terminals::new(TermConfig::default());
    let studio = studio(&terminals, folder.path(), runtime.path());
    expect(&studio, "the folder's server cannot write its log").await;
    expect(&studio, "logless-42").await;

    let (folder_path, runtime_path) = (folder.path().to_path_buf(), runtime.path().to_path_buf());
    let ran = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_flowdeck"))
            .arg("--workflows")
            .arg(&folder_path)
            .args(["run", "tiny"])
            .env("XDG_RUNTIME_DIR", &runtime_path)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(ran.status.success(), "{ran:?}");
    let said = String::from_utf8_lossy(&ran.stderr);
    assert!(
        said.contains("the folder's server cannot write its log")
            && said.contains("No space left on device"),
        "{said}"
    );

    quit(&studio).await;
    assert!(!common::has_ended(server), "the server goes on");
    drop(agent.stdin.take());
    let _ = tokio::task::spawn_blocking(move || agent.exit_status()).await;
}

/// The newcomer's first run (F12): `r` runs a workflow in a terminal of its own, and that
/// shell outlives the run. `q` in the last studio names it and asks; `y` ends it, and with
/// nothing left the folder's server ends by itself: `flowdeck ls` no longer lists it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn q_after_a_run_names_the_runs_shell_and_y_leaves_no_server_behind() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("quick.yaml"), common::QUICK).unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let terminals = Terminals::new(TermConfig::default());
    let session = studio(&terminals, folder.path(), runtime.path());
    expect(&session, "quick").await;
    // No arguments: `r` runs it at once.
    session.send_text("r", "test").unwrap();
    expect(&session, "quick ended: completed").await;
    assert!(
        common::listed_server(folder.path(), runtime.path()).is_some(),
        "the studio's server is listed"
    );
    session.send_text("q", "test").unwrap();
    expect(&session, "Still running, started by you:").await;
    expect(&session, "• terminal s1: bash, left by the quick run").await;
    session.send_text("y", "test").unwrap();
    assert_eq!(common::studio::exit_code(&session).await, Some(0));
    common::wait_until(LONG, "the folder's server gone from flowdeck ls", || {
        common::listed_server(folder.path(), runtime.path())
            .is_none()
            .then_some(())
    });
}
