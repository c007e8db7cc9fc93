//! Writing text into a shell word and reading it back: single quotes, `printf` octal
//! escapes and line continuations on the way in, hex on the way out. Kept apart from the
//! framing because secrets.rs quotes with it too, and because none of it touches a session.

use super::MAX_TYPED_LINE;

/// `'text'`, with single quotes inside written as `'\''`.
pub fn single_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// A single-quoted word that may be typed over several lines: pieces of at most
/// `MAX_TYPED_LINE` bytes, each quoted, joined by backslash-newline (a line continuation,
/// which the shell removes). Text with control characters (a Tab would trigger completion, a
/// Ctrl-C would cancel the line) is passed through `printf` octal escapes instead.
pub fn quote_long(text: &str) -> String {
    if text.chars().any(|c| c.is_control() && c != '\n') {
        let escaped = octal_escape(text);
        return format!("\"$(printf {})\"", join_pieces(&escaped));
    }
    join_pieces(text)
}

fn join_pieces(text: &str) -> String {
    let mut pieces = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut cut = rest.len().min(MAX_TYPED_LINE);
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        pieces.push(single_quote(&rest[..cut]));
        rest = &rest[cut..];
    }
    if pieces.is_empty() {
        return "''".to_string();
    }
    pieces.join("\\\n")
}

/// Every byte that is not plain printable ASCII as a `printf` octal escape (`\NNN`).
pub fn octal_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for &b in text.as_bytes() {
        if (0x20..0x7f).contains(&b) && !matches!(b, b'\\' | b'\'' | b'%') {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\{b:03o}"));
        }
    }
    out
}

pub(super) fn decode_hex(hex: &str) -> Option<String> {
    let bytes = hex::decode(hex.trim()).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_keeps_everything_literal() {
        assert_eq!(single_quote("it's"), "'it'\\''s'");
        assert_eq!(
            octal_escape("a%\\'\n\u{e9}"),
            "a\\045\\134\\047\\012\\303\\251"
        );
        assert_eq!(quote_long("ls -l"), "'ls -l'");
        assert_eq!(quote_long("a\tb"), "\"$(printf 'a\\011b')\"");
        let long = "x".repeat(2500);
        let quoted = quote_long(&long);
        assert_eq!(quoted.matches("\\\n").count(), 2);
        assert!(quoted.lines().all(|l| l.len() <= MAX_TYPED_LINE + 3));
    }
}
