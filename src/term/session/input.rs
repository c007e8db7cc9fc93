//! Input: typed text and keys, queued for the writer thread, and what the writer asks of the
//! session as it types (typing.rs).

use super::output::{Ready, read_ready};
use super::{DRAIN_BEFORE_INPUT, Live, MAX_INPUT_BYTES, MAX_QUEUED_INPUT, Session, Shared};
use crate::term::deeds::Seen;
use crate::term::error::TermError;
use crate::term::hush::{Hush, HushState};
use crate::term::keys::{self, KeyPress, Modes};
use crate::term::matcher::QuietOn;
use crate::term::remote::Remote;
use crate::term::typing::{Host, Input};
use rustix::termios::LocalModes;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::watch;

impl Shared {
    /// Tells the session's deeds (deeds.rs) what is typed now, unless it is plumbing: who
    /// reads it (the shell at its prompt, or a program it started) and whether the terminal
    /// hides it. After the output that came before is taken: the prompt the line is typed at
    /// is on the screen by then, its echo not yet.
    fn note_deed(&self, live: &mut Live, seq: u64, bytes: &[u8]) {
        let Some(deeds) = live.deeds.as_mut() else {
            return;
        };
        if deeds.is_plumbing(seq) {
            return;
        }
        let seen = match &live.remote {
            // A far shell's markers say when it is at its prompt; how the far terminal reads,
            // nothing here can see (ssh keeps this one raw): what a program there reads is
            // kept only once it was shown.
            Some(remote) => Seen {
                at_prompt: Some(remote.reads()),
                canonical: false,
                echo: false,
            },
            None => {
                let termios = rustix::termios::tcgetattr(&*self.pty).ok();
                let mode =
                    |m: LocalModes| termios.as_ref().is_some_and(|t| t.local_modes.contains(m));
                Seen {
                    at_prompt: deeds.shell.and_then(|shell| {
                        let group = rustix::termios::tcgetpgrp(&*self.pty).ok()?;
                        Some(group.as_raw_nonzero().get() == shell)
                    }),
                    canonical: mode(LocalModes::ICANON),
                    echo: mode(LocalModes::ECHO),
                }
            }
        };
        deeds.typed(bytes, seen, live.screen.vt());
    }
}

impl Host for Shared {
    fn typing(&self, seq: u64, bytes: &[u8], echo: &str, buf: &mut [u8]) -> Option<Vec<u8>> {
        let mut live = self.lock();
        if !live.inputs.writing(seq) {
            return None;
        }
        // A line typed into a far shell: it reads no more until its next prompt, which is
        // looked for in the output after this moment.
        let line = bytes.iter().any(|b| matches!(b, b'\r' | b'\n'));
        self.typed.send_modify(|n| *n += 1);
        // Output the program wrote before this moment is taken first: the echo is looked for
        // after it, not in it, and what is typed now comes after the prompt it answers (a far
        // shell's prompt marker, a shell's start and status markers).
        let mut answer = Vec::new();
        let mut drained = 0;
        while drained < DRAIN_BEFORE_INPUT {
            match read_ready(&self.pty, buf) {
                Ready::Chunk(n) => {
                    answer.extend(live.take(&buf[..n]));
                    drained += n;
                }
                Ready::Nothing | Ready::End => break,
            }
        }
        self.note_deed(&mut live, seq, bytes);
        // After the output that came before: a prompt marker in it is not this line's.
        if line && let Some(remote) = live.remote.as_mut() {
            remote.line_typed();
        }
        // An older input written late (it waited for a reader) does not move the mark of a
        // newer one.
        if live.inputs.is_current(seq) {
            let end = live.transcript.end();
            live.inputs.typed(seq, echo, end);
            if let Some(hush) = live.hush.as_mut() {
                hush.typing(seq);
            }
        } else if live.hush.as_ref().is_some_and(|h| h.is_input(seq)) {
            // A hidden line whose output cannot be told from the output before it (its mark
            // was not moved): it is shown instead.
            answer.extend(live.release_hush());
        }
        let bytes = live.bytes;
        drop(live);
        if drained > 0 {
            self.activity.send_modify(|a| a.bytes = bytes);
        }
        Some(answer)
    }

    fn wait_for_output(&self, wait: Duration) {
        self.writer_waiting.store(true, Ordering::SeqCst);
        let live = self.lock();
        if !live.eof {
            let _ = self.changed.wait_timeout(live, wait);
        }
        self.writer_waiting.store(false, Ordering::SeqCst);
    }

    fn far_listens(&self) -> Option<bool> {
        let live = self.lock();
        let quiet = live.quiet.last_change(QuietOn::Output).elapsed();
        live.remote.as_ref().map(|r| r.listens(quiet))
    }

    fn ended(&self) -> bool {
        let live = self.lock();
        live.eof || live.exit.is_some()
    }

    fn dequeued(&self, bytes: usize) {
        self.queued.fetch_sub(bytes, Ordering::SeqCst);
    }
}

/// What `send` is given as the hush of a framed line shown as it runs: plumbing, hidden by
/// no hush (no hush has this nonce: nonces are hex).
const FRAMED: &str = "framed";

/// An input queued for the writer.
pub(super) struct Queued {
    bytes: usize,
    seq: u64,
}

impl Session {
    /// Types text exactly as given (`\n` and `\r` press Enter, `\u{3}` is Ctrl-C). `by`
    /// names the typist, whose "since the last input" this input moves (inputs.rs).
    pub fn send_text(&self, text: &str, by: &str) -> Result<usize, TermError> {
        self.send(text.as_bytes().to_vec(), text, by, None)
            .map(|queued| queued.bytes)
    }

    /// Types bytes exactly as a terminal's keyboard sent them (`flowdeck record` relays the
    /// person's keys): a character cut between two reads is whole once both are typed.
    pub fn send_bytes(&self, bytes: &[u8], by: &str) -> Result<usize, TermError> {
        let echo = String::from_utf8_lossy(bytes).into_owned();
        self.send(bytes.to_vec(), &echo, by, None)
            .map(|queued| queued.bytes)
    }

    /// Types a framed shell line shown as it runs (no hiding was possible): the input's
    /// number, to withdraw it with if its caller gives up before it is written.
    pub(in crate::term) fn send_framed(&self, text: &str, by: &str) -> Result<u64, TermError> {
        self.send(text.as_bytes().to_vec(), text, by, Some(FRAMED))
            .map(|queued| queued.seq)
    }

    /// Takes back input `seq` if it has not been written yet: a framed line whose caller
    /// gave up (a cancelled step) must not run later with nobody following it.
    pub(in crate::term) fn withdraw(&self, seq: u64) {
        self.shared.lock().inputs.withdraw(seq);
    }

    /// Starts hiding the framed shell command of `nonce` (hush.rs), unless another one is
    /// hidden now (`None`: that command is shown as it runs, framing and all). With `shown`,
    /// only its framing is hidden and `shown` takes its place on the screen.
    pub(in crate::term) fn hush(
        &self,
        nonce: &str,
        shown: Option<Vec<u8>>,
    ) -> Option<watch::Receiver<HushState>> {
        let mut live = self.shared.lock();
        if live.hush.is_some() || live.ended || live.failed.is_some() {
            return None;
        }
        let (hush, rx) = match shown {
            Some(head) => Hush::shown(nonce, head),
            None => Hush::new(nonce),
        };
        live.hush = Some(hush);
        Some(rx)
    }

    /// Types the framed line of the hidden command `nonce`: output is held from the moment
    /// it is written. Its own echo is never shown; `echo` is what is shown in its place (a
    /// shown command's text, skipped by `since: last_input` like an echo), or nothing.
    pub(in crate::term) fn send_hidden(
        &self,
        text: &str,
        nonce: &str,
        echo: &str,
        by: &str,
    ) -> Result<u64, TermError> {
        self.send(text.as_bytes().to_vec(), echo, by, Some(nonce))
            .map(|queued| queued.seq)
    }

    /// Stops hiding the command `nonce` if it still is: what was held is shown as it came.
    pub(in crate::term) fn release_hush(&self, nonce: &str) {
        let answer = {
            let mut live = self.shared.lock();
            if live.hush.as_ref().is_none_or(|h| h.nonce() != nonce) {
                return;
            }
            live.release_hush()
        };
        // Answers to terminal queries in what was held go to the program that asked.
        if !answer.is_empty()
            && let Some(tx) = self
                .input
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_ref()
        {
            let _ = tx.send(Input::Reply(answer));
        }
        self.shared.changed.notify_all();
        self.shared.activity.send_modify(|_| {});
    }

    /// Presses keys, encoded for the terminal's current modes.
    pub fn send_keys(&self, keys: &[KeyPress], by: &str) -> Result<usize, TermError> {
        let modes = Modes {
            application_cursor: self.shared.lock().screen.application_cursor(),
        };
        let bytes = keys::encode_all(keys, modes).map_err(|e| TermError::InvalidArgument {
            what: "a key".into(),
            reason: e.to_string(),
        })?;
        let echo: String = keys
            .iter()
            .map(|k| match k {
                KeyPress::Text(t) => t.as_str(),
                KeyPress::Named(keys::Named::Enter) => "\r",
                _ => "",
            })
            .collect();
        self.send(bytes, &echo, by, None).map(|queued| queued.bytes)
    }

    /// Queues bytes for the program and marks the output position that `since: last_input`
    /// starts from, for `by`. Returns the number of bytes queued and the input's number.
    /// With `hush`, the input is the framed line of that hidden command (hush.rs).
    pub(super) fn send(
        &self,
        bytes: Vec<u8>,
        echo: &str,
        by: &str,
        hush: Option<&str>,
    ) -> Result<Queued, TermError> {
        if bytes.len() > MAX_INPUT_BYTES {
            return Err(TermError::TooLarge {
                what: "the input",
                size: bytes.len(),
                max: MAX_INPUT_BYTES,
            });
        }
        let mut live = self.shared.lock();
        if let Some(reason) = &live.failed {
            return Err(TermError::Failed {
                session: self.id.clone(),
                reason: reason.clone(),
            });
        }
        if let Some(exit) = &live.exit {
            return Err(TermError::Exited {
                session: self.id.clone(),
                status: exit.to_string(),
            });
        }
        // Until the writer types it (typing.rs), output is not yet "after" this input.
        let len = bytes.len();
        let queued = self.shared.queued.load(Ordering::SeqCst);
        if queued + len > MAX_QUEUED_INPUT {
            return Err(TermError::InputQueueFull {
                session: self.id.clone(),
                queued,
                max: MAX_QUEUED_INPUT,
            });
        }
        let end = live.transcript.end();
        let seq = live.inputs.queued(by, end);
        if let Some(h) = live.hush.as_mut().filter(|h| hush == Some(h.nonce())) {
            h.set_input(seq);
        }
        // Plumbing is known as such before the writer can type it.
        if hush.is_some()
            && let Some(deeds) = live.deeds.as_mut()
        {
            deeds.plumbing(seq);
        }
        let input = Input::Typed {
            bytes,
            seq,
            echo: echo.to_string(),
        };
        // Counted before it can be written (and so taken off the count).
        self.shared.queued.fetch_add(len, Ordering::SeqCst);
        let sent = self
            .input
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|tx| tx.send(input).is_ok());
        if !sent {
            self.shared.queued.fetch_sub(len, Ordering::SeqCst);
            return Err(TermError::Io {
                session: self.id.clone(),
                source: std::io::Error::new(
                    std::io::ErrorKind::BrokenPipe,
                    "the session is closing",
                ),
            });
        }
        Ok(Queued { bytes: len, seq })
    }

    /// Whether input typed now would be read at once: a program in the foreground is
    /// blocked reading the terminal and has read everything typed before (see typing.rs).
    pub fn reading_input(&self) -> bool {
        if self.host.is_some() {
            // The far shell's markers say it, /proc cannot (remote.rs).
            return self.shared.lock().remote.as_ref().is_none_or(Remote::reads);
        }
        self.probe.someone_reads()
    }

    /// Fails unless a POSIX shell started this session and is itself in the foreground (at
    /// its prompt, not running a REPL or an editor).
    pub fn require_shell_prompt(&self) -> Result<(), TermError> {
        if let Some(exit) = self.exit() {
            return Err(TermError::Exited {
                session: self.id.clone(),
                status: exit.to_string(),
            });
        }
        let program = self.command.first().cloned().unwrap_or_default();
        if !self.is_shell {
            return Err(TermError::NotAShell {
                session: self.id.clone(),
                foreground: program,
            });
        }
        if let Some(host) = &self.host {
            let live = self.shared.lock();
            return match live.remote.as_ref().map(Remote::busy) {
                Some(Some(busy)) => Err(TermError::NotAShell {
                    session: self.id.clone(),
                    foreground: format!("{busy} on {host}"),
                }),
                _ => Ok(()),
            };
        }
        match self.foreground() {
            Some((pgid, name)) if pgid != self.pid as i32 => Err(TermError::NotAShell {
                session: self.id.clone(),
                foreground: name,
            }),
            _ => Ok(()),
        }
    }
}
