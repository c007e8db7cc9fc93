//! The `flowdeck` binary as a user runs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn flowdeck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("FLOWDECK_WORKFLOWS")
        .output()
        .expect("run flowdeck")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

#[test]
fn bundled_workflows_validate_cleanly() {
    let out = flowdeck(&["validate", "workflows/"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout(&out).contains("0 errors, 0 warnings"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn validate_defaults_to_the_workflows_folder_and_honours_the_env() {
    let out = flowdeck(&["validate"]);
    assert_eq!(out.status.code(), Some(0));
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("x.yaml"), "name: x\n").expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .arg("validate")
        .env("FLOWDECK_WORKFLOWS", dir.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out)
            .contains("x.yaml:1:1: required: missing required key 'description' (/description)"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn invalid_manifest_exits_1_with_positions() {
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("bad.yaml");
    std::fs::write(&file, "name: bad\ndescription: d\ninitial_state: start\nstates:\n  start:\n    action: {tool: send_input, params: {input_text: x}}\n    transitions:\n      - {condition: success, next_state: finish}\n").expect("write");
    let out = flowdeck(&["validate", file.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let expected = format!(
        "{}:8:42: unknown_next_state: transition goes to 'finish', which is not a state (/states/start/transitions/0/next_state)",
        file.display()
    );
    assert!(text.contains(&expected), "{text}");
    assert!(
        text.ends_with("1 manifest checked: 1 error, 0 warnings\n"),
        "{text}"
    );
}

#[test]
fn validate_json_report() {
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("bad.json");
    std::fs::write(&file, "{\"name\": \"bad\",}").expect("write");
    let out = flowdeck(&["validate", "--json", file.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["valid"], false);
    assert_eq!(report["errors"], 1);
    let v = &report["reports"][0]["violations"][0];
    assert_eq!(v["rule"], "parse_error");
    assert_eq!(
        (v["line"].as_u64(), v["column"].as_u64()),
        (Some(1), Some(15)),
        "at the trailing comma"
    );
    assert_eq!(v["severity"], "error");
}

#[test]
fn seed_example_validates_and_plans() {
    let seed = "tests/fixtures/valid/seed_build_project.json";
    let out = flowdeck(&["validate", seed]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    // The seed in a folder of its own: the fixtures hold it in YAML too, under the same name.
    let dir = tempfile::tempdir().expect("dir");
    std::fs::copy(repo(seed), dir.path().join("build_project.json")).expect("copy");
    let folder = dir.path().to_str().expect("utf8");
    let out = flowdeck(&["--workflows", folder, "plan", "build_project"]);
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!("plan_build_project", stdout(&out));
}

#[test]
fn plan_orders_states_and_shows_transitions() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(
        dir.path().join("retry.yaml"),
        r#"name: retry
description: Build with one retry
arguments:
  TARGET: {description: make target, default: all}
return_values:
  STATUS: {description: OK or FAILED}
initial_state: build
max_steps: 20
states:
  report:
    description: Record failure
    action: {tool: set_env, params: {vars: {STATUS: FAILED}}}
  build:
    description: Run the build
    action: {tool: run_command, params: {command: "make $TARGET", timeout: 120}}
    transitions:
      - {condition: success, next_state: done}
      - {condition: failure, next_state: clean, when: {var: RETRIED, not_equals: "yes"}}
      - {condition: always, next_state: report}
  clean:
    action: {tool: run_command, params: {command: "make clean; export RETRIED=yes"}}
    transitions:
      - {condition: always, next_state: build}
  done:
    action: {tool: set_env, params: {vars: {STATUS: OK}}}
  spare:
    action: {tool: list_terminal_sessions}
"#,
    )
    .expect("write");
    let out = flowdeck(&[
        "--workflows",
        dir.path().to_str().expect("utf8"),
        "plan",
        "retry",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    insta::assert_snapshot!("plan_retry", stdout(&out));
    let out = flowdeck(&[
        "--workflows",
        dir.path().to_str().expect("utf8"),
        "plan",
        "retry",
        "--json",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let order: Vec<&str> = json["plan"]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| s["state"].as_str())
        .collect();
    assert_eq!(order, vec!["build", "done", "clean", "report", "spare"]);
}

#[test]
fn plan_of_a_missing_workflow_fails_clearly() {
    let out = flowdeck(&["plan", "no_such_workflow"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("workflow 'no_such_workflow' not found"));
}

#[test]
fn missing_folder_is_a_clear_error() {
    let out = flowdeck(&["--workflows", "/nonexistent/flowdeck", "list"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/nonexistent/flowdeck") && err.contains("--workflows"),
        "{err}"
    );
}

#[test]
fn list_shows_every_manifest_with_its_state() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::copy(
        repo("tests/fixtures/valid/seed_build_project.json"),
        dir.path().join("build_project.json"),
    )
    .expect("copy");
    std::fs::write(dir.path().join("broken.yaml"), "name: broken\nstates: [\n").expect("write");
    std::fs::write(dir.path().join("\u{1b}[31mevil.yaml"), "name: evil\n").expect("write");
    let out = flowdeck(&["--workflows", dir.path().to_str().expect("utf8"), "list"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.contains("build_project") && text.contains("valid"),
        "{text}"
    );
    assert!(
        text.contains("broken") && text.contains("INVALID (1 error)"),
        "{text}"
    );
    assert!(
        !text.contains('\u{1b}'),
        "no escape sequence from a file name reaches the terminal: {text:?}"
    );
    let out = flowdeck(&[
        "--workflows",
        dir.path().to_str().expect("utf8"),
        "list",
        "--json",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(json["workflows"].as_array().map(Vec::len), Some(3));
}

#[test]
fn schema_command_prints_the_published_schema() {
    let out = flowdeck(&["schema"]);
    assert_eq!(out.status.code(), Some(0));
    let published = std::fs::read_to_string(repo("docs/workflow.schema.json"))
        .expect("docs/workflow.schema.json");
    assert_eq!(
        stdout(&out),
        published,
        "docs/workflow.schema.json is stale: run `cargo run -- schema > docs/workflow.schema.json`"
    );
}

/// Every command's `--help`, and each lists only its own options: the studio's `--theme`
/// only at the top, `--approve` there and on the commands that serve agents.
#[test]
fn every_command_has_help_with_only_its_own_options() {
    let top = flowdeck(&["--help"]);
    assert!(stdout(&top).contains("--theme"), "{}", stdout(&top));
    let names: Vec<String> = stdout(&top)
        .split("Commands:")
        .nth(1)
        .unwrap()
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with(' '))
        // A command's line; a wrapped description goes on further in.
        .filter_map(|l| l.strip_prefix("  ").filter(|rest| !rest.starts_with(' ')))
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .filter(|name| name != "help")
        .collect();
    assert!(names.len() >= 10, "{names:?}");
    for name in &names {
        let out = flowdeck(&[name, "--help"]);
        let help = stdout(&out);
        assert_eq!(out.status.code(), Some(0), "{name}");
        assert!(help.contains("Usage:"), "{name}: {help}");
        let options = help.split("Options:").nth(1).unwrap_or_default();
        assert!(
            !options.contains("--theme"),
            "{name} lists the studio's --theme:\n{help}"
        );
        let serves = ["mcp", "serve"].contains(&name.as_str());
        assert_eq!(options.contains("--approve"), serves, "{name}:\n{help}");
    }
}

/// Completion scripts that each shell reads without a syntax error, and a manual page.
#[test]
fn completions_for_each_shell_and_a_manual_page() {
    for (shell, check) in [
        ("bash", vec!["bash", "-n"]),
        ("zsh", vec!["zsh", "-n"]),
        ("fish", vec!["fish", "--no-execute"]),
    ] {
        let out = flowdeck(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = stdout(&out);
        assert!(script.contains("replay"), "{shell}: {script}");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("flowdeck.completion");
        std::fs::write(&file, &script).unwrap();
        let checked = Command::new(check[0])
            .args(&check[1..])
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            checked.status.success(),
            "{shell} reads its script with an error: {}",
            String::from_utf8_lossy(&checked.stderr)
        );
    }
    let bad = flowdeck(&["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2));
    let man = stdout(&flowdeck(&["man"]));
    assert!(man.contains(".TH flowdeck 1"), "{man}");
    assert!(man.contains(".TH flowdeck-replay 1"), "{man}");
    assert!(man.contains("\\-\\-raw"), "{man}");
}

/// The docs a message or the studio points to are in the binary: an installed flowdeck with
/// no checkout reads the manifest reference as the repository has it.
#[test]
fn the_docs_are_built_in_and_an_unknown_topic_is_named() {
    let out = flowdeck(&["docs"]);
    assert_eq!(out.status.code(), Some(0));
    for topic in ["readme", "workflows", "studio", "mcp"] {
        assert!(stdout(&out).contains(topic), "{}", stdout(&out));
    }
    let workflows = flowdeck(&["docs", "workflows"]);
    assert_eq!(workflows.status.code(), Some(0));
    assert_eq!(
        stdout(&workflows),
        std::fs::read_to_string(repo("docs/WORKFLOWS.md")).unwrap(),
        "piped, the text is printed as it is"
    );
    let typo = flowdeck(&["docs", "studoi"]);
    assert_eq!(typo.status.code(), Some(2));
    let said = String::from_utf8_lossy(&typo.stderr);
    assert!(said.contains("did you mean studio?"), "{said}");
}

/// Every invalid fixture, through the binary: exit status 1 and each expected violation printed
/// as `file:line:col: rule: message (path)`.
#[test]
fn validate_prints_every_expected_violation_of_each_invalid_fixture() {
    let dir = repo("tests/fixtures/invalid");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("fixtures") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        if name.ends_with(".expected") || name.ends_with(".md") {
            continue;
        }
        let expected =
            std::fs::read_to_string(dir.join(format!("{name}.expected"))).expect("expected file");
        let out = flowdeck(&["validate", path.to_str().expect("utf8")]);
        let text = stdout(&out);
        let has_errors = expected
            .lines()
            .any(|l| !l.trim().is_empty() && !l.starts_with('#'));
        let file = path.display().to_string();
        for line in expected
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            // The path is the rest of the line: keys may contain spaces.
            let mut parts = line.splitn(3, ' ');
            let (place, rule, pointer) = (
                parts.next().unwrap_or_default(),
                parts.next().unwrap_or_default(),
                parts.next().unwrap_or("-"),
            );
            let pointer = if pointer == "-" { "/" } else { pointer };
            let prefix = format!("{file}:{place}: {rule}: ");
            let suffix = format!(" ({pointer})");
            assert!(
                text.lines()
                    .any(|l| l.starts_with(&prefix) && l.ends_with(&suffix)),
                "{name}: expected a line `{prefix}… {suffix}` in:\n{text}"
            );
        }
        // Fixtures named `warnings_*` hold only warnings, which do not fail validation.
        let want = if name.starts_with("warnings_") { 0 } else { 1 };
        assert!(
            has_errors,
            "{name}: an invalid fixture lists its violations"
        );
        assert_eq!(out.status.code(), Some(want), "{name}: {text}");
        checked += 1;
    }
    assert!(checked >= 50, "only {checked} fixtures checked");
}

/// `flowdeck ARGS`, failing if it has not exited within ten seconds (it is killed then): the
/// cases below once blocked forever or read without end.
fn flowdeck_within(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .args(args)
        .env_remove("FLOWDECK_WORKFLOWS")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run flowdeck");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("flowdeck {args:?} did not exit within 10 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn validate_reports_what_is_not_a_regular_file_without_blocking() {
    let dir = tempfile::tempdir().expect("dir");
    let fifo = dir.path().join("pipe.yaml");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o644)).expect("mkfifo");
    std::os::unix::fs::symlink(&fifo, dir.path().join("link.yaml")).expect("link");
    std::fs::create_dir(dir.path().join("folder.json")).expect("mkdir");
    for (path, what) in [
        ("/dev/zero".to_string(), "a character device"),
        (fifo.display().to_string(), "a named pipe (FIFO)"),
        (
            dir.path().join("link.yaml").display().to_string(),
            "a named pipe (FIFO)",
        ),
    ] {
        let out = flowdeck_within(&["validate", &path]);
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(1), "{path}: {text}");
        assert!(
            text.contains(&format!("{path}: not_a_regular_file: this is {what}")),
            "{path}: {text}"
        );
    }
    // The folder: every odd name listed with its error, none left out.
    let out = flowdeck_within(&["validate", dir.path().to_str().expect("utf8")]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    for file in ["pipe.yaml", "link.yaml", "folder.json"] {
        assert!(
            text.lines()
                .any(|l| l.contains(file) && l.contains("not_a_regular_file")),
            "{file}: {text}"
        );
    }
    assert!(
        text.ends_with("3 manifests checked: 3 errors, 0 warnings\n"),
        "{text}"
    );
}

#[test]
fn validate_reads_a_huge_file_only_to_the_limit_and_gives_its_real_size() {
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("huge.yaml");
    let size: u64 = 3 * 1024 * 1024 * 1024;
    // Sparse: three gigabytes that cost nothing on disk, and would cost that in memory if
    // they were read whole.
    std::fs::File::create(&file)
        .and_then(|f| f.set_len(size))
        .expect("sparse file");
    let out = flowdeck_within(&["validate", file.to_str().expect("utf8")]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!(
            "file_too_large: file is {size} bytes; manifests may be at most 1048576 bytes"
        )),
        "{text}"
    );
}

#[test]
fn an_unknown_approval_mode_is_refused_with_the_modes_there_are() {
    for output in [
        flowdeck(&["--approve", "everything", "list"]),
        Command::new(env!("CARGO_BIN_EXE_flowdeck"))
            .args([
                "--workflows",
                &repo("workflows").display().to_string(),
                "list",
            ])
            .env("FLOWDECK_APPROVE", "yes")
            .output()
            .unwrap(),
    ] {
        assert_eq!(output.status.code(), Some(2));
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(
            said.contains("invalid value") && said.contains("off, agent-runs"),
            "{said}"
        );
    }
}
