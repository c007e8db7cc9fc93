//! The command palette: every command the palette offers ([`PALETTE`]), found by typing part
//! of what it does or of its key, ranked by nucleo's fuzzy matcher (helix's). Choosing one
//! runs the same command its key runs.

use super::command::{Command, PALETTE};
use super::keymap;
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};

/// One line of the palette.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub command: Command,
    /// What the command does.
    pub text: &'static str,
    /// Its keys outside overlays, `Ctrl-p, :`; empty when it has none.
    pub keys: String,
}

impl AsRef<str> for Entry {
    fn as_ref(&self) -> &str {
        self.text
    }
}

/// The palette's entries that match `query`, best first; all of them, in [`PALETTE`]'s order,
/// when nothing is typed. Ties keep that order.
pub fn matches(query: &str) -> Vec<Entry> {
    let entries = PALETTE.iter().map(|&command| Entry {
        command,
        text: command.describe(),
        keys: keymap::keys_of(command),
    });
    let pattern = Pattern::parse(query, CaseMatching::Ignore, Normalization::Smart);
    let mut matcher = Matcher::new(Config::DEFAULT);
    pattern
        .match_list(entries, &mut matcher)
        .into_iter()
        .map(|(entry, _)| entry)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_is_offered_when_nothing_is_typed() {
        let all = matches("");
        assert_eq!(all.len(), PALETTE.len());
        assert_eq!(all[0].command, Command::Run);
        assert_eq!(all[0].keys, "r");
    }

    #[test]
    fn a_fuzzy_query_finds_the_command_by_its_words() {
        assert_eq!(matches("grid")[0].command, Command::ToggleGrid);
        assert_eq!(matches("shel")[0].command, Command::NewShell);
        // Letters of the words, not a substring.
        assert_eq!(matches("cpy mde")[0].command, Command::CopyMode);
        assert!(matches("zzzzqqq").is_empty());
    }
}
