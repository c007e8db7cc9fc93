//! From the bytes of a file to a JSON value plus a map from every JSON pointer to where it was
//! written. YAML and JSON both end up here, so schema and semantic checks are written once and
//! report line and column for either format.
//!
//! Both parsers keep positions: YAML goes through `saphyr-parser`'s event stream (with marks),
//! JSON through `jsonc-parser`'s AST (with ranges) in strict mode. Building the value ourselves
//! is what lets us report duplicate keys, cap alias expansion (alias bombs) and nesting depth,
//! and refuse anything a manifest cannot mean, before any of it is deserialized.

// A parse error is one per file and off the hot path; boxing it would only add noise.
#![allow(clippy::result_large_err)]

mod json;
mod spans;
mod yaml;

pub use spans::{LineIndex, NodeSpan, SpanMap};

use super::violation::{Position, Violation};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The two manifest formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Yaml,
    Json,
}

impl Format {
    /// The format a file name implies, or `None` when it is not a manifest file name.
    pub fn from_file_name(name: &str) -> Option<Format> {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".yaml") || lower.ends_with(".yml") {
            Some(Format::Yaml)
        } else if lower.ends_with(".json") {
            Some(Format::Json)
        } else {
            None
        }
    }

    /// The extension flowdeck gives new files of this format.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Yaml => "yaml",
            Format::Json => "json",
        }
    }

    /// Guesses the format of text without a file name: JSON when it starts like JSON.
    pub fn sniff(text: &str) -> Format {
        match text
            .trim_start_matches('\u{feff}')
            .trim_start()
            .chars()
            .next()
        {
            Some('{') => Format::Json,
            _ => Format::Yaml,
        }
    }
}

/// Bounds on what a manifest file may be, so that hostile files cost little to refuse.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest file accepted, in bytes.
    pub max_bytes: usize,
    /// Deepest nesting of mappings and sequences.
    pub max_depth: usize,
    /// Most nodes in the built value, counting every alias expansion.
    pub max_nodes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 1024 * 1024,
            max_depth: 64,
            max_nodes: 100_000,
        }
    }
}

/// A parsed manifest: its value, where each part of it was written, and problems that did not
/// stop parsing (duplicate keys).
#[derive(Debug, Clone)]
pub struct Document {
    pub format: Format,
    pub value: Value,
    pub spans: SpanMap,
    pub problems: Vec<Violation>,
}

/// Which positions a parse records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Positions {
    /// Every node's.
    All,
    /// Only the workflow `name`'s: enough for a manifest without violations, which is most,
    /// and a fifth cheaper to build. Other problems found are still found, and the document
    /// is then parsed again with [`Positions::All`] to say where they are.
    NameOnly,
}

/// Parses manifest bytes. A file that cannot be read as a manifest at all returns the one
/// violation that says why, with its position.
pub fn parse(bytes: &[u8], format: Format, limits: &Limits) -> Result<Document, Violation> {
    parse_with(bytes, format, limits, Positions::All)
}

/// [`parse`], recording the positions asked for. Whether and how a file fails to parse does
/// not depend on them.
pub fn parse_with(
    bytes: &[u8],
    format: Format,
    limits: &Limits,
    positions: Positions,
) -> Result<Document, Violation> {
    let text = decode(bytes, limits)?;
    match format {
        Format::Yaml => yaml::parse(text, limits, positions),
        // JSON manifests are few; one kind of parse is enough there.
        Format::Json => json::parse(text, limits),
    }
}

/// Checks size and encoding, strips a UTF-8 byte order mark, and refuses empty files.
pub fn decode<'a>(bytes: &'a [u8], limits: &Limits) -> Result<&'a str, Violation> {
    if bytes.len() > limits.max_bytes {
        return Err(too_large(bytes.len() as u64, limits));
    }
    if let Some(encoding) = wide_encoding(bytes) {
        return Err(Violation::error(
            "encoding",
            "",
            format!("file is {encoding}; manifests must be UTF-8 (re-save the file as UTF-8)"),
        )
        .expected("UTF-8")
        .actual(encoding)
        .at(Some(Position { line: 1, column: 1 })));
    }
    const BOM: &[u8] = &[0xEF, 0xBB, 0xBF];
    // Offsets in messages count from the start of the file, byte order mark included.
    let bom = if bytes.starts_with(BOM) { BOM.len() } else { 0 };
    let bytes = &bytes[bom..];
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let valid = &bytes[..e.valid_up_to()];
            // The prefix is valid UTF-8 by construction, so this cannot fail.
            let prefix = std::str::from_utf8(valid).unwrap_or_default();
            let position = LineIndex::new(prefix).position(prefix.len());
            let byte = bytes[e.valid_up_to()];
            return Err(Violation::error(
                "encoding",
                "",
                format!(
                    "file is not valid UTF-8: byte 0x{byte:02X} at offset {} (re-save the file as UTF-8)",
                    bom + e.valid_up_to()
                ),
            )
            .expected("UTF-8")
            .actual(format!("byte 0x{byte:02X}"))
            .at(Some(position)));
        }
    };
    if let Some(offset) = text.find('\0') {
        let position = LineIndex::new(text).position(offset);
        return Err(Violation::error(
            "encoding",
            "",
            format!(
                "file contains a NUL byte at offset {}; manifests are text",
                bom + offset
            ),
        )
        .expected("text without NUL bytes")
        .actual("a NUL byte")
        .at(Some(position)));
    }
    if text.trim().is_empty() {
        return Err(Violation::error(
            "empty_file",
            "",
            "file is empty (if it is being saved, it will be read again when the save ends)",
        )
        .at(Some(Position { line: 1, column: 1 })));
    }
    Ok(text)
}

/// The violation for a file of `size` bytes over the limit. The size is the file's own, which
/// a caller that read only the first bytes past the limit knows better than the bytes do.
pub fn too_large(size: u64, limits: &Limits) -> Violation {
    Violation::error(
        "file_too_large",
        "",
        format!(
            "file is {size} bytes; manifests may be at most {} bytes",
            limits.max_bytes
        ),
    )
    .expected(format!("<= {} bytes", limits.max_bytes))
    .actual(format!("{size} bytes"))
    .at(Some(Position { line: 1, column: 1 }))
}

/// The UTF-16 or UTF-32 encoding the bytes are in, by their byte order mark, or without one by
/// the NUL bytes that ASCII text then has in fixed places of every code unit.
fn wide_encoding(bytes: &[u8]) -> Option<&'static str> {
    const MARKS: [(&[u8], &str); 4] = [
        // UTF-32LE's mark begins with UTF-16LE's, so it is tried first.
        (&[0xFF, 0xFE, 0, 0], "UTF-32LE"),
        (&[0, 0, 0xFE, 0xFF], "UTF-32BE"),
        (&[0xFF, 0xFE], "UTF-16LE"),
        (&[0xFE, 0xFF], "UTF-16BE"),
    ];
    if let Some((_, name)) = MARKS.iter().find(|(mark, _)| bytes.starts_with(mark)) {
        return Some(name);
    }
    let head = &bytes[..bytes.len().min(64) / 4 * 4];
    if head.len() < 4 {
        return None;
    }
    // Whether the bytes at `offset` within each 4-byte group are mostly NUL.
    let nul = |offset: usize| {
        let nuls = head
            .iter()
            .skip(offset)
            .step_by(4)
            .filter(|b| **b == 0)
            .count();
        nuls * 4 >= head.len() / 4 * 3
    };
    match [nul(0), nul(1), nul(2), nul(3)] {
        [false, true, true, true] => Some("UTF-32LE"),
        [true, true, true, false] => Some("UTF-32BE"),
        [false, true, false, true] => Some("UTF-16LE"),
        [true, false, true, false] => Some("UTF-16BE"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule_of(bytes: &[u8]) -> String {
        match decode(bytes, &Limits::default()) {
            Ok(_) => "ok".into(),
            Err(v) => v.rule,
        }
    }

    #[test]
    fn encodings() {
        assert_eq!(rule_of(b"name: x\n"), "ok");
        assert_eq!(rule_of(b"\xEF\xBB\xBFname: x\n"), "ok");
        let utf16: Vec<u8> = "name: x\n"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert_eq!(rule_of(&utf16), "encoding");
        let mut bom16 = vec![0xFF, 0xFE];
        bom16.extend(&utf16);
        assert_eq!(rule_of(&bom16), "encoding");
        let utf32: Vec<u8> = "name: x\n"
            .chars()
            .flat_map(|c| (c as u32).to_le_bytes())
            .collect();
        assert_eq!(rule_of(&utf32), "encoding");
        assert_eq!(rule_of(b"name: \xFF\xFE\n"), "encoding");
        assert_eq!(rule_of(b"name: a\0b\n"), "encoding");
        assert_eq!(rule_of(b""), "empty_file");
        assert_eq!(rule_of(b" \n\t\n"), "empty_file");
    }

    fn message_of(bytes: &[u8]) -> (String, Option<String>) {
        match decode(bytes, &Limits::default()) {
            Ok(_) => ("ok".into(), None),
            Err(v) => (v.message, v.actual),
        }
    }

    #[test]
    fn encodings_are_named_as_they_are() {
        let text = "name: x\ndescription: wide\n";
        let utf16le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let utf16be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        let utf32le: Vec<u8> = text
            .chars()
            .flat_map(|c| (c as u32).to_le_bytes())
            .collect();
        let utf32be: Vec<u8> = text
            .chars()
            .flat_map(|c| (c as u32).to_be_bytes())
            .collect();
        let with_mark = |mark: &[u8], body: &[u8]| [mark, body].concat();
        for (bytes, name) in [
            (utf16le.clone(), "UTF-16LE"),
            (utf16be.clone(), "UTF-16BE"),
            (utf32le.clone(), "UTF-32LE"),
            (utf32be.clone(), "UTF-32BE"),
            (with_mark(&[0xFF, 0xFE], &utf16le), "UTF-16LE"),
            (with_mark(&[0xFE, 0xFF], &utf16be), "UTF-16BE"),
            (with_mark(&[0xFF, 0xFE, 0, 0], &utf32le), "UTF-32LE"),
            (with_mark(&[0, 0, 0xFE, 0xFF], &utf32be), "UTF-32BE"),
        ] {
            let (message, actual) = message_of(&bytes);
            assert_eq!(actual.as_deref(), Some(name), "{message}");
            assert!(message.contains(name), "{message}");
        }
    }

    #[test]
    fn offsets_count_the_byte_order_mark() {
        let (message, actual) = message_of(b"\xEF\xBB\xBFab: \xFF\n");
        assert!(message.contains("byte 0xFF at offset 7"), "{message}");
        assert_eq!(actual.as_deref(), Some("byte 0xFF"));
        let (message, _) = message_of(b"\xEF\xBB\xBFab: c\0\n");
        assert!(message.contains("NUL byte at offset 8"), "{message}");
        let (message, _) = message_of(b"ab: c\0\n");
        assert!(message.contains("NUL byte at offset 5"), "{message}");
    }

    #[test]
    fn the_size_in_the_message_is_the_real_one() {
        let limits = Limits {
            max_bytes: 10,
            ..Limits::default()
        };
        let v = decode(&[b'a'; 25], &limits).err();
        assert_eq!(
            v.map(|v| (v.message, v.actual)),
            Some((
                "file is 25 bytes; manifests may be at most 10 bytes".to_string(),
                Some("25 bytes".to_string())
            ))
        );
        assert_eq!(
            too_large(5_000_000_000, &limits).actual.as_deref(),
            Some("5000000000 bytes")
        );
    }

    #[test]
    fn invalid_utf8_has_a_position() {
        let err = decode(b"a: 1\nb: \xC3\x28\n", &Limits::default()).err();
        let err = err.map(|v| (v.line, v.column));
        assert_eq!(err, Some((Some(2), Some(4))));
    }

    #[test]
    fn size_limit() {
        let limits = Limits {
            max_bytes: 10,
            ..Limits::default()
        };
        assert_eq!(
            decode(&[b'a'; 11], &limits).err().map(|v| v.rule),
            Some("file_too_large".into())
        );
    }

    #[test]
    fn formats() {
        assert_eq!(Format::from_file_name("a.YML"), Some(Format::Yaml));
        assert_eq!(Format::from_file_name("a.json"), Some(Format::Json));
        assert_eq!(Format::from_file_name("a.txt"), None);
        assert_eq!(Format::sniff("  {\"a\":1}"), Format::Json);
        assert_eq!(Format::sniff("a: 1"), Format::Yaml);
    }
}
