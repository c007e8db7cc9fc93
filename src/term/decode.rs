//! Output bytes in, plain text out: the transcript's parser.
//!
//! It follows the same state machine as `vte` (the DEC ANSI parser vt100 is built on), so
//! escape sequences are recognised exactly where the grid recognises them, split across
//! reads or not, and control characters inside them are executed as the grid executes them.
//! It differs in speed: `vte` hands text over one character at a time, which made the
//! transcript cost as much as a third of ingest; here a run of text between control
//! characters is validated and appended in one go. A test feeds random streams to both and
//! compares.

use super::transcript::Transcript;

/// Where the parser is between bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum State {
    #[default]
    Ground,
    Escape,
    EscapeIntermediate,
    CsiEntry,
    CsiParam,
    CsiIntermediate,
    CsiIgnore,
    DcsEntry,
    DcsParam,
    DcsIntermediate,
    DcsPassthrough,
    DcsIgnore,
    OscString,
    SosPmApcString,
}

/// The plain-text decoder of one session's output; keeps its state between chunks.
#[derive(Debug, Default)]
pub struct Decoder {
    state: State,
    /// The start of a UTF-8 character cut by the end of the last chunk.
    partial: [u8; 4],
    partial_len: usize,
}

impl Decoder {
    pub fn feed(&mut self, transcript: &mut Transcript, bytes: &[u8]) {
        let mut i = 0;
        if self.partial_len != 0 {
            i += self.finish_partial(transcript, bytes);
        }
        while i < bytes.len() {
            match self.state {
                State::Ground => i += self.ground(transcript, &bytes[i..]),
                // Parameters (`38;5;200`) change nothing here: skipped in one go.
                State::CsiParam => {
                    let run = bytes[i..]
                        .iter()
                        .position(|b| !(0x30..=0x3b).contains(b))
                        .unwrap_or(bytes.len() - i);
                    if run == 0 {
                        self.step(transcript, bytes[i]);
                        i += 1;
                    } else {
                        i += run;
                    }
                }
                _ => {
                    self.step(transcript, bytes[i]);
                    i += 1;
                }
            }
        }
    }

    /// Text up to the next ESC; returns the bytes consumed.
    fn ground(&mut self, t: &mut Transcript, bytes: &[u8]) -> usize {
        let text_end = memchr(0x1b, bytes).unwrap_or(bytes.len());
        if text_end == 0 {
            self.state = State::Escape;
            return 1;
        }
        match std::str::from_utf8(&bytes[..text_end]) {
            Ok(text) => {
                t.push_text(text);
                if text_end < bytes.len() {
                    self.state = State::Escape;
                    text_end + 1
                } else {
                    text_end
                }
            }
            Err(e) => {
                let valid = e.valid_up_to();
                // The prefix up to `valid` is valid UTF-8.
                t.push_text(std::str::from_utf8(&bytes[..valid]).unwrap_or_default());
                match e.error_len() {
                    Some(len) => {
                        // A lone byte 0x80..=0x9f is a C1 control, executed (and ignored);
                        // anything else invalid is one replacement character.
                        if !(len == 1 && bytes[valid] <= 0x9f) {
                            t.push_text("\u{fffd}");
                        }
                        valid + len
                    }
                    None if text_end < bytes.len() => {
                        // A character cut by ESC.
                        t.push_text("\u{fffd}");
                        self.state = State::Escape;
                        text_end + 1
                    }
                    None => {
                        // A character cut by the end of the chunk: finished by the next.
                        let cut = &bytes[valid..];
                        self.partial[..cut.len()].copy_from_slice(cut);
                        self.partial_len = cut.len();
                        bytes.len()
                    }
                }
            }
        }
    }

    /// Completes a character cut by the end of the last chunk; returns the bytes of `bytes`
    /// consumed. Decodes as if the two chunks had come as one.
    fn finish_partial(&mut self, t: &mut Transcript, bytes: &[u8]) -> usize {
        let old = self.partial_len;
        let take = bytes.len().min(self.partial.len() - old);
        self.partial[old..old + take].copy_from_slice(&bytes[..take]);
        let have = old + take;
        let decoded = match std::str::from_utf8(&self.partial[..have]) {
            Ok(text) => text.chars().next().map(|c| (Some(c), c.len_utf8())),
            Err(e) if e.valid_up_to() > 0 => std::str::from_utf8(&self.partial[..e.valid_up_to()])
                .ok()
                .and_then(|text| text.chars().next())
                .map(|c| (Some(c), c.len_utf8())),
            Err(e) => match e.error_len() {
                Some(len) => Some((None, len)),
                // Still not whole: wait for more.
                None => {
                    self.partial_len = have;
                    return take;
                }
            },
        };
        self.partial_len = 0;
        let Some((c, len)) = decoded else {
            return take;
        };
        match c {
            Some(c) => {
                let mut buf = [0u8; 4];
                t.push_text(c.encode_utf8(&mut buf));
            }
            None => {
                // As in `ground`: a lone C1 byte is executed, other invalid bytes print one
                // replacement character.
                if !(len == 1 && self.partial[0] <= 0x9f) {
                    t.push_text("\u{fffd}");
                }
            }
        }
        len.saturating_sub(old)
    }

    /// One byte outside ground state, as `vte` moves on it.
    fn step(&mut self, t: &mut Transcript, b: u8) {
        let (next, executed) = transition(self.state, b);
        if executed {
            t.execute(b);
        }
        self.state = next;
    }
}

/// The state after byte `b` outside ground state, and whether `b` is executed there (a C0
/// control inside a sequence acts as it would outside; CAN and SUB cancel the sequence).
/// Pure, so that every reader of the stream (this decoder, [`super::escapes`]) moves alike.
pub(super) fn transition(state: State, b: u8) -> (State, bool) {
    use State::*;
    // C0 controls other than CAN, SUB and ESC.
    let c0 = matches!(b, 0x00..=0x17 | 0x19 | 0x1c..=0x1f);
    match state {
        Escape | EscapeIntermediate => escape(state, b, c0),
        CsiEntry | CsiParam | CsiIntermediate | CsiIgnore => csi(state, b, c0),
        DcsEntry | DcsParam | DcsIntermediate | DcsPassthrough | DcsIgnore => dcs(state, b, c0),
        OscString | SosPmApcString => string(state, b),
        Ground => (Ground, false),
    }
}

/// `b` in `Escape` or `EscapeIntermediate` (`c0`: it is a C0 control other than CAN, SUB
/// and ESC).
fn escape(state: State, b: u8, c0: bool) -> (State, bool) {
    use State::*;
    match state {
        Escape => match b {
            _ if c0 => (Escape, true),
            0x20..=0x2f => (EscapeIntermediate, false),
            0x50 => (DcsEntry, false),
            0x58 | 0x5e | 0x5f => (SosPmApcString, false),
            0x5b => (CsiEntry, false),
            0x5d => (OscString, false),
            0x30..=0x7e => (Ground, false),
            0x18 | 0x1a => (Ground, true),
            _ => (Escape, false),
        },
        // EscapeIntermediate.
        _ => match b {
            _ if c0 => (EscapeIntermediate, true),
            0x20..=0x2f | 0x7f => (EscapeIntermediate, false),
            0x30..=0x7e => (Ground, false),
            _ => anywhere(state, b),
        },
    }
}

/// `b` in a CSI state (`c0` as for [`escape`]).
fn csi(state: State, b: u8, c0: bool) -> (State, bool) {
    use State::*;
    let next = match state {
        _ if c0 => return (state, true),
        CsiEntry => match b {
            0x20..=0x2f => CsiIntermediate,
            0x30..=0x3f => CsiParam,
            0x40..=0x7e => Ground,
            _ => return anywhere(state, b),
        },
        CsiParam => match b {
            0x20..=0x2f => CsiIntermediate,
            0x30..=0x3b | 0x7f => CsiParam,
            0x3c..=0x3f => CsiIgnore,
            0x40..=0x7e => Ground,
            _ => return anywhere(state, b),
        },
        CsiIntermediate => match b {
            0x20..=0x2f => CsiIntermediate,
            0x30..=0x3f => CsiIgnore,
            0x40..=0x7e => Ground,
            _ => return anywhere(state, b),
        },
        // CsiIgnore.
        _ => match b {
            0x20..=0x3f | 0x7f => CsiIgnore,
            0x40..=0x7e => Ground,
            _ => return anywhere(state, b),
        },
    };
    (next, false)
}

/// `b` in a DCS state (`c0` as for [`escape`]).
fn dcs(state: State, b: u8, c0: bool) -> (State, bool) {
    use State::*;
    let next = match state {
        DcsEntry | DcsParam | DcsIntermediate if c0 || b == 0x7f => state,
        DcsEntry => match b {
            0x20..=0x2f => DcsIntermediate,
            0x30..=0x3f => DcsParam,
            0x40..=0x7e => DcsPassthrough,
            _ => return anywhere(state, b),
        },
        DcsParam => match b {
            0x20..=0x2f => DcsIntermediate,
            0x30..=0x3b => DcsParam,
            0x3c..=0x3f => DcsIgnore,
            0x40..=0x7e => DcsPassthrough,
            _ => return anywhere(state, b),
        },
        DcsIntermediate => match b {
            0x20..=0x2f => DcsIntermediate,
            0x30..=0x3f => DcsIgnore,
            0x40..=0x7e => DcsPassthrough,
            _ => return anywhere(state, b),
        },
        DcsPassthrough => match b {
            0x18 | 0x1a => return (Ground, true),
            0x1b => Escape,
            0x9c => Ground,
            _ => DcsPassthrough,
        },
        // DcsIgnore.
        _ => return anywhere(state, b),
    };
    (next, false)
}

/// `b` in an OSC string, or in a SOS, PM or APC string.
fn string(state: State, b: u8) -> (State, bool) {
    use State::*;
    match state {
        OscString => match b {
            0x07 => (Ground, false),
            0x18 | 0x1a => (Ground, true),
            0x1b => (Escape, false),
            _ => (OscString, false),
        },
        // SosPmApcString.
        _ => anywhere(state, b),
    }
}

/// Bytes that act in every state: CAN and SUB cancel, ESC starts over.
fn anywhere(state: State, b: u8) -> (State, bool) {
    match b {
        0x18 | 0x1a => (State::Ground, true),
        0x1b => (State::Escape, false),
        _ => (state, false),
    }
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: `vte` driving the transcript's own `Perform`.
    fn with_vte(bytes: &[u8]) -> Transcript {
        let mut t = Transcript::new(1_000_000, 64 << 20);
        vte::Parser::new().advance(&mut t, bytes);
        t
    }

    fn stream(rng: &mut fastrand::Rng) -> Vec<u8> {
        const PIECES: &[&[u8]] = &[
            b"text ",
            b"more text",
            b"\r\n",
            b"\n",
            b"\r",
            b"\t",
            b"\x08",
            b"\x07",
            b"\x00",
            b"\x0b",
            b"\x0c",
            b"\x0e",
            b"\x7f",
            "\u{e9}".as_bytes(),
            "\u{4e2d}".as_bytes(),
            "\u{1f600}".as_bytes(),
            "\u{85}".as_bytes(),
            b"\xc3",
            b"\xe4\xb8",
            b"\xff",
            b"\x85",
            b"\x9c",
            b"\xf0\x9f",
            b"\x1b[1;31m",
            b"\x1b[",
            b"38;5;2",
            b"m",
            b"\x1b[?1049h",
            b"\x1b]0;title\x07",
            b"\x1b]8;;http://x\x1b\\",
            b"\x1bP1$r",
            b"q\x1b\\",
            b"\x1b",
            b"[",
            b"]",
            b"P",
            b"X",
            b"^",
            b"_",
            b"\x18",
            b"\x1a",
            b"\x1b(B",
            b"\x1b#8",
            b"\x1b[3\n1m",
            b"\x1b[>4;2m",
            b"\x1b[ q",
            b"\x1bc",
            b"\x1b[12;24r",
            b";",
            b":",
            b"<",
            b"?",
            b" ",
            b"!",
            b"\x1b\x1b",
        ];
        let mut out = Vec::new();
        for _ in 0..rng.usize(..400) {
            out.extend_from_slice(PIECES[rng.usize(..PIECES.len())]);
        }
        out
    }

    /// Whatever the stream and however it is cut into chunks, the text is what `vte` makes
    /// of the whole stream at once.
    #[test]
    fn decodes_as_vte_does_whatever_the_chunks() {
        let mut rng = fastrand::Rng::with_seed(0xdec0de);
        for case in 0..3000 {
            let bytes = stream(&mut rng);
            let want = with_vte(&bytes);
            let mut got = Transcript::new(1_000_000, 64 << 20);
            let mut d = Decoder::default();
            let mut at = 0;
            while at < bytes.len() {
                let n = (1 + rng.usize(..40)).min(bytes.len() - at);
                d.feed(&mut got, &bytes[at..at + n]);
                at += n;
            }
            assert_eq!(got.text(), want.text(), "case {case}: {bytes:?}");
            assert_eq!(got.total_lines(), want.total_lines(), "case {case}");
        }
    }

    #[test]
    fn long_lines_are_broken_like_vte_breaks_them() {
        let line = "\u{4e2d}x".repeat(100_000);
        let mut got = Transcript::new(100, 8 << 20);
        Decoder::default().feed(&mut got, line.as_bytes());
        assert_eq!(got.text(), with_vte(line.as_bytes()).text());
    }
}
