//! Keeping flowdeck's own shell plumbing off the screen and out of the history.
//!
//! `read_env` and `export_env` (shell/) type a long framed line into the session's shell:
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
//! `run_command` (shell/) is framed the same way but is shown, as if a person had typed it:
//! a *shown* hush holds only the framing. From the typed line to the begin marker, output
//! is held as above (the framing line's echo); once the begin marker arrives, that is
//! dropped and the command's own text (given by the caller, see `shell::shown_command`) is
//! shown after the prompt in its place. From then on output streams through as it comes,
//! so a long build shows its progress: only bytes that could be the start of the end
//! marker (`\r\n__FD<nonce>:E:<status>\r\n`) are held, until the next bytes prove they are
//! not (a line's own line end is so held until more output, or the marker, follows). The end
//! marker is dropped and the shell's next prompt follows on a line of its own. The session
//! records where the command's output began and ended in the transcript, so that the caller
//! gets exactly the output the screen showed between them. Terminal mode changes in the
//! dropped framing (the line editor turning bracketed paste off once it read the line) are
//! kept, so that the screen's modes are the program's while the command runs. The fallbacks
//! are the same: whatever is held is shown as it came; a shown command that runs out of time
//! stops being hidden, and the rest of it (its end marker too) is shown as it comes.
//!
//! The price: output that another process (a job the run left in the background) writes to
//! the terminal during those few milliseconds (for a shown command, between typing its line
//! and its begin marker) is held with the plumbing and dropped with it, since nothing tells
//! the two apart in one byte stream.

use super::decode::Decoder;
use super::transcript::{MAX_LINE_BYTES, Transcript, render_text};
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
    /// The shell printed the begin marker; for a shown command, the transcript offset
    /// where its output begins.
    Begun { body_start: Option<u64> },
    /// The end marker arrived: the command's exit status and its output, as text.
    Done { status: Option<i32>, output: String },
    /// Hiding gave up: what was held went to the screen and the transcript, markers and
    /// all, and the caller reads them there. A shown command that had begun says where its
    /// output began in the transcript (its begin marker is not there to be found).
    Released { body_start: Option<u64> },
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
    /// For a shown command: what replaces its framing on the screen (its own text).
    shown: Option<Vec<u8>>,
    /// A shown command's output began: it streams through (see the module's doc).
    streaming: bool,
    /// Where a shown command's output begins in the transcript, once the session knows.
    body_from: Option<u64>,
    state: watch::Sender<HushState>,
}

/// The end of a shown command, found in a chunk.
#[derive(Debug)]
pub struct End {
    pub status: Option<i32>,
    /// What followed the end marker (the shell's next prompt).
    pub tail: Vec<u8>,
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
    /// A shown command's output: `head` (its text, in place of its framing) when it just
    /// began, then `body`, the output to pass through now; with `end`, the end marker came
    /// and hiding is over.
    Stream {
        head: Option<Vec<u8>>,
        body: Vec<u8>,
        end: Option<End>,
    },
}

/// Whether the bytes at a line feed are the end marker.
enum Marker {
    No,
    /// They could still be: more bytes will tell.
    Maybe,
    /// They are: the status, and where the marker's line ends.
    Yes(Option<i32>, usize),
}

impl Hush {
    /// A hidden command framed by `nonce` (hex digits only), and where to follow it.
    pub fn new(nonce: &str) -> (Hush, watch::Receiver<HushState>) {
        Hush::framed(nonce, None)
    }

    /// A shown framed command (`run_command`): its framing is hidden and `head` shown in its
    /// place; its output streams through.
    pub fn shown(nonce: &str, head: Vec<u8>) -> (Hush, watch::Receiver<HushState>) {
        Hush::framed(nonce, Some(head))
    }

    fn framed(nonce: &str, shown: Option<Vec<u8>>) -> (Hush, watch::Receiver<HushState>) {
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
                shown,
                streaming: false,
                body_from: None,
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
        if self.streaming {
            return self.stream(None);
        }
        if self.body_start.is_none() {
            // The marker may have been cut between chunks: look a little before the new ones.
            let from = self.searched.saturating_sub(self.begin.len() + 2);
            if let Some(at) = find(&self.held, &self.begin, from) {
                // Unless its newline is still on its way (then it is found again next time).
                if let Some(body_start) = line_end(&self.held, at + self.begin.len()) {
                    if let Some(head) = self.shown.take() {
                        // The framing line's echo and the begin marker go; the command's
                        // text takes their place, and its output streams from here. The
                        // session says where it begins in the transcript (`begun`).
                        let framing: Vec<u8> = self.held.drain(..body_start).collect();
                        // The terminal modes the shell changed on the way (bracketed paste
                        // off once the line is read, the keypad) stay changed while the
                        // command runs: what a person pastes into it must be sent right.
                        let mut shown = mode_changes(&framing);
                        shown.extend_from_slice(&head);
                        self.streaming = true;
                        return self.stream(Some(shown));
                    }
                    self.body_start = Some(body_start);
                    self.searched = body_start;
                    self.state
                        .send_replace(HushState::Begun { body_start: None });
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

    /// A shown command's output is passed through from the start of `held`, except a tail
    /// that could be the start of the end marker; `head` goes first.
    fn stream(&mut self, head: Option<Vec<u8>>) -> Take {
        let mut from = 0;
        // Where the held tail begins: everything before it is output.
        let mut keep = loop {
            let Some(lf) = find(&self.held, b"\n", from) else {
                // A carriage return may be the marker's own, before its line feed.
                break if self.held.last() == Some(&b'\r') {
                    self.held.len() - 1
                } else {
                    self.held.len()
                };
            };
            // The marker's line feed comes with a carriage return from the terminal (not
            // when the command turned `onlcr` off): that is the marker's too.
            let start = if lf > 0 && self.held[lf - 1] == b'\r' {
                lf - 1
            } else {
                lf
            };
            match self.marker_at(lf) {
                Marker::No => from = lf + 1,
                Marker::Maybe => break start,
                Marker::Yes(status, after) => {
                    let tail = self.held.split_off(after);
                    self.held.truncate(start);
                    let body = std::mem::take(&mut self.held);
                    self.holding = false;
                    self.streaming = false;
                    return Take::Stream {
                        head,
                        body,
                        end: Some(End { status, tail }),
                    };
                }
            }
        };
        keep = keep.min(self.held.len());
        let rest = self.held.split_off(keep);
        let body = std::mem::replace(&mut self.held, rest);
        Take::Stream {
            head,
            body,
            end: None,
        }
    }

    /// Whether the line feed at `lf` in `held` starts the end marker
    /// (`\n__FD<nonce>:E:<digits>\n`, the last line feed maybe after a carriage return).
    fn marker_at(&self, lf: usize) -> Marker {
        let rest = self.held.get(lf + 1..).unwrap_or_default();
        let n = self.end.len().min(rest.len());
        if rest[..n] != self.end[..n] {
            return Marker::No;
        }
        if rest.len() < self.end.len() {
            return Marker::Maybe;
        }
        let after = &rest[self.end.len()..];
        let digits = after.iter().take_while(|b| b.is_ascii_digit()).count();
        // `$?` is at most three digits: longer is not the marker (and holds nothing long).
        if digits > 10 {
            return Marker::No;
        }
        match &after[digits..] {
            [] | [b'\r'] => Marker::Maybe,
            _ if digits == 0 => Marker::No,
            [b'\n', ..] | [b'\r', b'\n', ..] => {
                let status = std::str::from_utf8(&after[..digits])
                    .ok()
                    .and_then(|d| d.parse().ok());
                let line = if after[digits] == b'\n' { 1 } else { 2 };
                Marker::Yes(status, lf + 1 + self.end.len() + digits + line)
            }
            _ => Marker::No,
        }
    }

    /// A shown command's output begins at transcript offset `at` (just past its text).
    pub fn begun(&mut self, at: u64) {
        self.body_from = Some(at);
        self.state.send_replace(HushState::Begun {
            body_start: Some(at),
        });
    }

    /// Where a shown command's output begins in the transcript, once it has begun.
    pub fn body_from(&self) -> Option<u64> {
        self.body_from
    }

    /// A shown command ended with `status`, having printed `output`.
    pub fn finish(self, status: Option<i32>, output: String) {
        self.state.send_replace(HushState::Done { status, output });
    }

    /// Gives up hiding: returns what was held, to be shown as it came.
    pub fn release(&mut self) -> Vec<u8> {
        self.holding = false;
        self.streaming = false;
        self.seq = None;
        let body_start = self.body_from;
        self.state.send_if_modified(|s| {
            if matches!(s, HushState::Done { .. } | HushState::Released { .. }) {
                false
            } else {
                *s = HushState::Released { body_start };
                true
            }
        });
        std::mem::take(&mut self.held)
    }
}

/// The private mode settings (`ESC [ ? Pm h` and `ESC [ ? Pm l`) and keypad modes
/// (`ESC =`, `ESC >`) in `raw`, in order: what of dropped output must still reach the screen.
fn mode_changes(raw: &[u8]) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut i = 0;
    while let Some(esc) = find(raw, b"\x1b", i) {
        i = esc + 1;
        match raw.get(esc + 1) {
            Some(b'=' | b'>') => kept.extend_from_slice(&raw[esc..esc + 2]),
            Some(b'[') if raw.get(esc + 2) == Some(&b'?') => {
                let params = raw[esc + 3..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit() || **b == b';')
                    .count();
                let end = esc + 3 + params;
                if params > 0 && matches!(raw.get(end), Some(b'h' | b'l')) {
                    kept.extend_from_slice(&raw[esc..=end]);
                    i = end + 1;
                }
            }
            _ => {}
        }
    }
    kept
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

/// A shown command's output: the transcript's text from `from` to `to`, carriage returns
/// applied and one trailing newline dropped (as `$(...)` would), marked as cut when its start
/// is no longer kept.
pub fn output_between(transcript: &Transcript, from: u64, to: u64) -> String {
    let start = from.max(transcript.start());
    let text = transcript
        .text()
        .get(transcript.index(start)..transcript.index(to.max(start)))
        .unwrap_or_default();
    let text = render_text(text.strip_suffix('\n').unwrap_or(text));
    if start > from {
        format!("{OUTPUT_CUT}\n{text}")
    } else {
        text
    }
}

/// What an output too long for the history starts with: only its end was kept.
pub const OUTPUT_CUT: &str = "[...output cut: only its end was kept...]";

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
        assert_eq!(*rx.borrow(), HushState::Begun { body_start: None });
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
                other => panic!("a held chunk was shown alone: {other:?}"),
            }
        }
        assert_eq!(*rx.borrow(), HushState::Released { body_start: None });
        assert!(matches!(h.take(b"after"), Take::Show));
    }

    fn shown() -> (Hush, watch::Receiver<HushState>) {
        let (mut h, rx) = Hush::shown("00ff", b"echo hi\r\n".to_vec());
        h.set_input(7);
        h.typing(7);
        (h, rx)
    }

    /// What a shown command puts on the screen, fed in `pieces`: the head, the body as it
    /// streams, and the end (its status and what followed the marker), as the session
    /// would apply them. Checks that every piece after the begin marker shows all it can.
    fn feed_shown(pieces: &[&[u8]]) -> (Vec<u8>, Vec<u8>, Option<End>) {
        let (mut h, _rx) = shown();
        let (mut head, mut body, mut end) = (Vec::new(), Vec::new(), None);
        for piece in pieces {
            match h.take(piece) {
                Take::Held => assert!(head.is_empty(), "held after it began"),
                Take::Stream {
                    head: new_head,
                    body: new_body,
                    end: new_end,
                } => {
                    if let Some(new_head) = new_head {
                        assert!(head.is_empty(), "began twice");
                        head = new_head;
                    }
                    body.extend_from_slice(&new_body);
                    if new_end.is_some() {
                        end = new_end;
                    }
                }
                Take::Show => {
                    let Some(End { tail, .. }) = end.as_mut() else {
                        panic!("shown before its end");
                    };
                    tail.extend_from_slice(piece);
                }
                Take::Replace(_) => panic!("a shown command is never replaced whole"),
            }
        }
        (head, body, end)
    }

    const FRAMED: &[u8] =
        b" case ... printf __FD 00ff\r\n__FD00ff:B\r\nhello\r\na'b\r\n\r\n__FD00ff:E:3\r\n$ ";

    #[test]
    fn a_shown_command_streams_its_output_and_drops_only_its_framing() {
        let (head, body, end) = feed_shown(&[FRAMED]);
        assert_eq!(head, b"echo hi\r\n");
        assert_eq!(body, b"hello\r\na'b\r\n");
        let end = end.unwrap();
        assert_eq!((end.status, end.tail.as_slice()), (Some(3), &b"$ "[..]));
    }

    #[test]
    fn shown_markers_cut_anywhere_are_found() {
        for cut in 1..FRAMED.len() {
            for second in cut + 1..FRAMED.len() {
                let (head, body, end) =
                    feed_shown(&[&FRAMED[..cut], &FRAMED[cut..second], &FRAMED[second..]]);
                assert_eq!(head, b"echo hi\r\n", "cut at {cut}, {second}");
                assert_eq!(body, b"hello\r\na'b\r\n", "cut at {cut}, {second}");
                let end = end.unwrap_or_else(|| panic!("no end, cut at {cut}, {second}"));
                assert_eq!(end.status, Some(3), "cut at {cut}, {second}");
                assert_eq!(end.tail, b"$ ", "cut at {cut}, {second}");
            }
        }
        // One byte at a time.
        let bytes: Vec<&[u8]> = FRAMED.chunks(1).collect();
        let (_, body, end) = feed_shown(&bytes);
        assert_eq!(body, b"hello\r\na'b\r\n");
        assert_eq!(end.map(|e| e.status), Some(Some(3)));
    }

    #[test]
    fn output_streams_at_once_but_for_what_could_be_the_marker() {
        let (mut h, rx) = shown();
        let Take::Stream { head, body, end } = h.take(b"echo\r\n__FD00ff:B\r\ntick 1\r\n") else {
            panic!("not begun");
        };
        assert_eq!(head.as_deref(), Some(&b"echo hi\r\n"[..]));
        // The line end could be the marker's: held until more comes.
        assert_eq!((body.as_slice(), end.is_none()), (&b"tick 1"[..], true));
        // The session says where the output begins.
        h.begun(42);
        assert_eq!(
            *rx.borrow(),
            HushState::Begun {
                body_start: Some(42)
            }
        );
        let Take::Stream { body, end, .. } = h.take(b"tick 2\r\n\r\n__FD00") else {
            panic!("not streaming");
        };
        assert_eq!(
            (body.as_slice(), end.is_none()),
            (&b"\r\ntick 2\r\n"[..], true)
        );
        // Not the marker after all: another nonce's, shown as it is.
        let Take::Stream { body, end, .. } = h.take(b"aa:E:0\r\n__FD00ff:E:x\r\n") else {
            panic!("not streaming");
        };
        assert_eq!(
            (body.as_slice(), end.is_none()),
            (&b"\r\n__FD00aa:E:0\r\n__FD00ff:E:x"[..], true)
        );
        // Given up (the shell ended): the held line end is shown, and where it began said.
        assert_eq!(h.release(), b"\r\n");
        assert_eq!(
            *rx.borrow(),
            HushState::Released {
                body_start: Some(42)
            }
        );
        assert!(matches!(h.take(b"after"), Take::Show));
    }

    #[test]
    fn terminal_modes_set_by_the_framing_are_kept() {
        let (head, body, _) = feed_shown(&[
            b"\x1b[?2004h x\x1b[K\x1b[?2004l\r\x1b>\x1b[?1;25h\x1b[?q\r\n__FD00ff:B\r\nout\r\n__FD00ff:E:0\r\n",
        ]);
        assert_eq!(head, b"\x1b[?2004h\x1b[?2004l\x1b>\x1b[?1;25hecho hi\r\n");
        assert_eq!(body, b"out");
    }

    #[test]
    fn output_without_a_line_end_or_a_terminal_newline_ends_cleanly() {
        let (_, body, end) = feed_shown(&[b"x\r\n__FD00ff:B\r\nno newline\r\n__FD00ff:E:0\r\n$ "]);
        assert_eq!(body, b"no newline");
        assert_eq!(end.map(|e| e.tail), Some(b"$ ".to_vec()));
        // `stty -onlcr`: bare line feeds.
        let (_, body, end) = feed_shown(&[b"x\n__FD00ff:B\nout\n\n__FD00ff:E:1\n$ "]);
        assert_eq!(body, b"out\n");
        assert_eq!(end.map(|e| e.status), Some(Some(1)));
    }
}
