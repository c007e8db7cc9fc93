//! Reaching a far shell (term/remote.rs): waiting for the far side to say it was reached,
//! then setting its prompt up to say when the shell reads, and putting it where the caller
//! asked (a working directory, variables), all as one hidden framed line.

use super::framed::{Framing, run_framed};
use super::{PROMPT_GRACE, check_name, expect_success, refuse_nul, single_quote};
use crate::term::error::TermError;
use crate::term::session::Session;
use std::time::{Duration, Instant};

/// Lines of the screen quoted when the far side cannot be reached: ssh's reason is in its
/// last few.
const REASON_LINES: usize = 4;

/// Waits, as long as the session's patience, for its far side to be reached, then sets its
/// shell up: its prompt's marker, then `cwd` and `env` (exported literally). Fails with
/// ssh's (or the connect command's) own words when it ends first or time runs out.
pub async fn connect(
    session: &Session,
    cwd: Option<&str>,
    env: &[(String, String)],
    by: &str,
) -> Result<(), TermError> {
    let Some(host) = session.host().map(str::to_string) else {
        return Ok(());
    };
    for (name, value) in env {
        check_name(name)?;
        refuse_nul(&format!("the value of `{name}`"), value)?;
    }
    if let Some(cwd) = cwd {
        refuse_nul("the working directory", cwd)?;
    }
    let timeout = session.patience();
    let started = Instant::now();
    if !session.wait_until_reached().await {
        return Err(unreachable(session, &host, timeout));
    }
    let Some(setup) = session.prompt_setup() else {
        return Ok(());
    };
    // The variables first: a `PS1` among them is the prompt the marker is then added to.
    let mut script = super::export_script(env);
    if let Some(cwd) = cwd {
        script.push_str(&format!("cd -- {} || exit 97; ", single_quote(cwd)));
    }
    script.push_str(&setup);
    let left = timeout.saturating_sub(started.elapsed()).max(PROMPT_GRACE);
    let result = run_framed(session, &script, left, by, Framing::Hidden).await?;
    if let Err(e) = expect_success(session, &result, "setting up the shell") {
        return Err(TermError::Unreachable {
            host,
            reason: match (result.exit_code, cwd) {
                (Some(97), Some(cwd)) => format!("no folder {cwd} there"),
                _ => e.to_string(),
            },
        });
    }
    // The first marked prompt, before anything else is typed: typed sooner, a line would
    // be read before it is drawn, and each prompt seen would be the one before its line.
    if !session.wait_for_marked_prompt(PROMPT_GRACE).await {
        tracing::info!(
            "the shell on {host} does not show flowdeck's prompt marker (its configuration rebuilds its prompt); typed input is not held for its prompt"
        );
    }
    Ok(())
}

/// Why the far side was not reached: how the connect command ended and its last lines (ssh
/// says why there: refused, a host key that changed, no key accepted), or that it did not
/// answer in time (and what it showed: a password it asks for).
fn unreachable(session: &Session, host: &str, timeout: Duration) -> TermError {
    let said = last_lines(session);
    let refused = said.contains("Permission denied") && !session.person_answers();
    let reason = match session.exit() {
        Some(_) if refused => format!(
            "{said} (nobody is there to type a password or a passphrase, so none was asked for: use a key that needs none, or one loaded in ssh-agent)"
        ),
        // ssh's own failures end it with 255; any other status is the far side's, whose
        // login shell ran something else than flowdeck's start-up command, or ran it and
        // failed (its words, which name it, are in `said`).
        Some(exit) if exit.code.is_some_and(|code| code != SSH_FAILED) => {
            let why = format!(
                "the far side ended ({exit}) before flowdeck's start-up command said it was reached: \
                 the account's login shell must run `exec sh -c '…'` (POSIX shells, fish, tcsh, csh \
                 and nu do, and the session's shell is then a POSIX one); give the account such a \
                 login shell, or reach the machine through a command that starts `sh -c`"
            );
            match said.is_empty() {
                true => why,
                false => format!("{said} ({why})"),
            }
        }
        Some(exit) => match said.is_empty() {
            true => format!("the connection ended ({exit})"),
            false => format!("{said} (the connection ended: {exit})"),
        },
        None if said.to_ascii_lowercase().contains("password")
            || said.to_ascii_lowercase().contains("passphrase") =>
        {
            format!(
                "it asks for a password or passphrase and nobody typed one within {} s: {said}",
                timeout.as_secs()
            )
        }
        None if said.is_empty() => format!("no answer within {} s", timeout.as_secs()),
        None => format!(
            "no answer within {} s; the terminal shows: {said}",
            timeout.as_secs()
        ),
    };
    TermError::Unreachable {
        host: host.to_string(),
        reason,
    }
}

/// For a far shell whose connection ended under it (ssh's own failure, status 255: a
/// network or a server gone, keep-alives unanswered), why, in the connect command's words; `None`
/// while it holds, or when the shell there ended by itself (`exit`).
pub fn lost_connection(session: &Session) -> Option<String> {
    let host = session.host()?;
    let exit = session.exit()?;
    (exit.code == Some(SSH_FAILED) || exit.signal.is_some()).then(|| {
        let said = last_lines(session);
        format!("the connection to {host} ended ({exit}): {said}")
    })
}

/// The status ssh exits with when it fails itself, rather than passing on the far shell's.
const SSH_FAILED: u32 = 255;

fn last_lines(session: &Session) -> String {
    let text = session.content(crate::term::Content::History);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(REASON_LINES)..].join(" / ")
}
