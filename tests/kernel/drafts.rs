//! Drafts: a workflow written from what was done by hand (as the terminal layer saw it), run
//! in a fresh session, does the same work: plain commands, a failing one the person went
//! past, a `cd`, a python3 REPL, and a silent password prompt answered with a secret input.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use flowdeck::engine::{Actor, Engine, FinalState};
use flowdeck::workflow::action::{OpenTerminalParams, SendInputParams};
use flowdeck::workflow::draft::{Answer, Done, draft};
use serde_json::json;
use std::path::Path;

use crate::common;

fn done(line: &str, exit: i32) -> Done {
    Done {
        line: line.into(),
        exit: Some(exit),
        seconds: 0.1,
        ..Done::default()
    }
}

/// What a person did in `work`: set a prompt of their own, made a folder, looked for
/// something that was not there, went in, wrote a file from python3's REPL, and typed a
/// password that a script read.
fn by_hand(work: &str) -> Vec<Done> {
    vec![
        done("PS1='$ '", 0),
        done(&format!("mkdir -p {work}/out"), 0),
        done(&format!("grep -q never-there {work}/out/* 2>/dev/null"), 2),
        done(&format!("cd {work}/out"), 0),
        Done {
            line: "python3 -q".into(),
            exit: Some(0),
            seconds: 2.0,
            answers: vec![
                Answer {
                    prompt: ">>> ".into(),
                    text: "open('from-python', 'w').write(str(6 * 7))".into(),
                    hidden: false,
                },
                Answer {
                    prompt: "2\n>>> ".into(),
                    text: "exit()".into(),
                    hidden: false,
                },
            ],
            prompt_after: Some("$ ".into()),
        },
        Done {
            line: "read -rs -p 'Password: ' PW; echo; printf %s ${#PW} > length".into(),
            exit: Some(0),
            seconds: 3.0,
            answers: vec![Answer {
                prompt: "Password: ".into(),
                text: "correct horse".into(),
                hidden: true,
            }],
            prompt_after: Some("$ ".into()),
        },
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draft_of_what_was_done_by_hand_does_the_same_work_in_a_fresh_session() {
    let dir = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let steps = by_hand(&work.path().display().to_string());
    let drafted = draft("by_hand", "Drafted in a test.", &steps, &Default::default()).unwrap();
    assert_eq!(drafted.secrets, ["PASSWORD"]);
    assert!(!drafted.yaml.contains("correct horse"), "{}", drafted.yaml);
    std::fs::write(dir.path().join("by_hand.yaml"), &drafted.yaml).unwrap();
    let engine = Engine::open(dir.path(), common::test_config(1, false)).unwrap();

    let result = engine
        .run(common::run_request(
            "by_hand",
            &[("PASSWORD", "open sesame")],
        ))
        .await
        .unwrap();
    assert_eq!(result.final_state, FinalState::Completed, "{result:#?}");
    let out = work.path().join("out");
    assert_eq!(
        std::fs::read_to_string(out.join("from-python")).unwrap(),
        "42"
    );
    assert_eq!(std::fs::read_to_string(out.join("length")).unwrap(), "11");

    // Without the secret the draft cannot start; a step that fails where the person's did
    // not stops the run short of its end.
    let missing = engine
        .run(common::run_request("by_hand", &[]))
        .await
        .unwrap();
    assert_eq!(missing.final_state, FinalState::ValidationFailed);
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::write(&out, "a file where the folder goes").unwrap();
    let stopped = engine
        .run(common::run_request("by_hand", &[("PASSWORD", "x")]))
        .await
        .unwrap();
    assert_eq!(
        stopped.final_state,
        FinalState::ReturnValidationFailed,
        "{stopped:#?}"
    );
    assert_eq!(stopped.last_state.as_deref(), Some("mkdir_2"));
    engine.shutdown().await;
}

/// Types `text` into session `id` one key at a time, as a person does.
fn type_keys(engine: &Engine, id: &str, text: &str) {
    for c in text.chars() {
        engine
            .send_input(
                id,
                &common::params::<SendInputParams>(json!({ "input_text": c.to_string() })),
                &Actor::Cli,
            )
            .unwrap();
    }
}

/// Types a whole line at once, as an agent does.
fn type_line(engine: &Engine, id: &str, line: &str) {
    engine
        .send_input(
            id,
            &common::params::<SendInputParams>(json!({ "input_text": format!("{line}\n") })),
            &Actor::Cli,
        )
        .unwrap();
}

/// Waits until the session's screen shows `pattern`.
async fn shows(engine: &Engine, id: &str, pattern: &str) {
    common::engine_expect(engine, id, pattern, "screen").await;
}

/// A folder, an engine on it, a folder to work in and a session opened with `open`: where a
/// procedure is done by hand.
async fn procedure_in(
    open: serde_json::Value,
) -> (
    tempfile::TempDir,
    tempfile::TempDir,
    std::sync::Arc<Engine>,
    String,
) {
    let dir = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), common::test_config(1, false)).unwrap();
    let opened = engine
        .open_terminal(&common::params::<OpenTerminalParams>(open), &Actor::Cli)
        .await
        .unwrap();
    (dir, work, engine, opened.session_id)
}

/// The same procedure done for real in a shell session: typed key by key with a typo fixed,
/// or line by line; the draft made of it names every command as the shell ran it, keeps the
/// failure branch of the grep that failed, waits for python3's prompt, and asks for the
/// password as a secret it never saw. Run in a fresh session, it does the same work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draft_from_a_real_session_does_the_same_work_in_a_fresh_one() {
    // As the engine's runs start their shells: the prompt the draft waits for after python3
    // is the one a fresh session shows.
    let (_dir, work, engine, id) = procedure_in(json!({
        "command": ["bash", "--norc", "--noprofile"],
        "env": {"HISTFILE": "/dev/null"},
    }))
    .await;
    let w = work.path().display().to_string();
    shows(&engine, &id, r"[$#]\s*$").await;
    // A typo, taken back with Backspace: the line is the one the shell ran.
    type_keys(&engine, &id, &format!("mkdir -p {w}/oux\x7ft"));
    shows(&engine, &id, "/out$").await;
    type_keys(&engine, &id, "\r");
    shows(&engine, &id, r"/out\n.*[$#]\s*$").await;
    type_line(
        &engine,
        &id,
        &format!("grep -q never-there {w}/out/x 2>/dev/null"),
    );
    type_line(&engine, &id, &format!("cd {w}/out"));
    // Three lines, one command: bash says so (PS0).
    type_line(&engine, &id, "for f in a b; do");
    type_line(&engine, &id, "  touch from-loop-$f");
    type_line(&engine, &id, "done");
    type_line(&engine, &id, "python3 -q");
    shows(&engine, &id, r">>>\s*$").await;
    type_line(&engine, &id, "open('from-python', 'w').write(str(6 * 7))");
    shows(&engine, &id, r"(?m)^2\n>>>\s*$").await;
    type_line(&engine, &id, "exit()");
    type_line(
        &engine,
        &id,
        "read -rs -p 'Password: ' PW; echo; printf %s ${#PW} > length",
    );
    shows(&engine, &id, r"Password:\s*$").await;
    type_line(&engine, &id, "correct horse");
    shows(&engine, &id, r"Password:\s*\n.*[$#]\s*$").await;
    let out = work.path().join("out");
    assert_eq!(std::fs::read_to_string(out.join("length")).unwrap(), "13");

    let drafted = engine
        .workflow_draft_from_session(&id, "by_hand_live", "")
        .unwrap();
    let yaml = &drafted.content;
    assert_eq!(drafted.commands, 6, "{yaml}");
    assert!(
        yaml.contains("for f in a b; do\n") || yaml.contains("for f in a b; do\n  touch"),
        "{yaml}"
    );
    assert_eq!(drafted.secrets, ["PASSWORD"], "{yaml}");
    assert!(!yaml.contains("correct horse"), "{yaml}");
    // The directory the procedure used three times is an argument, the recorded one its
    // default, and every command refers to it.
    assert_eq!(
        drafted.arguments,
        [format!("OUT_DIR = {w}/out: used in 3 commands")],
        "{yaml}"
    );
    assert!(
        yaml.contains("command: mkdir -p \"${OUT_DIR}\"\n")
            && yaml.matches(&format!("{w}/out")).count() == 2, // the header, the default
        "{yaml}"
    );
    assert!(
        yaml.contains("condition: failure"),
        "the grep's failure is kept: {yaml}"
    );
    assert!(
        yaml.contains("pattern: '>>>\\s*$'") || yaml.contains(">>>"),
        "{yaml}"
    );
    engine
        .save_draft_from_session(&id, "by_hand_live", &Actor::Cli)
        .unwrap();

    std::fs::remove_dir_all(&out).unwrap();
    did_the_work(&engine, &out, &[("PASSWORD", "open sesame")], yaml).await;
    // Run with another directory, the same work is done there.
    let elsewhere = tempfile::tempdir().unwrap();
    let other = elsewhere.path().join("another place");
    let inputs = [("PASSWORD", "pw1"), ("OUT_DIR", other.to_str().unwrap())];
    did_the_work(&engine, &other, &inputs, yaml).await;

    // A mark: the next draft holds only what comes after it.
    engine.mark_session(&id).unwrap();
    let nothing = engine
        .workflow_draft_from_session(&id, "after_mark", "")
        .unwrap_err();
    assert!(nothing.to_string().contains("since its mark"), "{nothing}");
    type_line(&engine, &id, "true");
    shows(&engine, &id, r"(?m)[$#] true\n.*[$#]\s*$").await;
    let after = engine
        .workflow_draft_from_session(&id, "after_mark", "")
        .unwrap();
    assert_eq!(after.commands, 1, "{}", after.content);
    engine.shutdown().await;
}

/// Runs `by_hand_live` with `inputs` and checks it did the procedure's work in `out`: the
/// file python wrote, the password's length, the loop's files.
async fn did_the_work(
    engine: &std::sync::Arc<Engine>,
    out: &Path,
    inputs: &[(&str, &str)],
    yaml: &str,
) {
    let result = engine
        .run(common::run_request("by_hand_live", inputs))
        .await
        .unwrap();
    assert_eq!(
        result.final_state,
        FinalState::Completed,
        "{result:#?}\n{yaml}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("from-python")).unwrap(),
        "42"
    );
    let password = inputs
        .iter()
        .find(|(k, _)| *k == "PASSWORD")
        .map_or(0, |(_, v)| v.len());
    assert_eq!(
        std::fs::read_to_string(out.join("length")).unwrap(),
        password.to_string()
    );
    assert!(out.join("from-loop-a").exists() && out.join("from-loop-b").exists());
}

/// zsh takes hooks only from its startup files: the session gives it a folder of its own that
/// reads the person's files, then says when each command begins and how it ended, then gives
/// `ZDOTDIR` back. A loop over three lines is one command, a failure keeps its branch, and
/// the draft runs in a fresh (bash) session with the same effect.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zsh_says_how_each_command_ended_too() {
    let (_dir, work, engine, id) = procedure_in(json!({"command": ["zsh"]})).await;
    let w = work.path().display().to_string();
    let mkdir = format!("mkdir -p {w}/z && cd {w}/z");
    let lines = [
        mkdir.as_str(),
        "ls no-such-file",
        "for f in a b; do",
        "touch z-$f",
        "done",
        "echo \"zdotdir=[$ZDOTDIR]\"",
    ];
    // Typed ahead, as an agent types: each line waits for the shell to read (typing.rs).
    shows(&engine, &id, r"[%#$]\s*$").await;
    for line in lines {
        type_line(&engine, &id, line);
    }
    // Its output, not the typed line's echo: the command has begun.
    shows(&engine, &id, r"zdotdir=\[/").await;
    let shown = engine
        .get_screen_content(
            &id,
            &common::params::<flowdeck::workflow::action::GetScreenContentParams>(json!({})),
            &Actor::Cli,
        )
        .unwrap();
    let screen = serde_json::to_string(&shown).unwrap();
    assert!(
        !screen.contains("flowdeck-zsh"),
        "ZDOTDIR given back: {screen}"
    );
    assert!(work.path().join("z/z-b").exists());

    let drafted = engine
        .workflow_draft_from_session(&id, "by_hand_in_zsh", "")
        .unwrap();
    let yaml = &drafted.content;
    assert_eq!(drafted.commands, 4, "{yaml}");
    assert!(yaml.contains("command: ls no-such-file"), "{yaml}");
    assert!(
        yaml.contains("condition: failure"),
        "ls failed by hand: {yaml}"
    );
    assert_eq!(
        yaml.matches("condition: failure").count(),
        1,
        "only ls failed: {yaml}"
    );
    engine
        .save_draft_from_session(&id, "by_hand_in_zsh", &Actor::Cli)
        .unwrap();
    std::fs::remove_dir_all(work.path().join("z")).unwrap();
    let result = engine
        .run(common::run_request("by_hand_in_zsh", &[]))
        .await
        .unwrap();
    assert_eq!(
        result.final_state,
        FinalState::Completed,
        "{result:#?}\n{yaml}"
    );
    assert!(work.path().join("z/z-a").exists() && work.path().join("z/z-b").exists());
    engine.shutdown().await;
}

/// Credentials typed on command lines, as people type them: an exported key, a password glued
/// to `-p`, a bearer token in a header. The draft holds none of them: each is a secret
/// argument the lines refer to, and the draft, run in a fresh session with them given, types
/// the same values where they were typed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_typed_on_command_lines_become_secret_arguments_of_the_draft() {
    let (_dir, work, engine, id) = procedure_in(json!({
        "command": ["bash", "--norc", "--noprofile"],
        "env": {"HISTFILE": "/dev/null"},
    }))
    .await;
    let w = work.path().display().to_string();
    let key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    let password = "S3cret!pw";
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    // Stand-ins for mysql and curl that write down what they were given.
    type_line(&engine, &id, &format!("cd {w}"));
    type_line(
        &engine,
        &id,
        "mysql() { printf '%s\\n' \"$@\" > mysql.args; }",
    );
    type_line(
        &engine,
        &id,
        "curl() { printf '%s\\n' \"$@\" > curl.args; }",
    );
    type_line(&engine, &id, &format!("export AWS_SECRET_ACCESS_KEY={key}"));
    type_line(
        &engine,
        &id,
        &format!("mysql -u root -p'{password}' -e 'select 1'"),
    );
    type_line(
        &engine,
        &id,
        &format!("curl -sf -H \"Authorization: Bearer {token}\" https://api.example.com"),
    );
    type_line(&engine, &id, "printf %s \"$AWS_SECRET_ACCESS_KEY\" > key");
    shows(&engine, &id, r"> key\n.*[$#]\s*$").await;
    let by_hand = |file: &str| std::fs::read_to_string(work.path().join(file)).unwrap();
    let typed = (by_hand("mysql.args"), by_hand("curl.args"), by_hand("key"));

    let drafted = engine
        .workflow_draft_from_session(&id, "with_credentials", "")
        .unwrap();
    let yaml = &drafted.content;
    for value in [key, password, token] {
        assert!(!yaml.contains(value), "{value} in the draft:\n{yaml}");
    }
    assert_eq!(
        drafted.secrets,
        ["AWS_SECRET_ACCESS_KEY", "MYSQL_PASSWORD", "AUTH_TOKEN"],
        "{yaml}"
    );
    assert_eq!(drafted.lifted.len(), 3, "{:?}", drafted.lifted);
    engine
        .save_draft_from_session(&id, "with_credentials", &Actor::Cli)
        .unwrap();

    for file in ["mysql.args", "curl.args", "key"] {
        std::fs::remove_file(work.path().join(file)).unwrap();
    }
    let result = engine
        .run(common::run_request(
            "with_credentials",
            &[
                ("AWS_SECRET_ACCESS_KEY", key),
                ("MYSQL_PASSWORD", password),
                ("AUTH_TOKEN", token),
            ],
        ))
        .await
        .unwrap();
    assert_eq!(
        result.final_state,
        FinalState::Completed,
        "{result:#?}\n{yaml}"
    );
    assert_eq!(
        (by_hand("mysql.args"), by_hand("curl.args"), by_hand("key")),
        typed,
        "{yaml}"
    );
    engine.shutdown().await;
}
