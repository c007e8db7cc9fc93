//! The real `flowdeck` binary in a terminal of flowdeck's own `term` layer: started, driven
//! by keys, its screen read back with deadlines (never a sleep then an assertion).

#![allow(clippy::unwrap_used, dead_code)]

use flowdeck::term::{AwaitSpec, Content, OpenOptions, Program, Session, Since, WaitOutcome};
use flowdeck::term::{Size, Terminals};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::LONG;

/// A wait for `pattern` on the visible screen.
pub fn on_screen(pattern: &str) -> AwaitSpec {
    AwaitSpec {
        pattern: Some(regex::Regex::new(pattern).unwrap()),
        stop_patterns: Vec::new(),
        since: Since::Screen,
        timeout: LONG,
        typist: None,
        quiet: None,
    }
}

/// The studio (bare `flowdeck` on a terminal) on `dir`, in a `cols` x `rows` terminal, with
/// the shells it opens a quiet bash whose prompt is `$ `.
pub fn studio(terminals: &Terminals, dir: &Path, cols: u16, rows: u16) -> Arc<Session> {
    studio_with(
        terminals,
        &["--workflows", &dir.display().to_string()],
        None,
        cols,
        rows,
    )
}

/// The studio with these arguments, started in `cwd`.
pub fn studio_with(
    terminals: &Terminals,
    args: &[&str],
    cwd: Option<&Path>,
    cols: u16,
    rows: u16,
) -> Arc<Session> {
    let mut program = vec![env!("CARGO_BIN_EXE_flowdeck").to_string()];
    program.extend(args.iter().map(|a| a.to_string()));
    open(terminals, program, cwd, (cols, rows), Vec::new())
}

/// The studio on `folder` with the folders' servers' sockets under `runtime`, at `size`, with
/// `env` set for it.
pub fn with_runtime(
    terminals: &Terminals,
    folder: &Path,
    runtime: &Path,
    size: (u16, u16),
    env: &[(&str, &str)],
) -> Arc<Session> {
    let program = vec![
        env!("CARGO_BIN_EXE_flowdeck").to_string(),
        "--workflows".into(),
        folder.display().to_string(),
    ];
    let xdg = ("XDG_RUNTIME_DIR".to_string(), runtime.display().to_string());
    let env = std::iter::once(xdg)
        .chain(env.iter().map(|(k, v)| (k.to_string(), v.to_string())))
        .collect();
    open(terminals, program, None, size, env)
}

/// `program` (the studio, or a shell that starts it) in a `size` terminal, with the quiet
/// environment below and `env` added.
pub fn open(
    terminals: &Terminals,
    program: Vec<String>,
    cwd: Option<&Path>,
    (cols, rows): (u16, u16),
    env: Vec<(String, String)>,
) -> Arc<Session> {
    let mut all = quiet_env();
    all.extend(env);
    // A person's terminal, not one of flowdeck's: the marker this test's own terminals give
    // their processes would make the studio one an agent could type into (server/peer.rs).
    let mut person = vec!["env".to_string(), "-u".into(), "FLOWDECK_SESSION".into()];
    person.extend(program);
    terminals
        .open(OpenOptions {
            program: Program::Command(person),
            cwd: cwd.map(Path::to_path_buf),
            size: Size { cols, rows },
            env: all,
            ..OpenOptions::default()
        })
        .unwrap()
}

/// `flowdeck ARGS` run to its end at a terminal of its own, as a person types a command:
/// its exit code and what its terminal shows.
pub fn at_a_terminal(args: &[&str], env: Vec<(String, String)>) -> (Option<u32>, String) {
    let terminals = Terminals::new(flowdeck::term::TermConfig::default());
    let mut program = vec![env!("CARGO_BIN_EXE_flowdeck").to_string()];
    program.extend(args.iter().map(|a| a.to_string()));
    let session = open(&terminals, program, None, (200, 20), env);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let code = runtime.block_on(exit_code(&session));
    (code, session.content(Content::Screen))
}

/// What the studio's shells start with in tests: a home of their own, so that they read no
/// rc file of the person running the tests (one may block: a pyenv rehash waiting on a stale
/// lock; or print what the tests look for), and a plain bash whose prompt is `$ `. The home is
/// one empty folder shared by all tests.
pub fn quiet_env() -> Vec<(String, String)> {
    let home = std::env::temp_dir().join("flowdeck-tests-home");
    std::fs::create_dir_all(&home).unwrap();
    // The folders' servers' sockets too: never the person's own runtime folder. Each folder's
    // socket is named from its path, so tests do not meet each other's servers.
    let runtime = std::env::temp_dir().join(format!(
        "flowdeck-tests-runtime-{}",
        rustix::process::getuid().as_raw()
    ));
    std::fs::create_dir_all(&runtime).unwrap();
    std::fs::set_permissions(
        &runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    vec![
        ("XDG_RUNTIME_DIR".into(), runtime.display().to_string()),
        ("HOME".into(), home.display().to_string()),
        ("SHELL".into(), "/bin/bash".into()),
        ("PS1".into(), "$ ".into()),
        ("HISTFILE".into(), "/dev/null".into()),
        ("BASH_ENV".into(), String::new()),
        ("ENV".into(), String::new()),
    ]
}

/// Waits until `pattern` is on the screen, failing with the screen as it is.
pub async fn expect(session: &Session, pattern: &str) {
    let r = session.await_output(on_screen(pattern)).await.unwrap();
    assert_eq!(
        r.outcome,
        WaitOutcome::Matched,
        "waiting for {pattern:?}; screen:\n{}",
        session.content(Content::Screen)
    );
}

/// Waits until `pattern` is no longer on the screen (polled on each screen change, with a
/// deadline).
pub async fn expect_gone(session: &Session, pattern: &str) {
    let re = regex::Regex::new(pattern).unwrap();
    let end = tokio::time::Instant::now() + LONG;
    loop {
        if !re.is_match(&session.content(Content::Screen)) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < end,
            "{pattern:?} stayed on the screen:\n{}",
            session.content(Content::Screen)
        );
        session.wait_for_output(Duration::from_millis(200)).await;
    }
}

/// `q` (and `y` when it asks because what the person started still runs): the studio exits
/// with 0.
pub async fn quit(session: &Session) {
    session.send_text("q", "test").unwrap();
    let r = session
        .await_output(AwaitSpec {
            stop_patterns: vec![regex::Regex::new(r"Quit\? y / n|y end them and quit").unwrap()],
            ..on_screen("never printed")
        })
        .await
        .unwrap();
    if r.outcome == WaitOutcome::Stopped {
        session.send_text("y", "test").unwrap();
    }
    assert_eq!(exit_code(session).await, Some(0));
}

/// `d`: the studio detaches and exits with 0, whatever still runs.
pub async fn detach(session: &Session) {
    session.send_text("d", "test").unwrap();
    assert_eq!(exit_code(session).await, Some(0));
}

/// Waits for the program in `session` to end, within the tests' deadline, and returns its
/// exit code; fails showing its screen when it does not end.
pub async fn exit_code(session: &Session) -> Option<u32> {
    let ended = session
        .await_output(on_screen("never printed"))
        .await
        .unwrap();
    assert_eq!(
        ended.outcome,
        WaitOutcome::Exited,
        "the program did not end; its screen:\n{}",
        session.content(Content::Screen)
    );
    session.exit().and_then(|e| e.code)
}

/// A folder holding `files` (name, text), and the studio opened on it in a `cols` x `rows`
/// terminal.
pub fn on_files(
    files: &[(&str, &str)],
    cols: u16,
    rows: u16,
) -> (tempfile::TempDir, Terminals, Arc<Session>) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let terminals = Terminals::new(flowdeck::term::TermConfig::default());
    let session = studio(&terminals, dir.path(), cols, rows);
    (dir, terminals, session)
}

/// The `asker` workflow: a prompt step, then a command that says the answer.
pub const ASKER: &str = r#"
name: asker
description: Asks which environment, then says it.
initial_state: ask
states:
  ask:
    action:
      tool: prompt
      params:
        prompt: Which environment?
        store_as: TARGET_ENV
    transitions:
      - { condition: validation_passed, next_state: say }
  say:
    action: { tool: run_command, params: { command: 'echo "env=$TARGET_ENV"' } }
"#;

/// Seconds `seq 1 2000000` takes in session `s` (the screen cleared first), as bash's `time`
/// reports it; `round` tells this report from earlier ones. The benches' flood.
pub async fn timed_seq(s: &Session, round: usize) -> f64 {
    s.send_text(
        &format!("clear; TIMEFORMAT='took-{round} %R'; time seq 1 2000000\r"),
        "bench",
    )
    .unwrap();
    let r = s
        .await_output(on_screen(&format!(r"took-{round} (\d+\.\d+)")))
        .await
        .unwrap();
    assert_eq!(r.outcome, WaitOutcome::Matched, "{r:?}");
    r.groups
        .first()
        .cloned()
        .flatten()
        .and_then(|v| v.parse().ok())
        .unwrap()
}

/// `flowdeck mcp` started as an agent's client starts it (with `args`, such as its
/// toolsets: the default ones unless they say), with the studio's socket folder: it relays to
/// the studio.
pub async fn relayed_agent(
    folder: &Path,
    xdg: &(String, String),
    args: &[&str],
) -> super::line_client::LineServer {
    let (folder, runtime) = (folder.to_path_buf(), std::path::PathBuf::from(&xdg.1));
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        super::mcp_agent_with(
            &folder,
            &runtime,
            &args,
            &[("FLOWDECK_TOOLSETS", "default")],
        )
    })
    .await
    .unwrap()
}

/// The studio on `folder` with `args` added, its socket under `runtime`, in a 110x32
/// terminal.
pub fn studio_on(
    terminals: &Terminals,
    folder: &Path,
    runtime: &Path,
    args: &[&str],
) -> (Arc<Session>, (String, String)) {
    studio_sized_on(terminals, folder, runtime, args, (110, 32))
}

/// [`studio_on`] in a terminal of `size`.
pub fn studio_sized_on(
    terminals: &Terminals,
    folder: &Path,
    runtime: &Path,
    args: &[&str],
    size: (u16, u16),
) -> (Arc<Session>, (String, String)) {
    let xdg = ("XDG_RUNTIME_DIR".to_string(), runtime.display().to_string());
    let mut program = vec![
        env!("CARGO_BIN_EXE_flowdeck").to_string(),
        "--workflows".into(),
        folder.display().to_string(),
    ];
    program.extend(args.iter().map(|a| a.to_string()));
    let studio = open(terminals, program, None, size, vec![xdg.clone()]);
    (studio, xdg)
}
