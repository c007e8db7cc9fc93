//! Talking to a POSIX shell in a session: run a command and get its exit status and output,
//! read environment variables, export them.
//!
//! Everything is typed into the shell like a person would, framed by markers that carry a
//! random nonce and that the shell assembles at run time (`printf '%s%s' __FD NONCE`), so the
//! echoed command line never contains a marker and cannot end the wait early. The line
//! removes itself from the shell's history. Values travel as octal escapes on the way in and
//! as hex on the way out, so quotes, newlines, `$(...)`, control characters and any Unicode
//! arrive exactly and are never interpreted by the shell or by the terminal.
//!
//! Reading and exporting variables is flowdeck's own plumbing, not a command anyone asked
//! to see: its line, markers and answers are held back from the screen and the history
//! while they run (hush.rs). `run_command` is shown as if a person had typed it: the
//! prompt, the command's own text (see [`shown_command`]), its output as it comes, the next
//! prompt; its framing line and markers are held back the same way.

use super::error::TermError;
use super::hush::{HushState, OUTPUT_CUT};
use super::matcher::{AwaitSpec, Since, WaitOutcome};
use super::session::Session;
use indexmap::IndexMap;
use regex::Regex;
use schemars::JsonSchema;
use serde::Serialize;
use std::hash::{BuildHasher, RandomState};
use std::time::{Duration, Instant, SystemTime};

/// Lines typed into a shell are split below this length with line continuations, so that
/// shells without line editing (whose kernel line buffer holds 4095 bytes) take them whole.
const MAX_TYPED_LINE: usize = 1000;

/// How long a shell operation waits for a program that is finishing to give the terminal
/// back (a script that printed its last line is still exiting) before it reports
/// `not_a_shell`.
const PROMPT_GRACE: Duration = Duration::from_secs(2);

/// A shell at its prompt starts a typed line within milliseconds; one that has not printed
/// the start marker after this long did not take the line as a command. (The line itself
/// may wait up to `typing::HOLD_MAX` for a busy shell to read it.)
const START_WAIT: Duration = Duration::from_secs(10);

/// Fails unless the session is a shell at its prompt, giving a program that is just ending a
/// moment to give the terminal back. (A shell still busy building its prompt is fine: the
/// writer types the line once it reads, see typing.rs.)
pub async fn ready_shell(session: &Session, timeout: Duration) -> Result<(), TermError> {
    match session.require_shell_prompt() {
        Err(TermError::NotAShell { .. }) if session.is_shell() && session.exit().is_none() => {
            session.wait_for_prompt(timeout.min(PROMPT_GRACE)).await;
            session.require_shell_prompt()
        }
        other => other,
    }
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CommandOutcome {
    Completed,
    Timeout,
    Exited,
}

/// The result of `run_command`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CommandResult {
    /// `completed`; `timeout`; or `exited` when the shell itself ended (the command was
    /// `exit 7`, or it killed the shell).
    pub outcome: CommandOutcome,
    /// The command's exit status (`$?`) when it completed; the shell's exit status when it
    /// ended the shell.
    pub exit_code: Option<i32>,
    /// What it printed (stdout and stderr as the terminal showed them), carriage returns
    /// applied.
    pub output: String,
    pub elapsed_ms: f64,
}

/// Runs a command line in the session's shell and waits for it to finish.
pub async fn run_command(
    session: &Session,
    command: &str,
    timeout: Duration,
    by: &str,
) -> Result<CommandResult, TermError> {
    refuse_nul("the command", command)?;
    ready_shell(session, timeout).await?;
    // The command and its output are the point: shown as they run, as if typed.
    run_framed(
        session,
        &format!("eval {}", quote_long(command)),
        timeout,
        by,
        Framing::Shown(command),
    )
    .await
}

/// A shell cannot hold a NUL byte in a word or a variable: it would cut the text there or
/// drop the byte, so the text is refused rather than changed.
fn refuse_nul(what: &str, text: &str) -> Result<(), TermError> {
    if text.contains('\0') {
        return Err(TermError::InvalidArgument {
            what: what.to_string(),
            reason: "it contains a NUL byte, which a shell cannot hold".into(),
        });
    }
    Ok(())
}

/// Reads environment variables; `None` for one that is not set.
pub async fn read_env(
    session: &Session,
    names: &[&str],
    timeout: Duration,
    by: &str,
) -> Result<IndexMap<String, Option<String>>, TermError> {
    for name in names {
        check_name(name)?;
    }
    ready_shell(session, timeout).await?;
    let script: String = names
        .iter()
        .map(|n| {
            format!(
                "printf '%s:%s:' V {n}; if [ -n \"${{{n}+x}}\" ]; then printf 's:'; printf '%s' \"${n}\" | od -An -v -tx1 | tr -d ' \\n'; fi; printf '\\n'; "
            )
        })
        .collect();
    let result = run_framed(session, &script, timeout, by, Framing::Hidden).await?;
    let finished = expect_success(session, &result, "reading variables")?;
    let mut values = IndexMap::new();
    for line in finished.lines() {
        let Some(rest) = line.strip_prefix("V:") else {
            continue;
        };
        let mut parts = rest.splitn(3, ':');
        let (Some(name), Some(set)) = (parts.next(), parts.next()) else {
            continue;
        };
        let value = match set {
            "s" => Some(decode_hex(parts.next().unwrap_or("")).ok_or_else(|| {
                TermError::ShellProtocol {
                    session: session.id().to_string(),
                    detail: format!("the value of {name} came back garbled"),
                }
            })?),
            _ => None,
        };
        values.insert(name.to_string(), value);
    }
    for name in names {
        if !values.contains_key(*name) {
            return Err(TermError::ShellProtocol {
                session: session.id().to_string(),
                detail: format!("no answer for {name} (is `od` installed?)"),
            });
        }
    }
    Ok(values)
}

/// Exports variables into the session's shell; values are stored literally.
pub async fn export_env(
    session: &Session,
    vars: &[(String, String)],
    timeout: Duration,
    by: &str,
) -> Result<(), TermError> {
    for (name, value) in vars {
        check_name(name)?;
        refuse_nul(&format!("the value of `{name}`"), value)?;
    }
    ready_shell(session, timeout).await?;
    let script: String = vars
        .iter()
        .map(|(name, value)| {
            if value.bytes().all(|b| (0x20..0x7f).contains(&b)) {
                format!("export {name}={}; ", single_quote(value))
            } else {
                // Command substitution drops trailing newlines; the `x` keeps them.
                format!(
                    "{name}=\"$(printf '{}'; printf x)\"; {name}=\"${{{name}%x}}\"; export {name}; ",
                    octal_escape(value)
                )
            }
        })
        .collect();
    let result = run_framed(session, &script, timeout, by, Framing::Hidden).await?;
    expect_success(session, &result, "exporting variables")?;
    Ok(())
}

fn expect_success<'a>(
    session: &Session,
    result: &'a CommandResult,
    what: &str,
) -> Result<&'a str, TermError> {
    match (result.outcome, result.exit_code) {
        (CommandOutcome::Completed, Some(0)) => Ok(&result.output),
        (CommandOutcome::Timeout, _) => Err(TermError::CommandTimeout {
            session: session.id().to_string(),
            command: what.to_string(),
            seconds: result.elapsed_ms / 1000.0,
        }),
        (CommandOutcome::Exited, _) => Err(TermError::Exited {
            session: session.id().to_string(),
            status: session
                .exit()
                .map_or_else(|| "ended".into(), |e| e.to_string()),
        }),
        (CommandOutcome::Completed, code) => Err(TermError::ShellProtocol {
            session: session.id().to_string(),
            detail: format!(
                "{what} failed with status {code:?}: {}",
                result.output.trim()
            ),
        }),
    }
}

/// How a framed command appears on the session's screen and in its history.
#[derive(Clone, Copy)]
enum Framing<'a> {
    /// flowdeck's own plumbing (reading and exporting variables): nothing of it is shown.
    Hidden,
    /// A command someone asked for: shown as if a person had typed this text at the
    /// prompt, with its output as it comes; only the framing is hidden.
    Shown(&'a str),
}

/// Types `script` framed by begin and end markers and waits for the end marker. The
/// framing (and, for `Framing::Hidden`, everything) is kept off the screen and out of the
/// history while it runs (hush.rs), when it can be; when it cannot, it is shown as it came.
#[expect(clippy::too_many_lines, reason = "issue 23 splits it by its jobs")]
async fn run_framed(
    session: &Session,
    script: &str,
    timeout: Duration,
    by: &str,
    framing: Framing<'_>,
) -> Result<CommandResult, TermError> {
    let nonce = nonce();
    let script = script.trim_end_matches([' ', ';']);
    let script = if script.len() <= MAX_TYPED_LINE && !script.contains(|c: char| c.is_control()) {
        script.to_string()
    } else {
        format!("eval {}", quote_long(script))
    };
    // A leading space keeps the line out of history where HISTCONTROL asks for that; the
    // `case` removes it where history took it anyway (bash), and only if it is ours.
    // It goes first, so that a command interrupted with Ctrl-C leaves no trace either.
    let line = format!(
        " case \"$(history 1 2>/dev/null)\" in *{nonce}*) history -d -1 2>/dev/null;; esac; printf '%s%s:B\\n' __FD {nonce}; {script}; printf '\\n%s%s:E:%s\\n' __FD {nonce} \"$?\"\n"
    );
    let from = session.output_end();
    let started = Instant::now();
    // Ctrl-U first: text left on the command line (answers to terminal queries that binary
    // output asked for, read by the line editor once the program ended) would otherwise
    // become the start of this line. It deletes the line in readline, zle and the kernel's
    // own line editing alike.
    let typed = format!("\u{15}{line}");
    let start_wait = timeout.min(START_WAIT);
    let hush = match framing {
        Framing::Hidden => session
            .hush(&nonce, None)
            .map(|state| (state, String::new())),
        Framing::Shown(command) => {
            let lines = shown_command(command);
            // Shown after the prompt in place of the framing; the run's typist skips it
            // like an echo, so that its "since the last input" starts at the output.
            let head = format!("{}\r\n", lines.join("\r\n"));
            let echo = format!("{}\n", lines.join("\n"));
            session
                .hush(&nonce, Some(head.into_bytes()))
                .map(|state| (state, echo))
        }
    };
    // Where a shown command's output began, when it began but hiding its framing gave up:
    // its begin marker is not in the history to be found.
    let mut body_from = None;
    match hush {
        Some((state, echo)) => {
            // Released on every way out, a dropped future included: nothing stays held.
            let _hushed = Hushed {
                session,
                nonce: &nonce,
            };
            session.send_hidden(&typed, &nonce, &echo, by)?;
            match hidden_result(state, started, start_wait, timeout).await {
                Hidden::Done(status, output) => {
                    return Ok(CommandResult {
                        outcome: CommandOutcome::Completed,
                        exit_code: status,
                        output,
                        elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
                    });
                }
                // A shown command out of time: its output so far. (Hiding ends with this
                // call: the rest, end marker included, is shown as it comes.)
                Hidden::TimedOut {
                    body_start: Some(at),
                } => {
                    return Ok(CommandResult {
                        outcome: CommandOutcome::Timeout,
                        exit_code: None,
                        output: session.command_output(at),
                        elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
                    });
                }
                Hidden::Gone { body_start } => body_from = body_start,
                Hidden::TimedOut { body_start: None } => {}
            }
            // Hiding gave up (or time ran out): the markers, if they came, are in the
            // history now, where the waits below find them in what time is left.
        }
        None => {
            session.send_text(&typed, by)?;
        }
    }
    // Compiled only here: a hidden command that finished never needs them.
    let begin = format!("__FD{nonce}:B\n");
    let end =
        Regex::new(&format!("\n__FD{nonce}:E:(\\d+)\n")).map_err(|e| TermError::ShellProtocol {
            session: session.id().to_string(),
            detail: e.to_string(),
        })?;
    if body_from.is_none() {
        let begun =
            Regex::new(&format!("__FD{nonce}:B\n")).map_err(|e| TermError::ShellProtocol {
                session: session.id().to_string(),
                detail: e.to_string(),
            })?;
        // What is left of the wait: a hidden attempt that gave up may have used some.
        let start_left = start_wait.saturating_sub(started.elapsed());
        let start = session
            .await_output(AwaitSpec {
                pattern: Some(begun),
                stop_patterns: Vec::new(),
                since: Since::After(from),
                timeout: start_left,
                typist: None,
                quiet: None,
            })
            .await?;
        if matches!(start.outcome, WaitOutcome::Timeout | WaitOutcome::Stopped) {
            return Err(TermError::NotStarted {
                session: session.id().to_string(),
                seconds: start_wait.as_secs_f64(),
                line: command_line(session),
            });
        }
    }
    let waited = session
        .await_output(AwaitSpec {
            pattern: Some(end),
            stop_patterns: Vec::new(),
            since: Since::After(body_from.unwrap_or(from)),
            timeout: timeout.saturating_sub(started.elapsed()),
            typist: None,
            quiet: None,
        })
        .await?;
    let outcome = match waited.outcome {
        WaitOutcome::Matched => CommandOutcome::Completed,
        WaitOutcome::Exited => CommandOutcome::Exited,
        WaitOutcome::Timeout | WaitOutcome::Stopped => CommandOutcome::Timeout,
    };
    let marker = format!("\n__FD{nonce}:E:");
    let output = match body_from {
        // A shown command whose shell ended (`exit 7`) while it ran: what it showed.
        Some(at) => {
            let output = session.command_output(at);
            match output.find(&marker) {
                Some(end) => output[..end].to_string(),
                None => output,
            }
        }
        None => {
            let text = session.output_since(from);
            let body_start = text.find(&begin).map(|i| i + begin.len());
            let body = match body_start {
                Some(start) => {
                    let rest = &text[start..];
                    match rest.find(&marker) {
                        // The end marker's own leading newline is not output.
                        Some(end) => rest[..end].to_string(),
                        None => rest.to_string(),
                    }
                }
                // A flood pushed the begin marker out of the history: what is left is the
                // output's end, marked as cut.
                None if outcome == CommandOutcome::Completed => {
                    let end = text.find(&marker).unwrap_or(text.len());
                    format!("{OUTPUT_CUT}\n{}", &text[..end])
                }
                None => String::new(),
            };
            // Output that ended with a newline and output that did not look the same here,
            // as in `$(...)`: one trailing newline is dropped.
            super::transcript::render_text(body.strip_suffix('\n').unwrap_or(&body))
        }
    };
    Ok(CommandResult {
        outcome,
        exit_code: match outcome {
            CommandOutcome::Completed => waited
                .groups
                .first()
                .cloned()
                .flatten()
                .and_then(|c| c.parse().ok()),
            // The command ended the shell (`exit 7`): its status is the shell's.
            CommandOutcome::Exited => waited
                .exit
                .as_ref()
                .and_then(|e| e.code)
                .and_then(|c| i32::try_from(c).ok()),
            CommandOutcome::Timeout => None,
        },
        output,
        elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
    })
}

/// Lines of a command's text shown at most, and characters of one line.
const MAX_SHOWN_LINES: usize = 20;
const MAX_SHOWN_CHARS: usize = 500;

/// How `run_command` shows its command after the prompt, in place of the framed line that
/// really runs it: as a person would have typed it. Each line of the command on a line of
/// its own, those after the first behind bash's default continuation prompt `> `. Nothing in
/// it can act on the terminal: C0 controls and DEL are written in caret notation (`^[`), C1
/// controls as `?`, and a Tab as spaces to the next multiple of 8 columns. A line longer
/// than `MAX_SHOWN_CHARS` characters is cut, saying how many were left out, and beyond
/// `MAX_SHOWN_LINES` lines one line says how many more there were (a pasted script should
/// not push its own output off the screen). The command runs whole either way.
pub fn shown_command(command: &str) -> Vec<String> {
    let lines: Vec<&str> = command.lines().collect();
    let mut shown: Vec<String> = lines
        .iter()
        .take(MAX_SHOWN_LINES)
        .enumerate()
        .map(|(i, line)| {
            let mut out = String::from(if i == 0 { "" } else { "> " });
            let mut col = 0usize;
            let mut left_out = 0usize;
            for c in line.chars() {
                if col >= MAX_SHOWN_CHARS {
                    left_out += 1;
                    continue;
                }
                match c {
                    '\t' => {
                        let next = (col / 8 + 1) * 8;
                        out.extend(std::iter::repeat_n(' ', next - col));
                        col = next;
                    }
                    '\u{0}'..='\u{1f}' => {
                        out.push('^');
                        out.push(char::from(c as u8 ^ 0x40));
                        col += 2;
                    }
                    '\u{7f}' => {
                        out.push_str("^?");
                        col += 2;
                    }
                    c if c.is_control() => {
                        out.push('?');
                        col += 1;
                    }
                    c => {
                        out.push(c);
                        col += 1;
                    }
                }
            }
            if left_out > 0 {
                out.push_str(&format!(" [... {left_out} more characters]"));
            }
            out
        })
        .collect();
    if lines.len() > MAX_SHOWN_LINES {
        shown.push(format!(
            "> [... {} more lines]",
            lines.len() - MAX_SHOWN_LINES
        ));
    }
    if shown.is_empty() {
        shown.push(String::new());
    }
    shown
}

/// Stops hiding a framed command when its caller is done with it, however that happens.
struct Hushed<'a> {
    session: &'a Session,
    nonce: &'a str,
}

impl Drop for Hushed<'_> {
    fn drop(&mut self) {
        self.session.release_hush(self.nonce);
    }
}

/// How following a hidden framed command ended.
enum Hidden {
    /// The end marker: the exit status and the output.
    Done(Option<i32>, String),
    /// It did not start within its wait, or did not end within its timeout; a shown
    /// command that had begun says where its output began.
    TimedOut { body_start: Option<u64> },
    /// Hiding gave up (the shell ended, too much was held, ...).
    Gone { body_start: Option<u64> },
}

/// Follows a hidden framed command until its end marker, or until it did not start within
/// `start_wait`, did not end within `timeout` (both from `started`), or hiding gave up.
async fn hidden_result(
    mut state: tokio::sync::watch::Receiver<HushState>,
    started: Instant,
    start_wait: Duration,
    timeout: Duration,
) -> Hidden {
    loop {
        let current = state.borrow_and_update().clone();
        let (limit, begun) = match current {
            HushState::Done { status, output } => return Hidden::Done(status, output),
            HushState::Released { body_start } => return Hidden::Gone { body_start },
            HushState::Waiting => (start_wait, None),
            HushState::Begun { body_start } => (timeout, body_start),
        };
        let left = limit.saturating_sub(started.elapsed());
        match tokio::time::timeout(left, state.changed()).await {
            Ok(Ok(())) => {}
            // Time ran out, or the session dropped the command.
            Ok(Err(_)) | Err(_) => {
                // A change in the same instant still counts.
                return match state.borrow().clone() {
                    HushState::Done { status, output } => Hidden::Done(status, output),
                    HushState::Released { body_start } => Hidden::Gone { body_start },
                    HushState::Begun { body_start } => Hidden::TimedOut { body_start },
                    HushState::Waiting => Hidden::TimedOut { body_start: begun },
                };
            }
        }
    }
}

/// The screen's line with the cursor, for telling what the shell's command line holds.
fn command_line(session: &Session) -> String {
    const SHOWN: usize = 200;
    let line = session.with_screen(|screen| {
        let (row, _) = screen.cursor_position();
        let (_, cols) = screen.size();
        screen
            .rows(0, cols.get())
            .nth(usize::from(row))
            .unwrap_or_default()
    });
    let line = line.trim_end();
    let count = line.chars().count();
    let shown: String = line.chars().skip(count.saturating_sub(SHOWN)).collect();
    let shown: String = shown.chars().flat_map(char::escape_debug).collect();
    if count > SHOWN {
        format!("...{shown}")
    } else {
        shown
    }
}

fn check_name(name: &str) -> Result<(), TermError> {
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && name.len() <= 256;
    if valid {
        Ok(())
    } else {
        Err(TermError::InvalidEnvName(name.to_string()))
    }
}

/// `'text'`, with single quotes inside written as `'\''`.
pub fn single_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// A single-quoted word that may be typed over several lines: pieces of at most
/// `MAX_TYPED_LINE` bytes, each quoted, joined by backslash-newline (a line continuation,
/// which the shell removes). Text with control characters (a Tab would trigger completion, a
/// Ctrl-C would cancel the line) is passed through `printf` octal escapes instead.
pub fn quote_long(text: &str) -> String {
    if text.chars().any(|c| c.is_control() && c != '\n') {
        let escaped = octal_escape(text);
        return format!("\"$(printf {})\"", join_pieces(&escaped));
    }
    join_pieces(text)
}

fn join_pieces(text: &str) -> String {
    let mut pieces = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut cut = rest.len().min(MAX_TYPED_LINE);
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        pieces.push(single_quote(&rest[..cut]));
        rest = &rest[cut..];
    }
    if pieces.is_empty() {
        return "''".to_string();
    }
    pieces.join("\\\n")
}

/// Every byte that is not plain printable ASCII as a `printf` octal escape (`\NNN`).
pub fn octal_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for &b in text.as_bytes() {
        if (0x20..0x7f).contains(&b) && !matches!(b, b'\\' | b'\'' | b'%') {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\{b:03o}"));
        }
    }
    out
}

fn decode_hex(hex: &str) -> Option<String> {
    let bytes = hex::decode(hex.trim()).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

fn nonce() -> String {
    // RandomState is seeded from the OS's random source.
    let value = RandomState::new().hash_one(SystemTime::now());
    format!("{value:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_keeps_everything_literal() {
        assert_eq!(single_quote("it's"), "'it'\\''s'");
        assert_eq!(
            octal_escape("a%\\'\n\u{e9}"),
            "a\\045\\134\\047\\012\\303\\251"
        );
        assert_eq!(quote_long("ls -l"), "'ls -l'");
        assert_eq!(quote_long("a\tb"), "\"$(printf 'a\\011b')\"");
        let long = "x".repeat(2500);
        let quoted = quote_long(&long);
        assert_eq!(quoted.matches("\\\n").count(), 2);
        assert!(quoted.lines().all(|l| l.len() <= MAX_TYPED_LINE + 3));
    }

    #[test]
    fn commands_are_shown_as_typed_and_harmless() {
        assert_eq!(shown_command("echo hi"), ["echo hi"]);
        assert_eq!(shown_command(""), [""]);
        assert_eq!(shown_command("a\nb\r\n"), ["a", "> b"]);
        assert_eq!(
            shown_command("x\u{1b}[2J\u{7f}\u{9b}y\tz"),
            ["x^[[2J^??y      z"]
        );
        let long = shown_command(&"y".repeat(MAX_SHOWN_CHARS + 7));
        assert_eq!(
            long,
            [format!(
                "{} [... 7 more characters]",
                "y".repeat(MAX_SHOWN_CHARS)
            )]
        );
        let script = "true\n".repeat(MAX_SHOWN_LINES + 3);
        let shown = shown_command(&script);
        assert_eq!(shown.len(), MAX_SHOWN_LINES + 1);
        assert_eq!(
            shown.last().map(String::as_str),
            Some("> [... 3 more lines]")
        );
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("PATH").is_ok());
        assert!(check_name("_x1").is_ok());
        for bad in ["", "1A", "A-B", "A B", "$(x)", "A\n"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn nonces_differ() {
        assert_ne!(nonce(), nonce());
        assert_eq!(nonce().len(), 16);
    }
}
