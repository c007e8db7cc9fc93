//! `flowdeck run` answers the same whether the folder's server is up or not (issue 37, F26,
//! F28): every case is asked with no server, then again with `flowdeck serve` up on the same
//! folder, and the two answers (exit status, stdout, the command's own lines on stderr) must
//! be equal, run ids and times aside. A name no workflow has exits 2 with the closest name
//! and leaves no journal; a file that does not parse is named with line and column and exits
//! as `validate` does; an argument exported in the person's environment reaches the run in
//! the server too.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common;

/// A workflow with a required argument, a typed optional one and a return value built from
/// both.
const GREET: &str = r#"name: greet
description: Greets someone a number of times.
arguments:
  WHO: { description: whom to greet }
  TIMES: { description: how many times, type: integer, required: false, default: 1 }
return_values:
  GREETING: { description: the greeting }
initial_state: say
states:
  say:
    action: { tool: run_command, params: { command: 'export GREETING="hello $WHO x$TIMES"' } }
"#;

/// A manifest with a YAML syntax error on its third line.
const BROKEN: &str = "name: broken\ndescription: Broken.\ninitial_state: a: b\nstates: {}\n";

/// What a `flowdeck run` answered, with what differs from run to run (ids, times) taken out.
#[derive(Debug, PartialEq)]
struct Answer {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn normalized(text: &[u8]) -> String {
    let text = String::from_utf8_lossy(text);
    let ids = regex::Regex::new(r"r\d{10,}-[0-9a-f]{4}").unwrap();
    let times = regex::Regex::new(r"\d+(\.\d+)? (s|ms)\b").unwrap();
    let text = ids.replace_all(&text, "RUN_ID");
    times.replace_all(&text, "T").into_owned()
}

/// `flowdeck --workflows FOLDER ARGS` with `env` added, sockets under `runtime`.
fn ask(folder: &Path, runtime: &Path, args: &[&str], env: &[(&str, &str)]) -> Answer {
    let out: Output = Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("--workflows")
        .arg(folder)
        .args(args)
        .envs(common::studio::quiet_env())
        .env("XDG_RUNTIME_DIR", runtime)
        .env_remove("WHO")
        .env_remove("TIMES")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Answer {
        code: out.status.code(),
        stdout: normalized(&out.stdout),
        stderr: normalized(&out.stderr),
    }
}

/// The files of the folder's run history.
fn journal_files(folder: &Path) -> usize {
    std::fs::read_dir(folder.join(".flowdeck/runs"))
        .map(|files| files.count())
        .unwrap_or(0)
}

/// One question to `flowdeck run`, and what its answer must hold.
struct Case {
    what: &'static str,
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    check: fn(&Answer),
    /// Whether the run starts (and so is journaled).
    journaled: bool,
}

const CASES: &[Case] = &[
    Case {
        what: "a name no workflow has",
        args: &["run", "gret"],
        env: &[],
        check: |a| {
            assert_eq!(a.code, Some(2), "{a:?}");
            assert!(a.stderr.contains("workflow 'gret' not found"), "{a:?}");
            assert!(a.stderr.contains("(did you mean 'greet'?)"), "{a:?}");
            assert_eq!(a.stdout, "", "{a:?}");
        },
        journaled: false,
    },
    Case {
        what: "a name no workflow has, --json",
        args: &["run", "gret", "--json"],
        env: &[],
        check: |a| {
            assert_eq!(a.code, Some(2), "{a:?}");
            let told: serde_json::Value = serde_json::from_str(&a.stdout).unwrap();
            assert_eq!(told["final_state"], "workflow_not_found");
            assert_eq!(told["did_you_mean"], "greet");
        },
        journaled: false,
    },
    Case {
        what: "a file that does not parse",
        args: &["run", "broken"],
        env: &[],
        check: |a| {
            // As `validate` says it and exits for it.
            assert_eq!(a.code, Some(1), "{a:?}");
            assert!(
                regex::Regex::new(r"broken\.yaml:3:\d+: parse_error: YAML syntax error")
                    .unwrap()
                    .is_match(&a.stderr),
                "{a:?}"
            );
            assert!(a.stderr.contains("workflow 'broken' ("), "{a:?}");
            assert!(a.stderr.contains("is invalid: 1 error"), "{a:?}");
            assert!(!a.stderr.contains("not found"), "{a:?}");
        },
        journaled: false,
    },
    Case {
        what: "a required input missing",
        args: &["run", "greet"],
        env: &[],
        check: |a| {
            assert_eq!(a.code, Some(1), "{a:?}");
            assert!(a.stdout.contains("greet: validation_failed"), "{a:?}");
            assert!(a.stdout.contains("export WHO=value"), "{a:?}");
        },
        journaled: true,
    },
    Case {
        what: "an input of the wrong type",
        args: &["run", "greet", "-i", "WHO=you", "-i", "TIMES=many"],
        env: &[],
        check: |a| {
            assert_eq!(a.code, Some(1), "{a:?}");
            assert!(a.stdout.contains("greet: validation_failed"), "{a:?}");
            assert!(
                a.stdout.contains("TIMES: 'many' is not a valid integer"),
                "{a:?}"
            );
        },
        journaled: true,
    },
    Case {
        what: "an input that is not KEY=VALUE",
        args: &["run", "greet", "-i", "WHO"],
        env: &[],
        check: |a| {
            assert_eq!(a.code, Some(2), "{a:?}");
            assert!(a.stderr.contains("input WHO is not KEY=VALUE"), "{a:?}");
        },
        journaled: false,
    },
    Case {
        what: "the missing input exported, as the advice says (F26)",
        args: &["run", "greet"],
        env: &[("WHO", "world"), ("TIMES", "3")],
        check: |a| {
            assert_eq!(a.code, Some(0), "{a:?}");
            assert!(a.stdout.contains("GREETING=hello world x3"), "{a:?}");
        },
        journaled: true,
    },
    Case {
        what: "a given input over the exported one",
        args: &["run", "greet", "-i", "WHO=you"],
        env: &[("WHO", "world")],
        check: |a| {
            assert_eq!(a.code, Some(0), "{a:?}");
            assert!(a.stdout.contains("GREETING=hello you x1"), "{a:?}");
        },
        journaled: true,
    },
    Case {
        what: "no name",
        args: &["run"],
        env: &[],
        check: |a| {
            assert_eq!(a.code, Some(2), "{a:?}");
            assert!(a.stderr.contains("which workflow?"), "{a:?}");
            assert!(
                regex::Regex::new(r"\n  greet +Greets someone a number of times\.\n")
                    .unwrap()
                    .is_match(&a.stderr),
                "{a:?}"
            );
            assert!(a.stderr.contains("broken.yaml  INVALID"), "{a:?}");
        },
        journaled: false,
    },
];

#[test]
fn flowdeck_run_answers_the_same_with_and_without_a_server() {
    let (folder, runtime) = common::tiny_folder();
    let dir = folder.path();
    std::fs::remove_file(dir.join("tiny.yaml")).unwrap();
    std::fs::write(dir.join("greet.yaml"), GREET).unwrap();
    std::fs::write(dir.join("broken.yaml"), BROKEN).unwrap();

    let mut alone = Vec::new();
    for case in CASES {
        let before = journal_files(dir);
        let answer = ask(dir, runtime.path(), case.args, case.env);
        (case.check)(&answer);
        let written = journal_files(dir) > before;
        assert_eq!(
            written, case.journaled,
            "{}: journal written {written}",
            case.what
        );
        alone.push(answer);
    }

    let _server = common::Killed(common::serve_with(dir, runtime.path(), &[]));
    // The runs below happen in the server: the command says so when asked to record
    // differently, which only the server decides.
    let through = ask(
        dir,
        runtime.path(),
        &["run", "greet", "-i", "WHO=x"],
        &[("FLOWDECK_RECORDINGS", "off")],
    );
    assert!(
        through
            .stderr
            .contains("the run happens in the folder's server"),
        "{through:?}"
    );
    for (case, alone) in CASES.iter().zip(alone) {
        let before = journal_files(dir);
        let served = ask(dir, runtime.path(), case.args, case.env);
        let written = journal_files(dir) > before;
        assert_eq!(
            written, case.journaled,
            "{}: journal written {written}",
            case.what
        );
        assert_eq!(
            alone, served,
            "{}: answered otherwise with a server up",
            case.what
        );
    }
}

#[test]
fn plan_and_validate_name_what_is_wrong_as_run_does() {
    let (folder, runtime) = common::tiny_folder();
    let dir = folder.path();
    std::fs::write(dir.join("greet.yaml"), GREET).unwrap();
    std::fs::write(dir.join("broken.yaml"), BROKEN).unwrap();
    let r = runtime.path();

    let plan = ask(dir, r, &["plan", "gret"], &[]);
    assert_eq!(plan.code, Some(2), "{plan:?}");
    assert!(plan.stderr.contains("(did you mean 'greet'?)"), "{plan:?}");
    let plan = ask(dir, r, &["plan", "broken"], &[]);
    assert_eq!(plan.code, Some(1), "{plan:?}");
    assert!(plan.stderr.contains("broken.yaml:3:"), "{plan:?}");
    let plan = ask(dir, r, &["plan"], &[]);
    assert_eq!(plan.code, Some(2), "{plan:?}");
    assert!(plan.stderr.contains("flowdeck plan NAME"), "{plan:?}");
    assert!(plan.stderr.contains("greet "), "{plan:?}");

    let validate = ask(dir, r, &["validate", "gret"], &[]);
    assert_eq!(validate.code, Some(2), "{validate:?}");
    assert!(
        validate.stderr.contains("(did you mean 'greet'?)"),
        "{validate:?}"
    );
    let validate = ask(dir, r, &["validate", "broken"], &[]);
    assert_eq!(validate.code, Some(1), "{validate:?}");
    assert!(validate.stdout.contains("broken.yaml:3:"), "{validate:?}");
    let validate = ask(dir, r, &["validate", "greet"], &[]);
    assert_eq!(validate.code, Some(0), "{validate:?}");
    assert!(
        validate.stdout.contains("1 manifest checked: 0 errors"),
        "{validate:?}"
    );
    assert_eq!(journal_files(dir), 0);
}

/// A workflow whose secret argument its command prints.
const SECRETIVE: &str = r#"name: secretive
description: Uses a token.
arguments:
  TOKEN: { description: a token, secret: true }
return_values:
  TOKEN_LENGTH: { description: how long the token was }
initial_state: use
states:
  use:
    action: { tool: run_command, params: { command: 'echo "using $TOKEN"; export TOKEN_LENGTH=${#TOKEN}' } }
"#;

/// A secret exported in the person's environment reaches the run, in the server too, and
/// nothing the run writes holds it: not the answer, the journal or the recording.
#[test]
fn a_secret_taken_from_the_environment_stays_secret_both_ways() {
    const TOKEN: &str = "s3cr3t-from-env-42";
    let (folder, runtime) = common::tiny_folder();
    let dir = folder.path();
    std::fs::write(dir.join("secretive.yaml"), SECRETIVE).unwrap();
    let run = || {
        let answer = ask(
            dir,
            runtime.path(),
            &["run", "secretive"],
            &[("TOKEN", TOKEN)],
        );
        assert_eq!(answer.code, Some(0), "{answer:?}");
        assert!(answer.stdout.contains("TOKEN_LENGTH=18"), "{answer:?}");
        assert!(!format!("{answer:?}").contains(TOKEN), "{answer:?}");
    };
    run();
    let _server = common::Killed(common::serve_with(dir, runtime.path(), &[]));
    run();
    let mut files = 0;
    for file in std::fs::read_dir(dir.join(".flowdeck/runs")).unwrap() {
        let path = file.unwrap().path();
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        assert!(!text.contains(TOKEN), "{} holds the secret", path.display());
        files += 1;
    }
    // Two runs: a journal and a recording each.
    assert_eq!(files, 4);
}
