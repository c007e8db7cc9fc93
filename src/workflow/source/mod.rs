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

/// Parses manifest bytes. A file that cannot be read as a manifest at all returns the one
/// violation that says why, with its position.
pub fn parse(bytes: &[u8], format: Format, limits: &Limits) -> Result<Document, Violation> {
    let text = decode(bytes, limits)?;
    match format {
        Format::Yaml => yaml::parse(text, limits),
        Format::Json => json::parse(text, limits),
    }
}

/// Checks size and encoding, strips a UTF-8 byte order mark, and refuses empty files.
pub fn decode<'a>(bytes: &'a [u8], limits: &Limits) -> Result<&'a str, Violation> {
    if bytes.len() > limits.max_bytes {
        return Err(Violation::error(
            "file_too_large",
            "",
            format!(
                "file is {} bytes; manifests may be at most {} bytes",
                bytes.len(),
                limits.max_bytes
            ),
        )
        .expected(format!("<= {} bytes", limits.max_bytes))
        .actual(format!("{} bytes", bytes.len()))
        .at(Some(Position { line: 1, column: 1 })));
    }
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) || looks_utf16(bytes) {
        return Err(Violation::error(
            "encoding",
            "",
            "file is UTF-16; manifests must be UTF-8 (re-save the file as UTF-8)",
        )
        .expected("UTF-8")
        .actual("UTF-16")
        .at(Some(Position { line: 1, column: 1 })));
    }
    let bytes = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(bytes);
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let valid = &bytes[..e.valid_up_to()];
            // The prefix is valid UTF-8 by construction, so this cannot fail.
            let prefix = std::str::from_utf8(valid).unwrap_or_default();
            let position = LineIndex::new(prefix).position(prefix.len());
            return Err(Violation::error(
                "encoding",
                "",
                format!(
                    "file is not valid UTF-8: byte 0x{:02X} at offset {} (re-save the file as UTF-8)",
                    bytes[e.valid_up_to()],
                    e.valid_up_to()
                ),
            )
            .expected("UTF-8")
            .at(Some(position)));
        }
    };
    if text.contains('\0') {
        let offset = text.find('\0').unwrap_or(0);
        let position = LineIndex::new(text).position(offset);
        return Err(Violation::error(
            "encoding",
            "",
            "file contains a NUL byte; manifests are text",
        )
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

/// UTF-16 without a byte order mark: ASCII text then has a NUL in every other byte.
fn looks_utf16(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(64)];
    head.len() >= 4 && {
        let even_nuls = head.iter().step_by(2).filter(|b| **b == 0).count();
        let odd_nuls = head.iter().skip(1).step_by(2).filter(|b| **b == 0).count();
        let half = head.len() / 2;
        even_nuls * 4 >= half * 3 || odd_nuls * 4 >= half * 3
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
        assert_eq!(rule_of(b"name: \xFF\xFE\n"), "encoding");
        assert_eq!(rule_of(b"name: a\0b\n"), "encoding");
        assert_eq!(rule_of(b""), "empty_file");
        assert_eq!(rule_of(b" \n\t\n"), "empty_file");
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
