//! Drafts: a workflow written from what was done by hand (as the terminal layer saw it), run
//! in a fresh session, does the same work: plain commands, a failing one the person went
//! past, a `cd`, a python3 REPL, and a silent password prompt answered with a secret input.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use flowdeck::engine::{Engine, FinalState};
use flowdeck::workflow::draft::{Answer, Done, draft};

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
    let drafted = draft("by_hand", "Drafted in a test.", &steps).unwrap();
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
