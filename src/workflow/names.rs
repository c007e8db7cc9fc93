//! Identifiers used in manifests (workflow, state and variable names) and how to show
//! untrusted text safely.
//!
//! Names are identifiers, never paths: a workflow name becomes a file name, a state name a
//! label in the TUI, a variable name an `export` in a shell. Each is checked against a
//! pattern so strict that `../`, `/`, NUL, a leading `-`, control and bidi characters cannot
//! pass.

/// Pattern for workflow and state names (the seed's format).
pub const NAME_PATTERN: &str = "^[a-z0-9_]+$";
/// Pattern for environment variable names in contracts, `set_env` and captures.
pub const ENV_PATTERN: &str = "^[A-Z][A-Z0-9_]*$";
/// Longest workflow or state name.
pub const MAX_NAME_LEN: usize = 64;
/// Longest environment variable name.
pub const MAX_ENV_NAME_LEN: usize = 64;

/// True when `name` is a valid workflow or state name.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// True when `name` is a valid environment variable name for a contract.
pub fn is_valid_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'A'..=b'Z'))
        && name.len() <= MAX_ENV_NAME_LEN
        && bytes.all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Why a workflow name was refused, in words a user can act on.
pub fn name_problem(name: &str) -> Option<String> {
    if is_valid_name(name) {
        return None;
    }
    let shown = display_safe(name);
    let why = if name.is_empty() {
        "is empty".to_string()
    } else if name.len() > MAX_NAME_LEN {
        format!("is longer than {MAX_NAME_LEN} characters")
    } else if name.contains('/') || name.contains('\\') || name.contains("..") {
        "looks like a path; workflow names are identifiers, never paths".to_string()
    } else if name.contains('\0') {
        "contains a NUL character".to_string()
    } else if name.starts_with('-') {
        "starts with '-', which a command line would take for an option".to_string()
    } else if name.chars().any(is_dangerous_char) {
        "contains control or bidirectional-override characters".to_string()
    } else {
        "may only contain lowercase letters, digits and '_'".to_string()
    };
    Some(format!(
        "workflow name {shown} {why} (expected {NAME_PATTERN})"
    ))
}

/// Characters that must never reach a terminal from untrusted text: C0/C1 controls and the
/// Unicode bidirectional controls that can make text read differently from what it is.
pub fn is_dangerous_char(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}')
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// Quotes `text` for messages, escaping anything that could act on a terminal, and cuts it
/// to a readable length.
pub fn display_safe(text: &str) -> String {
    const MAX_SHOWN: usize = 80;
    let mut out = String::with_capacity(text.len().min(MAX_SHOWN) + 2);
    out.push('\'');
    for (count, c) in text.chars().enumerate() {
        if count == MAX_SHOWN {
            out.push('…');
            break;
        }
        if is_dangerous_char(c) || c == '\'' || c == '\\' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// `text` with every character that could act on a terminal escaped, for printing text that
/// came from a manifest, a file name or a terminal.
pub fn sanitize(text: &str) -> String {
    if !text.chars().any(is_dangerous_char) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if is_dangerous_char(c) {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Escapes one segment of a JSON pointer (RFC 6901).
pub fn pointer_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    push_segment(&mut out, segment);
    out
}

/// Appends a segment to a JSON pointer. Called for every node of every manifest loaded, so it
/// allocates once and copies a segment with nothing to escape as it is.
pub fn pointer_join(base: &str, segment: &str) -> String {
    let mut out = String::with_capacity(base.len() + 1 + segment.len());
    out.push_str(base);
    out.push('/');
    push_segment(&mut out, segment);
    out
}

fn push_segment(out: &mut String, segment: &str) {
    if !segment.contains(['~', '/']) {
        out.push_str(segment);
        return;
    }
    for c in segment.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_names() {
        for ok in ["build_project", "a", "x1_2", &"a".repeat(64)] {
            assert!(is_valid_name(ok), "{ok}");
        }
        for bad in [
            "",
            "../etc",
            "a/b",
            "a\0b",
            "-rf",
            "Build",
            "a-b",
            "a b",
            "a\u{202e}b",
            "é",
            &"a".repeat(65),
        ] {
            assert!(!is_valid_name(bad), "{bad:?}");
            assert!(name_problem(bad).is_some());
        }
    }

    #[test]
    fn env_names() {
        for ok in ["A", "PROJECT_ROOT", "X1"] {
            assert!(is_valid_env_name(ok), "{ok}");
        }
        for bad in ["", "1A", "_A", "a", "A-B", "A B", "PATH=x"] {
            assert!(!is_valid_env_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn problems_say_why() {
        let p = name_problem("../etc").unwrap_or_default();
        assert!(p.contains("never paths"), "{p}");
        let p = name_problem("-rf").unwrap_or_default();
        assert!(p.contains("option"), "{p}");
        let p = name_problem("a\u{202e}b").unwrap_or_default();
        assert!(p.contains("bidirectional"), "{p}");
        assert!(p.contains("\\u{202e}"), "{p}");
    }

    #[test]
    fn safe_display_escapes_terminal_controls() {
        assert_eq!(display_safe("a\x1b[31mb"), "'a\\u{1b}[31mb'");
        assert_eq!(display_safe("it's"), "'it\\'s'");
        assert!(display_safe(&"x".repeat(500)).ends_with("…'"));
    }

    #[test]
    fn sanitize_keeps_text_and_escapes_controls() {
        assert_eq!(sanitize("plain text é"), "plain text é");
        assert_eq!(
            sanitize("a\x1b]0;title\x07b\u{202e}"),
            "a\\u{1b}]0;title\\u{7}b\\u{202e}"
        );
    }

    #[test]
    fn pointers_escape() {
        assert_eq!(pointer_join("/states", "a/b~c"), "/states/a~1b~0c");
    }
}
