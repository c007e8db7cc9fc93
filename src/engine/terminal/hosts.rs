//! Terminals on other machines: the ssh command that opens a session's shell on a host.
//! The PTY and the screen stay here; ssh carries the keys and the output (term/remote.rs
//! tells how the shell there is followed without /proc).
//!
//! The command is `ssh`, or `FLOWDECK_SSH_COMMAND` split as a shell splits a command line
//! (as git splits `GIT_SSH_COMMAND`), so that options and config files come from the
//! person. flowdeck adds its own options after theirs (ssh keeps the first value it is
//! given for an option, so theirs win): a terminal on the far side, a connect timeout,
//! keep-alives that notice a dropped connection, and, when no person can answer a question
//! in the pane (an agent, a run started without one), `BatchMode` so that a password or a
//! host key question fails at once instead of waiting for nobody.

use crate::engine::EngineError;
use std::time::Duration;

/// The variable that gives the ssh command and its options.
pub const SSH_COMMAND_VARIABLE: &str = "FLOWDECK_SSH_COMMAND";

/// How long ssh may take to open its TCP connection.
const CONNECT_TIMEOUT_SECONDS: u32 = 10;

/// How long flowdeck waits for a host to be reached when nobody can answer a question
/// there: ssh's connect timeout and the time to authenticate with a key.
pub const REACH_ALONE: Duration = Duration::from_secs(30);

/// How long it waits when a person can answer in the pane (a password, a passphrase).
pub const REACH_WITH_A_PERSON: Duration = Duration::from_secs(300);

/// Keep-alives: a connection that stops answering ends after 3 of them missed (15 s).
const ALIVE_INTERVAL_SECONDS: u32 = 5;
const ALIVE_COUNT: u32 = 3;

/// The command that opens a shell on `host`, without the far side's bootstrap (the terminal
/// layer adds it last): `ssh`, given as `ssh` (the engine's setting), else as
/// `FLOWDECK_SSH_COMMAND` says. `person`: someone can answer ssh's questions in the pane.
pub fn connect_command(
    ssh: Option<&[String]>,
    host: &str,
    person: bool,
) -> Result<Vec<String>, EngineError> {
    check_host(host)?;
    let mut argv = match ssh {
        Some(ssh) if !ssh.is_empty() => ssh.to_vec(),
        _ => ssh_command()?,
    };
    argv.extend([
        "-t".to_string(),
        "-o".into(),
        format!("ConnectTimeout={CONNECT_TIMEOUT_SECONDS}"),
        "-o".into(),
        format!("ServerAliveInterval={ALIVE_INTERVAL_SECONDS}"),
        "-o".into(),
        format!("ServerAliveCountMax={ALIVE_COUNT}"),
    ]);
    if !person {
        argv.extend(["-o".to_string(), "BatchMode=yes".into()]);
    }
    // `--`: a host is never taken for an option.
    argv.extend(["--".to_string(), host.to_string()]);
    Ok(argv)
}

/// `ssh`, or the command `FLOWDECK_SSH_COMMAND` gives.
fn ssh_command() -> Result<Vec<String>, EngineError> {
    let Some(given) = std::env::var_os(SSH_COMMAND_VARIABLE).filter(|v| !v.is_empty()) else {
        return Ok(vec!["ssh".to_string()]);
    };
    let given = given.to_string_lossy();
    match shlex::split(&given) {
        Some(argv) if !argv.is_empty() => Ok(argv),
        _ => Err(EngineError::InvalidParams(format!(
            "{SSH_COMMAND_VARIABLE} is not a command line flowdeck can split (an unclosed quote?): {given}"
        ))),
    }
}

/// A host as ssh takes it: a name, an address, `user@host`, an alias of the ssh config.
/// Never an option (a leading `-`), never whitespace or control characters.
pub fn check_host(host: &str) -> Result<(), EngineError> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || "_.@:%[]-".contains(c);
    let valid = !host.is_empty()
        && host.len() <= 255
        && !host.starts_with('-')
        && host.chars().all(allowed);
    if valid {
        Ok(())
    } else {
        Err(EngineError::InvalidParams(format!(
            "host {} is not a host ssh can be given: use a name, an address, user@host or an alias of your ssh config (letters, digits and _ . @ : % [ ] -, not starting with -)",
            crate::workflow::names::sanitize(host)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_names_never_options() {
        for good in ["h1", "user@db.example.com", "10.0.0.7", "[::1]", "web-01"] {
            assert!(check_host(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "-oProxyCommand=touch x",
            "a b",
            "h1\n",
            "h;rm",
            "$(x)",
            "a/b",
        ] {
            assert!(check_host(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_person_gets_questions_and_nobody_gets_batch_mode() {
        let alone = connect_command(None, "h1", false).unwrap();
        assert!(alone.contains(&"BatchMode=yes".to_string()));
        assert_eq!(alone[alone.len() - 2..], ["--".to_string(), "h1".into()]);
        let person = connect_command(None, "h1", true).unwrap();
        assert!(!person.contains(&"BatchMode=yes".to_string()));
    }
}
