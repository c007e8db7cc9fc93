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
//!
//! Here: the operations and what they return. Typing a script between markers and following
//! it to its end is framed.rs, showing a command as typed is shown.rs, and writing text into
//! a shell word (and reading hex back) is quoting.rs.

mod connect;
mod framed;
mod quoting;
mod shown;

pub use connect::{connect, lost_connection};

pub use quoting::{octal_escape, quote_long, single_quote};
pub use shown::shown_command;

use super::error::TermError;
use super::session::Session;
use framed::{Framing, run_framed};
use indexmap::IndexMap;
use quoting::decode_hex;
use schemars::JsonSchema;
use serde::Serialize;
use std::time::Duration;

/// Lines typed into a shell are split below this length with line continuations, so that
/// shells without line editing (whose kernel line buffer holds 4095 bytes) take them whole.
const MAX_TYPED_LINE: usize = 1000;

/// How long a shell operation waits for a program that is finishing to give the terminal
/// back (a script that printed its last line is still exiting) before it reports
/// `not_a_shell`.
const PROMPT_GRACE: Duration = Duration::from_secs(2);

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
    let result = run_framed(
        session,
        &format!("eval {}", quote_long(command)),
        timeout,
        by,
        Framing::Shown(command),
    )
    .await?;
    if result.outcome == CommandOutcome::Completed {
        session.note_ran(command, result.exit_code, result.elapsed_ms / 1000.0);
        back_at_prompt(session).await;
    }
    Ok(result)
}

/// After a framed command, a far shell (term/remote.rs) draws its next prompt a moment after
/// the end marker: waited for, so that what is typed next is read at the prompt, as a
/// local shell's writer waits by itself (typing.rs).
async fn back_at_prompt(session: &Session) {
    if session.host().is_some() {
        session.wait_for_prompt(PROMPT_GRACE).await;
    }
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
    back_at_prompt(session).await;
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
    let script = export_script(vars);
    let result = run_framed(session, &script, timeout, by, Framing::Hidden).await?;
    expect_success(session, &result, "exporting variables")?;
    back_at_prompt(session).await;
    Ok(())
}

/// The script that exports `vars`, each value literally.
fn export_script(vars: &[(String, String)]) -> String {
    vars.iter()
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
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        assert!(check_name("PATH").is_ok());
        assert!(check_name("_x1").is_ok());
        for bad in ["", "1A", "A-B", "A B", "$(x)", "A\n"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }
}
