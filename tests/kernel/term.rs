//! Terminal sessions against real PTYs running real bash.
// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use flowdeck::term::processes::{self, proc_info};
use flowdeck::term::shell::{self, CommandOutcome};
use flowdeck::term::{
    AwaitResult, AwaitSpec, Content, KeyPress, MAX_INPUT_BYTES, MAX_QUEUED_INPUT, Named,
    OpenOptions, Program, Session, Since, Size, TermConfig, TermError, Terminals, WaitOutcome,
};
use regex::Regex;
use std::sync::Arc;
use std::time::Duration;

use crate::common;
use common::{LONG, bash_options, spec};

fn terminals() -> Terminals {
    Terminals::new(TermConfig {
        kill_grace: Duration::from_millis(300),
        ..TermConfig::default()
    })
}

async fn bash(t: &Terminals) -> Arc<Session> {
    common::bash(t, LONG).await
}

async fn wait(s: &Session, pattern: &str) -> AwaitResult {
    let r = s
        .await_output(spec(pattern, Since::LastInput, LONG))
        .await
        .unwrap();
    assert_eq!(
        r.outcome,
        WaitOutcome::Matched,
        "waiting for {pattern:?}: {r:#?}"
    );
    r
}

/// The prompt that follows the last input.
async fn prompt(s: &Session) {
    wait(s, r"^\$ $").await;
}

#[tokio::test]
async fn echo_round_trip_never_matches_the_typed_command() {
    let t = terminals();
    let s = bash(&t).await;
    s.send_text("sleep 0.05; echo FINISHED_$((40 + 2))\n", "test")
        .unwrap();
    let r = wait(&s, "FINISHED_42").await;
    // Had the echo matched, the line would be the command line.
    assert_eq!(r.matched_line.as_deref(), Some("FINISHED_42"));
    // The pattern typed in the command itself never ends the wait: the command's own output
    // after it, a marker, does (the earliest match wins, so the echo would have won).
    s.send_text(
        "echo ONLY_IN_COMMAND > /dev/null; echo ECHO_PASSED_$((40 + 2))\n",
        "test",
    )
    .unwrap();
    let r = s
        .await_output(until_marker(
            "ONLY_IN_COMMAND",
            "^ECHO_PASSED_42$",
            Since::LastInput,
        ))
        .await
        .unwrap();
    assert_eq!(r.outcome, WaitOutcome::Stopped, "{r:#?}");
    assert!(
        r.tail.contains("ONLY_IN_COMMAND"),
        "the tail shows the echo: {}",
        r.tail
    );
}

/// Input that arrives while the shell is still busy after a command (here building its
/// prompt, as after `run_command`, whose end marker comes before the prompt) would be echoed
/// by the terminal at once and again by readline when it reads it, and the wait would match
/// the second echo. It is typed once the shell reads, so only output matches.
#[tokio::test]
async fn input_sent_before_the_prompt_is_back_never_matches_its_echo() {
    let t = terminals();
    let s = bash(&t).await;
    // An external command in PROMPT_COMMAND holds the terminal as a job of its own; a
    // command substitution keeps the shell in front, reading a pipe.
    for (n, prompt_command) in ["sleep 0.1", "x=$(sleep 0.1)"].iter().enumerate() {
        shell::run_command(
            &s,
            &format!("PROMPT_COMMAND='{prompt_command}'"),
            LONG,
            "test",
        )
        .await
        .unwrap();
        for i in 0..2 {
            let r = shell::run_command(&s, "true", LONG, "test").await.unwrap();
            assert_eq!(r.exit_code, Some(0));
            let token = format!("BUILD_OK_{n}_{i}");
            s.send_text(&format!("sleep 0.05; echo {token}\n"), "test")
                .unwrap();
            let r = wait(&s, &token).await;
            assert_eq!(
                r.matched_line.as_deref(),
                Some(token.as_str()),
                "{prompt_command}: {}",
                s.content(Content::History)
            );
        }
        // Typed input right after the output of typed input: the same.
        s.send_text("echo FIRST\n", "test").unwrap();
        wait(&s, "^FIRST$").await;
        let line = format!("echo SECOND_$((1+{n}))");
        s.send_text(&format!("{line}\n"), "test").unwrap();
        let token = format!("SECOND_{}", 1 + n);
        let r = wait(&s, &token).await;
        assert_eq!(r.matched_line.as_deref(), Some(token.as_str()));
        // Typed once, so echoed once.
        let history = s.content(Content::History);
        assert_eq!(history.matches(&line).count(), 1, "{history}");
    }
}

/// Interrupting a command and typing the next one at once: the terminal is the dying
/// job's until the shell takes it back, and the next line must still be typed once.
#[tokio::test]
async fn input_sent_right_after_ctrl_c_never_matches_its_echo() {
    let t = terminals();
    let s = bash(&t).await;
    for i in 0..5 {
        // The program prints once it holds the terminal, so Ctrl-C is for it.
        s.send_text("sh -c 'echo SLEEPING; exec sleep 30'\n", "test")
            .unwrap();
        wait(&s, "^SLEEPING").await;
        s.send_keys(&[KeyPress::Ctrl('c')], "test").unwrap();
        let token = format!("AFTER_CTRL_C_{i}");
        s.send_text(&format!("echo {token}\n"), "test").unwrap();
        let r = wait(&s, &token).await;
        assert_eq!(
            r.matched_line.as_deref(),
            Some(token.as_str()),
            "{}",
            s.content(Content::History)
        );
    }
}

/// Typed input that waits for a reader still reaches every kind of reader at once: the
/// shell's own `read`, a program in cooked mode, a shell without line editing, and a
/// program that reads only after a while.
#[tokio::test]
async fn cooked_mode_readers_get_their_input() {
    let t = terminals();
    let s = bash(&t).await;
    // Bounded well below the hold's limit: input held until then would time out here.
    let quick = Duration::from_secs(3);
    let within = |pattern: &str| spec(pattern, Since::LastInput, quick);
    s.send_text("read -p 'Name? ' N; echo \"Hello $N\"\n", "test")
        .unwrap();
    assert_eq!(
        s.await_output(within(r"Name\? $")).await.unwrap().outcome,
        WaitOutcome::Matched
    );
    s.send_text("alice\n", "test").unwrap();
    let r = s.await_output(within("^Hello alice$")).await.unwrap();
    assert_eq!(r.outcome, WaitOutcome::Matched, "{r:?}");
    prompt(&s).await;
    s.send_text(
        "sh -c 'echo READY; sleep 0.3; read x; echo \"got $x\"'\n",
        "test",
    )
    .unwrap();
    wait(&s, "^READY").await;
    s.send_text("later\n", "test").unwrap();
    wait(&s, "^got later$").await;
    prompt(&s).await;
    s.send_text("cat\n", "test").unwrap();
    s.send_text("meow\n", "test").unwrap();
    let r = s.await_output(within("^meow$")).await.unwrap();
    assert_eq!(r.outcome, WaitOutcome::Matched, "{r:?}");
    // Typed once cat reads: the terminal echoes the line, then cat prints it.
    let history = s.content(Content::History);
    assert!(history.ends_with("$ cat\nmeow\nmeow"), "{history}\n{r:?}");
    s.send_keys(&[KeyPress::Ctrl('d')], "test").unwrap();
    prompt(&s).await;

    let dash = t
        .open(OpenOptions {
            program: Program::Command(vec!["sh".into()]),
            env: vec![("PS1".into(), "$ ".into())],
            ..OpenOptions::default()
        })
        .unwrap();
    assert!(dash.wait_for_output(LONG).await);
    for i in 0..3 {
        dash.send_text(&format!("echo DASH_$(({i}+5))\n"), "test")
            .unwrap();
        let token = format!("DASH_{}", i + 5);
        let r = dash.await_output(within(&token)).await.unwrap();
        assert_eq!(r.matched_line.as_deref(), Some(token.as_str()), "{r:?}");
    }
}

#[tokio::test]
async fn text_already_on_screen_never_matches() {
    let t = terminals();
    let s = bash(&t).await;
    s.send_text("echo READY_NOW\n", "test").unwrap();
    wait(&s, "^READY_NOW").await;
    // Everything after the next input, up to its marker, is looked at: no READY_NOW in it.
    s.send_text("echo INPUT_DONE_$((40 + 2))\n", "test")
        .unwrap();
    let r = s
        .await_output(until_marker(
            "READY_NOW",
            "^INPUT_DONE_42$",
            Since::LastInput,
        ))
        .await
        .unwrap();
    assert_eq!(r.outcome, WaitOutcome::Stopped, "{r:#?}");
    assert!(s.content(Content::Screen).contains("READY_NOW"));
    // `since: screen` is the seed's behaviour and sees it at once; `all` sees history.
    let r = s
        .await_output(spec("^READY_NOW", Since::Screen, LONG))
        .await
        .unwrap();
    assert_eq!(r.outcome, WaitOutcome::Matched);
    let r = s
        .await_output(spec("^READY_NOW", Since::All, LONG))
        .await
        .unwrap();
    assert_eq!(r.outcome, WaitOutcome::Matched);
    // `entry` waits for new output only: the wait is registered (on its first poll) before
    // the marker is typed, and the marker, not the old text, ends it.
    let entry = s.await_output(until_marker("READY_NOW", "^ENTRY_DONE_42$", Since::Entry));
    let mut entry = std::pin::pin!(entry);
    assert!(
        futures::poll!(&mut entry).is_pending(),
        "READY_NOW matched at once"
    );
    s.send_text("echo ENTRY_DONE_$((40 + 2))\n", "test")
        .unwrap();
    let r = entry.await.unwrap();
    assert_eq!(r.outcome, WaitOutcome::Stopped, "{r:#?}");
}

/// A wait for `pattern` that the output `marker`, printed after everything the wait must look
/// at, ends as a stop pattern: proof that `pattern` did not come before the marker, without
/// waiting for a time in which it might have.
fn until_marker(pattern: &str, marker: &str, since: Since) -> AwaitSpec {
    AwaitSpec {
        stop_patterns: vec![Regex::new(&format!("(?mR){marker}")).unwrap()],
        ..spec(pattern, since, LONG)
    }
}

#[tokio::test]
async fn a_line_that_scrolled_far_away_is_still_matched() {
    let t = terminals();
    let s = bash(&t).await;
    s.send_text("seq 1 200000\n", "test").unwrap();
    let r = wait(&s, "^100000$").await;
    assert_eq!(r.matched_text.as_deref(), Some("100000"));
    wait(&s, "^200000$").await;
    // Scrollback is bounded: 10,000 lines kept, but the count goes on.
    let info = s.info();
    assert!(info.history_lines >= 200_000, "{info:?}");
}

#[tokio::test]
async fn a_ten_thousand_character_line_arrives_whole() {
    let t = terminals();
    let s = bash(&t).await;
    let payload: String = (0..10_000)
        .map(|i| (b'a' + (i % 26) as u8) as char)
        .collect();
    s.send_text(&format!("echo {payload} | wc -c; echo {payload}\n"), "test")
        .unwrap();
    wait(&s, "^10001$").await;
    let tail: String = payload[payload.len() - 30..].to_string();
    wait(&s, &format!("{tail}$")).await;
    let since = s.content(Content::SinceInput(None));
    assert!(
        since.lines().any(|l| l == payload),
        "the line came back cut"
    );
}

#[tokio::test]
async fn stop_patterns_captures_and_exit() {
    let t = terminals();
    let s = bash(&t).await;
    s.send_text("echo 'ERROR: disk full'; echo never\n", "test")
        .unwrap();
    let r = s
        .await_output(AwaitSpec {
            pattern: Some(Regex::new("never").unwrap()),
            stop_patterns: vec![Regex::new(r"ERROR: (\w+)").unwrap()],
            since: Since::LastInput,
            timeout: LONG,
            typist: None,
            quiet: None,
        })
        .await
        .unwrap();
    assert_eq!(r.outcome, WaitOutcome::Stopped);
    assert_eq!(r.stop_pattern.as_deref(), Some(r"ERROR: (\w+)"));
    assert_eq!(r.groups, [Some("disk".to_string())]);

    s.send_text("echo version 3.14; exit 7\n", "test").unwrap();
    let r = s
        .await_output(spec(
            r"version (?<major>\d+)\.(\d+)",
            Since::LastInput,
            LONG,
        ))
        .await
        .unwrap();
    assert_eq!(r.named_groups.get("major").map(String::as_str), Some("3"));
    let r = s
        .await_output(spec("will never appear", Since::LastInput, LONG))
        .await
        .unwrap();
    assert_eq!(r.outcome, WaitOutcome::Exited);
    assert_eq!(r.exit.as_ref().and_then(|e| e.code), Some(7));
    // An exited session keeps its screen and status until it is closed.
    assert!(s.content(Content::Screen).contains("version 3.14"));
    assert!(!s.info().running);
    assert!(matches!(
        s.send_text("echo\n", "test"),
        Err(TermError::Exited { .. })
    ));
    t.close(s.id()).await.unwrap();
    assert!(matches!(t.get(s.id()), Err(TermError::NotFound(_))));
}

#[tokio::test]
async fn keys_reach_the_program() {
    let t = terminals();
    let s = bash(&t).await;
    s.send_text("sh -c 'echo SLEEPING; exec sleep 100'\n", "test")
        .unwrap();
    wait(&s, "^SLEEPING").await;
    s.send_keys(&[KeyPress::Ctrl('c')], "test").unwrap();
    prompt(&s).await;
    s.send_keys(
        &[
            KeyPress::Text("echo keys".into()),
            KeyPress::Named(Named::Left),
            KeyPress::Named(Named::Left),
            KeyPress::Text("-".into()),
            KeyPress::Named(Named::End),
            KeyPress::Text("!".into()),
            KeyPress::Named(Named::Enter),
        ],
        "test",
    )
    .unwrap();
    wait(&s, "^ke-ys!$").await;
}

#[tokio::test]
async fn full_screen_programs_run_and_their_screen_is_read() {
    let t = terminals();
    let s = bash(&t).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lines.txt");
    let text: String = (1..=200).map(|i| format!("row {i}\n")).collect();
    std::fs::write(&file, text).unwrap();
    s.send_text(&format!("LESS= less {}\n", file.display()), "test")
        .unwrap();
    let r = s
        .await_output(spec("^row 29$", Since::Screen, LONG))
        .await
        .unwrap();
    assert_eq!(
        r.outcome,
        WaitOutcome::Matched,
        "{}",
        s.content(Content::Screen)
    );
    let screen = s.content(Content::Screen);
    assert!(screen.starts_with("row 1\n"), "{screen}");
    // `less` turns on application cursor keys; Down must scroll one line.
    s.send_keys(&[KeyPress::Named(Named::Down)], "test")
        .unwrap();
    let r = s
        .await_output(spec("^row 30$", Since::Screen, LONG))
        .await
        .unwrap();
    assert_eq!(r.outcome, WaitOutcome::Matched);
    s.send_keys(&[KeyPress::Named(Named::PageDown)], "test")
        .unwrap();
    let r = s
        .await_output(spec("^row 59$", Since::Screen, LONG))
        .await
        .unwrap();
    assert_eq!(r.outcome, WaitOutcome::Matched);
    s.send_text("q", "test").unwrap();
    prompt(&s).await;

    // vim asks for the cursor position and device attributes; it must start and draw.
    s.send_text(&format!("vim -u NONE -N {}\n", file.display()), "test")
        .unwrap();
    let r = s
        .await_output(spec(r"^row 1$", Since::Screen, LONG))
        .await
        .unwrap();
    assert_eq!(
        r.outcome,
        WaitOutcome::Matched,
        "{}",
        s.content(Content::Screen)
    );
    assert!(s.snapshot().alternate_screen);
    s.send_text(":q!\r", "test").unwrap();
    // The screen's lines are trimmed: the prompt reads `$`.
    let r = s
        .await_output(spec(r"^\$$", Since::Screen, LONG))
        .await
        .unwrap();
    assert_eq!(
        r.outcome,
        WaitOutcome::Matched,
        "{}",
        s.content(Content::Screen)
    );
    t.close(s.id()).await.unwrap();
}

#[tokio::test]
async fn styled_cells_and_resizes_including_absurd_ones() {
    let t = terminals();
    let s = bash(&t).await;
    s.send_text("printf '\\033[1;31mRED\\033[0m\\n'\n", "test")
        .unwrap();
    wait(&s, "^RED$").await;
    let snap = s.snapshot();
    let row = (0..snap.rows)
        .find(|&r| {
            snap.cell(r, 0).is_some_and(|c| c.text == "R")
                && snap.cell(r, 1).is_some_and(|c| c.text == "E")
        })
        .unwrap();
    let cell = snap.cell(row, 0).unwrap();
    assert!(cell.bold);
    assert_eq!(cell.fg, flowdeck::term::screen::Color::Indexed(1));
    assert_eq!(s.resize(0, 0).unwrap(), Size { cols: 2, rows: 2 });
    assert_eq!(s.resize(1, 1).unwrap(), Size { cols: 2, rows: 2 });
    s.send_text("stty size\n", "test").unwrap();
    wait(&s, "^2 2$").await;
    assert_eq!(
        s.resize(100, 40).unwrap(),
        Size {
            cols: 100,
            rows: 40
        }
    );
    s.send_text("stty size\n", "test").unwrap();
    wait(&s, "^40 100$").await;
}

#[tokio::test]
async fn binary_output_and_hostile_sequences_do_no_harm() {
    let t = terminals();
    let s = bash(&t).await;
    s.send_text("head -c 200000 /dev/urandom; printf '\\033[99999;99999H\\033[5;2r\\033[99999L\\377\\376\\033P1$r\\033\\\\'; echo; echo SURVIVED\n", "test").unwrap();
    wait(&s, "SURVIVED$").await;
    s.send_text("stty sane; echo OK_AFTER\n", "test").unwrap();
    wait(&s, "^OK_AFTER$").await;
}

#[tokio::test]
async fn run_command_returns_status_and_output_and_leaves_no_history() {
    let t = terminals();
    let s = bash(&t).await;
    let r = shell::run_command(&s, "true", LONG, "test").await.unwrap();
    assert_eq!(
        (r.outcome, r.exit_code, r.output.as_str()),
        (CommandOutcome::Completed, Some(0), "")
    );
    let r = shell::run_command(&s, "echo out; echo err >&2; (exit 3)", LONG, "test")
        .await
        .unwrap();
    assert_eq!(r.exit_code, Some(3));
    assert_eq!(r.output, "out\nerr");
    // Quotes, a heredoc over several lines, a tab, and text that looks like a marker.
    let r = shell::run_command(
        &s,
        "cat <<'EOF'\nit's \"quoted\"\n\ttabbed __FD1234:E:0\nEOF",
        LONG,
        "test",
    )
    .await
    .unwrap();
    assert_eq!(r.exit_code, Some(0));
    assert_eq!(r.output, "it's \"quoted\"\n        tabbed __FD1234:E:0");
    // A syntax error is the command's failure, not a hang.
    let r = shell::run_command(&s, "if then fi (", LONG, "test")
        .await
        .unwrap();
    assert_eq!(r.exit_code, Some(2));
    // State persists like a typed command: cd and variables stay.
    shell::run_command(&s, "cd /tmp && X=kept", LONG, "test")
        .await
        .unwrap();
    let r = shell::run_command(&s, "pwd; echo $X", LONG, "test")
        .await
        .unwrap();
    assert_eq!(r.output, "/tmp\nkept");
    // A long command is typed in pieces and still runs whole.
    let long = format!("echo {} | wc -c", "y".repeat(5000));
    let r = shell::run_command(&s, &long, LONG, "test").await.unwrap();
    assert_eq!(r.output.trim(), "5001");
    // Output longer than the history keeps its end, marked as cut.
    let r = shell::run_command(&s, "seq 1 300000", LONG, "test")
        .await
        .unwrap();
    assert_eq!(r.exit_code, Some(0));
    assert!(
        r.output.starts_with("[...output cut"),
        "{}",
        &r.output[..80]
    );
    assert!(
        r.output.ends_with("\n300000"),
        "{}",
        &r.output[r.output.len() - 40..]
    );
    // Timeouts are results.
    let r = shell::run_command(&s, "sleep 5", Duration::from_millis(200), "test")
        .await
        .unwrap();
    assert_eq!(r.outcome, CommandOutcome::Timeout);
    s.send_keys(&[KeyPress::Ctrl('c')], "test").unwrap();
    prompt(&s).await;
    // Nothing of the framing is left in the shell's history.
    s.send_text("history\n", "test").unwrap();
    let r = wait(&s, r"\d+\s+history\s*\n\$ $").await;
    let listing = s.content(Content::SinceInput(None));
    assert!(!listing.contains("__FD"), "{listing}");
    assert!(listing.contains("history"), "{r:?}");
}

/// What the framing of a shown command would leave on a screen or in a history.
fn framing_in(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| {
            l.contains("__FD") || l.contains("case \"$(history") || l.contains("printf '%s%s:B")
        })
        .collect()
}

/// The prompt after the output of the run `run:r1`'s last command.
async fn run_prompt(s: &Session) {
    let mut prompt = spec(r"^\$ $", Since::LastInput, LONG);
    prompt.typist = Some("run:r1".into());
    let back = s.await_output(prompt).await.unwrap();
    assert_eq!(back.outcome, WaitOutcome::Matched, "{back:#?}");
}

/// The screen's lines with text, right-trimmed.
fn screen_lines(s: &Session) -> Vec<String> {
    s.content(Content::Screen)
        .lines()
        .map(|l| l.trim_end().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// A run's command looks on the pane as if a person had typed it: the prompt, the command,
/// its output, the next prompt; no framing line, no markers. The caller still gets its
/// output and status exactly, and its typist's "since the last input" is the output.
#[tokio::test]
async fn run_command_shows_the_command_and_its_output_and_no_plumbing() {
    let t = terminals();
    let s = bash(&t).await;
    let command = r#"echo hello; echo "a'b"; printf 'x\ny\n'"#;
    let r = shell::run_command(&s, command, LONG, "run:r1")
        .await
        .unwrap();
    assert_eq!(
        (r.outcome, r.exit_code, r.output.as_str()),
        (CommandOutcome::Completed, Some(0), "hello\na'b\nx\ny")
    );
    // Output without a final newline, and a failure status.
    let r = shell::run_command(&s, "printf 'no newline'; (exit 4)", LONG, "run:r1")
        .await
        .unwrap();
    assert_eq!(
        (r.outcome, r.exit_code, r.output.as_str()),
        (CommandOutcome::Completed, Some(4), "no newline")
    );
    // The run's "since the last input" starts at the output, and the prompt follows.
    run_prompt(&s).await;
    assert_eq!(
        s.content(Content::SinceInput(Some("run:r1".into()))),
        "no newline\n$ "
    );
    // A multi-line command with a control character in it.
    let r = shell::run_command(&s, "echo one\necho 'two\tT'", LONG, "run:r1")
        .await
        .unwrap();
    assert_eq!(r.output, "one\ntwo     T");
    run_prompt(&s).await;
    let expected = [
        format!("$ {command}"),
        "hello".into(),
        "a'b".into(),
        "x".into(),
        "y".into(),
        "$ printf 'no newline'; (exit 4)".into(),
        "no newline".into(),
        "$ echo one".into(),
        "> echo 'two       T'".into(),
        "one".into(),
        "two     T".into(),
        "$".into(),
    ];
    assert_eq!(screen_lines(&s), expected, "{}", s.content(Content::Screen));
    let history = s.content(Content::History);
    let framing = framing_in(&history);
    assert!(framing.is_empty(), "{framing:#?}\n{history}");
    let history: Vec<&str> = history.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        history.iter().map(|l| l.trim_end()).collect::<Vec<_>>(),
        expected.iter().map(String::as_str).collect::<Vec<_>>()
    );
}

/// A command's output is shown as it comes, not when it ends: a long build shows its
/// progress, and waits on the run's typist see it while the command still runs.
#[tokio::test]
async fn run_command_output_is_shown_while_it_runs() {
    let t = terminals();
    let s = bash(&t).await;
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("gate");
    // The command cannot end before the test opens the gate.
    let command = format!(
        "for i in 1 2 3; do echo tick $i; sleep 0.2; done; while [ ! -e {} ]; do sleep 0.05; done; echo done",
        gate.display()
    );
    // The line editor turns bracketed paste on for each line it reads (from the next one
    // on, once bound), and off once read.
    s.send_text("bind 'set enable-bracketed-paste on'\n", "test")
        .unwrap();
    prompt(&s).await;
    s.send_text("true\n", "test").unwrap();
    prompt(&s).await;
    assert!(s.with_screen(vt100::Screen::bracketed_paste));
    let run = {
        let s = s.clone();
        tokio::spawn(async move { shell::run_command(&s, &command, LONG, "run:r1").await })
    };
    let seen = s
        .await_output(spec("^tick 1$", Since::Screen, LONG))
        .await
        .unwrap();
    assert_eq!(seen.outcome, WaitOutcome::Matched, "{seen:#?}");
    let mut since_input = spec("^tick 3$", Since::LastInput, LONG);
    since_input.typist = Some("run:r1".into());
    let seen = s.await_output(since_input).await.unwrap();
    assert_eq!(seen.outcome, WaitOutcome::Matched, "{seen:#?}");
    assert!(
        !run.is_finished(),
        "the command ended before its gate opened"
    );
    // The shell turned bracketed paste off once it read the line (hidden with the framing):
    // the screen knows, so a paste into the running command is not wrapped.
    assert!(
        !s.with_screen(vt100::Screen::bracketed_paste),
        "the screen still thinks the line editor reads"
    );
    let screen = s.content(Content::Screen);
    assert!(framing_in(&screen).is_empty(), "{screen}");
    std::fs::write(&gate, "").unwrap();
    let r = tokio::time::timeout(LONG, run)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        (r.outcome, r.exit_code, r.output.as_str()),
        (
            CommandOutcome::Completed,
            Some(0),
            "tick 1\ntick 2\ntick 3\ndone"
        )
    );
}

/// A shown command out of time returns what it printed so far; from then on it is shown as
/// it comes, end marker and all, and the shell takes commands again.
#[tokio::test]
async fn run_command_timeout_returns_the_output_so_far() {
    let t = terminals();
    let s = bash(&t).await;
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("gate");
    let command = format!(
        "echo started; while [ ! -e {} ]; do sleep 0.05; done",
        gate.display()
    );
    let run = {
        let s = s.clone();
        tokio::spawn(async move {
            shell::run_command(&s, &command, Duration::from_millis(300), "run:r1").await
        })
    };
    let r = tokio::time::timeout(LONG, run)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        (r.outcome, r.exit_code, r.output.as_str()),
        (CommandOutcome::Timeout, None, "started")
    );
    std::fs::write(&gate, "").unwrap();
    let r = shell::run_command(&s, "echo AGAIN_$((1 + 1))", LONG, "run:r1")
        .await
        .unwrap();
    assert_eq!((r.exit_code, r.output.as_str()), (Some(0), "AGAIN_2"));
}

/// Output that looks like another command's end marker is the command's output: shown and
/// returned as it is, and the real end is still found.
#[tokio::test]
async fn run_command_shows_fake_markers_as_they_are() {
    let t = terminals();
    let s = bash(&t).await;
    let command =
        r#"echo '__FD0123456789abcdef:E:0'; printf '\n__FD0123456789abcdef:E:7\n__FD:B\n'"#;
    let r = shell::run_command(&s, command, LONG, "run:r1")
        .await
        .unwrap();
    assert_eq!(
        (r.outcome, r.exit_code, r.output.as_str()),
        (
            CommandOutcome::Completed,
            Some(0),
            "__FD0123456789abcdef:E:0\n\n__FD0123456789abcdef:E:7\n__FD:B"
        )
    );
    run_prompt(&s).await;
    assert_eq!(
        screen_lines(&s),
        [
            format!("$ {command}"),
            "__FD0123456789abcdef:E:0".into(),
            "__FD0123456789abcdef:E:7".into(),
            "__FD:B".into(),
            "$".into(),
        ],
        "{}",
        s.content(Content::Screen)
    );
}

/// Binary output that holds terminal queries gets answers, typed into the terminal; once
/// the program ends, the shell's line editor reads them onto its command line. A framed
/// command typed after them would be their continuation (a syntax error, then a timeout).
#[tokio::test]
async fn run_command_works_after_query_answers_landed_on_the_command_line() {
    let t = terminals();
    let s = bash(&t).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("binary");
    let mut bytes: Vec<u8> = (0..4000u32)
        .map(|i| (i * 7919 % 251) as u8)
        .filter(|&b| b != 0x1b)
        .collect();
    // Cursor position and device attribute queries, as a binary file can hold by chance.
    bytes.extend_from_slice(b"\x1b[6n\x1b[c");
    std::fs::write(&file, &bytes).unwrap();
    s.send_text(&format!("cat {}; echo\n", file.display()), "test")
        .unwrap();
    // The answers end up after the prompt.
    let r = s
        .await_output(spec(r"^\$ .*c$", Since::Screen, LONG))
        .await
        .unwrap();
    assert_eq!(
        r.outcome,
        WaitOutcome::Matched,
        "{}",
        s.content(Content::Screen)
    );
    let r = shell::run_command(&s, "echo CLEAN_$((1 + 1))", LONG, "test")
        .await
        .unwrap();
    assert_eq!(
        (r.outcome, r.exit_code, r.output.as_str()),
        (CommandOutcome::Completed, Some(0), "CLEAN_2")
    );
}

/// A shell that does not take the framed line as a command (here it reads a here-document)
/// gets a clear error naming what its line holds, not a bare timeout.
#[tokio::test]
async fn run_command_says_when_the_shell_did_not_start_it() {
    let t = terminals();
    let s = bash(&t).await;
    s.send_text("cat <<'STOP'\n", "test").unwrap();
    wait(&s, r"^> $").await;
    let started = std::time::Instant::now();
    let err = shell::run_command(&s, "echo never", Duration::from_millis(500), "test")
        .await
        .unwrap_err();
    assert!(started.elapsed() < LONG);
    match &err {
        // The shell still reads the here-document: its continuation prompt.
        TermError::NotStarted { line, .. } => assert_eq!(line, ">"),
        other => panic!("{other:?}"),
    }
    assert_eq!(err.code(), "not_started");
    assert!(err.to_string().contains("did not start"), "{err}");
    // Ctrl-C leaves the here-document, and the shell takes commands again.
    s.send_keys(&[KeyPress::Ctrl('c')], "test").unwrap();
    prompt(&s).await;
    let r = shell::run_command(&s, "echo BACK", LONG, "test")
        .await
        .unwrap();
    assert_eq!(r.output, "BACK");
}

/// A command that ends the shell reports the shell's exit status, and says it ended.
#[tokio::test]
async fn run_command_exit_reports_its_status() {
    let t = terminals();
    let s = bash(&t).await;
    let r = shell::run_command(&s, "echo bye; exit 7", LONG, "test")
        .await
        .unwrap();
    assert_eq!(
        (r.outcome, r.exit_code, r.output.lines().next()),
        (CommandOutcome::Exited, Some(7), Some("bye"))
    );
    assert_eq!(s.exit().and_then(|e| e.code), Some(7));
    // The session keeps its screen; further shell operations say it has exited.
    assert!(matches!(
        shell::run_command(&s, "true", LONG, "test").await,
        Err(TermError::Exited { .. })
    ));
}

/// NUL bytes cannot reach a program or a shell variable: refused as invalid, never cut.
#[tokio::test]
async fn nul_bytes_and_impossible_keys_are_invalid_arguments() {
    let t = terminals();
    let invalid = |r: Result<Arc<Session>, TermError>| match r {
        Err(e @ TermError::InvalidArgument { .. }) => e.to_string(),
        other => panic!("{other:?}"),
    };
    let mut env = bash_options();
    env.env.push(("WITH_NUL".into(), "a\0b".into()));
    assert!(invalid(t.open(env)).contains("WITH_NUL"));
    let argv = OpenOptions {
        program: Program::Command(vec!["bash".into(), "-c".into(), "echo a\0b".into()]),
        ..OpenOptions::default()
    };
    assert!(invalid(t.open(argv)).contains("argument 2"));
    let cwd = OpenOptions {
        cwd: Some("/tmp\0/x".into()),
        ..bash_options()
    };
    assert!(invalid(t.open(cwd)).contains("working directory"));
    let mut name = bash_options();
    name.env.push(("BAD\0NAME".into(), "x".into()));
    assert!(matches!(t.open(name), Err(TermError::InvalidEnvName(_))));
    assert!(t.is_empty(), "nothing was started");

    let s = bash(&t).await;
    let vars = [("V".to_string(), "a\0b".to_string())];
    assert!(matches!(
        shell::export_env(&s, &vars, LONG, "test").await,
        Err(TermError::InvalidArgument { .. })
    ));
    assert!(matches!(
        shell::run_command(&s, "echo a\0b", LONG, "test").await,
        Err(TermError::InvalidArgument { .. })
    ));
    let err = s.send_keys(&[KeyPress::Ctrl('1')], "test").unwrap_err();
    assert_eq!(err.code(), "invalid_argument", "{err}");
}

#[tokio::test]
async fn shell_operations_refuse_a_session_that_is_not_at_a_shell_prompt() {
    let t = terminals();
    let s = bash(&t).await;
    // The program prints once it is in the foreground (bash hands it the terminal first).
    s.send_text("sh -c 'echo IN_FOREGROUND; exec cat'\n", "test")
        .unwrap();
    wait(&s, "^IN_FOREGROUND").await;
    match shell::run_command(&s, "true", LONG, "test").await {
        Err(TermError::NotAShell { foreground, .. }) => {
            assert!(foreground == "sh" || foreground == "cat", "{foreground}")
        }
        other => panic!("{other:?}"),
    }
    let repl = t
        .open(OpenOptions {
            program: Program::Command(vec!["cat".into()]),
            ..OpenOptions::default()
        })
        .unwrap();
    assert!(matches!(
        shell::read_env(&repl, &["HOME"], LONG, "test").await,
        Err(TermError::NotAShell { .. })
    ));
}

#[tokio::test]
async fn environment_values_round_trip_literally() {
    let t = terminals();
    let s = bash(&t).await;
    let marker = std::env::temp_dir().join(format!("flowdeck-pwned-{}", std::process::id()));
    let tricky = [
        ("PLAIN", "build".to_string()),
        ("SPACES", "  two  spaces  ".to_string()),
        ("QUOTES", r#"it's "quoted" \back\slash"#.to_string()),
        ("NEWLINES", "line1\nline2\n\n".to_string()),
        ("UNICODE", "héllo wörld ✓ 中文".to_string()),
        (
            "SUBST",
            format!(
                "$(touch {}) `touch {}` ${{HOME}}",
                marker.display(),
                marker.display()
            ),
        ),
        ("CONTROL", "tab\there\u{3}ctrl-c\u{1b}[31m".to_string()),
        ("EMPTY", String::new()),
    ];
    let vars: Vec<(String, String)> = tricky
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    shell::export_env(&s, &vars, LONG, "test").await.unwrap();
    let names: Vec<&str> = tricky
        .iter()
        .map(|(k, _)| *k)
        .chain(["NOT_SET_AT_ALL"])
        .collect();
    let read = shell::read_env(&s, &names, LONG, "test").await.unwrap();
    for (name, value) in &tricky {
        assert_eq!(read.get(*name), Some(&Some(value.clone())), "{name}");
    }
    assert_eq!(read.get("NOT_SET_AT_ALL"), Some(&None));
    assert!(!marker.exists(), "a value was executed");
    // Exported means children see it too.
    let r = shell::run_command(&s, "bash -c 'printf %s \"$UNICODE\"'", LONG, "test")
        .await
        .unwrap();
    assert_eq!(r.output, "héllo wörld ✓ 中文");
    assert!(matches!(
        shell::read_env(&s, &["NOT-VALID"], LONG, "test").await,
        Err(TermError::InvalidEnvName(_))
    ));
}

/// What flowdeck's own shell plumbing would leave on a screen or in a history.
fn plumbing_in(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| {
            l.contains("__FD")
                || l.trim_start().starts_with("V:")
                || l.contains("eval '")
                || l.contains("history -d")
                || l.contains("printf")
        })
        .collect()
}

#[tokio::test]
async fn reading_and_exporting_variables_leave_no_plumbing_on_screen_or_in_history() {
    let t = terminals();
    let s = bash(&t).await;
    let marker = std::env::temp_dir().join(format!("flowdeck-pwned-hush-{}", std::process::id()));
    // A person's command and its output, before: they stay.
    s.send_text("echo BEFORE_$((1 + 1))\n", "person").unwrap();
    wait(&s, "^BEFORE_2$").await;
    prompt(&s).await;
    let vars = vec![
        ("QUOTES".to_string(), r#"it's "quoted" \back"#.to_string()),
        ("NEWLINES".to_string(), "one\ntwo\n\n".to_string()),
        ("UNICODE".to_string(), "héllo ✓ 中文".to_string()),
        (
            "SUBST".to_string(),
            format!("$(touch {m}) `touch {m}`", m = marker.display()),
        ),
        ("MARKERISH".to_string(), "__FDnot-a-marker:E:0".to_string()),
    ];
    shell::export_env(&s, &vars, LONG, "run:r1").await.unwrap();
    let names: Vec<&str> = vars.iter().map(|(k, _)| k.as_str()).collect();
    let read = shell::read_env(&s, &names, LONG, "run:r1").await.unwrap();
    for (name, value) in &vars {
        assert_eq!(
            read.get(name.as_str()),
            Some(&Some(value.clone())),
            "{name}"
        );
    }
    assert!(!marker.exists(), "a value was executed");
    // Another export and read with a clean prompt before them.
    shell::export_env(&s, &[("AFTER".into(), "x y".into())], LONG, "run:r1")
        .await
        .unwrap();
    let again = shell::read_env(&s, &["AFTER"], LONG, "run:r1")
        .await
        .unwrap();
    assert_eq!(again.get("AFTER"), Some(&Some("x y".to_string())));
    // The shell is at its prompt, the values are exported, and the lines left no trace in
    // bash's history; a person typing next sees the shell work as always.
    s.send_text(
        "echo \"AFTER_$((2 + 2)) $UNICODE $(history | grep -c '[_]_FD')\"\n",
        "person",
    )
    .unwrap();
    wait(&s, "^AFTER_4 héllo ✓ 中文 0$").await;
    prompt(&s).await;

    let screen = s.content(Content::Screen);
    let history = s.content(Content::History);
    for (what, text) in [("screen", &screen), ("history", &history)] {
        let plumbing = plumbing_in(text);
        assert!(
            plumbing.is_empty(),
            "{what} shows plumbing: {plumbing:#?}\n{text}"
        );
        assert!(
            text.contains("BEFORE_2"),
            "{what} lost real output:\n{text}"
        );
        assert!(text.contains("AFTER_4"), "{what} lost real output:\n{text}");
    }
    // The screen shows the commands and the prompts, as a person left them: no blank
    // prompt line where each hidden line ran.
    let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.first().copied(),
        Some("$ echo BEFORE_$((1 + 1))"),
        "{screen}"
    );
    assert_eq!(lines.get(1).copied(), Some("BEFORE_2"), "{screen}");
    assert_eq!(lines.last().copied(), Some("$"), "{screen}");
    let bare_prompts = lines.iter().filter(|l| l.trim_end() == "$").count();
    assert_eq!(bare_prompts, 1, "{screen}");
}

/// Hiding gives up without losing anything: a line the shell did not start is shown (it
/// is part of the here-document now), the error says so, and once the shell is back at its
/// prompt the next read is hidden again.
#[tokio::test]
async fn a_hidden_line_the_shell_did_not_start_is_shown_and_hiding_recovers() {
    let t = terminals();
    let s = bash(&t).await;
    s.send_text("cat <<'STOP'\n", "test").unwrap();
    wait(&s, r"^> $").await;
    let err = shell::read_env(&s, &["HOME"], Duration::from_millis(500), "test")
        .await
        .unwrap_err();
    assert_eq!(err.code(), "not_started", "{err}");
    let history = s.content(Content::History);
    assert!(
        history.contains("history -d"),
        "the held line was lost:\n{history}"
    );
    // A cancelled read leaves nothing held either. It is cancelled once the shell has read its
    // whole line (the line's echo came, held, and the shell waits for the next line with
    // nothing left unread), so that something is held, and the Ctrl-C below meets no line
    // still being read.
    let before = s.info().output_bytes;
    let line_read = common::poll_until(LONG, "the shell to read the hidden line", || {
        (s.info().output_bytes > before && s.reading_input()).then_some(())
    });
    let answered = tokio::select! {
        answered = shell::read_env(&s, &["HOME"], LONG, "test") => Some(answered),
        () = line_read => None,
    };
    assert!(
        answered.is_none(),
        "the shell cannot answer from a here-document: {answered:?}"
    );
    s.send_keys(&[KeyPress::Ctrl('c')], "test").unwrap();
    prompt(&s).await;
    s.send_text("echo BACK_$((1 + 2))\n", "test").unwrap();
    wait(&s, "^BACK_3$").await;
    prompt(&s).await;
    let before = s.content(Content::History).lines().count();
    shell::export_env(&s, &[("AGAIN".into(), "it's".into())], LONG, "test")
        .await
        .unwrap();
    let read = shell::read_env(&s, &["AGAIN"], LONG, "test").await.unwrap();
    assert_eq!(read.get("AGAIN"), Some(&Some("it's".to_string())));
    let history = s.content(Content::History);
    assert_eq!(history.lines().count(), before, "{history}");
    assert!(history.ends_with("BACK_3\n$ "), "{history:?}");
}

/// A framed line still waiting for the shell to read it when its caller gives up (its step
/// timed out or was cancelled while the prompt was slow) is never typed: it would run later
/// with nobody following it, a command run after its step was cancelled, and a read of
/// variables printing their values on the screen.
#[tokio::test]
async fn a_framed_line_given_up_before_the_shell_read_it_never_runs() {
    let t = terminals();
    let s = bash(&t).await;
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("gate");
    let made = std::process::Command::new("mkfifo")
        .arg(&gate)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo failed");
    // Each prompt now waits for the gate: the shell is in the foreground, at its prompt as
    // far as a process group can tell, but reads no terminal, so typed lines are held.
    s.send_text(
        &format!(
            "PROMPT_COMMAND='echo GATE_$((6 * 7)); read -r _ < {}'\n",
            gate.display()
        ),
        "test",
    )
    .unwrap();
    wait(&s, "^GATE_42$").await;
    // Timed out: the line was queued (it is sent before the wait) and never began.
    let err = shell::read_env(&s, &["HOME"], Duration::from_millis(300), "test")
        .await
        .unwrap_err();
    assert_eq!(err.code(), "not_started", "{err}");
    // Cancelled: the callers drop their futures while the lines wait.
    let ran = dir.path().join("ran");
    let command = format!("echo RAN_$((40 + 2)) > {}", ran.display());
    let cancelled = tokio::time::timeout(
        Duration::from_millis(300),
        shell::run_command(&s, &command, LONG, "test"),
    )
    .await;
    assert!(
        cancelled.is_err(),
        "the command cannot run yet: {cancelled:?}"
    );
    let cancelled = tokio::time::timeout(
        Duration::from_millis(300),
        shell::read_env(&s, &["PATH"], LONG, "test"),
    )
    .await;
    assert!(cancelled.is_err(), "the read cannot run yet: {cancelled:?}");
    // The gate opens and the shell reads the terminal again: the next line typed is this
    // one. (A line withdrawn too late would be read first, and its own prompt would wait at
    // the gate again, so this wait would fail.)
    let open = tokio::task::spawn_blocking(move || std::fs::write(&gate, "\n"));
    common::within(LONG, "the gate to open", open)
        .await
        .unwrap()
        .unwrap();
    s.send_text("unset PROMPT_COMMAND; echo AFTER_$((2 + 3))\n", "test")
        .unwrap();
    wait(&s, "^AFTER_5$").await;
    prompt(&s).await;
    assert!(!ran.exists(), "the cancelled command ran");
    let history = s.content(Content::History);
    assert!(!history.contains("RAN_42"), "{history}");
    assert_eq!(plumbing_in(&history), Vec::<&str>::new(), "{history}");
}

fn alive(pids: &[i32]) -> Vec<i32> {
    pids.iter()
        .copied()
        .filter(|&p| proc_info(p).is_some())
        .collect()
}

#[tokio::test]
async fn closing_ends_every_process_and_leaves_no_zombie() {
    let t = terminals();
    let s = bash(&t).await;
    // A child that ignores SIGTERM and SIGHUP, background jobs, a nohup child, a daemon that
    // leaves the session, and a writer that never stops, in the foreground.
    s.send_text(
        "bash -c 'trap \"\" TERM HUP; echo TRAPPED; while :; do sleep 0.1; done' & \
         sleep 1000 & nohup sleep 1001 >/dev/null 2>&1 & setsid sleep 1002 & \
         echo STARTED; yes\n",
        "test",
    )
    .unwrap();
    // The child ignores the signals only once its trap has run.
    let (trapped, flooding) = tokio::join!(wait(&s, "^TRAPPED$"), wait(&s, "^y$"));
    assert!(trapped.matched_text.is_some() && flooding.matched_text.is_some());
    // A child in the middle of an exec shows no environment (no marker) for a moment.
    let procs: Vec<i32> = common::wait_until(LONG, "the shell and its children", || {
        let procs: Vec<i32> = processes::session_processes(Some(s.pid() as i32), s.marker())
            .iter()
            .map(|p| p.pid)
            .collect();
        (procs.len() >= 6).then_some(procs)
    });
    let report = t.close(s.id()).await.unwrap();
    assert_eq!(report.survivors, 0, "{report:?}");
    assert!(
        report.killed >= 1,
        "the TERM-ignoring child needed SIGKILL: {report:?}"
    );
    // Gone means gone: not running, and not a zombie (reaped).
    assert_eq!(alive(&procs), Vec::<i32>::new());
    assert!(processes::session_processes(Some(s.pid() as i32), s.marker()).is_empty());
}

#[tokio::test]
async fn dropping_the_registry_ends_its_sessions() {
    let t = terminals();
    let s = bash(&t).await;
    s.send_text("sleep 1000 &\n", "test").unwrap();
    wait(&s, r"^\[1\] \d+").await;
    let (pid, marker) = (s.pid() as i32, s.marker().to_string());
    drop(s);
    drop(t);
    assert!(processes::session_processes(Some(pid), &marker).is_empty());
}

/// Spawns run outside the sessions' lock (so that lists never wait for a fork and an exec),
/// yet opens at once still cannot pass the limit or share a name, and a failed spawn gives
/// its slot back.
#[tokio::test]
async fn opens_at_once_keep_the_limit_and_names() {
    let t = Arc::new(Terminals::new(TermConfig {
        max_sessions: 3,
        kill_grace: Duration::from_millis(300),
        ..TermConfig::default()
    }));
    let opens: Vec<_> = (0..8)
        .map(|i| {
            let t = t.clone();
            std::thread::spawn(move || {
                t.open(OpenOptions {
                    // Half of them want one name.
                    name: (i % 2 == 0).then(|| "shared".to_string()),
                    ..bash_options()
                })
            })
        })
        .collect();
    let results: Vec<_> = opens.into_iter().map(|o| o.join().unwrap()).collect();
    let opened = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(opened, 3, "{results:?}");
    let named = results
        .iter()
        .filter(|r| r.as_ref().is_ok_and(|s| s.name() == Some("shared")))
        .count();
    assert!(named <= 1, "one name, one session: {results:?}");
    for r in &results {
        assert!(
            matches!(
                r,
                Ok(_) | Err(TermError::TooManySessions { .. }) | Err(TermError::NameTaken(_))
            ),
            "{r:?}"
        );
    }
    assert_eq!(t.list().len(), 3);
    t.close_all().await;
    let failed = t.open(OpenOptions {
        program: Program::Command(vec!["/no/such/program".into()]),
        ..OpenOptions::default()
    });
    assert!(matches!(failed, Err(TermError::Spawn { .. })), "{failed:?}");
    for _ in 0..3 {
        t.open(bash_options()).expect("every slot is free again");
    }
    t.close_all().await;
}

#[tokio::test]
async fn limits_names_and_lookups() {
    let t = Terminals::new(TermConfig {
        max_sessions: 2,
        kill_grace: Duration::from_millis(300),
        ..TermConfig::default()
    });
    let named = t
        .open(OpenOptions {
            name: Some("build.main".into()),
            ..bash_options()
        })
        .unwrap();
    assert_eq!(t.get("build.main").unwrap().id(), named.id());
    for bad in ["../etc", "a/b", "-rf", "", "x\u{202e}y", "nul\0"] {
        let r = t.open(OpenOptions {
            name: Some(bad.into()),
            ..bash_options()
        });
        assert!(matches!(r, Err(TermError::InvalidName(_))), "{bad:?}");
    }
    let r = t.open(OpenOptions {
        name: Some("build.main".into()),
        ..bash_options()
    });
    assert!(matches!(r, Err(TermError::NameTaken(_))));
    t.open(bash_options()).unwrap();
    let r = t.open(bash_options());
    assert!(
        matches!(r, Err(TermError::TooManySessions { open: 2, max: 2 })),
        "{r:?}"
    );
    assert_eq!(t.list().len(), 2);
    let r = t.open(OpenOptions {
        cwd: Some("/definitely/not/here".into()),
        ..bash_options()
    });
    assert!(matches!(
        r,
        Err(TermError::InvalidCwd(_)) | Err(TermError::TooManySessions { .. })
    ));
    t.close("build.main").await.unwrap();
    let r = t.open(OpenOptions {
        cwd: Some("/definitely/not/here".into()),
        ..bash_options()
    });
    assert!(matches!(r, Err(TermError::InvalidCwd(_))), "{r:?}");
    let r = t.open(OpenOptions {
        program: Program::Command(vec!["/no/such/program".into()]),
        ..OpenOptions::default()
    });
    assert!(matches!(r, Err(TermError::Spawn { .. })), "{r:?}");
    assert!(matches!(t.get("s999"), Err(TermError::NotFound(_))));
    t.close_all().await;
    assert!(t.is_empty());
}

#[tokio::test]
async fn a_cancelled_wait_is_removed_and_parallel_waits_all_return() {
    let t = terminals();
    let s = bash(&t).await;
    {
        // Registered on its first poll, then dropped while it waits.
        let cancelled = std::pin::pin!(s.await_output(spec("never", Since::Entry, LONG)));
        assert!(futures::poll!(cancelled).is_pending());
    }
    let waits = futures::future::join_all(
        (0..10).map(|i| s.await_output(spec(&format!("^N{i}$"), Since::LastInput, LONG))),
    );
    let send = async {
        s.send_text("for i in 0 1 2 3 4 5 6 7 8 9; do echo N$i; done\n", "test")
            .unwrap();
    };
    // Input first, then the waits: `last_input` makes the order safe.
    send.await;
    for r in waits.await {
        assert_eq!(r.unwrap().outcome, WaitOutcome::Matched);
    }
}

#[tokio::test]
async fn children_get_the_pty_and_nothing_else_of_flowdeck() {
    let t = terminals();
    let s = t
        .open(OpenOptions {
            program: Program::Command(vec![
                "sh".into(),
                "-c".into(),
                "echo STARTED; sleep 100".into(),
            ]),
            ..OpenOptions::default()
        })
        .unwrap();
    // Once it prints, the shell runs with its own environment and descriptors (no exec follows
    // that could leave /proc mid-change while we read it).
    wait(&s, "^STARTED").await;
    let fds: Vec<(String, String)> = std::fs::read_dir(format!("/proc/{}/fd", s.pid()))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let target = std::fs::read_link(e.path()).unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                target.display().to_string(),
            )
        })
        .collect();
    let mut names: Vec<&str> = fds.iter().map(|(n, _)| n.as_str()).collect();
    names.sort();
    assert_eq!(names, ["0", "1", "2"], "{fds:?}");
    assert!(
        fds.iter()
            .all(|(_, target)| target.starts_with("/dev/pts/")),
        "{fds:?}"
    );
    let environ = std::fs::read(format!("/proc/{}/environ", s.pid())).unwrap();
    let marker = format!("FLOWDECK_SESSION={}", s.marker());
    assert!(environ.split(|&b| b == 0).any(|e| e == marker.as_bytes()));
    t.close(s.id()).await.unwrap();
}

/// A program that reads nothing: the session holds at most `MAX_QUEUED_INPUT` bytes of input
/// for it, and refuses more with a retryable error instead of keeping it without bound.
#[tokio::test]
async fn input_a_program_never_reads_is_bounded() {
    let t = terminals();
    let s = t
        .open(OpenOptions {
            // Raw mode: the terminal keeps what it cannot pass on, and writes to it block.
            program: Program::Command(vec![
                "bash".into(),
                "-c".into(),
                "stty raw -echo; echo READY; exec sleep 300".into(),
            ]),
            ..OpenOptions::default()
        })
        .unwrap();
    let r = s
        .await_output(common::spec("READY", Since::All, LONG))
        .await
        .unwrap();
    assert_eq!(r.outcome, WaitOutcome::Matched, "{r:?}");
    let chunk = "x".repeat(MAX_INPUT_BYTES);
    for i in 0..MAX_QUEUED_INPUT / MAX_INPUT_BYTES {
        s.send_text(&chunk, "test")
            .unwrap_or_else(|e| panic!("input {i} within the limit: {e}"));
    }
    match s.send_text(&chunk, "test") {
        Err(TermError::InputQueueFull { queued, max, .. }) => {
            assert_eq!(max, MAX_QUEUED_INPUT);
            assert!(queued + MAX_INPUT_BYTES > max, "{queued}");
        }
        other => panic!("expected a full input queue, got {other:?}"),
    }
    t.close_all().await;
}
