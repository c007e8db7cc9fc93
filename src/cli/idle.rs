//! The settings of how long before something idle counts: a gone agent's terminal nobody
//! looks at is closed (`flowdeck serve --close-abandoned-after`, engine/abandoned.rs), and a
//! terminal with no output is `quiet` on the attention list (`--quiet-after`,
//! engine/attention/). Each is a flag of `flowdeck serve` and an environment variable, which
//! also reaches the server a front end starts in the background.

/// The variables that set them.
pub(super) const ABANDON_ENV: &str = "FLOWDECK_CLOSE_ABANDONED_AFTER";
pub(super) const QUIET_ENV: &str = "FLOWDECK_QUIET_AFTER";

/// How long something idle is left as it is (`None`: for ever).
#[derive(Debug, Clone, Copy)]
pub(super) struct After(pub(super) Option<std::time::Duration>);

pub(super) fn after(text: &str) -> Result<After, String> {
    crate::engine::abandoned::parse_after(text).map(After)
}

/// Checked by every command as it starts, as FLOWDECK_RECORDINGS is: a bad value is told
/// where it was set, not in the log of a server started in the background.
pub(super) fn check_env() -> anyhow::Result<()> {
    for env in [ABANDON_ENV, QUIET_ENV] {
        if let Some(text) = std::env::var_os(env) {
            let text = text.to_string_lossy();
            crate::engine::abandoned::parse_after(&text)
                .map_err(|why| anyhow::anyhow!("{env}={text}: {why}"))?;
        }
    }
    Ok(())
}
