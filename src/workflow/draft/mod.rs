//! A workflow drafted from what a person did by hand in a terminal: each command a step, and
//! what it printed and how it ended the conditions to wait for. Pure: whoever watched the
//! terminal says what was done (a list of [`Done`]); this writes the manifest.
//!
//! - A command the shell ran to its end becomes a `run_command` step. If it failed when it
//!   was done by hand, its failure branch is kept (the person went on, so the draft does);
//!   otherwise a failure ends the run there.
//! - A command that started an interactive program (a REPL, an installer's questions)
//!   becomes `send_input` of its line, then, for each answer typed into it, an `await_output`
//!   of the prompt that was on the screen (escaped as a regex, its numbers generalized) and
//!   a `send_input` of the answer; then a wait for the shell's prompt to come back, by the
//!   character it ends with (never its text: the recorded user, host and directory).
//! - An answer typed while the terminal did not echo (a password) becomes a secret argument,
//!   typed with a `{var: NAME}` key: never literal text in the draft.
//! - A credential typed on a command line (credentials.rs: `export API_TOKEN=…`, `-pPASS`,
//!   an `Authorization:` header, `user:pass@` in a URL, a token's shape) becomes a secret
//!   argument too, and the line refers to it as the shell variable the run exports; the
//!   draft's first lines say which it lifted.
//! - The draft declares one return value, `COMPLETED`, that its last step sets: a run that
//!   stops at a failure, or a prompt that never comes, ends `return_validation_failed`, not
//!   `completed`.

mod lift;

pub use lift::{Lifted, Place};

use super::credentials;
use serde_json::{Map, Value, json};

/// One command line typed at the shell's prompt, and what followed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Done {
    /// The line as the shell read it.
    pub line: String,
    /// Its exit status, when the shell was back at its prompt; `None` when it was not (the
    /// program still ran when the draft was made).
    pub exit: Option<i32>,
    /// How long it took, in seconds (the step's timeout is made from it).
    pub seconds: f64,
    /// Lines typed into the program it started, in order.
    pub answers: Vec<Answer>,
    /// The last line of the screen when the shell's prompt came back after an interactive
    /// program.
    pub prompt_after: Option<String>,
}

/// A line typed into a program (not the shell) while it ran.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    /// The last line the program showed before the answer: what the draft waits for.
    pub prompt: String,
    /// What was typed, without the Enter that ended it.
    pub text: String,
    /// Typed while the terminal did not echo it: a secret.
    pub hidden: bool,
}

/// The shortest timeout a drafted step gets, and how many times as long as it took by hand.
const MIN_TIMEOUT: f64 = 30.0;
const TIMEOUT_FACTOR: f64 = 4.0;
/// The most characters of a prompt's line that its pattern keeps (the last ones).
const PROMPT_CHARS: usize = 120;
/// The return value the last step sets.
pub const COMPLETED: &str = "COMPLETED";
/// Names a secret argument never takes: the shell always has them, or the draft sets it.
const TAKEN: &[&str] = &[
    "USER",
    "HOME",
    "PATH",
    "SHELL",
    "TERM",
    "LANG",
    "PWD",
    "LOGNAME",
    "HOSTNAME",
    "MAIL",
    "EDITOR",
    "TMPDIR",
    "DISPLAY",
    "ENV",
    "BASH_ENV",
    "IFS",
    "CDPATH",
    "PS1",
    "PS2",
    "PS4",
    "OLDPWD",
    "SHLVL",
    "PROMPT_COMMAND",
    COMPLETED,
];

/// A drafted manifest: YAML, with the names of the secret arguments it declares.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub yaml: String,
    pub secrets: Vec<String>,
    /// The credentials lifted from command lines: `NAME: what, in state S`.
    pub lifted: Vec<String>,
    /// The literals lifted into arguments with their recorded values as defaults.
    pub arguments: Vec<Lifted>,
}

/// Writes the draft of workflow `name` from what was done, checked as any manifest is: the
/// first problems when it is not a valid workflow (a name that is not one, more secrets than
/// a workflow may declare).
pub fn draft(name: &str, description: &str, done: &[Done], place: &Place) -> Result<Draft, String> {
    let mut states = States::default();
    let typed: Vec<&Done> = done.iter().filter(|d| !d.line.trim().is_empty()).collect();
    // Credentials first: a secret typed twice must never become a default.
    let mut lines: Vec<String> = typed
        .iter()
        .enumerate()
        .map(|(i, d)| states.lift_credentials(&d.line, &format!("{}_{}", word(&d.line), i + 1)))
        .collect();
    let taken: Vec<String> = states.arguments.keys().cloned().collect();
    let lifted = lift::lift(&mut lines, place, &taken);
    for l in &lifted {
        states.arguments.insert(
            l.name.clone(),
            json!({
                "description": format!("{} ({})", if l.path { "a path" } else { "a value" }, l.why),
                "type": if l.path { "path" } else { "string" },
                "required": false,
                "default": l.value,
            }),
        );
    }
    for (i, (d, line)) in typed.iter().zip(&lines).enumerate() {
        states.command(i + 1, d, line);
    }
    let description = match description.trim() {
        "" => "Drafted from what was done by hand.",
        given => given,
    };
    states.finish();
    let mut root = Map::new();
    root.insert("name".into(), json!(name));
    root.insert("description".into(), json!(description));
    if !states.arguments.is_empty() {
        root.insert("arguments".into(), Value::Object(states.arguments.clone()));
    }
    root.insert(
        "return_values".into(),
        json!({ COMPLETED: { "description": "set by the last step: the procedure ran to its end" } }),
    );
    root.insert("initial_state".into(), json!(states.first()));
    root.insert("states".into(), Value::Object(states.map));
    // A map of strings, numbers and lists always serializes.
    let yaml = serde_norway::to_string(&Value::Object(root)).unwrap_or_default();
    let mut header = String::from(
        "# Drafted by flowdeck from what was done by hand: tidy it (`flowdeck docs workflows`, \"Drafts\").\n",
    );
    if !lifted.is_empty() {
        header.push_str(
            "# Literals became arguments, the recorded value their default (run it elsewhere with others):\n",
        );
        for l in &lifted {
            header.push_str(&format!("#   {} = {}: {}\n", l.name, l.value, l.why));
        }
    }
    if !states.lifted.is_empty() {
        header.push_str("# Credentials typed on command lines became secret arguments:\n");
        for lifted in &states.lifted {
            header.push_str(&format!("#   {lifted}\n"));
        }
    }
    let yaml = format!("{header}{yaml}");
    let checked = super::validate::check_bytes(yaml.as_bytes(), super::Format::Yaml);
    if !checked.is_valid() {
        let problems: Vec<String> = checked
            .violations
            .iter()
            .filter(|v| v.severity == super::violation::Severity::Error)
            .take(3)
            .map(|v| format!("{}: {} ({})", v.rule, v.message, v.path))
            .collect();
        return Err(format!(
            "the draft is not a valid workflow: {}",
            problems.join("; ")
        ));
    }
    Ok(Draft {
        yaml,
        secrets: states.secrets,
        lifted: states.lifted,
        arguments: lifted,
    })
}

/// The states being written, in order, each pointing to the next once it is known.
#[derive(Default)]
struct States {
    map: Map<String, Value>,
    /// States whose success (and, where kept, failure) goes to whatever state comes next.
    open: Vec<(String, bool)>,
    arguments: Map<String, Value>,
    secrets: Vec<String>,
    /// Credentials lifted from command lines, by value: one argument however often typed.
    by_value: Vec<(String, String)>,
    lifted: Vec<String>,
}

impl States {
    fn first(&self) -> String {
        self.map.keys().next().cloned().unwrap_or_default()
    }

    /// Adds a state and links the open ones to it; `failure_goes_on`: its failure goes on
    /// to the next state too.
    fn push(&mut self, name: String, action: Value, failure_goes_on: bool) {
        // A command's word may be another step's name (`back`, `prompt_3`): a letter sets
        // it apart.
        let mut name = name;
        let mut suffix = b'a';
        while self.map.contains_key(&name) {
            name = format!("{name}_{}", suffix as char);
            suffix = suffix.saturating_add(1);
        }
        for (open, on_failure) in std::mem::take(&mut self.open) {
            let mut next = vec![json!({"condition": "success", "next_state": name})];
            if on_failure {
                next.push(json!({"condition": "failure", "next_state": name}));
            }
            if let Some(state) = self.map.get_mut(&open).and_then(Value::as_object_mut) {
                state.insert("transitions".into(), Value::Array(next));
            }
        }
        self.map.insert(name.clone(), json!({ "action": action }));
        self.open.push((name, failure_goes_on));
    }

    /// The states of command `n`, typed as `line` (its credentials and literals lifted).
    fn command(&mut self, n: usize, done: &Done, line: &str) {
        let name = format!("{}_{n}", word(&done.line));
        // Whole seconds: the draft reads as a person would write it.
        let timeout = (done.seconds * TIMEOUT_FACTOR).max(MIN_TIMEOUT).ceil() as u64;
        if done.answers.is_empty() && done.exit.is_some() {
            let failed = done.exit != Some(0);
            let action =
                json!({"tool": "run_command", "params": {"command": line, "timeout": timeout}});
            self.push(name, action, failed);
            return;
        }
        let typed = json!({"tool": "send_input", "params": {"input_text": format!("{line}\n")}});
        self.push(name, typed, false);
        for (j, answer) in done.answers.iter().enumerate() {
            let wait = await_prompt(&answer.prompt, timeout);
            self.push(format!("prompt_{n}_{}", j + 1), wait, false);
            let keys = if answer.hidden {
                let var = self.secret(&answer.prompt);
                json!([{ "var": var }, { "key": "enter" }])
            } else {
                json!([{ "text": answer.text }, { "key": "enter" }])
            };
            let typed = json!({"tool": "send_input", "params": {"keys": keys}});
            self.push(format!("answer_{n}_{}", j + 1), typed, false);
        }
        if done.prompt_after.is_some() {
            self.push(format!("back_{n}"), await_shell(timeout), false);
        }
    }

    /// The command line with each credential in it replaced by a reference to a secret
    /// argument (`state`: the state it is typed in, for the draft to say).
    fn lift_credentials(&mut self, line: &str, state: &str) -> String {
        let found = credentials::credentials_in(line);
        if found.is_empty() {
            return line.to_string();
        }
        let mut replaced = Vec::with_capacity(found.len());
        for credential in found {
            let value = line[credential.range.clone()].to_string();
            let name = match self.by_value.iter().find(|(v, _)| *v == value) {
                Some((_, name)) => name.clone(),
                None => {
                    let description = format!("{}, typed in state {state}", credential.what);
                    let name = self.declare_secret(&credential.name, description);
                    self.lifted
                        .push(format!("{name}: {}, in state {state}", credential.what));
                    self.by_value.push((value, name.clone()));
                    name
                }
            };
            replaced.push((credential.range, name));
        }
        credentials::with_references(line, &replaced)
    }

    /// A secret argument for a hidden answer, named after its prompt (`Password:`:
    /// `PASSWORD`), numbered when the name is taken.
    fn secret(&mut self, prompt: &str) -> String {
        let words: Vec<String> = prompt
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' })
            .collect::<String>()
            .split_whitespace()
            .map(str::to_ascii_uppercase)
            .filter(|w| w.starts_with(|c: char| c.is_ascii_uppercase()))
            .collect();
        // The word that says what it is (`Password for user:` is a PASSWORD), else the last.
        let telling = [
            "PASS", "TOKEN", "KEY", "SECRET", "PIN", "PHRASE", "OTP", "CODE",
        ];
        let word = words
            .iter()
            .find(|w| telling.iter().any(|t| w.contains(t)))
            .or(words.last())
            .cloned()
            .unwrap_or_else(|| "SECRET".into());
        let description = format!("typed at \"{}\"", clip(prompt.trim(), 150));
        self.declare_secret(&word, description)
    }

    /// Declares a secret argument named after `word`, numbered when the name is taken,
    /// never a name the shell already has; returns its name.
    fn declare_secret(&mut self, word: &str, description: String) -> String {
        // An argument not given is read from the shell: never one the shell always has,
        // nor the draft's own return value.
        let base = if TAKEN.contains(&word) {
            format!("{word}_SECRET")
        } else {
            word.to_string()
        };
        let base: String = base.chars().take(56).collect();
        let mut name = base.clone();
        let mut n = 1;
        while self.arguments.contains_key(&name) {
            n += 1;
            name = format!("{base}_{n}");
        }
        self.arguments.insert(
            name.clone(),
            json!({"description": description, "secret": true}),
        );
        self.secrets.push(name.clone());
        name
    }

    /// The last step: says the procedure ran to its end.
    fn finish(&mut self) {
        let done = json!({"tool": "set_env", "params": {"vars": { COMPLETED: "done" }}});
        self.push("completed".into(), done, false);
    }
}

/// A wait for a prompt as it was seen; for a prompt with no text, for the program to fall
/// quiet.
fn await_prompt(prompt: &str, timeout: u64) -> Value {
    if prompt.lines().last().unwrap_or_default().trim().is_empty() {
        return json!({"tool": "await_output", "params": {"quiet_ms": QUIET_MS, "timeout": timeout}});
    }
    json!({"tool": "await_output", "params": {"pattern": prompt_pattern(prompt), "timeout": timeout}})
}

/// A wait for the shell's prompt to come back, as the shell tells it (`shell_prompt`), never
/// by the prompt's text, which holds the recorded user, host and directory
/// (`root@build-7:/tmp/tmp.x81Qz/demo# `) that a run elsewhere has not.
fn await_shell(timeout: u64) -> Value {
    json!({"tool": "await_output", "params": {"shell_prompt": true, "timeout": timeout}})
}

/// How long a program that showed no prompt must be quiet before the draft types.
const QUIET_MS: u64 = 500;

/// The regex of a prompt's last line: its text escaped, runs of digits (times, counters,
/// process ids) and long hex words (hashes) generalized, trailing spaces optional, anchored
/// at the end of a line.
pub fn prompt_pattern(prompt: &str) -> String {
    let line = prompt.lines().last().unwrap_or_default().trim_end();
    // The end of a very wide line is what the prompt is; a pattern stays well under the
    // manifest's 1000 bytes.
    let skip = line.chars().count().saturating_sub(PROMPT_CHARS);
    let line = match line.char_indices().nth(skip) {
        Some((at, _)) => &line[at..],
        None => line,
    };
    let mut out = String::new();
    for token in tokens(line) {
        match token {
            Token::Digits => out.push_str(r"\d+"),
            Token::Hex => out.push_str("[0-9A-Fa-f]+"),
            Token::Text(t) => out.push_str(&regex::escape(t)),
        }
    }
    out.push_str(r"\s*$");
    out
}

enum Token<'a> {
    Digits,
    Hex,
    Text(&'a str),
}

/// The line cut into digits, hex words of 7 or more characters with a digit (hashes), and
/// the text between.
fn tokens(line: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let (mut i, mut text_from) = (0, 0);
    while i < bytes.len() {
        let run = bytes[i..]
            .iter()
            .take_while(|b| b.is_ascii_hexdigit())
            .count();
        let word_start = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        let word_end = bytes
            .get(i + run)
            .is_none_or(|b| !b.is_ascii_alphanumeric());
        let digits = bytes[i..i + run]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let token = if run >= 7
            && word_start
            && word_end
            && digits < run
            && bytes[i..i + run].iter().any(u8::is_ascii_digit)
        {
            Some((Token::Hex, run))
        } else if digits > 0 {
            Some((Token::Digits, digits))
        } else {
            None
        };
        match token {
            Some((token, len)) => {
                if text_from < i {
                    out.push(Token::Text(&line[text_from..i]));
                }
                out.push(token);
                i += len;
                text_from = i;
            }
            // Stepping by one byte is safe: only ASCII ever starts a token.
            None => i += 1,
        }
    }
    if text_from < line.len() {
        out.push(Token::Text(&line[text_from..]));
    }
    out
}

/// A state name's first part from a command's first word: `make_2`, `cd_1`, `step_3`.
fn word(line: &str) -> String {
    let first = line
        .split_whitespace()
        .find(|w| !w.contains('='))
        .unwrap_or_default();
    let base = first.rsplit('/').next().unwrap_or_default();
    let clean: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let clean = clean.trim_matches('_').to_string();
    if clean.starts_with(|c: char| c.is_ascii_lowercase()) {
        clean
    } else {
        "step".into()
    }
}

fn clip(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::Format;
    use crate::workflow::validate::check_bytes;

    fn done(line: &str, exit: i32) -> Done {
        Done {
            line: line.into(),
            exit: Some(exit),
            seconds: 0.2,
            ..Done::default()
        }
    }

    #[test]
    fn prompts_are_escaped_and_their_numbers_and_hashes_generalized() {
        assert_eq!(prompt_pattern(">>> "), r">>>\s*$");
        assert_eq!(
            prompt_pattern("build 42 at 12:05:33 (a1b2c3d4e5) [y/N]? "),
            r"build \d+ at \d+:\d+:\d+ \([0-9A-Fa-f]+\) \[y/N\]\?\s*$"
        );
        // Only the last line, and words that merely look hex stay words.
        assert_eq!(prompt_pattern("ready\nDecaf face: "), r"Decaf face:\s*$");
        assert_eq!(prompt_pattern("café 3 ✓ "), r"café \d+ ✓\s*$");
    }

    #[test]
    fn a_draft_validates_keeps_failures_that_were_passed_and_never_holds_a_secret() {
        let python = Done {
            line: "python3 -q".into(),
            exit: Some(0),
            seconds: 3.0,
            answers: vec![
                Answer {
                    prompt: ">>> ".into(),
                    text: "print(6*7)".into(),
                    hidden: false,
                },
                Answer {
                    prompt: "42\n>>> ".into(),
                    text: "exit()".into(),
                    hidden: false,
                },
            ],
            prompt_after: Some("~/src/app$ ".into()),
        };
        let login = Done {
            line: "read -rs -p 'Password: ' PW".into(),
            exit: Some(0),
            answers: vec![Answer {
                prompt: "Password: ".into(),
                text: "hunter2".into(),
                hidden: true,
            }],
            prompt_after: Some("$ ".into()),
            ..Done::default()
        };
        let steps = [
            done("cd /tmp", 0),
            done("grep -q nothing /etc/hostname", 1),
            done("make -j8", 0),
            python,
            login,
        ];
        let nowhere = Place::default();
        let draft = draft("by_hand", "What was done by hand.", &steps, &nowhere).unwrap();
        let checked = check_bytes(draft.yaml.as_bytes(), Format::Yaml);
        assert!(
            checked.violations.is_empty(),
            "{:?}\n{}",
            checked.violations,
            draft.yaml
        );
        let wf = checked.workflow.unwrap();
        let names: Vec<&str> = wf.states.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "cd_1",
                "grep_2",
                "make_3",
                "python3_4",
                "prompt_4_1",
                "answer_4_1",
                "prompt_4_2",
                "answer_4_2",
                "back_4",
                "read_5",
                "prompt_5_1",
                "answer_5_1",
                "back_5",
                "completed"
            ]
        );
        assert_eq!(wf.initial_state, "cd_1");
        // The grep failed by hand and the person went on: so does the draft. The make did
        // not: its failure ends the run there.
        let conditions = |state: &str| -> Vec<String> {
            wf.states[state]
                .transitions
                .iter()
                .map(|t| format!("{}->{}", t.condition.kind(), t.next_state))
                .collect()
        };
        assert_eq!(conditions("grep_2"), ["success->make_3", "failure->make_3"]);
        assert_eq!(conditions("make_3"), ["success->python3_4"]);
        assert_eq!(draft.secrets, ["PASSWORD"]);
        assert!(!draft.yaml.contains("hunter2"), "{}", draft.yaml);
        assert!(draft.yaml.contains("var: PASSWORD"), "{}", draft.yaml);
    }

    #[test]
    fn credentials_typed_on_command_lines_become_secret_arguments() {
        let token = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789";
        let steps = [
            done("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", 0),
            done("mysql -u root -pS3cretPass -e 'select 1'", 0),
            done(
                &format!("curl -sf -H \"Authorization: Bearer {token}\" https://api.example.com"),
                0,
            ),
            // The same value again: the same argument.
            done("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", 0),
        ];
        let draft = draft("creds", "", &steps, &Place::default()).unwrap();
        for value in ["wJalrXUtnFEMI/K7MDENG", "S3cretPass", token] {
            assert!(!draft.yaml.contains(value), "{value} in\n{}", draft.yaml);
        }
        assert_eq!(
            draft.secrets,
            ["AWS_SECRET_ACCESS_KEY", "MYSQL_PASSWORD", "AUTH_TOKEN"]
        );
        assert_eq!(draft.lifted.len(), 3, "{:?}", draft.lifted);
        assert!(
            draft.lifted[2].starts_with("AUTH_TOKEN: the Authorization header, in state curl_3")
        );
        let checked = check_bytes(draft.yaml.as_bytes(), Format::Yaml);
        assert!(checked.violations.is_empty(), "{:?}", checked.violations);
        let wf = checked.workflow.unwrap();
        let command = |state: &str| match &wf.states[state].action {
            crate::workflow::action::Action::RunCommand(p) => p.command.clone(),
            other => panic!("{state}: {other:?}"),
        };
        assert_eq!(
            command("mysql_2"),
            "mysql -u root -p\"${MYSQL_PASSWORD}\" -e 'select 1'"
        );
        assert_eq!(
            command("curl_3"),
            "curl -sf -H \"Authorization: Bearer ${AUTH_TOKEN}\" https://api.example.com"
        );
        assert!(wf.arguments["AUTH_TOKEN"].secret);
        assert!(
            draft
                .yaml
                .contains("# Credentials typed on command lines became secret arguments:")
        );
    }

    #[test]
    fn the_shells_prompt_is_waited_for_as_the_shell_tells_it_never_by_its_text() {
        let python = |prompt_after: &str| Done {
            line: "python3".into(),
            exit: Some(0),
            seconds: 1.0,
            answers: vec![Answer {
                prompt: ">>> ".into(),
                text: "exit()".into(),
                hidden: false,
            }],
            prompt_after: Some(prompt_after.into()),
        };
        for prompt in [
            "root@build-7:/tmp/tmp.x81Qz/demo# ",
            "~/app % ",
            "(no prompt char)",
        ] {
            let draft = draft("p", "", &[python(prompt)], &Place::default()).unwrap();
            let wf = check_bytes(draft.yaml.as_bytes(), Format::Yaml)
                .workflow
                .unwrap();
            match &wf.states["back_1"].action {
                crate::workflow::action::Action::AwaitOutput(p) => {
                    assert!(p.shell_prompt, "{prompt}: {p:?}");
                    assert_eq!((&p.pattern, p.quiet_ms), (&None, None), "{prompt}");
                }
                other => panic!("{other:?}"),
            }
            assert!(!draft.yaml.contains("build-7"), "{}", draft.yaml);
        }
    }

    #[test]
    fn command_words_make_state_names() {
        assert_eq!(word("FOO=1 ./configure --prefix=/x"), "configure");
        assert_eq!(word("/usr/bin/Make-It all"), "make_it");
        assert_eq!(word("[ -d x ]"), "step");
        assert_eq!(word("  "), "step");
    }

    #[test]
    fn names_never_clash_and_secrets_never_take_a_name_the_shell_has() {
        let hidden = |prompt: &str| Answer {
            prompt: prompt.into(),
            text: "x".into(),
            hidden: true,
        };
        let asks = Done {
            line: "back".into(),
            exit: Some(0),
            answers: vec![
                hidden("Password for user: "),
                hidden("Enter user: "),
                hidden("Password for user: "),
            ],
            prompt_after: Some("$ ".into()),
            ..Done::default()
        };
        let steps = [
            done("   ", 0),
            done("prompt_1_1", 0),
            asks,
            done("back_2", 0),
        ];
        let drafted = draft("names", "  ", &steps, &Place::default()).unwrap();
        assert_eq!(drafted.secrets, ["PASSWORD", "USER_SECRET", "PASSWORD_2"]);
        let checked = check_bytes(drafted.yaml.as_bytes(), Format::Yaml);
        let wf = checked.workflow.unwrap();
        assert_eq!(wf.description, "Drafted from what was done by hand.");
        let names: Vec<&str> = wf.states.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "prompt_1_1_1",
                "back_2",
                "prompt_2_1",
                "answer_2_1",
                "prompt_2_2",
                "answer_2_2",
                "prompt_2_3",
                "answer_2_3",
                "back_2_a",
                "back_2_3",
                "completed"
            ]
        );
        // Upper-case hex is generalized as such; a draft that cannot be valid says why.
        assert_eq!(prompt_pattern("key 9F3A2B7C: "), r"key [0-9A-Fa-f]+:\s*$");
        let wide = "x".repeat(5000);
        assert!(prompt_pattern(&wide).len() < 200);
        let refused = draft("Not A Name", "d", &[done("true", 0)], &Place::default()).unwrap_err();
        assert!(refused.contains("not a valid workflow"), "{refused}");
    }
}
