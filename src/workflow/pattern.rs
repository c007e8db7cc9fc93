//! Regular expressions written in manifests, compiled with bounds so that a hostile or
//! careless pattern cannot eat memory or time. The `regex` crate guarantees linear-time
//! matching; the limits here cap what compiling may cost.

use regex::{Regex, RegexBuilder};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
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

/// What validation needs to know of a pattern that compiles: its capture groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Groups {
    /// How many groups, group 0 (the whole match) included, as `Regex::captures_len`.
    pub len: usize,
    /// The names of the named groups.
    pub names: Vec<String>,
}

/// Checks a pattern as [`compile_with_flags`] would compile it, and returns its groups.
///
/// Results are remembered for the process: manifests repeat their patterns (a prompt,
/// `error`, `BUILD (OK|FAILED)`) across states and files, and compiling one costs 2 to 70 µs
/// (a Unicode class such as `\d` is most of it), where finding it again costs well under one.
/// What is kept is the outcome, not the compiled regex (60 KB for one with a `\d`).
pub fn check_with_flags(pattern: &str, flags: &str) -> Result<Arc<Groups>, PatternError> {
    /// Outcomes by flags, then by pattern: looked up by reference, with no key to build.
    type Checked = HashMap<String, HashMap<String, Result<Arc<Groups>, PatternError>>>;
    /// Enough for the distinct patterns of a large folder; when full it starts again, so
    /// it never holds more than this many (about 100 bytes each).
    const MAX_CHECKED: usize = 4096;
    static CHECKED: LazyLock<Mutex<Checked>> = LazyLock::new(Default::default);
    if let Some(known) = CHECKED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(flags)
        .and_then(|by_pattern| by_pattern.get(pattern))
    {
        return known.clone();
    }
    // Compiled outside the lock, so that two threads checking different patterns do not
    // wait for each other.
    let outcome = compile_with_flags(pattern, flags).map(|regex| {
        Arc::new(Groups {
            len: regex.captures_len(),
            names: regex
                .capture_names()
                .flatten()
                .map(str::to_string)
                .collect(),
        })
    });
    let mut checked = CHECKED.lock().unwrap_or_else(PoisonError::into_inner);
    if checked.values().map(HashMap::len).sum::<usize>() >= MAX_CHECKED {
        checked.clear();
    }
    checked
        .entry(flags.to_string())
        .or_default()
        .insert(pattern.to_string(), outcome.clone());
    outcome
}

/// [`check_with_flags`] for a manifest pattern, compiled as [`compile`] does.
pub fn check(pattern: &str) -> Result<Arc<Groups>, PatternError> {
    check_with_flags(pattern, "m")
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
    fn checks_agree_with_compiling_and_are_remembered() {
        for (pattern, flags) in [
            ("BUILD (OK|FAILED)", "m"),
            ("(?P<code>\\d+) (x)", "m"),
            ("(unclosed", "m"),
            ("(a{1000}){1000}", "m"),
            ("a", "q"),
        ] {
            let compiled = compile_with_flags(pattern, flags);
            let checked = check_with_flags(pattern, flags);
            assert_eq!(
                checked.as_ref().err(),
                compiled.as_ref().err(),
                "{pattern} /{flags}"
            );
            if let (Ok(groups), Ok(regex)) = (&checked, &compiled) {
                assert_eq!(groups.len, regex.captures_len());
                let names: Vec<&str> = regex.capture_names().flatten().collect();
                assert_eq!(groups.names, names);
            }
            assert_eq!(check_with_flags(pattern, flags), checked, "the same again");
        }
        // The flags are part of what is remembered.
        assert!(check_with_flags("a", "m").is_ok());
        assert!(check_with_flags("a", "q").is_err());
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
