//! Rewriting a manifest's `name` in place, so that a rename keeps the rest of the file as the
//! author wrote it, comments and layout included.

use super::error::StoreError;
use crate::workflow::Format;
use crate::workflow::source::{Limits, parse};

/// The manifest text with its `name` value replaced by `to`.
pub fn rewrite_name(bytes: &[u8], format: Format, to: &str) -> Result<String, StoreError> {
    let document = parse(bytes, format, &Limits::default()).map_err(|v| StoreError::Unnamed {
        violations: vec![v],
    })?;
    let text = std::str::from_utf8(bytes).map_err(|_| StoreError::Unnamed {
        violations: Vec::new(),
    })?;
    // A UTF-8 byte order mark is stripped before parsing, so offsets start after it.
    let bom = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let Some((start, end)) = document.spans.get("/name").and_then(|s| s.value_bytes) else {
        return Err(StoreError::Unnamed {
            violations: document.problems,
        });
    };
    let (start, end) = (start + bom, end + bom);
    let old = text.get(start..end).unwrap_or_default();
    let replacement = match format {
        Format::Json => format!("\"{to}\""),
        Format::Yaml
            if old.starts_with('"') || old.starts_with('\'') || plain_is_not_a_string(to) =>
        {
            format!("\"{to}\"")
        }
        Format::Yaml => to.to_string(),
    };
    let mut out = String::with_capacity(text.len() + replacement.len());
    out.push_str(&text[..start]);
    out.push_str(&replacement);
    out.push_str(&text[end..]);
    Ok(out)
}

/// Names are `[a-z0-9_]+`; written plain in YAML, some would read as numbers or keywords.
fn plain_is_not_a_string(name: &str) -> bool {
    name.bytes().all(|b| b.is_ascii_digit() || b == b'_')
        || matches!(name, "true" | "false" | "null")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_plain_quoted_and_json() {
        let yaml = "# top comment\nname: old_one   # trailing\ndescription: d\n";
        let out = rewrite_name(yaml.as_bytes(), Format::Yaml, "new_one").unwrap();
        assert_eq!(
            out,
            "# top comment\nname: new_one   # trailing\ndescription: d\n"
        );
        let quoted = "name: \"old\"\n";
        assert_eq!(
            rewrite_name(quoted.as_bytes(), Format::Yaml, "x").unwrap(),
            "name: \"x\"\n"
        );
        let single = "name: 'old'\n";
        assert_eq!(
            rewrite_name(single.as_bytes(), Format::Yaml, "x").unwrap(),
            "name: \"x\"\n"
        );
        let json = "{\n  \"name\": \"old\",\n  \"x\": 1\n}\n";
        assert_eq!(
            rewrite_name(json.as_bytes(), Format::Json, "new").unwrap(),
            "{\n  \"name\": \"new\",\n  \"x\": 1\n}\n"
        );
        assert_eq!(
            rewrite_name(b"name: a\n", Format::Yaml, "123").unwrap(),
            "name: \"123\"\n"
        );
        let bom = "\u{feff}name: a\n";
        assert_eq!(
            rewrite_name(bom.as_bytes(), Format::Yaml, "b").unwrap(),
            "\u{feff}name: b\n"
        );
    }
}
