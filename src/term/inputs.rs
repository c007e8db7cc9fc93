//! Where "since the last input" begins, for each typist of a session.
//!
//! A person typing in a pane and a workflow step waiting for its command's output share one
//! terminal. If every keystroke moved one shared mark, the person's typing would silently
//! change what the step waits for. So each typist (an opaque key the engine derives from
//! who asks: a person, an agent's connection, a run) keeps the mark of its own last input,
//! with its own echo to skip; a wait or a read "since the last input" uses the mark of the
//! one who asks. Someone who never typed into the session gets the latest input of anyone,
//! which is what a single typist would expect.

use super::echo::EchoSkip;
use std::collections::BTreeSet;

/// Typists remembered per session; the one idle longest is forgotten first (it then falls
/// back to the latest input of anyone).
const MAX_TYPISTS: usize = 32;

#[derive(Debug)]
struct Mark {
    by: String,
    /// The number of this typist's last input.
    seq: u64,
    echo: EchoSkip,
}

/// The inputs of one session, and where each one's output begins.
#[derive(Debug)]
pub struct Inputs {
    /// The number of the latest input, by anyone.
    seq: u64,
    latest: EchoSkip,
    /// One mark per typist, the most recent last.
    marks: Vec<Mark>,
    /// Inputs queued and not yet written to the terminal.
    waiting: BTreeSet<u64>,
    /// Waiting inputs whose sender gave up on them: never written.
    withdrawn: BTreeSet<u64>,
}

impl Default for Inputs {
    fn default() -> Self {
        Inputs {
            seq: 0,
            latest: EchoSkip::resolved(0),
            marks: Vec::new(),
            waiting: BTreeSet::new(),
            withdrawn: BTreeSet::new(),
        }
    }
}

impl Inputs {
    /// `by` queued an input when the stream ended at `at`. Until the input is typed, nothing
    /// after `at` counts as its output. Returns the input's number.
    pub fn queued(&mut self, by: &str, at: u64) -> u64 {
        self.seq += 1;
        self.latest = EchoSkip::pending(at);
        self.marks.retain(|m| m.by != by);
        if self.marks.len() == MAX_TYPISTS {
            self.marks.remove(0);
        }
        self.marks.push(Mark {
            by: by.to_string(),
            seq: self.seq,
            echo: EchoSkip::pending(at),
        });
        self.waiting.insert(self.seq);
        self.seq
    }

    /// Takes back input `seq` if it is still waiting to be written (true): a framed shell
    /// line whose caller gave up must not run later, when nobody follows it. Input already
    /// written cannot be taken back (false).
    pub fn withdraw(&mut self, seq: u64) -> bool {
        self.waiting.contains(&seq) && self.withdrawn.insert(seq)
    }

    /// The writer is about to write input `seq`: false when it was withdrawn, and is then
    /// dropped instead.
    pub fn writing(&mut self, seq: u64) -> bool {
        self.waiting.remove(&seq);
        !self.withdrawn.remove(&seq)
    }

    /// Whether input `seq` is still the last of someone: if not, typing it late moves no
    /// mark (a newer input of the same typist already did).
    pub fn is_current(&self, seq: u64) -> bool {
        self.seq == seq || self.marks.iter().any(|m| m.seq == seq)
    }

    /// Input `seq` is being written to the program now, when the stream ends at `at`: its
    /// echo is looked for from here.
    pub fn typed(&mut self, seq: u64, echo: &str, at: u64) {
        if self.seq == seq {
            self.latest = EchoSkip::new(echo, at);
        }
        for mark in self.marks.iter_mut().filter(|m| m.seq == seq) {
            mark.echo = EchoSkip::new(echo, at);
        }
    }

    /// Follows new output past each echo: `text` is the stripped stream from global offset
    /// `text_start` to its end.
    pub fn advance(&mut self, text: &str, text_start: u64) {
        self.latest.advance(text, text_start);
        for mark in &mut self.marks {
            mark.echo.advance(text, text_start);
        }
    }

    /// The last input of `by`, or of anyone when `by` never typed here (or is `None`).
    pub fn last(&self, by: Option<&str>) -> &EchoSkip {
        by.and_then(|by| self.marks.iter().find(|m| m.by == by))
            .map_or(&self.latest, |m| &m.echo)
    }

    /// The latest input of anyone: history is kept from its start at least.
    pub fn latest(&self) -> &EchoSkip {
        &self.latest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds output and returns the stream's new end.
    fn output(inputs: &mut Inputs, stream: &mut String, text: &str) -> u64 {
        stream.push_str(text);
        inputs.advance(stream, 0);
        stream.len() as u64
    }

    #[test]
    fn another_typist_does_not_move_my_mark() {
        let mut inputs = Inputs::default();
        let mut stream = String::from("$ ");
        let step = inputs.queued("run:r1", 2);
        inputs.typed(step, "make\n", 2);
        let after_echo = output(&mut inputs, &mut stream, "make\n");
        assert_eq!(inputs.last(Some("run:r1")).end(), Some(after_echo));

        // A person types while the step waits.
        let typed = inputs.queued("person", after_echo);
        output(&mut inputs, &mut stream, "building\n");
        inputs.typed(typed, "ls\n", stream.len() as u64);
        let end = output(&mut inputs, &mut stream, "ls\nfile\n");

        assert_eq!(inputs.last(Some("run:r1")).end(), Some(after_echo));
        assert_eq!(inputs.last(Some("person")).end(), Some(end - 5));
        // Someone who never typed sees the latest input of anyone.
        assert_eq!(inputs.last(Some("agent:c1")).end(), Some(end - 5));
        assert_eq!(inputs.last(None).end(), Some(end - 5));
    }

    #[test]
    fn a_late_input_moves_only_its_own_typist() {
        let mut inputs = Inputs::default();
        let old = inputs.queued("a", 0);
        let newer = inputs.queued("b", 0);
        assert!(inputs.is_current(old), "a's only input is still a's last");
        inputs.typed(old, "x\n", 0);
        assert_eq!(
            inputs.last(Some("b")).end(),
            None,
            "b's input is not typed yet"
        );
        inputs.typed(newer, "y\n", 0);
        let again = inputs.queued("a", 0);
        assert!(!inputs.is_current(old), "a typed again");
        assert!(inputs.is_current(again));
    }

    #[test]
    fn the_typist_idle_longest_is_forgotten_first() {
        let mut inputs = Inputs::default();
        for i in 0..=MAX_TYPISTS {
            let seq = inputs.queued(&format!("t{i}"), 0);
            inputs.typed(seq, "", 0);
        }
        assert_eq!(inputs.marks.len(), MAX_TYPISTS);
        assert!(inputs.marks.iter().all(|m| m.by != "t0"));
    }
}
