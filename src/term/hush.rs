//! Keeping flowdeck's own shell plumbing off the screen and out of the history.
//!
//! `read_env` and `export_env` (shell.rs) type a long framed line into the session's shell:
//! its echo, the nonce markers and the read-back lines are protocol, not anything the run's
//! commands did, and a person watching the pane (or reading the history) should not see
//! them. So, from the moment the writer types such a line (not before: output that came
//! earlier is the program's and is shown) until the shell prints its end marker, the
//! session holds the raw output back from the screen and the transcript and looks for the
//! markers in it. Once the end marker arrives, what was held is the plumbing: its body is
//! decoded for the caller and the rest is dropped; the prompt line it was typed at is
//! cleared, so that the shell's next prompt takes its place and the screen looks as it did.
//!
//! The protocol itself is unchanged (the same markers that the echo cannot fake), and
//! nothing is lost when hiding cannot finish: if the line does not start, times out, is
//! cancelled, the shell ends, or more than [`MAX_HELD`] bytes arrive (a background job's
//! flood), what was held is released to the screen and the transcript as it came, and the
//! caller falls back to finding the markers there, as it always did.
//!
//! The price: output that another process (a job the run left in the background) writes to
//! the terminal during those few milliseconds is held with the plumbing and dropped with it,
//! since nothing tells the two apart in one byte stream.

use super::transcript::{Decoder, MAX_LINE_BYTES, Transcript, render_text};
use tokio::sync::watch;

/// Output held back at most; beyond it, hiding gives up and shows everything.
pub const MAX_HELD: usize = 1 << 20;

/// What replaces the held plumbing on the screen: back to the start of the prompt line the
/// framed line was typed at, cleared, so that the shell's next prompt is drawn over it.
const CLEAR_PROMPT_LINE: &[u8] = b"\r\x1b[K";

/// Where a hidden framed command is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HushState {
    /// Not started yet (the line may not even be typed).
    Waiting,
    /// The shell printed the begin marker.
    Begun,
    /// The end marker arrived: the command's exit status and its output, as text.
    Done { status: Option<i32>, output: String },
    /// Hiding gave up: what was held went to the screen and the transcript, markers and
    /// all, and the caller reads them there.
    Released,
}

/// One hidden framed command of a session.
#[derive(Debug)]
pub struct Hush {
    nonce: String,
    /// The typed input that starts the hold, once queued.
    seq: Option<u64>,
    holding: bool,
    held: Vec<u8>,
    /// How far `held` was searched for the end marker.
    searched: usize,
    /// Where the begin marker's line ends in `held`, once seen.
    body_start: Option<usize>,
    /// `__FD<nonce>:B` and `__FD<nonce>:E:`, as the shell assembles them.
    begin: Vec<u8>,
    end: Vec<u8>,
    state: watch::Sender<HushState>,
}

/// What the session does with a chunk of output.
#[derive(Debug)]
pub enum Take {
    /// Nothing hidden: the chunk goes to the screen and the transcript as it is.
    Show,
    /// The chunk was held back.
    Held,
    /// These bytes go to the screen and the transcript instead (the held output released,
    /// or what followed the end marker after the prompt line is cleared); hiding is over.
    Replace(Vec<u8>),
}

impl Hush {
    /// A hidden command framed by `nonce` (hex digits only), and where to follow it.
    pub fn new(nonce: &str) -> (Hush, watch::Receiver<HushState>) {
        // Plain byte searches: the nonce makes the markers unique, and compiling a regex
        // per command would cost more than the search.
        let begin = format!("__FD{nonce}:B").into_bytes();
        let end = format!("__FD{nonce}:E:").into_bytes();
        let (state, rx) = watch::channel(HushState::Waiting);
        (
            Hush {
                nonce: nonce.to_string(),
                seq: None,
                holding: false,
                held: Vec::new(),
                searched: 0,
                body_start: None,
                begin,
                end,
                state,
            },
            rx,
        )
    }

    pub fn nonce(&self) -> &str {
        &self.nonce
    }

    /// The input whose typing starts the hold.
    pub fn set_input(&mut self, seq: u64) {
        self.seq = Some(seq);
    }

    /// Whether input `seq` is the framed line.
    pub fn is_input(&self, seq: u64) -> bool {
        self.seq == Some(seq)
    }

    /// Input `seq` is being written now: if it is the framed line, output is held from here.
    pub fn typing(&mut self, seq: u64) {
        if self.seq == Some(seq) {
            self.holding = true;
        }
    }

    /// Takes a chunk of output.
    pub fn take(&mut self, chunk: &[u8]) -> Take {
        if !self.holding {
            return Take::Show;
        }
        self.held.extend_from_slice(chunk);
        if self.body_start.is_none() {
            // The marker may have been cut between chunks: look a little before the new ones.
            let from = self.searched.saturating_sub(self.begin.len() + 2);
            if let Some(at) = find(&self.held, &self.begin, from) {
                // Unless its newline is still on its way (then it is found again next time).
                if let Some(body_start) = line_end(&self.held, at + self.begin.len()) {
                    self.body_start = Some(body_start);
                    self.searched = body_start;
                    self.state.send_replace(HushState::Begun);
                }
            }
        }
        if let Some(body_start) = self.body_start {
            let from = self
                .searched
                .saturating_sub(self.end.len() + 16)
                .max(body_start);
            let found = find(&self.held, &self.end, from).and_then(|at| {
                let digits_start = at + self.end.len();
                let digits = self.held[digits_start..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count();
                // Unless the status and its newline are still on their way.
                line_end(&self.held, digits_start + digits)
                    .map(|after| (at, digits_start..digits_start + digits, after))
            });
            if let Some((at, digits, after)) = found {
                let status = std::str::from_utf8(&self.held[digits])
                    .ok()
                    .and_then(|c| c.parse().ok());
                // The newline the end marker begins with is not output.
                let body = &self.held[body_start..at];
                let body = body.strip_suffix(b"\n").unwrap_or(body);
                let body = body.strip_suffix(b"\r").unwrap_or(body);
                let output = plain_text(body);
                let mut shown = CLEAR_PROMPT_LINE.to_vec();
                shown.extend_from_slice(&self.held[after..]);
                self.holding = false;
                self.held = Vec::new();
                self.state.send_replace(HushState::Done { status, output });
                return Take::Replace(shown);
            }
        }
        self.searched = self.held.len();
        if self.held.len() > MAX_HELD {
            return Take::Replace(self.release());
        }
        Take::Held
    }

    /// Gives up hiding: returns what was held, to be shown as it came.
    pub fn release(&mut self) -> Vec<u8> {
        self.holding = false;
        self.seq = None;
        self.state.send_if_modified(|s| {
            if matches!(s, HushState::Done { .. } | HushState::Released) {
                false
            } else {
                *s = HushState::Released;
                true
            }
        });
        std::mem::take(&mut self.held)
    }
}

/// Where `needle` first occurs in `hay` at or after `from`.
fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| i + from)
}

/// Just past the line end (`\n`, or `\r\n` from the terminal) at `at`, once it has arrived.
fn line_end(held: &[u8], at: usize) -> Option<usize> {
    match held.get(at..)? {
        [b'\n', ..] => Some(at + 1),
        [b'\r', b'\n', ..] => Some(at + 2),
        _ => None,
    }
}

/// Raw terminal output as the text the transcript would hold, carriage returns applied.
fn plain_text(raw: &[u8]) -> String {
    let mut transcript = Transcript::new(usize::MAX, MAX_LINE_BYTES);
    Decoder::default().feed(&mut transcript, raw);
    let text = transcript.text();
    render_text(text.strip_suffix('\n').unwrap_or(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hush() -> (Hush, watch::Receiver<HushState>) {
        let (mut h, rx) = Hush::new("00ff");
        h.set_input(7);
        (h, rx)
    }

    #[test]
    fn output_before_the_line_is_typed_is_shown() {
        let (mut h, _rx) = hush();
        assert!(matches!(h.take(b"$ "), Take::Show));
        h.typing(6);
        assert!(matches!(h.take(b"more"), Take::Show));
    }

    #[test]
    fn the_plumbing_is_dropped_and_its_body_read() {
        let (mut h, rx) = hush();
        h.typing(7);
        assert!(matches!(
            h.take(b" case ... printf __FD 00ff\r\n__FD00"),
            Take::Held
        ));
        assert_eq!(*rx.borrow(), HushState::Waiting);
        assert!(matches!(
            h.take(b"ff:B\r\nV:A:s:41\r\n\r\n__FD00ff:E"),
            Take::Held
        ));
        assert_eq!(*rx.borrow(), HushState::Begun);
        let Take::Replace(shown) = h.take(b":0\r\n$ ") else {
            panic!("the end marker was not seen");
        };
        assert_eq!(shown, b"\r\x1b[K$ ");
        assert_eq!(
            *rx.borrow(),
            HushState::Done {
                status: Some(0),
                output: "V:A:s:41".into()
            }
        );
    }

    #[test]
    fn markers_cut_anywhere_are_found() {
        let whole: &[u8] = b"echo\r\n__FD00ff:B\r\nV:A:s:41\r\n\r\n__FD00ff:E:17\r\n$ ";
        for cut in 1..whole.len() {
            let (mut h, rx) = hush();
            h.typing(7);
            let first = h.take(&whole[..cut]);
            let second = h.take(&whole[cut..]);
            let shown = match (first, second) {
                (Take::Held, Take::Replace(shown)) => shown,
                // The end marker's line was whole in the first piece.
                (Take::Replace(mut shown), Take::Show) => {
                    shown.extend_from_slice(&whole[cut..]);
                    shown
                }
                other => panic!("cut at {cut}: {other:?}"),
            };
            assert_eq!(shown, b"\r\x1b[K$ ", "cut at {cut}");
            assert_eq!(
                *rx.borrow(),
                HushState::Done {
                    status: Some(17),
                    output: "V:A:s:41".into()
                },
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn a_flood_is_released_whole() {
        let (mut h, rx) = hush();
        h.typing(7);
        let line = vec![b'x'; 64 << 10];
        let mut held = 0;
        loop {
            match h.take(&line) {
                Take::Held => held += line.len(),
                Take::Replace(shown) => {
                    assert_eq!(shown.len(), held + line.len());
                    break;
                }
                Take::Show => panic!("a held chunk was shown alone"),
            }
        }
        assert_eq!(*rx.borrow(), HushState::Released);
        assert!(matches!(h.take(b"after"), Take::Show));
    }
}
