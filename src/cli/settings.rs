//! The engine's settings that every command reads the same way: from its flags and from the
//! environment, checked as the command starts so that a bad value is told where it was set.

use crate::term::recording::cast::Format;
use anyhow::Result;
use std::path::PathBuf;

/// The engine's settings for the commands that open sessions: the folder followed or not,
/// approval mode, this binary as the session watchdog (so that a `kill -9` leaves no process
/// behind), and runs' recordings as FLOWDECK_RECORDINGS says.
pub(super) fn engine_config(
    watch: bool,
    approve_agent_runs: bool,
) -> Result<crate::engine::EngineConfig> {
    let mut config = crate::engine::EngineConfig {
        watch,
        approve_agent_runs,
        ..crate::engine::EngineConfig::default()
    };
    config.terminals.watchdog = Some(PathBuf::from("/proc/self/exe"));
    if let Some(cap) = recordings_from_env()? {
        config.recording_cap = cap;
    }
    if let Some(format) = recording_format_from_env()? {
        config.recording_format = format;
    }
    // A studio that hosts the folder itself keeps the attention list as a server would.
    if let Some(text) = std::env::var_os(super::idle::QUIET_ENV) {
        let text = text.to_string_lossy();
        config.quiet_after = crate::engine::abandoned::parse_after(&text)
            .map_err(|why| anyhow::anyhow!("{}={text}: {why}", super::idle::QUIET_ENV))?;
    }
    Ok(config)
}

/// Runs' recordings as asciicast v2 (`v2`) rather than v3 (`v3`, the default), for a player
/// that reads only v2.
pub(super) const RECORDING_FORMAT_ENV: &str = "FLOWDECK_RECORDING_FORMAT";

/// FLOWDECK_RECORDING_FORMAT, when set: checked as every command starts, as
/// FLOWDECK_RECORDINGS is.
pub(super) fn recording_format_from_env() -> Result<Option<Format>> {
    let Some(text) = std::env::var_os(RECORDING_FORMAT_ENV) else {
        return Ok(None);
    };
    let text = text.to_string_lossy();
    match Format::parse(&text) {
        Some(format) => Ok(Some(format)),
        None => anyhow::bail!(
            "{RECORDING_FORMAT_ENV}={text}: not a recording format: use v3 (asciinema 3's, the default) or v2"
        ),
    }
}

/// FLOWDECK_RECORDINGS, when set: checked by every command as it starts, so that a bad value
/// is told where it was set, not in the log of a server started in the background.
pub(super) fn recordings_from_env() -> Result<Option<Option<u64>>> {
    let Some(text) = std::env::var_os(RECORDINGS_ENV) else {
        return Ok(None);
    };
    let text = text.to_string_lossy();
    recording_cap(&text)
        .map(Some)
        .map_err(|why| anyhow::anyhow!("{RECORDINGS_ENV}={text}: {why}"))
}

/// Turns runs' recordings off (`off`) or sets their cap (a size: `16M`, `1G`, bytes).
pub(super) const RECORDINGS_ENV: &str = "FLOWDECK_RECORDINGS";

/// `off`, or a size in bytes with an optional K, M or G (of 1024): at least 4K, so that a
/// recording holds its header and the note of what the cap left out.
fn recording_cap(text: &str) -> Result<Option<u64>, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let (digits, unit) = match text.char_indices().last() {
        Some((at, c)) if c.is_ascii_alphabetic() => (&text[..at], c.to_ascii_uppercase()),
        _ => (text, 'B'),
    };
    let not_a_size = || "not a size: use off, or a size such as 16M or 1G".to_string();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(not_a_size());
    }
    let shift = match unit {
        'B' => 0,
        'K' => 10,
        'M' => 20,
        'G' => 30,
        _ => return Err(format!("unknown unit {unit}: use K, M or G, or off")),
    };
    let size = digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(not_a_size)?;
    if size < 4 << 10 {
        return Err("a recording needs at least 4K".into());
    }
    Ok(Some(size))
}

/// `--max-wait` / FLOWDECK_MAX_WAIT: how long a tool call may wait before it answers (50s,
/// 2m, 500ms). There is no `off`: a host that allows longer calls still has some limit, and
/// a call past it is one the agent never hears the end of.
pub(super) fn max_wait(text: &str) -> Result<std::time::Duration, String> {
    match crate::engine::abandoned::parse_after(text)? {
        Some(wait) => Ok(wait),
        None => Err(format!(
            "`{text}`: a wait ceiling is a duration such as 50s or 2m (a call made as a task has none)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::recording_cap;

    #[test]
    fn recordings_are_off_or_a_size_of_at_least_4k() {
        assert_eq!(recording_cap("off"), Ok(None));
        assert_eq!(recording_cap(" OFF "), Ok(None));
        assert_eq!(recording_cap("16M"), Ok(Some(16 << 20)));
        assert_eq!(recording_cap("1g"), Ok(Some(1 << 30)));
        assert_eq!(recording_cap("8k"), Ok(Some(8 << 10)));
        assert_eq!(recording_cap("5000"), Ok(Some(5000)));
        for (bad, why) in [
            ("100", "at least 4K"),
            ("12Q", "unknown unit Q"),
            ("M", "not a size"),
            ("-5M", "not a size"),
            ("99999999999G", "not a size"),
        ] {
            let told = recording_cap(bad).unwrap_err();
            assert!(told.contains(why), "{bad}: {told}");
        }
    }
}
