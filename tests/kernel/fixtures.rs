//! The validation fixture suite (see `tests/fixtures/README.md`).
//!
//! - every manifest in `tests/fixtures/valid/` validates with no violation at all;
//! - every manifest in `tests/fixtures/invalid/` produces exactly the violations listed in its
//!   sibling `<file>.expected` (`LINE:COL RULE PATH`, one per line), no more and no fewer;
//! - cases too big to commit (a 5 MB manifest) are generated here.

use flowdeck::workflow::{Checked, Format, Violation, check_bytes};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

const EXPECTED_SUFFIX: &str = ".expected";

fn fixtures_dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(kind)
}

/// Every file of a fixture folder, sorted by name.
fn files_in(kind: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(fixtures_dir(kind))
        .unwrap_or_else(|e| panic!("cannot read tests/fixtures/{kind}: {e}"))
        .map(|entry| entry.expect("a readable folder entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "tests/fixtures/{kind} holds no files");
    files
}

fn file_name(path: &Path) -> &str {
    path.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_else(|| panic!("{}: not a UTF-8 file name", path.display()))
}

fn check_file(path: &Path) -> Checked {
    let name = file_name(path);
    let format = Format::from_file_name(name)
        .unwrap_or_else(|| panic!("{name}: not a manifest file name (.yaml, .yml or .json)"));
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("cannot read {name}: {e}"));
    check_bytes(&bytes, format)
}

/// The `.expected` form of a violation: `LINE:COL RULE PATH` (`-` for the empty path).
fn expected_line(v: &Violation) -> String {
    let place = match (v.line, v.column) {
        (Some(l), Some(c)) => format!("{l}:{c}"),
        (Some(l), None) => format!("{l}:?"),
        _ => "?:?".to_string(),
    };
    let path = if v.path.is_empty() { "-" } else { &v.path };
    format!("{place} {} {path}", v.rule)
}

/// The lines of an `.expected` file, without blank lines and `#` comments, whitespace-normalised.
fn parse_expected(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// The difference between two lists of lines, as multisets.
fn diff(expected: &[String], actual: &[String]) -> (Vec<String>, Vec<String>) {
    let mut missing = Vec::new();
    let mut extra: Vec<String> = actual.to_vec();
    for line in expected {
        match extra.iter().position(|a| a == line) {
            Some(i) => {
                extra.remove(i);
            }
            None => missing.push(line.clone()),
        }
    }
    (missing, extra)
}

fn describe_all(checked: &Checked) -> String {
    let mut out = String::new();
    for v in &checked.violations {
        let _ = writeln!(
            out,
            "      {}   [{}] {}",
            expected_line(v),
            v.severity,
            v.message
        );
    }
    out
}

#[test]
fn valid_fixtures_have_no_violations() {
    let mut failures = String::new();
    let mut count = 0;
    for path in files_in("valid") {
        let name = file_name(&path);
        if name == "README.md" {
            continue;
        }
        count += 1;
        let checked = check_file(&path);
        if !checked.violations.is_empty() || !checked.is_valid() {
            let _ = writeln!(
                failures,
                "  {name}: expected no violations, got:\n{}",
                describe_all(&checked)
            );
        }
    }
    assert!(
        count >= 5,
        "expected at least 5 valid fixtures, found {count}"
    );
    assert!(failures.is_empty(), "valid fixtures failed:\n{failures}");
}

#[test]
fn invalid_fixtures_match_their_expected_violations() {
    let files = files_in("invalid");
    let mut failures = String::new();
    let mut count = 0;
    for path in &files {
        let name = file_name(path);
        if name == "README.md" {
            continue;
        }
        if let Some(fixture) = name.strip_suffix(EXPECTED_SUFFIX) {
            if !files.iter().any(|p| file_name(p) == fixture) {
                let _ = writeln!(failures, "  {name}: no fixture named {fixture} beside it");
            }
            continue;
        }
        count += 1;
        let expected_path = path.with_file_name(format!("{name}{EXPECTED_SUFFIX}"));
        let Ok(expected_text) = fs::read_to_string(&expected_path) else {
            let _ = writeln!(
                failures,
                "  {name}: missing {name}{EXPECTED_SUFFIX} (every invalid fixture lists its violations)"
            );
            continue;
        };
        let expected = parse_expected(&expected_text);
        let checked = check_file(path);
        let actual: Vec<String> = checked.violations.iter().map(expected_line).collect();
        if expected.is_empty() {
            let _ = writeln!(
                failures,
                "  {name}: {name}{EXPECTED_SUFFIX} lists no violation; invalid fixtures must list some"
            );
        }
        let (missing, extra) = diff(&expected, &actual);
        if !missing.is_empty() || !extra.is_empty() {
            let _ = writeln!(failures, "  {name}:");
            for line in &missing {
                let _ = writeln!(failures, "    - {line}   (expected, not reported)");
            }
            for line in &extra {
                let _ = writeln!(failures, "    + {line}   (reported, not expected)");
            }
            let _ = writeln!(
                failures,
                "    all violations reported:\n{}",
                describe_all(&checked)
            );
        }
    }
    assert!(
        count >= 40,
        "expected at least 40 invalid fixtures, found {count}"
    );
    assert!(
        failures.is_empty(),
        "invalid fixtures do not match their .expected files \
         (- expected but missing, + reported but not expected):\n{failures}"
    );
}

/// Messages matter too where the point of the case is what the message says.
#[test]
fn messages_explain_the_problem() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "unknown_keys.yaml",
            "/descripton",
            "did you mean 'description'?",
        ),
        (
            "unknown_keys.yaml",
            "/states/build/transitons",
            "did you mean 'transitions'?",
        ),
        (
            "unknown_keys.json",
            "/states/a/transitions/0/next_stat",
            "did you mean 'next_state'?",
        ),
        (
            "unknown_tool.yaml",
            "/states/start/action/tool",
            "did you mean 'send_input'?",
        ),
        (
            "unknown_condition.json",
            "/states/wait/transitions/0/condition",
            "did you mean 'success'?",
        ),
        (
            "unknown_next_state.yaml",
            "/states/build/transitions/0/next_state",
            "did you mean 'finish'?",
        ),
        ("name_dotdot.yaml", "/name", "never paths"),
        ("name_leading_dash.yaml", "/name", "option"),
        ("name_nul_escape.json", "/name", "NUL"),
        ("name_control.json", "/name", "\\u{1b}"),
        ("name_bidi.yaml", "/name", "\\u{202e}"),
        ("name_bidi_escape.json", "/name", "\\u{202e}"),
    ];
    let mut failures = String::new();
    for (fixture, path, needle) in cases {
        let checked = check_file(&fixtures_dir("invalid").join(fixture));
        let found = checked
            .violations
            .iter()
            .filter(|v| v.path == *path)
            .any(|v| v.message.contains(needle));
        if !found {
            let _ = writeln!(
                failures,
                "  {fixture}: no violation at {path} whose message contains {needle:?}; got:\n{}",
                describe_all(&checked)
            );
        }
        let raw_controls = checked.violations.iter().any(|v| {
            v.message
                .chars()
                .any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c))
        });
        if raw_controls {
            let _ = writeln!(
                failures,
                "  {fixture}: a message holds a raw control or bidi character"
            );
        }
    }
    assert!(failures.is_empty(), "messages:\n{failures}");
}

/// Prints what the validator reports for every invalid fixture, messages included:
/// `cargo test --test fixtures -- --ignored --nocapture`. A help for writing `.expected` files
/// (decide what the validator should say first, then compare).
#[test]
#[ignore = "prints the current output; run by hand"]
fn print_invalid_fixture_output() {
    for path in files_in("invalid") {
        let name = file_name(&path);
        if name.ends_with(EXPECTED_SUFFIX) || name == "README.md" {
            continue;
        }
        println!("{name}:\n{}", describe_all(&check_file(&path)));
    }
}

#[test]
fn warnings_alone_do_not_block_a_manifest() {
    for fixture in ["warnings_only.yaml", "warnings_misc.yaml"] {
        let checked = check_file(&fixtures_dir("invalid").join(fixture));
        assert!(
            checked.error_count() == 0 && checked.warning_count() > 0 && checked.is_valid(),
            "{fixture}: expected only warnings and a usable workflow, got:\n{}",
            describe_all(&checked)
        );
    }
}

fn generated_rules(bytes: &[u8], format: Format) -> Vec<String> {
    check_bytes(bytes, format)
        .violations
        .iter()
        .map(expected_line)
        .collect()
}

#[test]
fn five_megabyte_manifest_is_too_large() {
    // A syntactically fine manifest whose description is 5 MB long.
    let filler = "x".repeat(5 * 1024 * 1024);
    let yaml = format!(
        "name: huge\ndescription: {filler}\ninitial_state: a\nstates:\n  a:\n    action: {{tool: list_terminal_sessions}}\n"
    );
    assert_eq!(
        generated_rules(yaml.as_bytes(), Format::Yaml),
        vec!["1:1 file_too_large -"]
    );
    let json = format!(
        "{{\"name\": \"huge\", \"description\": \"{filler}\", \"initial_state\": \"a\", \"states\": {{\"a\": {{\"action\": {{\"tool\": \"list_terminal_sessions\"}}}}}}}}"
    );
    assert_eq!(
        generated_rules(json.as_bytes(), Format::Json),
        vec!["1:1 file_too_large -"]
    );
}

#[test]
fn size_limit_is_one_mebibyte() {
    // Padding with a YAML comment keeps the manifest valid whatever its size.
    let head = "name: padded\ndescription: padded\ninitial_state: a\nstates:\n  a:\n    action: {tool: list_terminal_sessions}\n#";
    let limit = 1024 * 1024;
    let at_limit = format!("{head}{}", "x".repeat(limit - head.len()));
    assert_eq!(at_limit.len(), limit);
    assert_eq!(
        generated_rules(at_limit.as_bytes(), Format::Yaml),
        Vec::<String>::new()
    );
    let over = format!("{at_limit}x");
    assert_eq!(
        generated_rules(over.as_bytes(), Format::Yaml),
        vec!["1:1 file_too_large -"]
    );
}

#[test]
fn hostile_nesting_is_refused_quickly() {
    // Far deeper than any committed fixture: refused with one error, without recursing.
    let depth = 100_000;
    let rules = |bytes: &[u8], format| -> Vec<String> {
        check_bytes(bytes, format)
            .violations
            .into_iter()
            .map(|v| v.rule)
            .collect()
    };
    let json = format!("{{\"name\": {}1{}}}", "[".repeat(depth), "]".repeat(depth));
    assert_eq!(rules(json.as_bytes(), Format::Json), vec!["too_deep"]);
    let yaml = format!("name: {}1{}\n", "[".repeat(depth), "]".repeat(depth));
    // Beyond about 256 flow levels saphyr's own recursion guard fires before ours; both are
    // reported as `too_deep`.
    assert_eq!(rules(yaml.as_bytes(), Format::Yaml), vec!["too_deep"]);
}

#[test]
fn the_expected_format_round_trips() {
    assert_eq!(
        parse_expected("# comment\n\n 3:7   unknown_key  /a/b \n1:1 empty_file -\n"),
        vec!["3:7 unknown_key /a/b", "1:1 empty_file -"]
    );
    let (missing, extra) = diff(
        &["a".into(), "a".into(), "b".into()],
        &["a".into(), "c".into()],
    );
    assert_eq!(missing, vec!["a", "b"]);
    assert_eq!(extra, vec!["c"]);
}
