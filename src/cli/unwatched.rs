//! The setting of the policy on what nobody watches (engine/abandoned.rs): `flowdeck serve
//! --close-abandoned-after DURATION`, or FLOWDECK_CLOSE_ABANDONED_AFTER, which also reaches
//! the server a front end starts in the background.

/// The environment variable that sets it.
pub(super) const ENV: &str = "FLOWDECK_CLOSE_ABANDONED_AFTER";

/// How long a gone agent's terminal nobody looks at is kept (`None`: for ever).
#[derive(Debug, Clone, Copy)]
pub(super) struct AbandonAfter(pub(super) Option<std::time::Duration>);

pub(super) fn abandon_after(text: &str) -> Result<AbandonAfter, String> {
    crate::engine::abandoned::parse_after(text).map(AbandonAfter)
}

/// Checked by every command as it starts, as FLOWDECK_RECORDINGS is: a bad value is told
/// where it was set, not in the log of a server started in the background.
pub(super) fn check_env() -> anyhow::Result<()> {
    if let Some(text) = std::env::var_os(ENV) {
        let text = text.to_string_lossy();
        crate::engine::abandoned::parse_after(&text)
            .map_err(|why| anyhow::anyhow!("{ENV}={text}: {why}"))?;
    }
    Ok(())
}
