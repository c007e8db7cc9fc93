//! Output as text, as it streams: a chunk may end in the middle of a UTF-8 character or of
//! one of flowdeck's markers, so the end of each chunk that could still become one is held
//! until the next chunk says what it is. (Secrets are masked after this, by term/mask.rs.)

/// Decodes a byte stream to text: invalid bytes become U+FFFD, as asciinema's recorder
/// does; a character cut at a chunk's end waits for the rest.
#[derive(Debug, Default)]
pub struct Utf8Stream {
    carry: Vec<u8>,
}

impl Utf8Stream {
    pub fn decode(&mut self, chunk: &[u8]) -> String {
        // The common case: nothing carried, the chunk whole characters.
        if self.carry.is_empty()
            && let Ok(text) = std::str::from_utf8(chunk)
        {
            return text.to_owned();
        }
        let mut bytes = std::mem::take(&mut self.carry);
        bytes.extend_from_slice(chunk);
        let mut text = String::with_capacity(bytes.len());
        let mut rest = &bytes[..];
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    text.push_str(valid);
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    // Checked by from_utf8 just now.
                    text.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match e.error_len() {
                        Some(bad) => {
                            text.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[bad..];
                        }
                        None => {
                            self.carry = after.to_vec();
                            break;
                        }
                    }
                }
            }
        }
        text
    }

    /// What is left at the end of the stream: a cut character, shown as U+FFFD.
    pub fn finish(&mut self) -> String {
        if std::mem::take(&mut self.carry).is_empty() {
            String::new()
        } else {
            char::REPLACEMENT_CHARACTER.to_string()
        }
    }
}

/// Takes flowdeck's own markers (remote.rs: a far shell's *ready* and *prompt*, with the
/// session's nonce) out of a stream of text, however it is cut: no terminal draws them, and
/// a recording is the screen's, not flowdeck's plumbing.
#[derive(Debug, Default)]
pub struct DropMarkers {
    held: String,
}

/// A marker longer than this is no marker of flowdeck's: what was held is let out as it is.
const MARKER_MAX: usize = 256;
/// How each of flowdeck's markers begins (remote.rs's OSC number).
const MARKER_START: &str = "\x1b]7770;";

/// How many bytes at the end of `text` could begin a marker.
fn marker_tail(text: &str) -> usize {
    (1..MARKER_START.len())
        .rev()
        .find(|n| text.ends_with(&MARKER_START[..*n]))
        .unwrap_or(0)
}

impl DropMarkers {
    pub fn push(&mut self, text: String) -> String {
        let start = MARKER_START;
        // Most output holds none and ends in none: it passes without a copy.
        if self.held.is_empty() && !text.contains(start) && marker_tail(&text) == 0 {
            return text;
        }
        let mut all = std::mem::take(&mut self.held);
        all.push_str(&text);
        let mut out = String::with_capacity(all.len());
        let mut rest = all.as_str();
        while let Some(at) = rest.find(start) {
            out.push_str(&rest[..at]);
            let marker = &rest[at..];
            match marker.find('\x07') {
                Some(end) => rest = &marker[end + 1..],
                None if marker.len() < MARKER_MAX => {
                    self.held = marker.to_string();
                    return out;
                }
                None => {
                    out.push_str(marker);
                    return out;
                }
            }
        }
        // A tail that may begin a marker waits for the next text.
        let keep = marker_tail(rest);
        out.push_str(&rest[..rest.len() - keep]);
        self.held = rest[rest.len() - keep..].to_string();
        out
    }

    /// What is held at the end of the stream: no marker after all.
    pub fn finish(&mut self) -> String {
        std::mem::take(&mut self.held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_bytes_become_replacement_characters_and_a_cut_character_waits() {
        let mut utf8 = Utf8Stream::default();
        assert_eq!(utf8.decode(b"a\xffb\xe2\x9c"), "a\u{fffd}b");
        assert_eq!(utf8.decode(b"\x93!"), "✓!");
        assert_eq!(utf8.decode(b"\xe2"), "");
        assert_eq!(utf8.finish(), "\u{fffd}");
    }

    #[test]
    fn flowdeck_markers_leave_the_stream_wherever_it_is_cut() {
        let text = "motd\r\n\x1b]7770;flowdeck-ready;n0nce\x07$ \x1b]7770;flowdeck-prompt;n0nce\x07ls\r\n\x1b]0;title\x07ok";
        for cut in 1..=text.len() {
            let mut drop = DropMarkers::default();
            let mut out = String::new();
            for piece in crate::term::escapes::pieces(text, cut) {
                out.push_str(&drop.push(piece.to_string()));
            }
            out.push_str(&drop.finish());
            assert_eq!(
                out, "motd\r\n$ ls\r\n\x1b]0;title\x07ok",
                "cut every {cut} bytes"
            );
        }
        assert_eq!(MARKER_START, format!("\x1b]{};", crate::term::remote::OSC));
        // An unended one is let out at the end, as it came.
        let mut drop = DropMarkers::default();
        assert_eq!(drop.push("a\x1b]7770;x".into()), "a");
        assert_eq!(drop.finish(), "\x1b]7770;x");
    }
}
