//! The values of a run's secrets, and their removal from everything flowdeck writes down or
//! returns for that run: journal lines, results, errors, the audit log.
//!
//! Masking by name (a `secret: true` argument's own field) is not enough: the value also shows
//! up in text, in the echo of the `export` line that put it into the shell, in a step's screen
//! summary, in a command's output. So every text of a run is scanned for the value itself and
//! for the forms in which flowdeck typed it (single-quoted, octal-escaped).

use super::contract::MASK;
use crate::term::mask::Needles;
use crate::term::shell::{octal_escape, single_quote};
use serde_json::Value;
use std::borrow::Cow;

/// The secret values of one run, with the forms they take on a terminal.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    /// Longest first.
    needles: Vec<String>,
    /// The same, ready to be found on what a terminal shows (term/mask.rs).
    found: Needles,
}

impl Secrets {
    pub fn new<'a>(values: impl IntoIterator<Item = &'a str>) -> Secrets {
        let mut needles = Vec::new();
        for value in values.into_iter().filter(|v| !v.is_empty()) {
            needles.push(value.to_string());
            // `export NAME='it'\''s'`: the value as the typed line shows it.
            let quoted = single_quote(value);
            let inner = &quoted[1..quoted.len() - 1];
            if inner != value {
                needles.push(inner.to_string());
            }
            // Values with control characters are typed as printf octal escapes.
            let escaped = octal_escape(value);
            if escaped != value {
                needles.push(escaped);
            }
        }
        Secrets::of(needles)
    }

    fn of(mut needles: Vec<String>) -> Secrets {
        needles.sort_by_key(|n| std::cmp::Reverse(n.len()));
        needles.dedup();
        let found = Needles::new(&needles);
        Secrets { needles, found }
    }

    /// The values and their typed forms, longest first.
    pub fn needles(&self) -> &[String] {
        &self.needles
    }

    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// Adds the values of another set (secret return values read at the end of a run).
    pub fn extend(&mut self, other: &Secrets) {
        let mut needles = std::mem::take(&mut self.needles);
        needles.extend(other.needles.iter().cloned());
        *self = Secrets::of(needles);
    }

    /// The text with every secret replaced by the mask, wherever the text shows it: across
    /// the rows of a screen that wrapped it, and between escape sequences.
    pub fn redact(&self, text: &str) -> String {
        self.found.mask(text, MASK).into_owned()
    }

    /// The text masked, if it shows a secret.
    fn masked(&self, text: &str) -> Option<String> {
        match self.found.mask(text, MASK) {
            Cow::Owned(masked) => Some(masked),
            Cow::Borrowed(_) => None,
        }
    }

    /// Redacts every string (keys included) of a JSON value in place.
    pub fn redact_value(&self, value: &mut Value) {
        if self.is_empty() {
            return;
        }
        match value {
            Value::String(text) => {
                if let Some(masked) = self.masked(text) {
                    *text = masked;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| self.redact_value(i)),
            Value::Object(map) => {
                let hit = map.keys().any(|k| self.masked(k).is_some());
                if hit {
                    *map = std::mem::take(map)
                        .into_iter()
                        .map(|(k, v)| (self.redact(&k), v))
                        .collect();
                }
                map.values_mut().for_each(|v| self.redact_value(v));
            }
            _ => {}
        }
    }

    /// Redacts an optional text.
    pub fn redact_opt(&self, text: Option<String>) -> Option<String> {
        text.map(|t| self.redact(&t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_and_their_typed_forms_are_masked_everywhere() {
        let s = Secrets::new(["hunter2", "it's", "tab\there", ""]);
        assert_eq!(s.redact("pw=hunter2!"), "pw=********!");
        // The echo of `export A='it'\''s'`.
        assert_eq!(s.redact("export A='it'\\''s'"), "export A='********'");
        assert_eq!(s.redact("printf 'tab\\011here'"), "printf '********'");
        let mut v = json!({"out": ["x hunter2 y"], "hunter2": 1, "n": 5});
        s.redact_value(&mut v);
        assert_eq!(v, json!({"out": ["x ******** y"], "********": 1, "n": 5}));
        assert!(Secrets::new([""]).is_empty());
    }

    /// However a program draws a secret (wrapped at a random screen width after a random
    /// prompt, a colour code or cursor move between letters, written in random pieces), the
    /// screen's text as a step sees it, and the stream as a recording keeps it, never show
    /// it once masked.
    #[test]
    fn a_secret_drawn_any_way_is_masked_on_the_screen_and_in_the_stream() {
        use crate::term::mask::Masker;
        use crate::term::screen::{Screen, Size};
        let secret = "Hunter2Short-Pw9";
        let secrets = Secrets::new([secret]);
        let printed = |text: &str| -> String {
            let mut scanner = crate::term::escapes::Scanner::default();
            text.chars()
                .filter(|&c| scanner.next(c) == crate::term::escapes::Class::Printed)
                .collect()
        };
        let mut rng = fastrand::Rng::with_seed(0x5c4ee9);
        const BETWEEN: &[&str] = &["", "", "\x1b[0m", "\x1b[31m", "\x1b[1D\x1b[1C", " \x08"];
        for case in 0..500 {
            let cols = rng.u16(20..=120);
            let mut output = format!("$ {}", "p".repeat(rng.usize(..2 * usize::from(cols))));
            for c in secret.chars() {
                output.push(c);
                output.push_str(BETWEEN[rng.usize(..BETWEEN.len())]);
            }
            output.push_str("\r\n$ ");
            let mut screen = Screen::new(Size { cols, rows: 40 });
            let mut masker = Masker::new(secrets.found.clone(), MASK);
            let mut stream = String::new();
            let mut at = 0;
            while at < output.len() {
                let mut to = (at + 1 + rng.usize(..16)).min(output.len());
                while !output.is_char_boundary(to) {
                    to += 1;
                }
                screen.feed(&output.as_bytes()[at..to]);
                stream.push_str(&masker.push(&output[at..to]));
                at = to;
            }
            stream.push_str(&masker.finish());
            let text = secrets.redact(&screen.text());
            assert!(
                !text.replace('\n', "").contains(secret),
                "case {case}, {cols} columns: {output:?} -> {text:?}"
            );
            assert!(
                !printed(&stream).contains(secret),
                "case {case}: {output:?} -> {stream:?}"
            );
        }
    }

    #[test]
    fn a_secret_inside_another_is_masked_whole() {
        let s = Secrets::new(["abc", "xxabcxx"]);
        assert_eq!(s.redact("1 xxabcxx 2 abc"), "1 ******** 2 ********");
    }
}
