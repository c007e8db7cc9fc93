//! "Did you mean" hints for misspelt keys, tools, conditions and state names.

/// The candidate closest to `word`, if it is close enough to be a likely typo.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| {
            (
                c,
                strsim::damerau_levenshtein(&lower, &c.to_ascii_lowercase()),
            )
        })
        .filter(|(c, distance)| {
            let longest = c.chars().count().max(lower.chars().count());
            *c != word && *distance <= (longest / 3).max(1)
        })
        .min_by_key(|(_, distance)| *distance)
        .map(|(c, _)| c)
}

/// `" (did you mean 'x'?)"` or nothing.
pub fn hint<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates)
        .map(|c| format!(" (did you mean '{c}'?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_typos() {
        let keys = [
            "transitions",
            "action",
            "timeout_seconds",
            "description",
            "when",
        ];
        assert_eq!(closest("transitons", keys), Some("transitions"));
        assert_eq!(closest("actoin", keys), Some("action"));
        assert_eq!(closest("Action", keys), Some("action"));
        assert_eq!(closest("timeout", keys), None);
        assert_eq!(closest("zzz", keys), None);
        assert_eq!(
            hint("sucess", ["success", "failure"]),
            " (did you mean 'success'?)"
        );
    }
}
