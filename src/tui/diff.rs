//! Line diffs for people: the editor's conflict (the file on disk against the buffer) and an
//! approval request (the last approved manifest against the one asking to run).

/// How a line of a diff differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sign {
    Removed,
    Added,
    Same,
}

/// `new` against `old`, line by line, unified: every line of both, in order.
pub fn unified(old: &str, new: &str) -> Vec<(Sign, String)> {
    similar::TextDiff::from_lines(old, new)
        .iter_all_changes()
        .map(|change| {
            let sign = match change.tag() {
                similar::ChangeTag::Delete => Sign::Removed,
                similar::ChangeTag::Insert => Sign::Added,
                similar::ChangeTag::Equal => Sign::Same,
            };
            (sign, change.value().trim_end_matches('\n').to_string())
        })
        .collect()
}

/// The index of the first changed line of [`unified`]'s lines, if any changed.
pub fn first_change(lines: &[(Sign, String)]) -> Option<usize> {
    lines.iter().position(|(sign, _)| *sign != Sign::Same)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_is_removed_then_added_between_equal_ones() {
        let lines = unified("a\nb\nc\n", "a\nB\nc\nd");
        assert_eq!(
            lines,
            vec![
                (Sign::Same, "a".to_string()),
                (Sign::Removed, "b".to_string()),
                (Sign::Added, "B".to_string()),
                (Sign::Same, "c".to_string()),
                (Sign::Added, "d".to_string()),
            ]
        );
        assert_eq!(first_change(&lines), Some(1));
        assert_eq!(first_change(&unified("same\n", "same\n")), None);
    }
}
