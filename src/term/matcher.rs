//! Waiting for output: a registered pattern that the reader thread checks against every chunk
//! before old text can be dropped, so nothing that scrolled away between wake-ups is missed.

use super::inputs::Inputs;
use super::screen::Screen;
use super::transcript::{Transcript, render_line};
use regex::Regex;
use schemars::JsonSchema;
use serde::Serialize;
use std::time::Duration;

/// How far back (bytes, snapped to a line start) a search reaches into text it has already
/// seen, so that a match spanning lines across two chunks is still found.
const LOOKBACK: u64 = 4096;

/// Which output a wait matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Since {
    /// Output after the last input, past its echo.
    #[default]
    LastInput,
    /// Output that arrives after the wait begins.
    Entry,
    /// The visible screen, re-read after every chunk (the seed's behaviour).
    Screen,
    /// Everything retained, old history included.
    All,
    /// Output after a stream offset taken earlier with `Session::output_end`.
    #[serde(skip)]
    After(u64),
}

/// What "quiet" means for a wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QuietOn {
    /// No output at all.
    #[default]
    Output,
    /// The screen's text unchanged (output that redraws the same text, moves the cursor,
    /// blinks it or sets the title does not count), for programs that keep redrawing.
    Screen,
}

/// Waiting for the program to settle: `quiet` long without output (or screen change),
/// counted from when the wait (or, after a pattern, its match) began or the last change,
/// whichever is later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quiet {
    pub quiet: Duration,
    pub on: QuietOn,
}

/// What to wait for: a pattern, quiet, or a pattern and then quiet.
#[derive(Debug, Clone)]
pub struct AwaitSpec {
    /// `None`: quiet alone (stop patterns still end the wait).
    pub pattern: Option<Regex>,
    pub stop_patterns: Vec<Regex>,
    pub since: Since,
    pub timeout: Duration,
    /// Whose last input `Since::LastInput` means (inputs.rs); `None`: anyone's.
    pub typist: Option<String>,
    /// After the pattern (or alone), wait for the program to settle.
    pub quiet: Option<Quiet>,
}

/// How a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
// Named as before in the tools' output schemas, which agents may have cached.
#[schemars(rename = "Outcome")]
pub enum WaitOutcome {
    Matched,
    Stopped,
    Timeout,
    Exited,
}

/// A match found by the reader thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// `None` for the main pattern, else the stop pattern that matched.
    pub stop: Option<String>,
    pub text: String,
    pub line: String,
    pub groups: Vec<Option<String>>,
    pub named: Vec<(String, String)>,
    /// The stream offset where output after the match begins (for a match on the screen,
    /// the stream's end when it was seen): a wait that goes on past the match (for quiet)
    /// looks for its stop patterns from here, so output that came with the match, or before
    /// the waiter woke, is not skipped.
    pub after: u64,
}

/// What the reader reports to a waiter.
#[derive(Debug)]
pub enum Event {
    // Boxed: a hit is far larger than the other events, which travel in results.
    Hit(Box<Hit>),
    Ended,
    /// The session can no longer read its output (its reader failed): the reason.
    Failed(String),
}

/// A registered wait.
#[derive(Debug)]
pub struct Watch {
    pub id: u64,
    spec: AwaitSpec,
    /// Stream offset where the region starts (fixed for `entry` and `all`).
    start: Option<u64>,
    /// Searches resume from here.
    floor: u64,
    pub notify: Option<tokio::sync::oneshot::Sender<Event>>,
}

impl Watch {
    pub fn new(id: u64, spec: AwaitSpec, transcript: &Transcript) -> Self {
        let start = match spec.since {
            Since::Entry => Some(transcript.end()),
            Since::All => Some(transcript.start()),
            Since::After(offset) => Some(offset.max(transcript.start())),
            Since::LastInput | Since::Screen => None,
        };
        Watch {
            id,
            spec,
            start,
            floor: 0,
            notify: None,
        }
    }

    /// Looks for a match in what has arrived since the last look.
    pub fn scan(
        &mut self,
        transcript: &Transcript,
        screen: &mut Screen,
        inputs: &Inputs,
    ) -> Option<Hit> {
        if self.spec.since == Since::Screen {
            return self.scan_text(&screen.text(), 0, |_| transcript.end());
        }
        let start = match self.spec.since {
            Since::LastInput => inputs.last(self.spec.typist.as_deref()).end()?,
            _ => self.start?,
        };
        let from = start.max(self.floor);
        let text = transcript.text();
        let hit = self.scan_text(text, transcript.index(from), |i| transcript.offset(i));
        if hit.is_none() {
            let resume = transcript
                .line_start_of(transcript.end())
                .saturating_sub(LOOKBACK);
            self.floor = transcript.line_start_of(resume).max(start);
        }
        hit
    }

    /// The earliest match of the pattern or a stop pattern in `text[at..]`; on a tie the
    /// pattern wins. `offset` gives the stream offset of an index of `text`.
    fn scan_text(&self, text: &str, at: usize, offset: impl Fn(usize) -> u64) -> Option<Hit> {
        let mut best: Option<(usize, Option<usize>)> = None;
        let candidates = self.spec.pattern.iter().map(|r| (None, r)).chain(
            self.spec
                .stop_patterns
                .iter()
                .enumerate()
                .map(|(i, r)| (Some(i), r)),
        );
        for (stop, regex) in candidates {
            if let Some(m) = regex.find_at(text, at)
                && best.is_none_or(|(pos, _)| m.start() < pos)
            {
                best = Some((m.start(), stop));
            }
        }
        let (_, stop) = best?;
        let regex = match stop {
            None => self.spec.pattern.as_ref()?,
            Some(i) => &self.spec.stop_patterns[i],
        };
        let caps = regex.captures_at(text, at)?;
        let whole = caps.get(0)?;
        let line_start = text[..whole.start()].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[whole.end()..]
            .find('\n')
            .map_or(text.len(), |i| whole.end() + i);
        Some(Hit {
            stop: stop.map(|_| regex.as_str().to_string()),
            text: whole.as_str().to_string(),
            line: render_line(&text[line_start..line_end]),
            groups: caps
                .iter()
                .skip(1)
                .map(|g| g.map(|m| m.as_str().to_string()))
                .collect(),
            named: regex
                .capture_names()
                .flatten()
                .filter_map(|name| {
                    caps.name(name)
                        .map(|m| (name.to_string(), m.as_str().to_string()))
                })
                .collect(),
            after: offset(whole.end()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::decode::Decoder;
    use crate::term::screen::Size;

    struct Fixture {
        t: Transcript,
        d: Decoder,
        s: Screen,
        inputs: Inputs,
    }

    impl Fixture {
        fn new() -> Self {
            Fixture {
                t: Transcript::new(100, 1 << 20),
                d: Decoder::default(),
                s: Screen::new(Size { cols: 40, rows: 5 }),
                inputs: Inputs::default(),
            }
        }
        fn feed(&mut self, bytes: &[u8]) {
            self.s.feed(bytes);
            self.d.feed(&mut self.t, bytes);
            self.inputs.advance(self.t.text(), self.t.offset(0));
        }
        fn input(&mut self, text: &str) {
            let end = self.t.end();
            let seq = self.inputs.queued("test", end);
            self.inputs.typed(seq, text, end);
        }
    }

    fn spec(pattern: &str, stops: &[&str], since: Since) -> AwaitSpec {
        AwaitSpec {
            pattern: Some(Regex::new(&format!("(?m){pattern}")).unwrap()),
            stop_patterns: stops.iter().map(|s| Regex::new(s).unwrap()).collect(),
            since,
            timeout: Duration::from_secs(1),
            typist: None,
            quiet: None,
        }
    }

    #[test]
    fn a_match_split_by_chunks_and_colours_is_found() {
        let mut f = Fixture::new();
        let mut w = Watch::new(1, spec("BUILD OK", &[], Since::Entry), &f.t);
        for chunk in [&b"BUI"[..], b"LD \x1b[32", b"mO", b"K\x1b[0m\r\n"] {
            let hit = {
                f.feed(chunk);
                w.scan(&f.t, &mut f.s, &f.inputs)
            };
            if chunk.ends_with(b"\n") {
                assert_eq!(hit.unwrap().text, "BUILD OK");
            } else {
                assert_eq!(hit, None);
            }
        }
    }

    #[test]
    fn the_echo_and_old_screen_text_never_match() {
        let mut f = Fixture::new();
        f.feed(b"DONE from before\r\n$ ");
        f.input("sleep 1; echo DONE\n");
        let mut w = Watch::new(1, spec("DONE", &[], Since::LastInput), &f.t);
        f.feed(b"sleep 1; echo DONE\r\n");
        assert_eq!(w.scan(&f.t, &mut f.s, &f.inputs), None);
        f.feed(b"DONE\r\n$ ");
        let hit = w.scan(&f.t, &mut f.s, &f.inputs).unwrap();
        assert_eq!(hit.line, "DONE");
    }

    #[test]
    fn the_earliest_of_pattern_and_stop_pattern_wins() {
        let mut f = Fixture::new();
        let mut w = Watch::new(1, spec("ok", &["error: (\\w+)"], Since::Entry), &f.t);
        f.feed(b"error: disk then ok\n");
        let hit = w.scan(&f.t, &mut f.s, &f.inputs).unwrap();
        assert_eq!(hit.stop.as_deref(), Some("error: (\\w+)"));
        assert_eq!(hit.groups, [Some("disk".to_string())]);
    }

    #[test]
    fn captures_by_name_and_number() {
        let mut f = Fixture::new();
        let mut w = Watch::new(
            1,
            spec(r"version (?<major>\d+)\.(\d+)", &[], Since::All),
            &f.t,
        );
        f.feed(b"tool version 3.14 ready\n");
        let hit = w.scan(&f.t, &mut f.s, &f.inputs).unwrap();
        assert_eq!(hit.text, "version 3.14");
        assert_eq!(hit.groups, [Some("3".into()), Some("14".into())]);
        assert_eq!(hit.named, [("major".to_string(), "3".to_string())]);
        assert_eq!(hit.line, "tool version 3.14 ready");
    }

    #[test]
    fn screen_mode_sees_the_redrawn_screen() {
        let mut f = Fixture::new();
        let mut w = Watch::new(1, spec("^Ready$", &[], Since::Screen), &f.t);
        f.feed(b"Loading");
        assert_eq!(w.scan(&f.t, &mut f.s, &f.inputs), None);
        f.feed(b"\r\x1b[KReady");
        assert_eq!(w.scan(&f.t, &mut f.s, &f.inputs).unwrap().line, "Ready");
    }

    #[test]
    fn a_hit_says_where_the_output_after_it_begins() {
        let mut f = Fixture::new();
        f.feed(b"old\r\n");
        let mut w = Watch::new(1, spec("^GO", &[], Since::Entry), &f.t);
        f.feed(b"GO\r\nFATAL\r\n");
        let hit = w.scan(&f.t, &mut f.s, &f.inputs).unwrap();
        // "old\n" then "GO": what follows the match starts at its line end.
        assert_eq!(hit.after, 6);
        assert_eq!(&f.t.text()[f.t.index(hit.after)..], "\nFATAL\n");
        // On the screen, what follows is whatever arrives next.
        let mut w = Watch::new(2, spec("^GO", &[], Since::Screen), &f.t);
        let hit = w.scan(&f.t, &mut f.s, &f.inputs).unwrap();
        assert_eq!(hit.after, f.t.end());
    }

    #[test]
    fn a_pattern_across_lines_spanning_two_chunks_is_found() {
        let mut f = Fixture::new();
        let mut w = Watch::new(1, spec(r"first\nsecond", &[], Since::Entry), &f.t);
        f.feed(b"first\r\n");
        assert_eq!(w.scan(&f.t, &mut f.s, &f.inputs), None);
        f.feed(b"second\r\n");
        assert!(w.scan(&f.t, &mut f.s, &f.inputs).is_some());
    }
}
