//! Light colouring of manifest text, line by line: keys, strings, numbers, booleans and
//! comments of YAML and JSON. A line is coloured on its own (a block scalar's lines read as
//! plain text), which is what keeps it cheap: only the lines on screen are looked at, so a
//! keystroke in a 5 MB buffer costs what one in a small one does.

/// What a run of characters is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Plain,
    Key,
    Str,
    Number,
    /// `true`, `false`, `null`, `~`.
    Word,
    Comment,
    /// `-`, `:`, `{`, `}`, `[`, `]`, `,`.
    Punct,
}

/// The line as runs of one kind: (start, end) byte ranges in order, covering all of it.
pub fn runs(line: &str) -> Vec<(usize, usize, Kind)> {
    let bytes = line.as_bytes();
    let mut out: Vec<(usize, usize, Kind)> = Vec::new();
    let mut push = |start: usize, end: usize, kind: Kind| {
        if start >= end {
            return;
        }
        match out.last_mut() {
            Some(last) if last.2 == kind && last.1 == start => last.1 = end,
            _ => out.push((start, end, kind)),
        }
    };
    let mut i = 0;
    // A key: what comes before the first `:` followed by a space or the end, outside quotes.
    let key_end = key_end(line);
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'#' if i == 0 || bytes[i - 1] == b' ' || bytes[i - 1] == b'\t' => {
                push(i, bytes.len(), Kind::Comment);
                break;
            }
            b'"' | b'\'' => {
                let end = closing_quote(bytes, i);
                let kind = if key_end.is_some_and(|k| end <= k) {
                    Kind::Key
                } else {
                    Kind::Str
                };
                push(i, end, kind);
                i = end;
                continue;
            }
            b'-' | b':' | b'{' | b'}' | b'[' | b']' | b',' => push(i, i + 1, Kind::Punct),
            b' ' | b'\t' => push(i, i + 1, Kind::Plain),
            _ => {
                let end = word_end(bytes, i, key_end);
                let word = &line[i..end];
                let kind = if key_end.is_some_and(|k| end <= k) {
                    Kind::Key
                } else if is_number(word) {
                    Kind::Number
                } else if matches!(word, "true" | "false" | "null" | "~") {
                    Kind::Word
                } else {
                    Kind::Plain
                };
                push(i, end, kind);
                i = end;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Where a word starting at `i` ends: at a blank, a flow character or the key's colon.
fn word_end(bytes: &[u8], i: usize, key_end: Option<usize>) -> usize {
    let mut j = i + 1;
    while j < bytes.len()
        && !matches!(bytes[j], b' ' | b'\t' | b',' | b']' | b'}' | b'[' | b'{')
        && key_end != Some(j)
    {
        j += 1;
    }
    // Only ASCII bytes end a word, so `j` is on a character boundary; a multi-byte first
    // character is taken whole.
    while j < bytes.len() && (bytes[j] & 0xC0) == 0x80 {
        j += 1;
    }
    j
}

/// The index of the `:` that ends the line's key, if it has one.
fn key_end(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' | b'\'' => i = closing_quote(bytes, i),
            b'#' if i == 0 || bytes[i - 1] == b' ' => return None,
            b':' if bytes.get(i + 1).is_none_or(|b| *b == b' ' || *b == b'\t') => {
                return Some(i);
            }
            b'{' | b'[' if bytes[..i].iter().all(|b| matches!(b, b' ' | b'-')) => return None,
            _ => i += 1,
        }
    }
    None
}

/// The index after the quote that closes the one at `start` (or the line's end).
fn closing_quote(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() {
        if bytes[i] == b'\\' && quote == b'"' {
            i += 2;
            continue;
        }
        if bytes[i] == quote {
            // YAML's '' is a quote inside a single-quoted string.
            if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    bytes.len()
}

fn is_number(word: &str) -> bool {
    !word.is_empty() && word.parse::<f64>().is_ok() && !word.ends_with('.')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(line: &str) -> Vec<(&str, Kind)> {
        runs(line)
            .into_iter()
            .filter(|r| r.2 != Kind::Plain || !line[r.0..r.1].trim().is_empty())
            .map(|(a, b, k)| (&line[a..b], k))
            .collect()
    }

    #[test]
    fn yaml_keys_values_and_comments() {
        assert_eq!(
            kinds("  timeout: 30 # seconds"),
            vec![
                ("timeout", Kind::Key),
                (":", Kind::Punct),
                ("30", Kind::Number),
                ("# seconds", Kind::Comment)
            ]
        );
        assert_eq!(
            kinds("    command: echo \"a # b\""),
            vec![
                ("command", Kind::Key),
                (":", Kind::Punct),
                (" echo ", Kind::Plain),
                ("\"a # b\"", Kind::Str)
            ]
        );
        assert_eq!(
            kinds("- { condition: success, next_state: done }")
                .iter()
                .filter(|k| k.1 == Kind::Key)
                .count(),
            0,
            "a flow mapping's keys are not the line's key"
        );
        assert_eq!(
            kinds("enabled: true"),
            vec![
                ("enabled", Kind::Key),
                (":", Kind::Punct),
                ("true", Kind::Word)
            ]
        );
        assert_eq!(
            kinds("url: http://x:80/"),
            vec![
                ("url", Kind::Key),
                (":", Kind::Punct),
                (" http://x:80/", Kind::Plain)
            ]
        );
    }

    #[test]
    fn json_keys_are_the_quoted_strings_before_a_colon() {
        assert_eq!(
            kinds("  \"name\": \"deploy\","),
            vec![
                ("\"name\"", Kind::Key),
                (":", Kind::Punct),
                ("\"deploy\"", Kind::Str),
                (",", Kind::Punct)
            ]
        );
    }

    #[test]
    fn every_byte_is_in_exactly_one_run() {
        for line in [
            "",
            "a",
            "#",
            "'unclosed",
            "k: 'it''s'",
            "日本: 語 # c",
            "- [1, 2.5, -3]",
        ] {
            let r = runs(line);
            let mut at = 0;
            for (a, b, _) in &r {
                assert_eq!(*a, at, "{line:?}: {r:?}");
                assert!(b > a);
                assert!(line.is_char_boundary(*a) && line.is_char_boundary(*b));
                at = *b;
            }
            assert_eq!(at, line.len(), "{line:?}: {r:?}");
        }
    }
}
