//! Regular expressions written in manifests, compiled with bounds so that a hostile or
//! careless pattern cannot eat memory or time. The `regex` crate guarantees linear-time
//! matching; the limits here cap what compiling may cost.

use regex::{Regex, RegexBuilder};
use thiserror::Error;

/// Longest pattern accepted, in bytes.
pub const MAX_PATTERN_LEN: usize = 1000;
/// Most memory a compiled pattern may take.
const SIZE_LIMIT: usize = 1 << 20;
/// Most memory the lazy DFA may use while matching one pattern.
const DFA_SIZE_LIMIT: usize = 2 << 20;
/// Deepest nesting of groups and repetitions.
const NEST_LIMIT: u32 = 64;

/// Why a pattern was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PatternError {
    #[error("pattern is {0} bytes; patterns may be at most {MAX_PATTERN_LEN} bytes")]
    TooLong(usize),
    #[error("pattern compiles to more than 1 MiB (simplify the repetition counts)")]
    TooLarge,
    #[error("invalid regex: {0}")]
    Invalid(String),
}

impl PatternError {
    /// The validation rule this error breaks.
    pub fn rule(&self) -> &'static str {
        match self {
            PatternError::TooLong(_) | PatternError::TooLarge => "regex_too_large",
            PatternError::Invalid(_) => "invalid_regex",
        }
    }
}

/// Compiles a manifest pattern (multi-line mode, so `^` and `$` match at line ends, which is
/// what a pattern over terminal output means; a lone `\r` ends a line too).
pub fn compile(pattern: &str) -> Result<Regex, PatternError> {
    compile_with_flags(pattern, "m")
}

/// Compiles a pattern with flags in the JavaScript style that workrail rules use:
/// `i` (ignore case), `m` (multi-line), `s` (dot matches newline), `x` (verbose), `u` and `g`
/// (accepted and meaningless here).
pub fn compile_with_flags(pattern: &str, flags: &str) -> Result<Regex, PatternError> {
    if pattern.len() > MAX_PATTERN_LEN {
        return Err(PatternError::TooLong(pattern.len()));
    }
    let mut builder = RegexBuilder::new(pattern);
    builder
        .size_limit(SIZE_LIMIT)
        .dfa_size_limit(DFA_SIZE_LIMIT)
        .nest_limit(NEST_LIMIT);
    for flag in flags.chars() {
        match flag {
            'i' => builder.case_insensitive(true),
            // Terminal lines may end in `\r` too (a progress line rewritten in place).
            'm' => builder.multi_line(true).crlf(true),
            's' => builder.dot_matches_new_line(true),
            'x' => builder.ignore_whitespace(true),
            'u' | 'g' => &mut builder,
            other => {
                return Err(PatternError::Invalid(format!(
                    "unknown flag '{other}' (use i, m, s, x)"
                )));
            }
        };
    }
    builder.build().map_err(|e| match e {
        regex::Error::CompiledTooBig(_) => PatternError::TooLarge,
        other => PatternError::Invalid(first_line(&other.to_string())),
    })
}

/// The regex crate's messages draw the pattern over several lines; the last line says why.
fn first_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .rfind(|l| l.starts_with("error:"))
        .map(|l| l.trim_start_matches("error:").trim().to_string())
        .unwrap_or_else(|| message.lines().next().unwrap_or_default().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiles_and_refuses() {
        assert!(compile("BUILD (OK|FAILED)").is_ok());
        assert!(matches!(
            compile("(unclosed"),
            Err(PatternError::Invalid(_))
        ));
        assert!(matches!(
            compile(&"a".repeat(1001)),
            Err(PatternError::TooLong(1001))
        ));
        assert!(matches!(
            compile("(a{1000}){1000}"),
            Err(PatternError::TooLarge)
        ));
        assert!(matches!(
            compile_with_flags("a", "q"),
            Err(PatternError::Invalid(_))
        ));
    }

    #[test]
    fn flags() {
        assert!(compile_with_flags("hello", "i").is_ok_and(|r| r.is_match("HeLLo")));
        assert!(compile("^two$").is_ok_and(|r| r.is_match("one\ntwo\nthree")));
        assert!(compile_with_flags("a.b", "s").is_ok_and(|r| r.is_match("a\nb")));
    }

    #[test]
    fn messages_are_one_line() {
        let Err(PatternError::Invalid(m)) = compile("(x") else {
            panic!("expected an error")
        };
        assert!(!m.contains('\n'), "{m}");
        assert!(m.contains("unclosed"), "{m}");
    }
}
