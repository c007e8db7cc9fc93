//! Text from manifests, file names, journals and errors made safe to draw: no escape
//! sequence or bidi control from a workflow may reach the person's terminal.

use crate::workflow::names::sanitize;
use unicode_width::UnicodeWidthChar;

pub fn clean(text: &str) -> String {
    sanitize(text)
}

/// The cells `text` covers on screen: a wide character (CJK, most emoji) two, a combining
/// mark none.
pub fn cells(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `text` in at most `room` cells, cut with `…` where it does not fit (spaces before the cut
/// dropped). The cut falls between
/// characters, so a multi-byte or wide character is never halved (the ratatui buffer would
/// draw half a wide character as garbage) and a combining mark stays with its base.
pub fn shorten(text: &str, room: usize) -> String {
    if cells(text) <= room {
        return text.to_string();
    }
    if room == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > room - 1 {
            break;
        }
        used += w;
        out.push(c);
    }
    // `or …` would read as if something were missing after a space, not cut within the text.
    out.truncate(out.trim_end().len());
    out.push('…');
    out
}

/// `text` in at most `room` cells, cut between words with `…` where it does not fit: a
/// message is never cut mid-word (unless one word alone fills most of the room).
pub fn shorten_words(text: &str, room: usize) -> String {
    if cells(text) <= room {
        return text.to_string();
    }
    let first = wrap(text, room.saturating_sub(1)).swap_remove(0);
    if room > 0 && cells(&first) * 2 >= room {
        format!("{}…", first.trim_end_matches([',', ';', ':', ' ']))
    } else {
        shorten(text, room)
    }
}

/// `text` broken into rows of at most `room` cells, between words where it can be (a word
/// longer than a row is cut where the row ends). Never empty: an empty text is one empty row.
pub fn wrap(text: &str, room: usize) -> Vec<String> {
    let room = room.max(1);
    let mut rows = Vec::new();
    let mut row = String::new();
    for word in text.split_whitespace() {
        let gap = usize::from(!row.is_empty());
        if !row.is_empty() && cells(&row) + gap + cells(word) > room {
            rows.push(std::mem::take(&mut row));
        }
        if !row.is_empty() {
            row.push(' ');
        }
        for c in word.chars() {
            if cells(&row) + c.width().unwrap_or(0) > room && !row.is_empty() {
                rows.push(std::mem::take(&mut row));
            }
            row.push(c);
        }
    }
    if !row.is_empty() || rows.is_empty() {
        rows.push(row);
    }
    rows
}

/// A violation's message with what was expected, said once: the schema's messages already
/// say `expected number, found …`, and saying it again reads as a second problem.
pub fn violation_message(message: &str, expected: Option<&str>) -> String {
    let message = clean(message);
    match expected.map(clean) {
        Some(e) if !message.contains(&format!("expected {e}")) => {
            format!("{message} (expected {e})")
        }
        _ => message,
    }
}

/// `3 ms`, `1.2 s`, `2 min 5 s`.
pub fn duration(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{} ms", ms.round() as u64)
    } else if ms < 60_000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else {
        let s = (ms / 1000.0).round() as u64;
        format!("{} min {} s", s / 60, s % 60)
    }
}

/// How long ago `at` (RFC 3339) was, in the largest whole unit: `now`, `3m`, `2h`, `5d`.
pub fn ago(at: &str, now: chrono::DateTime<chrono::Utc>) -> Option<String> {
    let then = chrono::DateTime::parse_from_rfc3339(at).ok()?;
    let secs = (now - then.with_timezone(&chrono::Utc))
        .num_seconds()
        .max(0);
    Some(match secs {
        0..60 => "now".to_string(),
        60..3600 => format!("{}m", secs / 60),
        3600..86_400 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_cut_between_words() {
        let said = "agents cannot reach this studio, which hosts the folder itself";
        assert_eq!(shorten_words(said, 80), said);
        assert_eq!(
            shorten_words(said, 40),
            "agents cannot reach this studio, which…"
        );
        assert_eq!(shorten_words(said, 31), "agents cannot reach this…");
        // One long word: cut where the room ends.
        assert_eq!(shorten_words("/a/very/long/path/name", 10), "/a/very/l…");
        assert_eq!(shorten_words(said, 0), "");
    }

    #[test]
    fn ages_are_in_the_largest_whole_unit() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-23T12:00:00Z")
            .map(|t| t.with_timezone(&chrono::Utc))
            .unwrap_or_default();
        let at = |s: &str| ago(s, now);
        assert_eq!(at("2026-11-23T11:59:30Z").as_deref(), Some("now"));
        assert_eq!(at("2026-11-23T11:57:00Z").as_deref(), Some("3m"));
        assert_eq!(at("2026-11-23T09:10:00Z").as_deref(), Some("2h"));
        assert_eq!(at("2026-11-18T12:00:00Z").as_deref(), Some("5d"));
        // From a clock ahead of ours: not in the future.
        assert_eq!(at("2026-11-23T12:05:00Z").as_deref(), Some("now"));
        assert_eq!(at("yesterday"), None);
    }

    #[test]
    fn what_was_expected_is_said_once() {
        assert_eq!(
            violation_message("expected number, found string 'abc'", Some("number")),
            "expected number, found string 'abc'"
        );
        assert_eq!(
            violation_message("unknown key 'x'", Some("one of a, b")),
            "unknown key 'x' (expected one of a, b)"
        );
        assert_eq!(violation_message("missing", None), "missing");
    }

    #[test]
    fn wrapped_text_breaks_between_words_and_cuts_only_a_word_too_long() {
        assert_eq!(wrap("one two three", 7), ["one two", "three"]);
        assert_eq!(wrap("", 5), [""]);
        assert_eq!(wrap("abcdefgh ij", 3), ["abc", "def", "gh", "ij"]);
        for row in wrap("東京データ and more text", 4) {
            assert!(cells(&row) <= 4, "{row:?}");
        }
    }

    #[test]
    fn shortened_text_fits_its_cells_and_never_halves_a_character() {
        assert_eq!(shorten("success → done", 20), "success → done");
        assert_eq!(shorten("success → done", 14), "success → done");
        assert_eq!(shorten("success → done", 9), "success…");
        assert_eq!(shorten("abc", 1), "…");
        assert_eq!(shorten("abc", 0), "");
        // Two cells a character: an odd room leaves a cell empty rather than half of one.
        assert_eq!(shorten("東京データ", 6), "東京…");
        assert_eq!(cells(&shorten("東京データ", 6)), 5);
        assert_eq!(shorten("東京データ", 7), "東京デ…");
        // A combining mark goes with its base, or not at all.
        assert_eq!(shorten("e\u{301}e\u{301}e\u{301}", 2), "e\u{301}…");
        assert_eq!(shorten("ééé", 2), "é…");
        for room in 0..12 {
            let cut = shorten("a東b京cデータ", room);
            assert!(cells(&cut) <= room, "{cut:?} in {room} cells");
        }
    }
}
