//! Terminals on other machines (issue 25): a shell opened on a host through a real sshd on
//! loopback (tests/common/sshd.rs), driven through the engine with the parameters a step or
//! a tool call carries, as a local one is.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::params;
use common::sshd::Sshd;
use flowdeck::engine::{Actor, Engine, EngineError, FinalState, RunRequest};
use flowdeck::workflow::action::{
    AwaitOutputParams, OpenTerminalParams, RunCommandParams, SendInputParams, SetEnvParams,
};
use serde_json::{Value, json};
use std::sync::Arc;

/// An engine whose ssh is the fixture's.
fn engine(sshd: &Sshd) -> (Arc<Engine>, tempfile::TempDir) {
    engine_in(sshd, tempfile::tempdir().unwrap())
}

fn engine_in(sshd: &Sshd, dir: tempfile::TempDir) -> (Arc<Engine>, tempfile::TempDir) {
    let mut config = common::test_config(8, false);
    config.ssh_command = Some(vec![
        "ssh".into(),
        "-F".into(),
        sshd.config().display().to_string(),
    ]);
    (Engine::open(dir.path(), config).unwrap(), dir)
}

async fn open_on(e: &Engine, host: &str, more: Value) -> Result<String, EngineError> {
    let mut p = json!({"host": host});
    p.as_object_mut()
        .unwrap()
        .extend(more.as_object().cloned().unwrap_or_default());
    let info = e
        .open_terminal(&params::<OpenTerminalParams>(p), &Actor::Cli)
        .await?;
    assert_eq!(info.host.as_deref(), Some(host), "{info:?}");
    Ok(info.session_id)
}

async fn run(e: &Engine, id: &str, command: &str) -> flowdeck::term::CommandResult {
    e.run_command(
        id,
        &params::<RunCommandParams>(json!({"command": command, "timeout": 30})),
        None,
        &Actor::Cli,
    )
    .await
    .unwrap()
    .result
}

/// Types `echo WORD-$((40+2))` and waits for `WORD-`: the line it matches is the command's
/// output, never the typed line's echo (typed before the shell read it, a line is echoed
/// twice, and the second echo would match).
async fn assert_typed_line_read_once(e: &Engine, id: &str, word: &str) {
    e.send_input(
        id,
        &params::<SendInputParams>(json!({"input_text": format!("echo {word}-$((40+2))\n")})),
        &Actor::Cli,
    )
    .unwrap();
    let waited = e
        .await_output(
            id,
            &params::<AwaitOutputParams>(json!({"pattern": format!("{word}-"), "timeout": 30})),
            None,
            &Actor::Cli,
        )
        .await
        .unwrap();
    assert_eq!(
        waited.result.matched_line.as_deref(),
        Some(format!("{word}-42").as_str()),
        "{waited:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_on_a_host_runs_commands_with_their_exit_status_and_exports_values_literally() {
    let sshd = Sshd::start();
    let (e, _dir) = engine(&sshd);
    let id = open_on(
        &e,
        "h1",
        // A prompt of the caller's own keeps flowdeck's marker after it.
        json!({"cwd": "/tmp", "env": {"GREETING": "it's \"$(here)\"\n", "PS1": "far$ "}}),
    )
    .await
    .unwrap();
    // The shell is on the far side: sshd's connection says which address it came to.
    let there = run(&e, &id, "echo \"${SSH_CONNECTION##* 127.0.0.}\"; pwd").await;
    assert_eq!(there.exit_code, Some(0), "{there:?}");
    assert_eq!(
        there.output,
        format!("2 {}\n/tmp", sshd.port()),
        "{there:?}"
    );
    let failed = run(&e, &id, "ls /no/such/folder").await;
    assert_eq!(failed.exit_code, Some(2), "{failed:?}");
    let status = run(&e, &id, "(exit 7)").await;
    assert_eq!(status.exit_code, Some(7), "{status:?}");
    // The value given at open, and one set later, arrive exactly, never run.
    let given = run(&e, &id, "printf '%s|' \"$GREETING\"").await;
    assert_eq!(given.output, "it's \"$(here)\"\n|", "{given:?}");
    e.set_env(
        &id,
        &params::<SetEnvParams>(
            json!({"vars": {"LATER": "a'b\nc $(touch /tmp/never) héllo ✓ 日本"}}),
        ),
        None,
        &Actor::Cli,
    )
    .await
    .unwrap();
    let later = run(&e, &id, "printf '%s|' \"$LATER\"").await;
    assert_eq!(
        later.output, "a'b\nc $(touch /tmp/never) héllo ✓ 日本|",
        "{later:?}"
    );
    // A typed line's echo never ends a wait for its own text, whatever its script.
    assert_typed_line_read_once(&e, &id, "done").await;
    assert_typed_line_read_once(&e, &id, "fertig-ü-✓").await;
    let typed = run(&e, &id, "echo 'naïve — 日本'").await;
    assert_eq!(typed.output, "naïve — 日本", "{typed:?}");
    e.shutdown().await;
}

fn run_request(name: &str, host: Option<&str>, inputs: &[(&str, &str)]) -> RunRequest {
    RunRequest {
        host: host.map(str::to_string),
        ..common::run_request(name, inputs)
    }
}

fn with_manifest(sshd: &Sshd, text: &str) -> (Arc<Engine>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let name = text.lines().next().unwrap().trim_start_matches("name: ");
    std::fs::write(dir.path().join(format!("{name}.yaml")), text).unwrap();
    engine_in(sshd, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_on_a_host_keeps_its_contract_and_its_secrets() {
    let sshd = Sshd::start();
    let (e, dir) = with_manifest(&sshd, common::sshd::ON_A_HOST);
    let message = "it's \"$(uname)\"\nline two";
    let token = "S3cr3t-on-the-host";
    let started = e
        .start_run(run_request(
            "on_a_host",
            Some("h2"),
            &[("MESSAGE", message), ("TOKEN", token)],
        ))
        .await
        .unwrap();
    let result = common::finished(started).await;
    assert_eq!(
        result.final_state,
        FinalState::Completed,
        "{:?}\n{}",
        result.error,
        serde_json::to_string_pretty(&result.execution_log).unwrap()
    );
    assert_eq!(
        result.return_values["WHERE"],
        format!("127.0.0.3 {}", sshd.port())
    );
    assert_eq!(result.return_values["ECHOED"], message);
    // The host's terminal was recorded as it showed, through ssh, the secret masked.
    assert_eq!(result.recordings.len(), 1, "{result:?}");
    let shown = common::recorded_output(&result.recordings[0]);
    assert!(shown.contains("\r\ntoken ********\r\n"), "{shown}");
    // flowdeck's own markers (the far shell's prompt marker, with its nonce) are not in it.
    assert!(!shown.contains("\x1b]7770;"), "{shown:?}");
    let journals = std::fs::read_dir(dir.path().join(".flowdeck/runs")).unwrap();
    for journal in journals {
        let text = std::fs::read_to_string(journal.unwrap().path()).unwrap();
        assert!(
            !text.contains(token),
            "the secret reached the journal:\n{text}"
        );
    }
    e.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_cannot_be_reached_fails_at_once_naming_it_and_quoting_ssh() {
    let sshd = Sshd::start();
    let (e, _dir) = engine(&sshd);
    for (host, says) in [
        ("down", "Connection refused"),
        ("badkey", "Host key verification failed"),
        ("password", "Permission denied"),
    ] {
        let started = std::time::Instant::now();
        let failed = open_on(&e, host, json!({})).await.unwrap_err();
        let message = failed.to_string();
        assert!(
            message.contains(&format!("cannot reach {host}")),
            "{message}"
        );
        assert!(message.contains(says), "{host}: {message}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{host} took {:?}",
            started.elapsed()
        );
    }
    // Nothing is left open for them.
    assert!(e.list_terminal_sessions().sessions.is_empty());
    e.shutdown().await;
}

/// The processes whose command line is exactly `argv` (the sshd is on this machine, so the
/// far side's processes are here to be seen).
fn running(argv: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).replace('\0', " ").trim() == argv)
        })
        .filter(|pid| !common::has_ended(*pid))
        .collect()
}

/// A run on `h1` whose one step runs `sleep SECONDS` there, once that sleep runs: the sshd,
/// the engine, its folder, the run and the sleep's process.
async fn sleeping_on_h1(
    seconds: u32,
) -> (
    Sshd,
    Arc<Engine>,
    tempfile::TempDir,
    flowdeck::engine::StartedRun,
    u32,
) {
    let manifest = format!(
        "name: far_sleeper\ndescription: Sleeps there.\ninitial_state: a\nstates:\n  a: {{ action: {{ tool: run_command, params: {{ command: 'sleep {seconds}', timeout: 300 }} }} }}\n"
    );
    let sshd = Sshd::start();
    let (e, dir) = with_manifest(&sshd, &manifest);
    let started = e
        .start_run(run_request("far_sleeper", Some("h1"), &[]))
        .await
        .unwrap();
    let argv = format!("sleep {seconds}");
    let sleep = common::poll_until(common::LONG, "the remote sleep to start", || {
        running(&argv).first().copied()
    })
    .await;
    (sshd, e, dir, started, sleep)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_run_on_a_host_ends_its_remote_process() {
    let (_sshd, e, _dir, started, _) = sleeping_on_h1(3131).await;
    e.cancel_run(&started.run_id.clone(), &Actor::Cli)
        .await
        .unwrap();
    let result = common::finished(started).await;
    assert_eq!(
        result.final_state,
        FinalState::Canceled,
        "{:?}",
        result.error
    );
    common::poll_until(common::LONG, "the remote sleep to end", || {
        running("sleep 3131").is_empty().then_some(())
    })
    .await;
    e.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passphrase_is_typed_by_the_person_in_the_pane_and_refused_at_once_without_one() {
    let sshd = Sshd::start();
    let (e, _dir) = engine(&sshd);
    // Nobody to ask: ssh is not let ask, and the error says why.
    let alone = open_on(&e, "passphrase", json!({})).await.unwrap_err();
    let message = alone.to_string();
    assert!(message.contains("Permission denied"), "{message}");
    assert!(message.contains("nobody is there to type"), "{message}");
    // A person: the pane shows ssh's question, and what they type there answers it.
    let person = Actor::person();
    let opening = {
        let e = e.clone();
        let person = person.clone();
        tokio::spawn(async move {
            e.open_terminal(
                &params::<OpenTerminalParams>(json!({"host": "passphrase"})),
                &person,
            )
            .await
        })
    };
    let id = common::poll_until(common::LONG, "the pane to ask for the passphrase", || {
        let sessions = e.list_terminal_sessions().sessions;
        let session = sessions.first()?;
        let screen = e
            .get_screen_content(
                &session.session_id,
                &params::<flowdeck::workflow::action::GetScreenContentParams>(json!({})),
                &Actor::Cli,
            )
            .ok()?;
        screen
            .content
            .contains("passphrase")
            .then(|| session.session_id.clone())
    })
    .await;
    e.send_input(
        &id,
        &params::<SendInputParams>(
            json!({"input_text": format!("{}\r", common::sshd::PASSPHRASE)}),
        ),
        &person,
    )
    .unwrap();
    let opened = opening.await.unwrap().unwrap();
    assert_eq!(opened.session_id, id);
    let there = run(&e, &id, "echo \"${SSH_CONNECTION#* * }\"").await;
    assert_eq!(
        there.output,
        format!("127.0.0.4 {}", sshd.port()),
        "{there:?}"
    );
    // The passphrase was typed to ssh, never to the shell: it is in no history there.
    let history = e
        .get_screen_content(
            &id,
            &params::<flowdeck::workflow::action::GetScreenContentParams>(
                json!({"content_mode": "history"}),
            ),
            &Actor::Cli,
        )
        .unwrap();
    assert!(
        !history.content.contains(common::sshd::PASSPHRASE),
        "{}",
        history.content
    );
    e.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_runs_on_every_host_at_once_and_a_host_that_is_down_fails_alone() {
    let sshd = Sshd::start();
    let (e, dir) = with_manifest(&sshd, common::sshd::ON_A_HOST);
    std::fs::write(
        dir.path().join(flowdeck::engine::fleet::HOSTS_FILE),
        "# the test's hosts\nweb: h1 h2\nall: web, h3\n",
    )
    .unwrap();
    let hosts = e
        .fleet_hosts(&["all".to_string(), "down".to_string(), "h2".to_string()])
        .unwrap();
    assert_eq!(hosts, ["h1", "h2", "h3", "down"]);
    let fleet = e
        .run_fleet(
            run_request("on_a_host", None, &[("MESSAGE", "hi"), ("TOKEN", "t0k3n")]),
            hosts,
            2,
        )
        .await;
    assert!(!fleet.success, "one host is down");
    assert_eq!((fleet.completed, fleet.hosts), (3, 4), "{fleet:#?}");
    for (run, address) in fleet
        .runs
        .iter()
        .zip(["127.0.0.2", "127.0.0.3", "127.0.0.4"])
    {
        assert!(run.success, "{run:#?}");
        let result = run.result.as_ref().unwrap();
        assert_eq!(
            result.return_values["WHERE"],
            format!("{address} {}", sshd.port())
        );
    }
    let down = &fleet.runs[3];
    assert_eq!(down.host, "down");
    let error = down.error.as_deref().unwrap_or_default();
    assert!(error.contains("cannot reach down"), "{error}");
    assert!(error.contains("Connection refused"), "{error}");
    e.shutdown().await;
}

/// The parent of process `pid`.
fn parent_of(pid: u32) -> u32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = stat.rsplit(')').next().unwrap();
    after.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_drops_mid_run_fails_the_run_naming_the_host() {
    let (_sshd, e, _dir, started, sleep) = sleeping_on_h1(3232).await;
    // The far side's shell is the sleep's parent; the sshd process serving the connection is
    // the shell's: killed, the connection drops as when a network or a server goes away.
    let connection = parent_of(parent_of(sleep));
    let name = std::fs::read_to_string(format!("/proc/{connection}/cmdline")).unwrap();
    assert!(name.starts_with("sshd"), "{name:?}");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(connection).unwrap()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let result = common::finished(started).await;
    assert!(!result.success, "{result:#?}");
    let error = result.error.unwrap_or_default();
    assert!(error.contains("h1"), "{error}");
    assert!(error.contains("closed"), "{error}");
    e.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_of_hosts_conf_is_reached_by_its_own_command_as_docker_or_sudo_would_be() {
    // `docker exec -it C sh -c`, `kubectl exec -it P -- sh -c` and `sudo -i sh -c` are such
    // commands; `env SHELL=... sh -c` is one every machine has, and it gives a plain POSIX
    // shell (dash) as well as bash, whose prompts are set up differently.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(flowdeck::engine::fleet::HOSTS_FILE),
        "plain = env SHELL=/bin/sh sh -c\nbashy = env SHELL=/bin/bash sh -c\n",
    )
    .unwrap();
    let e = common::test_engine(dir.path(), 8, false);
    for (host, shell) in [("plain", "/bin/sh"), ("bashy", "/bin/bash")] {
        let id = open_on(&e, host, json!({"env": {"ODD": "a'b $(c)"}}))
            .await
            .unwrap();
        let ran = run(&e, &id, "echo \"$0|$ODD\"; (exit 4)").await;
        assert_eq!(ran.exit_code, Some(4), "{host}: {ran:?}");
        assert_eq!(ran.output, format!("{shell}|a'b $(c)"), "{host}: {ran:?}");
        // Typed input is read at the prompt: its echo never ends a wait for its text.
        assert_typed_line_read_once(&e, &id, host).await;
    }
    e.shutdown().await;
}

/// Issue 36: a login shell that is not POSIX (fish, tcsh) cannot parse a POSIX bootstrap
/// (fish: `${ is not a valid variable`). `SHELL=... fish -c` is what sshd runs for an
/// account whose login shell is fish; the session's shell is then bash, and works as one.
/// A "login shell" that cannot run `exec sh -c '…'` at all (python) is refused saying what
/// to do, with its own words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_shell_that_is_not_posix_still_gives_a_posix_shell_or_says_what_to_do() {
    for shell in ["/usr/bin/fish", "/usr/bin/tcsh"] {
        assert!(
            std::path::Path::new(shell).exists(),
            "{shell} is missing: install it (Debian: apt-get install fish tcsh) to run this test"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(flowdeck::engine::fleet::HOSTS_FILE),
        "fishy = env SHELL=/usr/bin/fish fish -c
         tcshy = env SHELL=/usr/bin/tcsh tcsh -c
         snake = env SHELL=/usr/bin/python3 python3 -c
",
    )
    .unwrap();
    let e = common::test_engine(dir.path(), 8, false);
    for (host, login) in [("fishy", "/usr/bin/fish"), ("tcshy", "/usr/bin/tcsh")] {
        let id = open_on(&e, host, json!({"env": {"ODD": "a'b $(c)"}}))
            .await
            .unwrap_or_else(|err| panic!("{host}: {err}"));
        let ran = run(&e, &id, "echo \"${0##*/}|$SHELL|$ODD\"; (exit 4)").await;
        assert_eq!(ran.exit_code, Some(4), "{host}: {ran:?}");
        assert_eq!(
            ran.output,
            format!("bash|{login}|a'b $(c)"),
            "{host}: {ran:?}"
        );
        assert_typed_line_read_once(&e, &id, host).await;
    }
    let refused = open_on(&e, "snake", json!({})).await.unwrap_err();
    let message = refused.to_string();
    assert!(message.contains("SyntaxError"), "{message}");
    assert!(
        message.contains("login shell must run `exec sh -c '…'`"),
        "{message}"
    );
    e.shutdown().await;
}

/// Issue 36: an account whose login shell is fish, reached through the real sshd, runs a
/// workflow (its commands in a POSIX shell), its values quoted and returned exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workflow_runs_on_a_host_as_an_account_whose_login_shell_is_fish() {
    const ACCOUNT: &str = "flowdeckfish";
    if let Err(why) = common::sshd::account_with_login_shell(ACCOUNT, "/usr/bin/fish") {
        println!("skipped: {why}");
        return;
    }
    let sshd = Sshd::start();
    let (e, _dir) = with_manifest(
        &sshd,
        r#"name: as_fish
description: Works on a host as an account whose login shell is fish.
arguments:
  MESSAGE: { description: any text }
return_values:
  WHO: { description: the account }
  LOGIN: { description: its login shell }
  RAN: { description: the shell the steps ran in }
  ECHOED: { description: "the message, as the host saw it" }
initial_state: look
states:
  look:
    action: { tool: run_command, params: { command: 'export WHO="$(id -un)" LOGIN="$SHELL" RAN="${0##*/}" ECHOED="$MESSAGE"' } }
"#,
    );
    let message = "it's \"$(uname)\" ${HOME}";
    let host = format!("{ACCOUNT}@h1");
    let started = e
        .start_run(run_request("as_fish", Some(&host), &[("MESSAGE", message)]))
        .await
        .unwrap();
    let result = common::finished(started).await;
    assert_eq!(
        result.final_state,
        FinalState::Completed,
        "{:?}\n{}\nsshd logged:\n{}",
        result.error,
        serde_json::to_string_pretty(&result.execution_log).unwrap(),
        sshd.log()
    );
    assert_eq!(result.return_values["WHO"], ACCOUNT);
    assert_eq!(result.return_values["LOGIN"], "/usr/bin/fish");
    assert_eq!(result.return_values["RAN"], "bash");
    assert_eq!(result.return_values["ECHOED"], message);
    e.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flowdeck_ending_ends_the_ssh_connection_and_what_runs_there() {
    let sshd = Sshd::start();
    let (e, _dir) = engine(&sshd);
    let id = open_on(&e, "h3", json!({})).await.unwrap();
    e.send_input(
        &id,
        &params::<SendInputParams>(json!({"input_text": "sleep 3434\n"})),
        &Actor::Cli,
    )
    .unwrap();
    common::poll_until(common::LONG, "the remote sleep to start", || {
        (!running("sleep 3434").is_empty()).then_some(())
    })
    .await;
    e.shutdown().await;
    common::poll_until(
        common::LONG,
        "the remote sleep to end with flowdeck",
        || running("sleep 3434").is_empty().then_some(()),
    )
    .await;
}

/// A far shell's prompt marker carries the last command's exit status: a draft of what was
/// typed on `h1` keeps the failure branch of the command that failed there, and only its.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draft_of_what_was_typed_on_a_host_knows_which_command_failed() {
    let sshd = Sshd::start();
    let (e, _dir) = engine(&sshd);
    let id = open_on(&e, "h1", json!({"env": {"PS1": "far$ "}}))
        .await
        .unwrap();
    // As a person types: each line once the prompt is back (a line typed before it, the far
    // side cannot tell flowdeck whether a command or the program still running reads it).
    for line in ["cd /tmp", "ls /no/such/folder", "true"] {
        common::engine_expect(&e, &id, r"far\$\s*$", "screen").await;
        e.send_input(
            &id,
            &params::<SendInputParams>(json!({"input_text": format!("{line}\n")})),
            &Actor::Cli,
        )
        .unwrap();
        common::engine_expect(
            &e,
            &id,
            &format!("(?m)^far\\$ {}\n", regex::escape(line)),
            "screen",
        )
        .await;
    }
    common::engine_expect(&e, &id, r"(?m)^far\$ true\nfar\$\s*$", "screen").await;
    let drafted = e.workflow_draft_from_session(&id, "on_h1", "").unwrap();
    let yaml = &drafted.content;
    assert_eq!(drafted.commands, 3, "{yaml}");
    assert_eq!(yaml.matches("condition: failure").count(), 1, "{yaml}");
    let ls = yaml
        .find("command: ls /no/such/folder")
        .expect("ls is a step");
    let failure = yaml.find("condition: failure").expect("a failure branch");
    let after_ls = yaml[ls..].find("command: 'true'").map(|i| i + ls);
    assert!(
        failure > ls && after_ls.is_none_or(|t| failure < t),
        "ls's own: {yaml}"
    );
    e.shutdown().await;
}
