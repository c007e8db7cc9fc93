//! Output, as it comes: the reader thread, and what each chunk does to the screen, the
//! history, the hidden plumbing of a framed command and the registered waits.

use super::info::AwaitResult;
use super::{Live, READ_BATCH, Shared, TAIL_CHARS, TAIL_LINES};
use crate::term::error::TermError;
use crate::term::hush::{self, End, Take};
use crate::term::matcher::{Event, WaitOutcome};
use crate::term::transcript::render_line;
use crate::term::typing::Input;
use std::fs::File;
use std::io::Read;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Instant;

impl Live {
    /// Takes a chunk of output: into the screen and the transcript, past the echo of the
    /// last input, to the registered waits (which see it before old history is let go).
    /// Returns the answers to terminal queries.
    pub(super) fn take(&mut self, chunk: &[u8]) -> Vec<u8> {
        self.bytes += chunk.len() as u64;
        if let Some(remote) = self.remote.as_mut() {
            remote.scan(chunk);
            let statuses = remote.take_statuses();
            if let Some(deeds) = self.deeds.as_mut() {
                for status in statuses {
                    deeds.told_status(status);
                }
            }
        }
        if let Some(deeds) = self.deeds.as_mut() {
            deeds.output(chunk);
        }
        let Some(hush) = self.hush.as_mut() else {
            return self.show(chunk);
        };
        match hush.take(chunk) {
            Take::Show => self.show(chunk),
            Take::Held => Vec::new(),
            Take::Replace(shown) => {
                self.hush = None;
                self.show(&shown)
            }
            Take::Stream { head, body, end } => self.stream(head, &body, end),
        }
    }

    /// A shown command's output (hush.rs): its text when it begins, its output as it comes,
    /// and at its end the output read back from the transcript for the caller.
    pub(super) fn stream(
        &mut self,
        head: Option<Vec<u8>>,
        body: &[u8],
        end: Option<End>,
    ) -> Vec<u8> {
        let mut answer = Vec::new();
        if let Some(head) = head {
            answer.extend(self.show(&head));
            let at = self.transcript.end();
            if let Some(hush) = self.hush.as_mut() {
                hush.begun(at);
            }
        }
        answer.extend(self.show(body));
        if let Some(End { status, tail }) = end
            && let Some(hush) = self.hush.take()
        {
            let from = hush.body_from().unwrap_or_else(|| self.transcript.end());
            let output = hush::output_between(&self.transcript, from, self.transcript.end());
            hush.finish(status, output);
            // The next prompt starts a line of its own, as the framing's newline made it:
            // output that did not end with one (`printf x`) is not run into it.
            let mut shown = Vec::new();
            if self.screen.vt().cursor_position().1 != 0 {
                shown.extend_from_slice(b"\r\n");
            }
            shown.extend_from_slice(&tail);
            answer.extend(self.show(&shown));
        }
        answer
    }

    /// Gives up hiding a framed command: what was held is shown as it came.
    pub(super) fn release_hush(&mut self) -> Vec<u8> {
        match self.hush.take() {
            Some(mut hush) => {
                let held = hush.release();
                self.show(&held)
            }
            None => Vec::new(),
        }
    }

    /// Output that is shown: see [`Live::take`].
    pub(super) fn show(&mut self, chunk: &[u8]) -> Vec<u8> {
        for tap in &mut self.taps {
            tap.output(chunk);
        }
        self.viewers.retain(|v| v.send(chunk.to_vec()).is_ok());
        let mut answer = self.screen.feed(chunk);
        if self.relayed {
            answer.clear();
        }
        self.quiet.output(&mut self.screen);
        self.decoder.feed(&mut self.transcript, chunk);
        self.inputs
            .advance(self.transcript.text(), self.transcript.offset(0));
        let mut i = 0;
        while i < self.watches.len() {
            let hit = self.watches[i].scan(&self.transcript, &mut self.screen, &self.inputs);
            match hit {
                Some(hit) => {
                    let mut w = self.watches.swap_remove(i);
                    if let Some(tx) = w.notify.take() {
                        let _ = tx.send(Event::Hit(Box::new(hit)));
                    }
                }
                None => i += 1,
            }
        }
        let keep = self.inputs.latest().end_or_start();
        self.transcript.trim(keep);
        answer
    }

    pub(super) fn fail(&mut self, reason: String) {
        self.hush = None;
        for mut w in self.watches.drain(..) {
            if let Some(tx) = w.notify.take() {
                let _ = tx.send(Event::Failed(reason.clone()));
            }
        }
        self.failed = Some(reason);
        // Nothing more will be read: the writer must not wait for output, nor a viewer.
        self.eof = true;
        self.viewers.clear();
    }

    pub(super) fn resolve_ended(&mut self) {
        // What a hidden command held is the program's last output: shown before waits end.
        let _ = self.release_hush();
        self.ended = true;
        // A job left in the background may keep the terminal open: the program the session
        // ran has ended, and a viewer with it.
        self.viewers.clear();
        for mut w in self.watches.drain(..) {
            if let Some(tx) = w.notify.take() {
                let _ = tx.send(Event::Ended);
            }
        }
    }

    /// How a wait of `session` that began at `started` ended.
    pub(super) fn result(
        &self,
        session: &str,
        started: Instant,
        event: Option<Event>,
    ) -> Result<AwaitResult, TermError> {
        let mut result = AwaitResult {
            outcome: WaitOutcome::Timeout,
            matched_text: None,
            matched_line: None,
            groups: Vec::new(),
            named_groups: indexmap::IndexMap::new(),
            stop_pattern: None,
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
            tail: self.tail(),
            exit: self.exit.clone(),
            quiet_ms: None,
        };
        match event {
            None => {}
            Some(Event::Failed(reason)) => {
                return Err(TermError::Failed {
                    session: session.to_string(),
                    reason,
                });
            }
            Some(Event::Ended) => result.outcome = WaitOutcome::Exited,
            Some(Event::Hit(hit)) => {
                let hit = *hit;
                result.outcome = if hit.stop.is_some() {
                    WaitOutcome::Stopped
                } else {
                    WaitOutcome::Matched
                };
                result.stop_pattern = hit.stop;
                result.matched_text = Some(hit.text);
                result.matched_line = Some(hit.line);
                result.groups = hit.groups;
                result.named_groups = hit.named.into_iter().collect();
            }
        }
        Ok(result)
    }

    pub(super) fn tail(&self) -> String {
        let lines: Vec<String> = self
            .transcript
            .last_lines(TAIL_LINES)
            .map(render_line)
            .collect();
        let tail = lines.join("\n");
        let count = tail.chars().count();
        if count <= TAIL_CHARS {
            tail
        } else {
            tail.chars().skip(count - TAIL_CHARS).collect()
        }
    }
}

/// What the PTY has for the reader now.
pub(super) enum Ready {
    Chunk(usize),
    Nothing,
    End,
}

/// Reads what the PTY holds, without blocking. Polling first also finishes moving output the
/// program has written into the master's buffer (the kernel does that in a work item, and a
/// poll that finds nothing waits for it), so `Nothing` means nothing was written.
pub(super) fn read_ready(pty: &File, buf: &mut [u8]) -> Ready {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut fds = [PollFd::new(pty, PollFlags::IN)];
    match poll(&mut fds, Some(&Timespec::default())) {
        Ok(_) => {}
        Err(rustix::io::Errno::INTR) => return Ready::Nothing,
        Err(_) => return Ready::End,
    }
    let events = fds[0].revents();
    if !events.intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL) {
        return Ready::Nothing;
    }
    match (&*pty).read(buf) {
        Ok(0) => Ready::End,
        Ok(n) => Ready::Chunk(n),
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ready::Nothing,
        // EIO: every process holding the PTY is gone.
        Err(_) => Ready::End,
    }
}

/// Reads what the master's buffer already holds, without waiting for output still on its
/// way (unlike `read_ready`): a batch ends when the buffer is empty.
fn read_buffered(pty: &File, buf: &mut [u8]) -> Ready {
    match rustix::io::ioctl_fionread(pty) {
        Ok(0) | Err(_) => Ready::Nothing,
        // Under the lock only this thread reads, so the read finds the bytes counted.
        Ok(_) => match (&*pty).read(buf) {
            Ok(0) => Ready::End,
            Ok(n) => Ready::Chunk(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ready::Nothing,
            Err(_) => Ready::End,
        },
    }
}

/// Output a unit test prints to make the reader fail as a bug would.
#[cfg(test)]
const DIE_FOR_THE_TEST: &[u8] = b"\x1b]flowdeck-reader-dies\x07";

/// Reads the program's output until the PTY ends; an error is a failure of the session.
pub(super) fn read_loop(
    pty: &File,
    shared: &Shared,
    replies: &mpsc::Sender<Input>,
) -> Result<(), std::io::Error> {
    use rustix::event::{PollFd, PollFlags, poll};
    let mut buf = vec![0u8; READ_BATCH];
    let mut ended = false;
    while !ended {
        // Wait for output without taking it: output leaves the kernel only under the lock,
        // where the writer, too, takes what came before an input (see `Host::typing`).
        let mut fds = [PollFd::new(pty, PollFlags::IN)];
        match poll(&mut fds, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
        let (answer, bytes) = {
            let mut live = shared.lock();
            // Everything already there, in one batch: per-batch work (waits, trimming,
            // wake-ups) is paid once, and a flood's lines that scroll away unseen can skip
            // the grid (fastforward.rs). The PTY hands out at most 4 KiB a read.
            let mut filled = 0;
            while filled < buf.len() {
                let ready = if filled == 0 {
                    read_ready(pty, &mut buf[filled..])
                } else {
                    read_buffered(pty, &mut buf[filled..])
                };
                match ready {
                    // A read that did not fill the kernel's buffer (4 KiB) took all there was.
                    Ready::Chunk(n) if n < 4095 => {
                        filled += n;
                        break;
                    }
                    Ready::Chunk(n) => filled += n,
                    Ready::Nothing => break,
                    Ready::End => {
                        ended = true;
                        break;
                    }
                }
            }
            if filled == 0 {
                // The writer took it, or the program is gone.
                continue;
            }
            #[cfg(test)]
            if buf[..filled]
                .windows(DIE_FOR_THE_TEST.len())
                .any(|w| w == DIE_FOR_THE_TEST)
            {
                panic!("the test asked the reader to die");
            }
            (live.take(&buf[..filled]), live.bytes)
        };
        if !answer.is_empty() {
            let _ = replies.send(Input::Reply(answer));
        }
        if shared.writer_waiting.load(Ordering::SeqCst) {
            shared.changed.notify_all();
        }
        shared.activity.send_modify(|a| a.bytes = bytes);
    }
    {
        let mut live = shared.lock();
        live.eof = true;
        // A viewer is told the end by its channel closing.
        live.viewers.clear();
    }
    shared.changed.notify_all();
    Ok(())
}
