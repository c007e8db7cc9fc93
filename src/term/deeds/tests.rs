use super::*;

fn screen_with(text: &str) -> vt100::Parser {
    let size = |n: u16| std::num::NonZeroU16::new(n).expect("a size");
    let mut parser = vt100::Parser::new(size(24), size(80), 0);
    parser.process(text.as_bytes());
    parser
}

/// At bash's prompt: readline reads key by key, echoing itself.
const PROMPT: Seen = Seen {
    at_prompt: Some(true),
    canonical: false,
    echo: false,
};
/// A program that reads key by key and echoes itself (python3's REPL), or hides (a masked
/// prompt).
const KEYS: Seen = Seen {
    at_prompt: Some(false),
    canonical: false,
    echo: false,
};
/// A program that reads whole lines the terminal echoes (`cat`).
const LINES: Seen = Seen {
    at_prompt: Some(false),
    canonical: true,
    echo: true,
};
/// Whole lines, not echoed (`read -s`, getpass).
const SILENT: Seen = Seen {
    at_prompt: Some(false),
    canonical: true,
    echo: false,
};

fn start(deeds: &Deeds) -> Vec<u8> {
    format!("\x1b]7770;flowdeck-start;{}\x07", nonce(deeds)).into_bytes()
}

fn status(deeds: &Deeds, code: i32) -> Vec<u8> {
    format!("\x1b]7770;flowdeck-status;{};{code}\x07", nonce(deeds)).into_bytes()
}

fn nonce(_: &Deeds) -> &'static str {
    "n"
}

/// A local bash's: it was given `PS0` and `PROMPT_COMMAND`.
fn bash() -> Deeds {
    let mut deeds = Deeds::new("n");
    deeds.expect_starts();
    deeds
}

fn lines(deeds: &Deeds, screen: &vt100::Screen) -> Vec<(String, Option<i32>)> {
    deeds
        .list(screen, false)
        .into_iter()
        .map(|d| (d.line, d.exit))
        .collect()
}

#[test]
fn bash_says_when_a_command_begins_and_how_it_ended_however_many_lines_it_took() {
    let parser = screen_with("$ ");
    let mut deeds = bash();
    deeds.output(&status(&deeds, 0));
    deeds.typed(b"for i in 1 2; do\r", PROMPT, parser.screen());
    deeds.typed(b"  echo $i\r", PROMPT, parser.screen());
    deeds.typed(b"done\r", PROMPT, parser.screen());
    deeds.output(&start(&deeds));
    deeds.output(b"1\r\n2\r\n");
    deeds.output(&status(&deeds, 0));
    // Typed ahead of the next command's end: the line after it.
    deeds.typed(b"false\r", PROMPT, parser.screen());
    deeds.output(&start(&deeds));
    deeds.typed(b"ls\r", PROMPT, parser.screen());
    deeds.output(&status(&deeds, 1));
    deeds.output(&start(&deeds));
    deeds.output(&status(&deeds, 0));
    // Given up at the continuation prompt (Ctrl-C): no command.
    deeds.typed(b"echo 'unfinished\r", PROMPT, parser.screen());
    deeds.output(&status(&deeds, 130));
    deeds.typed(b"true\r", PROMPT, parser.screen());
    deeds.output(&start(&deeds));
    assert_eq!(
        lines(&deeds, parser.screen()),
        [
            ("for i in 1 2; do\n  echo $i\ndone".to_string(), Some(0)),
            ("false".into(), Some(1)),
            ("ls".into(), Some(0)),
            ("true".into(), None),
        ]
    );
}

#[test]
fn an_edited_line_is_read_from_the_screen_and_ctrl_c_drops_a_line() {
    let mut parser = screen_with("$ ");
    let mut deeds = Deeds::new("n");
    deeds.typed(b"ech", PROMPT, parser.screen());
    parser.process(b"ech");
    // Tab completed it on the screen.
    deeds.typed(b"\t", PROMPT, parser.screen());
    parser.process(b"o ");
    deeds.typed(b"hi", PROMPT, parser.screen());
    parser.process(b"hi");
    deeds.typed(b"\r", PROMPT, parser.screen());
    deeds.typed(b"oops\x03", PROMPT, parser.screen());
    deeds.typed(b"\r", PROMPT, parser.screen());
    assert_eq!(
        lines(&deeds, parser.screen()),
        [("echo hi".to_string(), None)]
    );
}

#[test]
fn replies_are_kept_when_shown_and_never_when_hidden() {
    let mut parser = screen_with("$ ");
    let mut deeds = bash();
    deeds.output(&status(&deeds, 0));
    deeds.typed(b"python3\r", PROMPT, parser.screen());
    deeds.output(&start(&deeds));
    parser.process(b"python3\r\n>>> ");
    // Typed whole: python's own echo shows it.
    deeds.typed(b"print(6*7)\r", KEYS, parser.screen());
    deeds.output(b"print(6*7)\r\n42\r\n>>> ");
    parser.process(b"print(6*7)\r\n42\r\nPassword: ");
    deeds.typed(b"hunter2\r", SILENT, parser.screen());
    parser.process(b"\r\nPIN (masked): ");
    // A masked prompt that reads key by key: stars, never the text.
    deeds.typed(b"1234\r", KEYS, parser.screen());
    deeds.output(b"****\r\n");
    deeds.output(&[b'.'; 300]);
    parser.process(b"\r\nname? ");
    deeds.typed(b"ada\r", LINES, parser.screen());
    deeds.output(&status(&deeds, 0));
    parser.process(b"\r\n$ ");
    deeds.typed(b"ls\r", PROMPT, parser.screen());
    let list = deeds.list(parser.screen(), false);
    let python = &list[0];
    assert_eq!(python.exit, Some(0));
    let replies: Vec<(&str, &str, bool)> = python
        .replies
        .iter()
        .map(|r| (r.prompt.as_str(), r.text.as_str(), r.hidden))
        .collect();
    assert_eq!(
        replies,
        [
            (">>> ", "print(6*7)", false),
            ("Password: ", "", true),
            ("PIN (masked): ", "", true),
            ("name? ", "ada", false),
        ]
    );
    assert_eq!(python.prompt_after.as_deref(), Some("$ "));
    let kept = format!("{deeds:?}");
    assert!(
        !kept.contains("hunter2") && !kept.contains("1234"),
        "{kept}"
    );
}

#[test]
fn a_secret_typed_with_the_line_that_asks_for_it_is_never_a_command() {
    let parser = screen_with("$ ");
    let mut deeds = bash();
    deeds.output(&status(&deeds, 0));
    // Typed at once: the second line is read by the shell's `read -s`, which echoes nothing.
    deeds.typed(b"read -s PW\rsecret-value\r", PROMPT, parser.screen());
    deeds.output(&start(&deeds));
    deeds.output(b"\r\n");
    deeds.output(&[b'x'; 400]);
    deeds.output(&status(&deeds, 0));
    let list = deeds.list(parser.screen(), false);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].line, "read -s PW");
    assert!(
        list[0]
            .replies
            .iter()
            .all(|r| r.hidden && r.text.is_empty())
    );
    assert!(!format!("{deeds:?}").contains("secret-value"));
    // A secret the session was told of is masked wherever it was typed.
    let mut told = Deeds::new("n");
    told.typed(b"curl -u me:s3cr3t example.org\r", PROMPT, parser.screen());
    told.learn_secrets(&["s3cr3t".into()]);
    assert_eq!(
        told.list(parser.screen(), false)[0].line,
        "curl -u me:*** example.org"
    );
}

#[test]
fn without_markers_each_line_at_the_prompt_is_a_command_that_succeeded_once_the_next_is_read() {
    let parser = screen_with("% ");
    let mut deeds = Deeds::new("n");
    deeds.typed(b"make\r", PROMPT, parser.screen());
    deeds.typed(b"\r", PROMPT, parser.screen());
    deeds.typed(b"printf '%s\\n' a \\\r", PROMPT, parser.screen());
    deeds.typed(b"  b\r", PROMPT, parser.screen());
    assert_eq!(
        lines(&deeds, parser.screen()),
        [
            ("make".to_string(), Some(0)),
            ("printf '%s\\n' a \\\n  b".into(), None),
        ]
    );
    assert_eq!(
        deeds.list(parser.screen(), true)[1].exit,
        Some(0),
        "the shell ended after it"
    );
    deeds.mark();
    assert!(deeds.list(parser.screen(), false).is_empty());
    deeds.ran("mkdir -p out", Some(0), 0.1);
    assert_eq!(deeds.list(parser.screen(), false)[0].line, "mkdir -p out");
    let long = vec![b'x'; MAX_LINE + 10];
    deeds.typed(&long, PROMPT, parser.screen());
    deeds.typed(b"\r", PROMPT, parser.screen());
    assert_eq!(
        deeds.list(parser.screen(), false).len(),
        1,
        "a line cut short is dropped"
    );
}

#[test]
fn without_start_markers_a_status_still_to_come_is_the_command_before_the_line_typed_ahead() {
    let parser = screen_with("$ ");
    // Given PS0, which its configuration replaced: its first command says so.
    let mut deeds = bash();
    deeds.output(&status(&deeds, 0));
    deeds.typed(b"true\r", PROMPT, parser.screen());
    deeds.output(&status(&deeds, 0));
    deeds.typed(b"mkdir out\r", PROMPT, parser.screen());
    deeds.typed(b"cd out\r", PROMPT, parser.screen());
    deeds.output(&status(&deeds, 1));
    deeds.output(&status(&deeds, 0));
    assert_eq!(
        lines(&deeds, parser.screen()),
        [
            ("true".to_string(), Some(0)),
            ("mkdir out".into(), Some(1)),
            ("cd out".into(), Some(0))
        ]
    );
}
