//! The clipboard, reached through the terminal: OSC 52 carries the text to the person's
//! terminal (and from there to their system clipboard), over ssh too, with nothing to install.
//! tmux drops OSC 52 from programs unless `set-clipboard` is `on`; there the text also goes
//! into tmux's paste buffer and the person is told why their clipboard may not have it.

use base64::Engine as _;
use std::io::Write;
use std::process::{Command, Stdio};

/// Terminals limit what one OSC 52 sequence may carry (xterm: about 100,000 bytes); past this
/// the copy is refused with a message rather than silently cut.
pub const MAX_COPY: usize = 74_000;

/// The escape sequence that asks the terminal to put `text` on the clipboard.
pub fn osc52(text: &str) -> String {
    format!(
        "\x1b]52;c;{}\x07",
        base64::engine::general_purpose::STANDARD.encode(text)
    )
}

/// Why a copy may not reach the clipboard here, said with each copy: inside tmux whose
/// `set-clipboard` is not `on`. Asked once, when the studio starts.
pub fn hint() -> Option<String> {
    std::env::var_os("TMUX").filter(|v| !v.is_empty())?;
    let out = Command::new("tmux")
        .args(["show-options", "-gv", "set-clipboard"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let value = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (value != "on").then(|| {
        format!(
            "in tmux's buffer: tmux's set-clipboard is {}, `set -g set-clipboard on` \
             reaches your clipboard",
            if value.is_empty() { "unknown" } else { &value }
        )
    })
}

/// Sends `text` to the clipboard: OSC 52 on `out`, and into tmux's paste buffer when `tmux`
/// (tmux drops OSC 52). Returns the characters copied.
pub fn copy(text: &str, out: &mut impl Write, tmux: bool) -> Result<usize, String> {
    if text.len() > MAX_COPY {
        return Err(format!(
            "the selection is {} bytes: terminals take at most about {MAX_COPY} through OSC 52",
            text.len()
        ));
    }
    out.write_all(osc52(text).as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write to the terminal: {e}"))?;
    if tmux {
        load_tmux_buffer(text.to_string());
    }
    Ok(text.chars().count())
}

/// `tmux load-buffer -`, off the loop: tmux answers quickly, but the loop never waits on a
/// process.
fn load_tmux_buffer(text: String) {
    std::thread::spawn(move || {
        let child = Command::new("tmux")
            .args(["load-buffer", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        if let Ok(mut child) = child {
            if let Some(mut stdin) = child.stdin.take() {
                let _ = stdin.write_all(text.as_bytes());
            }
            let _ = child.wait();
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_goes_out_base64_encoded_in_one_osc_52() {
        let mut out = Vec::new();
        assert_eq!(copy("héllo\nworld", &mut out, false), Ok(11));
        assert_eq!(
            String::from_utf8(out).unwrap_or_default(),
            "\x1b]52;c;aMOpbGxvCndvcmxk\x07"
        );
    }

    #[test]
    fn a_selection_too_big_for_terminals_is_refused_not_cut() {
        let mut out = Vec::new();
        let big = "x".repeat(MAX_COPY + 1);
        assert!(copy(&big, &mut out, false).is_err());
        assert!(out.is_empty());
    }
}
