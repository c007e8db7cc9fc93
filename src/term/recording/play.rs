//! Playing a recording you can navigate: the one player both `flowdeck replay` and the
//! studio's replay pane (which runs it) use, so that its keys mean the same everywhere. The
//! front end maps keys to these calls and draws [`Player::screen`]; everything else is here.
//!
//! The recording's events are held in memory with their times from the start (a recording
//! is at most its cap), and the screen is the recording's output run through the terminal
//! emulator the sessions use (term/screen.rs). Going forward feeds it the events in
//! between; going back starts a new emulator and feeds it from the start up to that point,
//! so that what is drawn is what the terminal showed then, however the program drew it. A
//! marker (`m`) names the state a run entered there: the player goes to the next or the
//! previous one, and names the one it is in.

use super::cast::{CastError, CastEvent, CastReader, Header};
use crate::term::escapes::{Class, Scanner};
use crate::term::screen::{Screen, Size};
use std::path::Path;
use std::time::Duration;

/// The slowest and fastest a recording plays, times its own pace.
const SPEEDS: (f64, f64) = (1.0 / 16.0, 64.0);

/// A marker: the state a run entered, where its recording stands then.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub name: String,
    pub time: f64,
    /// The marker's event: playing up to it (`index + 1` events) is being at the marker.
    pub index: usize,
}

/// A recording's events in order, each at its time from the start, and its markers.
#[derive(Debug, Clone)]
pub struct Timeline {
    pub header: Header,
    events: Vec<CastEvent>,
    marks: Vec<Mark>,
}

impl Timeline {
    pub fn load(path: &Path) -> Result<Timeline, CastError> {
        let reader = CastReader::open(path)?;
        let header = reader.header.clone();
        let events = reader.collect::<Result<Vec<_>, _>>()?;
        Ok(Timeline::new(header, events))
    }

    /// Times are made to never go back (a v2 file's may), so that seeking by time is sound.
    pub fn new(header: Header, mut events: Vec<CastEvent>) -> Timeline {
        let mut last = 0.0_f64;
        let mut marks = Vec::new();
        for (index, event) in events.iter_mut().enumerate() {
            last = event.time().max(last);
            let (CastEvent::Output(t, _)
            | CastEvent::Resize(t, ..)
            | CastEvent::Marker(t, _)
            | CastEvent::Exit(t, _)
            | CastEvent::Other(t, ..)) = event;
            *t = last;
            if let CastEvent::Marker(time, name) = event {
                marks.push(Mark {
                    name: name.clone(),
                    time: *time,
                    index,
                });
            }
        }
        Timeline {
            header,
            events,
            marks,
        }
    }

    pub fn events(&self) -> &[CastEvent] {
        &self.events
    }

    pub fn marks(&self) -> &[Mark] {
        &self.marks
    }

    /// The time of the last event.
    pub fn duration(&self) -> f64 {
        self.events.last().map_or(0.0, CastEvent::time)
    }

    /// The first marker named `name` (a state a run entered more than once: its first time).
    pub fn mark_named(&self, name: &str) -> Option<&Mark> {
        self.marks.iter().find(|m| m.name == name)
    }

    /// The marker the first `played` events last passed: the state the run was in there.
    pub fn mark_at(&self, played: usize) -> Option<&Mark> {
        self.marks.iter().rev().find(|m| m.index < played)
    }

    /// The first marker not played yet.
    pub fn next_mark(&self, played: usize) -> Option<&Mark> {
        self.marks.iter().find(|m| m.index >= played)
    }

    /// The start of the state being played, or of the one before when just at its start
    /// (as a music player's "previous"): the last marker before the last event played.
    pub fn previous_mark(&self, played: usize) -> Option<&Mark> {
        self.marks.iter().rev().find(|m| m.index + 1 < played)
    }

    /// Where `text` is next printed after the first `played` events: the number of events
    /// played once it shows (the event that completes it included). Printed characters
    /// only (escape sequences between its letters do not hide it), across events; in any
    /// case when `text` has no capital letter.
    pub fn search(&self, played: usize, text: &str) -> Option<usize> {
        let fold = !text.chars().any(char::is_uppercase);
        let wanted: Vec<char> = text
            .chars()
            .map(|c| if fold { lower(c) } else { c })
            .collect();
        if wanted.is_empty() {
            return None;
        }
        let mut scanner = Scanner::default();
        let mut window: Vec<char> = Vec::with_capacity(wanted.len());
        for (index, event) in self.events.iter().enumerate().skip(played) {
            let CastEvent::Output(_, output) = event else {
                continue;
            };
            for c in output.chars() {
                if scanner.next(c) != Class::Printed {
                    continue;
                }
                if window.len() == wanted.len() {
                    window.remove(0);
                }
                window.push(if fold { lower(c) } else { c });
                if window == wanted {
                    return Some(index + 1);
                }
            }
        }
        None
    }
}

fn lower(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

/// A recording being played: where it stands, what the screen shows there, and how fast it
/// goes. Times are the recording's own seconds; the front end says how much wall time went
/// by ([`Player::forward`]) and asks how long to wait for the next event ([`Player::due_in`]).
#[derive(Debug)]
pub struct Player {
    timeline: Timeline,
    /// Events played.
    played: usize,
    /// Where the recording stands, in its own seconds.
    at: f64,
    screen: Screen,
    speed: f64,
    /// The longest pause played, in the recording's seconds; `None`: as they were.
    idle_limit: Option<f64>,
    pub paused: bool,
}

impl Player {
    pub fn new(timeline: Timeline, speed: f64, idle_limit: Option<f64>) -> Player {
        let screen = Player::fresh_screen(&timeline.header);
        Player {
            timeline,
            played: 0,
            at: 0.0,
            screen,
            speed: speed.clamp(f64::MIN_POSITIVE, f64::MAX),
            idle_limit,
            paused: false,
        }
    }

    fn fresh_screen(header: &Header) -> Screen {
        Screen::new(Size::clamped(header.width, header.height).0)
    }

    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// The screen as the recording drew it where it stands.
    pub fn screen(&mut self) -> &vt100::Screen {
        self.screen.vt()
    }

    /// The recording's screen size where it stands (resizes followed).
    pub fn size(&self) -> Size {
        self.screen.size()
    }

    /// Where the recording stands, in its own seconds.
    pub fn time(&self) -> f64 {
        self.at
    }

    pub fn speed(&self) -> f64 {
        self.speed
    }

    /// The state the run was in here (the last marker played).
    pub fn state(&self) -> Option<&str> {
        self.timeline.mark_at(self.played).map(|m| m.name.as_str())
    }

    /// Every event played.
    pub fn ended(&self) -> bool {
        self.played >= self.timeline.events.len()
    }

    /// The pause before the next event, in the recording's seconds (capped at the idle
    /// limit); `None` at the end.
    fn gap(&self) -> Option<f64> {
        let next = self.timeline.events.get(self.played)?.time();
        let gap = (next - self.at).max(0.0);
        Some(self.idle_limit.map_or(gap, |limit| gap.min(limit)))
    }

    /// The wall time until the next event is due at this speed; `None` at the end, or paused.
    pub fn due_in(&self) -> Option<Duration> {
        if self.paused {
            return None;
        }
        let wall = self.gap()? / self.speed;
        Some(Duration::try_from_secs_f64(wall).unwrap_or(Duration::MAX))
    }

    /// `wall` seconds went by while playing: the events due meanwhile are played. A pause
    /// longer than the idle limit is crossed in that limit's time. Returns whether the
    /// screen changed.
    pub fn forward(&mut self, wall: Duration) -> bool {
        if self.paused {
            return false;
        }
        let mut left = wall.as_secs_f64() * self.speed;
        let mut changed = false;
        while let Some(gap) = self.gap() {
            if left < gap {
                // Part of the (capped) pause went by: the rest of it is what is left.
                let next = self.timeline.events[self.played].time();
                self.at = (next - (gap - left)).max(self.at);
                return changed;
            }
            left -= gap;
            changed |= self.play_next();
        }
        changed
    }

    /// Plays the next event at once (`.` while paused). Returns whether the screen changed.
    pub fn step(&mut self) -> bool {
        self.play_next()
    }

    fn play_next(&mut self) -> bool {
        let Some(event) = self.timeline.events.get(self.played) else {
            return false;
        };
        self.played += 1;
        self.at = self.at.max(event.time());
        match event {
            CastEvent::Output(_, text) => {
                // The answers a program's queries would get go nowhere: nothing runs here.
                let _ = self.screen.feed(text.as_bytes());
                true
            }
            CastEvent::Resize(_, cols, rows) => {
                self.screen.resize(Size::clamped(*cols, *rows).0);
                true
            }
            _ => false,
        }
    }

    /// Goes to `played` events: forward by playing those in between, back by playing the
    /// recording again from its start into a new screen. The time is the last event's.
    pub fn go_to(&mut self, played: usize) {
        let played = played.min(self.timeline.events.len());
        if played < self.played {
            self.screen = Player::fresh_screen(&self.timeline.header);
            self.played = 0;
            self.at = 0.0;
        }
        while self.played < played {
            self.play_next();
        }
        self.at = match played {
            0 => 0.0,
            n => self.timeline.events[n - 1].time(),
        };
    }

    /// Goes to `seconds` from the start (clamped to the recording): every event at or before
    /// it played, none after.
    pub fn seek(&mut self, seconds: f64) {
        let seconds = seconds.clamp(0.0, self.timeline.duration());
        let played = self
            .timeline
            .events
            .partition_point(|e| e.time() <= seconds);
        self.go_to(played);
        self.at = seconds;
    }

    /// Goes `seconds` forward (negative: back).
    pub fn skip(&mut self, seconds: f64) {
        self.seek(self.at + seconds);
    }

    /// Goes to the next state's marker; false when there is none.
    pub fn next_state(&mut self) -> bool {
        match self.timeline.next_mark(self.played).map(|m| m.index + 1) {
            Some(played) => {
                self.go_to(played);
                true
            }
            None => false,
        }
    }

    /// Goes to the start of this state, or of the one before when just at its start (before
    /// the first marker: to the recording's start).
    pub fn previous_state(&mut self) {
        let played = self
            .timeline
            .previous_mark(self.played)
            .map_or(0, |m| m.index + 1);
        self.go_to(played);
    }

    /// Goes to the first marker named `name`; false when there is none.
    pub fn go_to_state(&mut self, name: &str) -> bool {
        match self.timeline.mark_named(name).map(|m| m.index + 1) {
            Some(played) => {
                self.go_to(played);
                true
            }
            None => false,
        }
    }

    /// Goes to where `text` is next printed; false when it is not, further on.
    pub fn search(&mut self, text: &str) -> bool {
        match self.timeline.search(self.played, text) {
            Some(played) => {
                self.go_to(played);
                true
            }
            None => false,
        }
    }

    /// Twice as fast (`+`), up to 64 times the recording's pace.
    pub fn faster(&mut self) {
        self.speed = (self.speed * 2.0).min(SPEEDS.1);
    }

    /// Half as fast (`-`), down to a sixteenth.
    pub fn slower(&mut self) {
        self.speed = (self.speed / 2.0).max(SPEEDS.0);
    }

    /// What a status line says: the state, the time of the total, the speed, paused.
    pub fn status(&self) -> String {
        let state = self.state().unwrap_or("-");
        let mut status = format!(
            "state {state}  {} / {}  {}x",
            clock(self.at),
            clock(self.timeline.duration()),
            speed(self.speed)
        );
        if self.paused {
            status.push_str("  paused");
        } else if self.ended() {
            status.push_str("  end");
        }
        status
    }
}

/// `m:ss.s`, or `h:mm:ss` past an hour.
fn clock(seconds: f64) -> String {
    let tenths = (seconds.max(0.0) * 10.0).round() as u64;
    let (minutes, tenths) = (tenths / 600, tenths % 600);
    if minutes >= 60 {
        return format!("{}:{:02}:{:02}", minutes / 60, minutes % 60, tenths / 10);
    }
    format!("{minutes}:{:02}.{}", tenths / 10, tenths % 10)
}

/// A speed as few digits as say it: `2`, `0.5`, `0.0625`.
fn speed(speed: f64) -> String {
    let text = format!("{speed:.4}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
#[path = "play_tests.rs"]
mod tests;
