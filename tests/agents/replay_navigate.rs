//! `flowdeck replay` navigated (issue 39): a run's recording marks each state it entered, so
//! `--at STATE` starts there (piped: the text shown from there on, not before), and while it
//! plays at a terminal its keys go from state to state, seconds back and forth, search and
//! change the speed; the screen is read back from the real binary in a real PTY. Recordings in
//! asciicast v2 (FLOWDECK_RECORDING_FORMAT=v2) still replay, `--at` included.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use flowdeck::term::{Content, Session, Terminals, WaitOutcome};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

use crate::common;
use common::studio::on_screen;

/// Three states, each printing a line of its own (the command lines typed hold the
/// arithmetic, the output its result).
const THREE: &str = r#"name: three
description: Prints in three states.
initial_state: a
states:
  a:
    action: { tool: run_command, params: { command: 'echo out-of-a-$((1*1))' } }
    transitions: [ { condition: always, next_state: b } ]
  b:
    action: { tool: run_command, params: { command: 'echo out-of-b-$((1+1))' } }
    transitions: [ { condition: always, next_state: c } ]
  c:
    action: { tool: run_command, params: { command: 'echo out-of-c-$((1+2))' } }
"#;

/// `flowdeck --workflows DIR ARGS` with `env`, piped; its runs' shells read no rc file of
/// the person running the tests (one may block while many shells start at once).
fn flowdeck(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(dir)
        .args(args)
        .envs(common::studio::quiet_env())
        .env_remove("FLOWDECK_RECORDINGS")
        .env_remove("FLOWDECK_RECORDING_FORMAT")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

/// THREE run once in a folder of its own, recorded with `env`: the folder, the run's id and
/// its recording's first line (the header).
fn three_run(env: &[(&str, &str)]) -> (tempfile::TempDir, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("three.yaml"), THREE).unwrap();
    let out = flowdeck(dir.path(), &["run", "three", "--json"], env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cast = std::fs::read_to_string(result["recordings"][0].as_str().unwrap()).unwrap();
    let header = serde_json::from_str(cast.lines().next().unwrap()).unwrap();
    (dir, result["run_id"].as_str().unwrap().to_string(), header)
}

/// `flowdeck replay RUN_ID --at STATE` into a pipe: its text, after checking it succeeded.
fn piped_at(dir: &Path, run_id: &str, state: &str) -> String {
    let out = flowdeck(dir, &["replay", run_id, "--at", state], &[]);
    assert!(
        out.status.success(),
        "--at {state}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Whether `text` holds `line` as a line of its own.
fn has_line(text: &str, line: &str) -> bool {
    text.lines().any(|l| l.trim_end() == line)
}

#[test]
fn at_state_piped_holds_that_states_output_and_not_an_earlier_ones() {
    let (dir, run_id, header) = three_run(&[]);
    assert_eq!(header["version"], 3, "{header}");
    let whole = piped_at(dir.path(), &run_id, "a");
    for line in ["out-of-a-1", "out-of-b-2", "out-of-c-3"] {
        assert!(has_line(&whole, line), "{line} is not in {whole:?}");
    }
    let from_b = piped_at(dir.path(), &run_id, "b");
    assert!(has_line(&from_b, "out-of-b-2"), "{from_b:?}");
    assert!(has_line(&from_b, "out-of-c-3"), "{from_b:?}");
    assert!(!from_b.contains("out-of-a-1"), "{from_b:?}");
    let from_c = piped_at(dir.path(), &run_id, "c");
    assert!(has_line(&from_c, "out-of-c-3"), "{from_c:?}");
    assert!(!from_c.contains("out-of-b-2"), "{from_c:?}");
    // The end has a marker too: nothing was shown after it but the shell's prompt.
    assert!(!piped_at(dir.path(), &run_id, "completed").contains("out-of"));

    // A state the run never entered: told, with the ones it did.
    let out = flowdeck(dir.path(), &["replay", &run_id, "--at", "d"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("never entered a state d: its states: a, b, c, completed"),
        "{stderr}"
    );
}

#[test]
fn a_v2_recording_asked_for_by_the_setting_still_replays_and_a_bad_setting_is_told() {
    let (dir, run_id, header) = three_run(&[("FLOWDECK_RECORDING_FORMAT", "v2")]);
    assert_eq!(header["version"], 2, "{header}");
    assert!(header.get("term").is_none(), "{header}");
    let whole = piped_at(dir.path(), &run_id, "a");
    assert!(has_line(&whole, "out-of-a-1"), "{whole:?}");
    let from_c = piped_at(dir.path(), &run_id, "c");
    assert!(has_line(&from_c, "out-of-c-3"), "{from_c:?}");
    assert!(!from_c.contains("out-of-b-2"), "{from_c:?}");
    // At a terminal too.
    let folder = dir.path().display().to_string();
    let (code, screen) = common::studio::at_a_terminal(
        &["--workflows", &folder, "replay", &run_id, "--speed", "4"],
        Vec::new(),
    );
    assert_eq!(code, Some(0), "{screen}");
    assert!(screen.contains("out-of-c-3"), "{screen}");

    // A v2 file of a flowdeck from before markers plays; only --at has nothing to go to.
    let old = dir.path().join("old.cast");
    std::fs::write(
        &old,
        "{\"version\": 2, \"width\": 80, \"height\": 24}\n[0.5, \"o\", \"old-output\\r\\n\"]\n",
    )
    .unwrap();
    let old = old.display().to_string();
    let out = flowdeck(dir.path(), &["replay", &old], &[]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "old-output\n");
    let out = flowdeck(dir.path(), &["replay", &old, "--at", "a"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("it has no state markers"), "{stderr}");

    let out = flowdeck(
        dir.path(),
        &["list"],
        &[("FLOWDECK_RECORDING_FORMAT", "v4")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("FLOWDECK_RECORDING_FORMAT=v4: not a recording format"),
        "{stderr}"
    );
}

/// A recording whose states are 100 s apart (so that nothing plays on by itself while the
/// test looks): `gamma` clears the screen.
fn slow_states(dir: &Path) -> String {
    let path = dir.join("slow.cast");
    std::fs::write(
        &path,
        concat!(
            "{\"version\": 3, \"term\": {\"cols\": 60, \"rows\": 10}}\n",
            "[0.0, \"m\", \"alpha\"]\n",
            "[0.1, \"o\", \"alpha-text\\r\\n\"]\n",
            "[99.9, \"m\", \"beta\"]\n",
            "[0.1, \"o\", \"beta-text\\r\\n\"]\n",
            "[99.9, \"m\", \"gamma\"]\n",
            "[0.1, \"o\", \"\\u001b[2J\\u001b[Hgamma-text\\r\\n\"]\n",
            "[99.9, \"o\", \"the end\\r\\n\"]\n",
        ),
    )
    .unwrap();
    path.display().to_string()
}

/// `flowdeck replay ARGS` in an 80x24 PTY of its own.
fn replaying(terminals: &Terminals, args: &[&str]) -> std::sync::Arc<Session> {
    let mut program = vec![env!("CARGO_BIN_EXE_flowdeck").to_string(), "replay".into()];
    program.extend(args.iter().map(|a| a.to_string()));
    common::studio::open(terminals, program, None, (80, 24), Vec::new())
}

/// Types `keys`, then waits for `shown` on the screen (a regex) and checks that `gone` is
/// not there; the screen.
async fn press(session: &Session, keys: &str, shown: &str, gone: &[&str]) -> String {
    session.send_text(keys, "test").unwrap();
    let seen = session.await_output(on_screen(shown)).await.unwrap();
    let screen = session.content(Content::Screen);
    assert_eq!(
        seen.outcome,
        WaitOutcome::Matched,
        "after {keys:?}, waiting for {shown:?}:\n{screen}"
    );
    for text in gone {
        assert!(
            !screen.contains(text),
            "after {keys:?}, {text:?} is still shown:\n{screen}"
        );
    }
    screen
}

#[test]
fn the_replay_keys_go_from_state_to_state_back_and_forth_search_and_change_the_speed() {
    let dir = tempfile::tempdir().unwrap();
    let cast = slow_states(dir.path());
    let terminals = Terminals::new(flowdeck::term::TermConfig::default());
    let session = replaying(&terminals, &[&cast, "--no-idle-limit"]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let first = session
            .await_output(on_screen(
                r"alpha-text(?s:.*)state alpha +0:\d\d\.\d / 5:00\.0 +1x",
            ))
            .await
            .unwrap();
        assert_eq!(first.outcome, WaitOutcome::Matched, "{}", first.tail);
        let screen = session.content(Content::Screen);
        assert!(screen.contains("alpha-text"), "{screen}");
        // The status line's time goes on through the pause before beta.
        let ticked = session
            .await_output(on_screen(r"state alpha +0:0[1-9]\.\d"))
            .await
            .unwrap();
        assert_eq!(ticked.outcome, WaitOutcome::Matched, "{}", ticked.tail);
        // Paused, nothing moves on; `]` goes to the next state, `.` plays one event.
        press(&session, " ", r"state alpha .*paused", &[]).await;
        press(
            &session,
            "]",
            r"state beta +1:40\.0 .*paused",
            &["beta-text"],
        )
        .await;
        press(&session, ".", r"beta-text(?s:.*)state beta +1:40\.1", &[]).await;
        press(&session, "]", r"state gamma +3:20\.0", &["gamma-text"]).await;
        press(&session, ".", r"gamma-text", &["alpha-text", "beta-text"]).await;
        // 5 s back: before gamma cleared the screen, drawn again from the start.
        press(
            &session,
            "\x1b[D",
            r"alpha-text(?s:.*)beta-text(?s:.*)state beta +3:15\.1",
            &["gamma-text"],
        )
        .await;
        // `[` inside beta: to its start; at its start: to alpha's.
        press(&session, "[", r"state beta +1:40\.0", &["beta-text"]).await;
        press(&session, "[", r"state alpha +0:00\.0", &["alpha-text"]).await;
        // 5 s forward from 0: alpha's line is played, nothing later.
        press(
            &session,
            "\x1b[C",
            r"alpha-text(?s:.*)state alpha +0:05\.0",
            &["beta"],
        )
        .await;
        // Search forward: what was typed shows on the status line, Enter goes there.
        press(&session, "/gamma-t", r"/gamma-t", &[]).await;
        press(
            &session,
            "\r",
            r"gamma-text(?s:.*)state gamma +3:20\.1",
            &["alpha-text"],
        )
        .await;
        press(&session, "/alpha\r", r"not found further on: alpha", &[]).await;
        // Speed: twice as fast, then half as fast twice.
        press(&session, "+", r"state gamma .* 2x", &[]).await;
        press(&session, "--", r"state gamma .* 0\.5x", &[]).await;
        session.send_text("q", "test").unwrap();
        assert_eq!(common::studio::exit_code(&session).await, Some(0));
        // The replay's last screen is left on the person's terminal, below their prompt.
        let screen = session.content(Content::Screen);
        assert!(screen.contains("gamma-text"), "{screen}");
        assert!(!screen.contains("state gamma"), "{screen}");
    });
    runtime.block_on(terminals.close_all());
}

#[test]
fn at_state_at_a_terminal_starts_there() {
    let dir = tempfile::tempdir().unwrap();
    let cast = slow_states(dir.path());
    let terminals = Terminals::new(flowdeck::term::TermConfig::default());
    let session = replaying(&terminals, &[&cast, "--at", "beta", "--no-idle-limit"]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        // alpha's line was shown before beta began: it is on the screen drawn at beta.
        let seen = session
            .await_output(on_screen(r"beta-text(?s:.*)state beta +1:4\d\.\d"))
            .await
            .unwrap();
        assert_eq!(seen.outcome, WaitOutcome::Matched, "{}", seen.tail);
        assert!(session.content(Content::Screen).contains("alpha-text"));
        session.send_text("q", "test").unwrap();
        assert_eq!(common::studio::exit_code(&session).await, Some(0));
    });
    runtime.block_on(terminals.close_all());
}
