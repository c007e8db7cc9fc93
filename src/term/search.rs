//! Searching a session's output: its retained history and, while a full-screen program is in
//! front, that program's screen (it draws with cursor moves on the alternate screen, so what
//! it shows is not in the history as lines).
//!
//! Lines are matched one at a time as displayed (carriage returns and backspaces applied), so
//! a match never spans lines. A history line is named by its number in the output since the
//! session began (1 = its first line), which names the same line however many older ones are
//! dropped later: a cursor saying "after line 4,120" means the same place on the next page.
//! A cursor names the session whose history it walks (and which opening of that id: ids
//! start again at `s1` in each server), and is refused on any other: line 4,120 of another
//! session is another place, and reading it there would skip hits without a word.
//!
//! The reader thread takes the session lock for every batch of output, so the history is
//! searched a slice at a time, each under the lock for a fraction of a millisecond
//! (docs/PERFORMANCE.md), never all of it at once.

use super::error::TermError;
use super::transcript::{Transcript, displayed};
use regex::Regex;
use schemars::JsonSchema;
use serde::Serialize;
use std::ops::Range;

/// Most hits a page holds.
pub const MAX_LIMIT: usize = 200;
/// Most context lines before and after a hit.
pub const MAX_CONTEXT: usize = 20;
/// Hits are counted up to this many; past it the search stops and says so.
pub const MAX_COUNTED: usize = 1000;
/// A longer line is cut around its match.
pub const MAX_LINE_CHARS: usize = 500;
/// Characters kept before the match when a line is cut, so that what leads to it shows.
const LEAD_CHARS: usize = 100;
/// A longer matched text is cut.
pub const MAX_MATCH_CHARS: usize = 200;
/// Text a page holds at most (lines, matches and context); the page ends before a hit that
/// would pass it, and the cursor goes on from there.
pub const MAX_PAGE_BYTES: usize = 256 << 10;
/// What is read under one hold of the lock.
const SLICE_LINES: usize = 2048;
const SLICE_BYTES: usize = 256 << 10;
/// Where text was cut.
pub const CUT: &str = "…";

/// Which hits come first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// The screen from the bottom, then history from the newest line back.
    NewestFirst,
    /// History from the oldest retained line, then the screen from the top.
    OldestFirst,
}

/// Where a hit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The retained history; `line` is the line's number in the output.
    History,
    /// The screen of a full-screen program; `line` is the row (1 = top).
    Screen,
}

/// A search.
#[derive(Debug, Clone)]
pub struct Query {
    pub regex: Regex,
    pub order: Order,
    /// Lines before and after each hit (at most [`MAX_CONTEXT`]).
    pub context: usize,
    /// Hits in the page (1 to [`MAX_LIMIT`]).
    pub limit: usize,
    /// Where the previous page ended.
    pub cursor: Option<Cursor>,
}

/// The session a search reads: its id, and its instance, a nonce of the session's own
/// (a session id names another session after a server restarts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub session: String,
    pub instance: String,
}

/// The first field of a cursor's text: its format. Cursors of the first format (five
/// fields, no session) are refused as such rather than read against any session.
const CURSOR_FORMAT: &str = "c2";

/// Where a page ended: the last hit it gave, and the history range the first page searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    order: Order,
    at: Place,
    /// The history's end (exclusive) when the first page began: newest first, pages never
    /// reach above it, so output that arrives meanwhile does not shift them.
    end: u64,
    /// The oldest line the first page could reach: newest first, lines dropped from here on
    /// before a page reaches them are reported as missed.
    floor: u64,
}

/// A line of history (by number from 0) or a screen row (from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    History(u64),
    Screen(u64),
}

impl Cursor {
    /// The cursor as a page gives it (`next_cursor`), bound to `owner`.
    fn encode(&self, owner: &Owner) -> String {
        let order = match self.order {
            Order::NewestFirst => 'n',
            Order::OldestFirst => 'o',
        };
        let (source, at) = match self.at {
            Place::History(n) => ('h', n),
            Place::Screen(row) => ('s', row),
        };
        format!(
            "{CURSOR_FORMAT}.{}.{}.{order}.{source}.{at}.{}.{}",
            owner.session, owner.instance, self.end, self.floor
        )
    }

    /// Reads a cursor a page of `owner`'s gave (`next_cursor`) for a search in `order`.
    /// A cursor of another session, or of an earlier session of the same id, is refused.
    pub fn parse(text: &str, order: Order, owner: &Owner) -> Result<Cursor, TermError> {
        let invalid = |reason: String| TermError::InvalidArgument {
            what: format!("the cursor {:?}", text.chars().take(64).collect::<String>()),
            reason,
        };
        let parts: Vec<&str> = text.split('.').collect();
        let number = |s: &str| s.parse::<u64>().ok();
        if let ["n" | "o", _, _, _, _] = parts.as_slice() {
            return Err(invalid(format!(
                "it was given by an earlier flowdeck, whose cursors name no session; search `{}` again without a cursor",
                owner.session
            )));
        }
        let [CURSOR_FORMAT, session, instance, o, s, at, end, floor] = parts.as_slice() else {
            return Err(invalid(
                "it is not one that a search gave; pass `next_cursor` as it came".into(),
            ));
        };
        if *session != owner.session {
            return Err(TermError::ForeignCursor {
                session: owner.session.clone(),
                cursor_session: (*session).to_string(),
            });
        }
        if *instance != owner.instance {
            return Err(invalid(format!(
                "it continues a search of an earlier session `{session}` (since closed; ids are given again after a restart); search `{session}` again without a cursor"
            )));
        }
        let made_for = match *o {
            "n" => Order::NewestFirst,
            "o" => Order::OldestFirst,
            _ => return Err(invalid("its order is unknown".into())),
        };
        let (Some(at), Some(end), Some(floor)) = (number(at), number(end), number(floor)) else {
            return Err(invalid("its positions are not numbers".into()));
        };
        let at = match *s {
            "h" => Place::History(at),
            "s" => Place::Screen(at),
            _ => return Err(invalid("its source is unknown".into())),
        };
        if made_for != order {
            return Err(invalid(format!(
                "it continues a search in order {}; give that order, or no cursor to start again",
                order_name(made_for)
            )));
        }
        Ok(Cursor {
            order,
            at,
            end,
            floor,
        })
    }
}

fn order_name(order: Order) -> &'static str {
    match order {
        Order::NewestFirst => "newest_first",
        Order::OldestFirst => "oldest_first",
    }
}

/// A page of hits.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct Found {
    /// The hits, in the order asked.
    pub hits: Vec<Hit>,
    /// Hits from where this page starts to the end of the search, this page's included
    /// (counted up to 1,000).
    pub total_hits: usize,
    /// Counting stopped at 1,000 hits: there may be more, beyond the lines searched.
    pub truncated: bool,
    /// History lines and screen rows looked at.
    pub lines_searched: u64,
    /// The oldest retained history line when the search began (null while there is none).
    pub first_line: Option<u64>,
    /// The newest history line when the search began (null while there is none).
    pub last_line: Option<u64>,
    /// Lines this search should have reached that were dropped from the history first
    /// (history keeps the newest lines only): their hits are lost.
    pub missed_lines: u64,
    /// A full-screen program's screen was searched too (hits with source `screen`).
    pub screen_searched: bool,
    /// Give it as `cursor`, with the same `order`, for the next page; null when there are
    /// no more hits.
    pub next_cursor: Option<String>,
}

/// A line that matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
pub struct Hit {
    pub source: Source,
    /// History: the line's number in the session's output (1 = its first line), the same on
    /// every page however much older history is dropped. Screen: the row (1 = top).
    pub line: u64,
    /// Where the (first) match starts in the line, in characters from 0.
    pub column: usize,
    /// The match's length in characters.
    pub length: usize,
    /// The matched text; a longer one than 200 characters is cut, ending with `…`.
    pub matched_text: String,
    /// The line as displayed. A line longer than 500 characters is cut around the match, with
    /// `…` where it was cut.
    pub text: String,
    /// The column in the line of `text`'s first character (0 unless its start was cut).
    pub text_column: usize,
    /// Lines just before, oldest first (fewer at the start of what is retained).
    pub before: Vec<ContextLine>,
    /// Lines just after.
    pub after: Vec<ContextLine>,
}

/// A line around a hit, from the same source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
pub struct ContextLine {
    pub line: u64,
    /// The line as displayed; a line longer than 500 characters is cut, ending with `…`.
    pub text: String,
}

/// The rows of a full-screen program's screen, as displayed, blank rows at the bottom left
/// out; `None` on the normal screen, whose lines are the newest lines of the history.
pub fn screen_rows(vt: &vt100::Screen) -> Option<Vec<String>> {
    if !vt.alternate_screen() {
        return None;
    }
    let (_, cols) = vt.size();
    let mut rows: Vec<String> = vt
        .rows(0, cols.get())
        .map(|r| r.trim_end().to_string())
        .collect();
    while rows.last().is_some_and(String::is_empty) {
        rows.pop();
    }
    Some(rows)
}

/// Searches `screen` (from [`screen_rows`]) and the history of `owner`, whose cursor the
/// page gives. `locked` runs what it is given with the transcript under the session lock;
/// it is called once per slice.
pub fn search(
    query: &Query,
    owner: &Owner,
    screen: Option<Vec<String>>,
    mut locked: impl FnMut(&mut dyn FnMut(&Transcript)),
) -> Found {
    let mut kept = 0..0;
    locked(&mut |t| kept = t.line_numbers());
    let cursor = query.cursor;
    let mut page = Page::new(query);
    let screen_searched = screen.is_some();
    let screen = screen.unwrap_or_default();
    let rows = screen.len() as u64;
    let (end, floor) = match (query.order, cursor) {
        (Order::NewestFirst, Some(c)) => (c.end, c.floor),
        _ => (kept.end, kept.start),
    };
    let mut missed = 0;
    match query.order {
        Order::NewestFirst => {
            let (screen_top, history_top) = match cursor.map(|c| c.at) {
                None => (rows, end),
                Some(Place::Screen(row)) => (row.min(rows), end),
                Some(Place::History(n)) => (0, n.min(end)),
            };
            page.rows(&screen, (0..screen_top).rev());
            missed = page.history_down(&mut locked, history_top, floor, end);
        }
        Order::OldestFirst => {
            let (history_from, screen_from) = match cursor.map(|c| c.at) {
                None => (kept.start, 0),
                Some(Place::History(n)) => (n.saturating_add(1), 0),
                Some(Place::Screen(row)) => (end, row.saturating_add(1)),
            };
            if history_from < end {
                missed = page.history_up(&mut locked, history_from, end);
            }
            page.rows(&screen, screen_from.min(rows)..rows);
        }
    }
    let next_cursor = page.last.filter(|_| page.more).map(|at| {
        Cursor {
            order: query.order,
            at,
            end,
            floor,
        }
        .encode(owner)
    });
    Found {
        total_hits: page.total,
        truncated: page.total >= MAX_COUNTED,
        lines_searched: page.searched,
        first_line: (!kept.is_empty()).then_some(kept.start + 1),
        last_line: (!kept.is_empty()).then_some(kept.end),
        missed_lines: missed,
        screen_searched,
        next_cursor,
        hits: page.hits,
    }
}

/// The page being filled, and the count that goes on after it is full.
struct Page<'q> {
    query: &'q Query,
    limit: usize,
    context: u64,
    hits: Vec<Hit>,
    bytes: usize,
    full: bool,
    /// A hit was found after the page filled.
    more: bool,
    /// Where the page's last hit is.
    last: Option<Place>,
    total: usize,
    searched: u64,
}

impl<'q> Page<'q> {
    fn new(query: &'q Query) -> Self {
        Page {
            query,
            limit: query.limit.clamp(1, MAX_LIMIT),
            context: query.context.min(MAX_CONTEXT) as u64,
            hits: Vec::new(),
            bytes: 0,
            full: false,
            more: false,
            last: None,
            total: 0,
            searched: 0,
        }
    }

    fn stopped(&self) -> bool {
        self.total >= MAX_COUNTED
    }

    /// Matches one line; returns where, when the page still takes hits.
    fn matches(&mut self, text: &str) -> Option<Range<usize>> {
        self.searched += 1;
        let found = self.query.regex.find(text)?;
        self.total += 1;
        if self.full {
            self.more = true;
            return None;
        }
        Some(found.range())
    }

    /// Adds a hit unless it would pass the page's size (the first always fits: a hit is
    /// bounded well below it).
    fn take(&mut self, at: Place, hit: Hit) {
        let size = hit_bytes(&hit);
        if !self.hits.is_empty() && self.bytes + size > MAX_PAGE_BYTES {
            self.full = true;
            self.more = true;
            return;
        }
        self.bytes += size;
        self.hits.push(hit);
        self.last = Some(at);
        self.full = self.hits.len() >= self.limit;
    }

    /// Screen rows, in the order given.
    fn rows(&mut self, screen: &[String], order: impl Iterator<Item = u64>) {
        let lines = |range: Range<u64>| {
            let to = range.end.min(screen.len() as u64);
            (range.start.min(to)..to)
                .map(|r| context_line(r, &screen[r as usize]))
                .collect()
        };
        for row in order {
            if self.stopped() {
                return;
            }
            let text = &screen[row as usize];
            if let Some(m) = self.matches(text) {
                let before = lines(row.saturating_sub(self.context)..row);
                let after = lines(row + 1..row + 1 + self.context);
                self.take(
                    Place::Screen(row),
                    hit(Source::Screen, row, text, m, before, after),
                );
            }
        }
    }

    /// One history line; its context is read from the same transcript (under the same lock),
    /// after-lines no further than `end`.
    fn history_line(&mut self, t: &Transcript, n: u64, raw: &str, end: u64) {
        let text = displayed(raw);
        if let Some(m) = self.matches(&text) {
            let lines = |range: Range<u64>| {
                t.lines(range)
                    .map(|(n, raw)| context_line(n, &displayed(raw)))
                    .collect()
            };
            let before = lines(n.saturating_sub(self.context)..n);
            let after = lines(n + 1..(n + 1 + self.context).min(end));
            self.take(
                Place::History(n),
                hit(Source::History, n, &text, m, before, after),
            );
        }
    }

    /// History from `top` (exclusive) down to `floor`, a slice per lock. Returns the lines
    /// that were dropped before the search reached them.
    fn history_down(
        &mut self,
        locked: &mut impl FnMut(&mut dyn FnMut(&Transcript)),
        top: u64,
        floor: u64,
        end: u64,
    ) -> u64 {
        let mut missed = 0;
        // Lines below `next` are still to look at.
        let mut next = top;
        while next > floor && !self.stopped() {
            locked(&mut |t| {
                let kept = t.line_numbers();
                let low = floor.max(kept.start);
                let high = next.min(kept.end).max(low);
                let (mut count, mut bytes) = (0, 0);
                for (n, raw) in t.lines(low..high).rev() {
                    self.history_line(t, n, raw, end);
                    next = n;
                    count += 1;
                    bytes += raw.len();
                    if self.stopped() || count >= SLICE_LINES || bytes >= SLICE_BYTES {
                        return;
                    }
                }
                missed += low.min(next) - floor;
                next = floor;
            });
        }
        missed
    }

    /// History from `from` up to `end` (exclusive), a slice per lock. Returns the lines
    /// that were dropped before the search reached them.
    fn history_up(
        &mut self,
        locked: &mut impl FnMut(&mut dyn FnMut(&Transcript)),
        from: u64,
        end: u64,
    ) -> u64 {
        let mut missed = 0;
        let mut next = from;
        while next < end && !self.stopped() {
            locked(&mut |t| {
                let kept = t.line_numbers();
                if kept.start > next {
                    missed += kept.start.min(end) - next;
                    next = kept.start;
                }
                let (mut count, mut bytes) = (0, 0);
                for (n, raw) in t.lines(next..end) {
                    self.history_line(t, n, raw, end);
                    next = n + 1;
                    count += 1;
                    bytes += raw.len();
                    if self.stopped() || count >= SLICE_LINES || bytes >= SLICE_BYTES {
                        return;
                    }
                }
                next = end;
            });
        }
        missed
    }
}

/// A hit, `number` counted from 0, `m` the match's byte range in `text`.
fn hit(
    source: Source,
    number: u64,
    text: &str,
    m: Range<usize>,
    before: Vec<ContextLine>,
    after: Vec<ContextLine>,
) -> Hit {
    let column = text[..m.start].chars().count();
    let length = text[m.clone()].chars().count();
    let (line, text_column) = cut_around(text, column);
    Hit {
        source,
        line: number + 1,
        column,
        length,
        matched_text: cut_end(&text[m], MAX_MATCH_CHARS),
        text: line,
        text_column,
        before,
        after,
    }
}

fn context_line(number: u64, text: &str) -> ContextLine {
    ContextLine {
        line: number + 1,
        text: cut_end(text, MAX_LINE_CHARS),
    }
}

/// At most `max` characters of `text`, with [`CUT`] after them when there was more.
fn cut_end(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((end, _)) => format!("{}{CUT}", &text[..end]),
    }
}

/// A line of at most [`MAX_LINE_CHARS`] characters that shows the match at `column`, and the
/// column where what is kept starts; [`CUT`] marks each end that was cut.
fn cut_around(text: &str, column: usize) -> (String, usize) {
    let total = text.chars().count();
    if total <= MAX_LINE_CHARS {
        return (text.to_string(), 0);
    }
    let from = column
        .saturating_sub(LEAD_CHARS)
        .min(total - MAX_LINE_CHARS);
    let mut out = String::with_capacity(MAX_LINE_CHARS + 2 * CUT.len());
    if from > 0 {
        out.push_str(CUT);
    }
    out.extend(text.chars().skip(from).take(MAX_LINE_CHARS));
    if from + MAX_LINE_CHARS < total {
        out.push_str(CUT);
    }
    (out, from)
}

/// About what a hit adds to a page (its texts, and room for the field names).
fn hit_bytes(hit: &Hit) -> usize {
    let context: usize = hit
        .before
        .iter()
        .chain(&hit.after)
        .map(|c| c.text.len() + 24)
        .sum();
    hit.text.len() + hit.matched_text.len() + context + 160
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::decode::Decoder;

    fn transcript<S: AsRef<str>>(lines: impl IntoIterator<Item = S>, keep: usize) -> Transcript {
        let mut t = Transcript::new(keep, 8 << 20);
        let mut d = Decoder::default();
        for line in lines {
            d.feed(&mut t, format!("{}\n", line.as_ref()).as_bytes());
            t.trim(u64::MAX);
        }
        t
    }

    /// `line N` for each N, then old lines dropped as the reader drops them.
    fn add_lines(t: &mut Transcript, numbers: std::ops::RangeInclusive<u32>) {
        for i in numbers {
            Decoder::default().feed(t, format!("line {i}\n").as_bytes());
            t.trim(u64::MAX);
        }
    }

    fn query(pattern: &str, order: Order, limit: usize, context: usize) -> Query {
        Query {
            regex: Regex::new(pattern).unwrap_or_else(|e| panic!("{e}")),
            order,
            context,
            limit,
            cursor: None,
        }
    }

    fn owner(session: &str, instance: &str) -> Owner {
        Owner {
            session: session.into(),
            instance: instance.into(),
        }
    }

    fn run(t: &Transcript, q: &Query, screen: Option<Vec<String>>) -> Found {
        search(q, &owner("s1", "a1"), screen, |read| read(t))
    }

    fn next(q: &Query, found: &Found) -> Option<Query> {
        let cursor = found.next_cursor.as_deref()?;
        let mut q = q.clone();
        q.cursor = Some(
            Cursor::parse(cursor, q.order, &owner("s1", "a1")).unwrap_or_else(|e| panic!("{e}")),
        );
        Some(q)
    }

    fn next_page(t: &Transcript, q: &Query, found: &Found) -> Found {
        let q = next(q, found).unwrap_or_else(|| panic!("no next page"));
        run(t, &q, None)
    }

    /// Every hit's (source, line), page after page.
    fn all_pages(t: &Transcript, q: &Query, screen: Option<Vec<String>>) -> Vec<(Source, u64)> {
        let mut seen = Vec::new();
        let mut q = q.clone();
        loop {
            let found = run(t, &q, screen.clone());
            assert!(found.hits.len() <= q.limit);
            seen.extend(found.hits.iter().map(|h| (h.source, h.line)));
            match next(&q, &found) {
                Some(n) => q = n,
                None => return seen,
            }
        }
    }

    #[test]
    fn pages_give_every_hit_once_in_either_order() {
        let t = transcript(
            (1..=100).map(|i| format!("line {i}{}", if i % 7 == 0 { " ERR" } else { "" })),
            1000,
        );
        let expected: Vec<(Source, u64)> = (1..=100)
            .filter(|i| i % 7 == 0)
            .map(|i| (Source::History, i))
            .collect();
        let q = query("ERR", Order::OldestFirst, 3, 0);
        assert_eq!(all_pages(&t, &q, None), expected);
        let first = run(&t, &q, None);
        assert_eq!((first.total_hits, first.truncated), (14, false));
        assert_eq!((first.first_line, first.last_line), (Some(1), Some(100)));
        let q = query("ERR", Order::NewestFirst, 4, 0);
        let mut newest = expected.clone();
        newest.reverse();
        assert_eq!(all_pages(&t, &q, None), newest);
        // A page that is not the first counts what is left from it on.
        let second = next_page(&t, &q, &run(&t, &q, None));
        assert_eq!(second.total_hits, 10);
        assert_eq!(second.hits[0].line, 70);
    }

    #[test]
    fn a_hit_has_its_column_match_and_context_cut_at_the_edges() {
        let t = transcript((1..=10).map(|i| format!("é line {i}")), 1000);
        let found = run(
            &t,
            &query("line (1|5|10)$", Order::OldestFirst, 10, 2),
            None,
        );
        let lines: Vec<u64> = found.hits.iter().map(|h| h.line).collect();
        assert_eq!(lines, [1, 5, 10]);
        let first = &found.hits[0];
        assert_eq!((first.column, first.length), (2, 6));
        assert_eq!(first.matched_text, "line 1");
        assert_eq!(first.text, "é line 1");
        assert!(first.before.is_empty());
        let after: Vec<u64> = first.after.iter().map(|c| c.line).collect();
        assert_eq!(after, [2, 3]);
        let middle = &found.hits[1];
        let around: Vec<&str> = middle
            .before
            .iter()
            .chain(&middle.after)
            .map(|c| c.text.as_str())
            .collect();
        assert_eq!(around, ["é line 3", "é line 4", "é line 6", "é line 7"]);
        assert!(found.hits[2].after.is_empty());
        // After old lines are dropped, the first retained line has no lines before it.
        let t = transcript((1..=10).map(|i| format!("line {i}")), 4);
        let found = run(&t, &query("line", Order::OldestFirst, 1, 3), None);
        assert_eq!(found.hits[0].line, 7);
        assert!(found.hits[0].before.is_empty());
        assert_eq!(found.first_line, Some(7));
    }

    #[test]
    fn long_lines_and_matches_are_cut_around_the_match() {
        let mut line = "a".repeat(150_000);
        line.push_str("NEEDLE");
        line.push_str(&"b".repeat(150_000));
        let t = transcript([line.as_str()], 10);
        let found = run(&t, &query("NEEDLE", Order::NewestFirst, 5, 0), None);
        let hit = &found.hits[0];
        assert_eq!(hit.column, 150_000);
        assert_eq!(hit.text_column, 150_000 - LEAD_CHARS);
        assert!(
            hit.text.starts_with(CUT) && hit.text.ends_with(CUT),
            "{}",
            hit.text.len()
        );
        assert_eq!(hit.text.chars().count(), MAX_LINE_CHARS + 2);
        let at = hit
            .text
            .find("NEEDLE")
            .unwrap_or_else(|| panic!("the match is shown"));
        assert_eq!(hit.text[..at].chars().count() - 1, LEAD_CHARS);
        // At the start and at the end of a line, only the other end is cut.
        let (start, from) = cut_around(&line, 3);
        assert_eq!(
            (from, start.starts_with('a'), start.ends_with(CUT)),
            (0, true, true)
        );
        let (end, from) = cut_around(&line, line.len() - 1);
        assert_eq!(from, line.len() - MAX_LINE_CHARS);
        assert!(end.starts_with(CUT) && end.ends_with('b'));
        // A huge match is cut too, and its full length said.
        let t = transcript(["x".repeat(5000)], 10);
        let hit = &run(&t, &query("x+", Order::NewestFirst, 5, 0), None).hits[0];
        assert_eq!(hit.length, 5000);
        assert_eq!(hit.matched_text.chars().count(), MAX_MATCH_CHARS + 1);
        assert!(hit.matched_text.ends_with(CUT));
        assert_eq!(cut_end("short", 10), "short");
    }

    #[test]
    fn cursors_round_trip_and_refuse_what_they_are_not() {
        let s1 = owner("s1", "0123abcd");
        for cursor in [
            Cursor {
                order: Order::NewestFirst,
                at: Place::History(41),
                end: 99,
                floor: 3,
            },
            Cursor {
                order: Order::OldestFirst,
                at: Place::Screen(2),
                end: 7,
                floor: 0,
            },
        ] {
            let text = cursor.encode(&s1);
            assert_eq!(Cursor::parse(&text, cursor.order, &s1).ok(), Some(cursor));
        }
        let newest = |rest: &str| format!("c2.s1.0123abcd.{rest}");
        for (text, order, says) in [
            (
                String::new(),
                Order::NewestFirst,
                "not one that a search gave",
            ),
            (
                newest("n.h.1.2"),
                Order::NewestFirst,
                "not one that a search gave",
            ),
            (
                "c3.s1.0123abcd.n.h.1.2.3".into(),
                Order::NewestFirst,
                "not one that a search gave",
            ),
            (newest("n.h.x.2.3"), Order::NewestFirst, "not numbers"),
            (newest("n.q.1.2.3"), Order::NewestFirst, "source is unknown"),
            (newest("z.h.1.2.3"), Order::NewestFirst, "order is unknown"),
            (
                newest("n.h.1.2.3"),
                Order::OldestFirst,
                "order newest_first",
            ),
            // The first format named no session: refused, never read as this session's.
            ("n.h.1.2.3".into(), Order::NewestFirst, "earlier flowdeck"),
            (
                "c2.s1.ffff0000.n.h.1.2.3".into(),
                Order::NewestFirst,
                "an earlier session `s1`",
            ),
            (
                "c2.s2.0123abcd.n.h.1.2.3".into(),
                Order::NewestFirst,
                "a search of session `s2`, not of `s1`",
            ),
        ] {
            let error = Cursor::parse(&text, order, &s1)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(error.contains(says), "{text}: {error}");
        }
    }

    #[test]
    fn lines_dropped_between_pages_are_counted_as_missed() {
        let mut t = Transcript::new(50, 8 << 20);
        add_lines(&mut t, 1..=40);
        let q = query("line", Order::OldestFirst, 10, 0);
        let first = run(&t, &q, None);
        assert_eq!(first.hits.last().map(|h| h.line), Some(10));
        // 40 more lines: the oldest 30 go, lines 11 to 30 among them.
        add_lines(&mut t, 41..=80);
        let second = next_page(&t, &q, &first);
        assert_eq!(second.missed_lines, 20);
        assert_eq!(second.hits[0].line, 31);
        // Newest first, the page goes on below where it ended, however much came since, and
        // counts what was dropped below it.
        let q = query("line", Order::NewestFirst, 10, 0);
        let first = run(&t, &q, None);
        assert_eq!(first.hits[0].line, 80);
        add_lines(&mut t, 81..=110);
        let second = next_page(&t, &q, &first);
        assert_eq!(second.hits[0].line, 70);
        assert_eq!(second.total_hits, 10, "lines 61 to 70 are left");
        assert_eq!(second.missed_lines, 30);
        assert!(second.next_cursor.is_none());
    }

    #[test]
    fn the_screen_comes_first_newest_first_and_last_oldest_first() {
        let t = transcript(["ERR one", "ok", "ERR two"], 100);
        let screen = Some(vec![
            "top".to_string(),
            "ERR a".into(),
            "".into(),
            "ERR b".into(),
        ]);
        let q = query("ERR", Order::NewestFirst, 1, 1);
        let pages = all_pages(&t, &q, screen.clone());
        use Source::{History, Screen};
        assert_eq!(
            pages,
            [(Screen, 4), (Screen, 2), (History, 3), (History, 1)]
        );
        let q = query("ERR", Order::OldestFirst, 3, 1);
        assert_eq!(
            all_pages(&t, &q, screen.clone()),
            [(History, 1), (History, 3), (Screen, 2), (Screen, 4)]
        );
        let found = run(&t, &query("ERR", Order::NewestFirst, 1, 1), screen);
        assert!(found.screen_searched);
        let hit = &found.hits[0];
        let around: Vec<(u64, &str)> = hit
            .before
            .iter()
            .map(|c| (c.line, c.text.as_str()))
            .collect();
        assert_eq!(around, [(3, "")]);
        assert!(hit.after.is_empty());
        assert_eq!(found.lines_searched, 7);
    }

    #[test]
    fn a_long_history_is_searched_a_slice_per_lock() {
        let t = transcript((1..=5000).map(|i| format!("line {i}")), 10_000);
        let q = query("^line (1|2500|5000)$", Order::OldestFirst, 10, 0);
        let mut locks = 0;
        let found = search(&q, &owner("s1", "a1"), None, |read| {
            locks += 1;
            read(&t)
        });
        let lines: Vec<u64> = found.hits.iter().map(|h| h.line).collect();
        assert_eq!(lines, [1, 2500, 5000]);
        assert_eq!(found.lines_searched, 5000);
        assert_eq!(locks, 1 + 5000_usize.div_ceil(SLICE_LINES));
    }

    #[test]
    fn counting_stops_at_the_cap_and_pages_stay_within_their_size() {
        let t = transcript(
            (1..=1500).map(|i| format!("{i} {}", "w".repeat(600))),
            10_000,
        );
        let found = run(
            &t,
            &query("w", Order::NewestFirst, MAX_LIMIT, MAX_CONTEXT),
            None,
        );
        assert_eq!((found.total_hits, found.truncated), (MAX_COUNTED, true));
        assert!(found.hits.len() < MAX_LIMIT, "{}", found.hits.len());
        let size = serde_json::to_string(&found)
            .map(|s| s.len())
            .unwrap_or(usize::MAX);
        assert!(size <= MAX_PAGE_BYTES + (64 << 10), "{size}");
        assert!(found.next_cursor.is_some());
        assert!(
            found
                .hits
                .iter()
                .all(|h| h.text.chars().count() <= MAX_LINE_CHARS + 2)
        );
    }

    #[test]
    fn lines_are_matched_as_displayed() {
        let t = transcript(["10%\r55%\r100% done", "ab\u{8}\u{8}XY"], 10);
        let found = run(
            &t,
            &query("^(100% done|XY)$", Order::OldestFirst, 10, 0),
            None,
        );
        let texts: Vec<&str> = found.hits.iter().map(|h| h.text.as_str()).collect();
        assert_eq!(texts, ["100% done", "XY"]);
        assert!(
            run(&t, &query("55%", Order::OldestFirst, 10, 0), None)
                .hits
                .is_empty()
        );
    }
}
