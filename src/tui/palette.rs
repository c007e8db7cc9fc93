//! The command palette: every command the palette offers ([`PALETTE`]) and every theme, found
//! by typing any of their words (the command's name, what it does, the words a person may
//! look for it by), ranked by nucleo's fuzzy matcher (helix's). Choosing a command runs the
//! same command its key runs; choosing a theme switches to it.

use super::command::{Command, PALETTE};
use super::keymap;
use super::overlay::Overlay;
use super::state::App;
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};

impl App {
    /// The palette's entries for what is typed in it.
    pub fn palette_matches(&self) -> Vec<Entry> {
        let query = match &self.overlay {
            Some(Overlay::Palette(p)) => p.query.as_str(),
            _ => "",
        };
        matches(query, &self.themes, &self.theme.name)
    }
}

/// What choosing an entry does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Command(Command),
    /// Switch the studio's colours to this theme.
    Theme(String),
}

/// One line of the palette.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub action: Action,
    /// What the entry does.
    pub text: String,
    /// Its keys outside overlays, `Ctrl-p, :`; empty when it has none.
    pub keys: String,
    /// What the query is matched against: the text, the command's name and its aliases.
    words: String,
}

impl AsRef<str> for Entry {
    fn as_ref(&self) -> &str {
        &self.words
    }
}

/// Words a person may type for a command that neither its name nor its description holds.
fn aliases(command: Command) -> &'static str {
    use Command as C;
    match command {
        C::Run => "start execute launch",
        C::RunOn => "ssh remote host fleet",
        C::Cancel => "stop abort kill interrupt",
        C::Answer => "prompt reply approve",
        C::NewShell => "terminal bash new",
        C::Focus => "type input interact",
        C::ClosePane => "kill stop terminal session",
        C::ToggleGrid => "layout tiles split tabs",
        C::Zoom => "fullscreen maximize",
        C::CopyMode => "select yank",
        C::ToggleMouse => "select clipboard terminal",
        C::Search => "grep find output",
        C::Filter => "find search list",
        C::Problems => "errors violations lint validate",
        C::Runs => "history journal past list",
        C::Replay => "recording record play watch",
        C::Edit => "editor manifest yaml open",
        C::ExternalEdit => "vim vi nano emacs editor",
        C::NewWorkflow => "create add template",
        C::DraftWorkflow => "record recording capture typed",
        C::Duplicate => "copy clone",
        C::Delete => "remove",
        C::Save => "write",
        C::Audit => "log agents tools",
        C::Help => "keys keybindings shortcuts",
        C::Detach => "background leave",
        C::Quit => "exit leave close",
        _ => "",
    }
}

/// `ToggleGrid` as `toggle grid`.
fn name_words(command: Command) -> String {
    let name = format!("{command:?}");
    let mut words = String::new();
    for c in name.chars().take_while(|c| *c != '(') {
        if c.is_uppercase() && !words.is_empty() {
            words.push(' ');
        }
        words.extend(c.to_lowercase());
    }
    words
}

fn command_entry(command: Command) -> Entry {
    let text = command.describe().to_string();
    Entry {
        words: format!("{text} {} {}", name_words(command), aliases(command)),
        text,
        action: Action::Command(command),
        keys: keymap::keys_of(command),
    }
}

fn theme_entry(name: &str, current: &str) -> Entry {
    let text = if name == current {
        format!("theme: {name} (the one shown)")
    } else {
        format!("theme: {name}")
    };
    Entry {
        words: format!("{text} colours colors scheme"),
        text,
        action: Action::Theme(name.to_string()),
        keys: String::new(),
    }
}

/// The palette's entries that match `query`, best first: every command in [`PALETTE`]'s
/// order, then a theme an entry (`themes`, `current` marked), when nothing is typed. Ties
/// keep that order.
pub fn matches(query: &str, themes: &[String], current: &str) -> Vec<Entry> {
    let entries = PALETTE
        .iter()
        .map(|&command| command_entry(command))
        .chain(themes.iter().map(|name| theme_entry(name, current)));
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

    fn themes() -> Vec<String> {
        ["dark", "high-contrast", "light"]
            .map(String::from)
            .to_vec()
    }

    fn first(query: &str) -> Action {
        matches(query, &themes(), "dark")
            .into_iter()
            .next()
            .map(|e| e.action)
            .unwrap_or(Action::Command(Command::Help))
    }

    #[test]
    fn every_command_and_theme_is_offered_when_nothing_is_typed() {
        let all = matches("", &themes(), "dark");
        assert_eq!(all.len(), PALETTE.len() + 3);
        assert_eq!(all[0].action, Action::Command(Command::Run));
        assert_eq!(all[0].keys, "r");
        assert!(all.iter().any(|e| e.text == "theme: dark (the one shown)"));
    }

    #[test]
    fn a_fuzzy_query_finds_the_command_by_its_words() {
        assert_eq!(first("grid"), Action::Command(Command::ToggleGrid));
        assert_eq!(first("shel"), Action::Command(Command::NewShell));
        // Letters of the words, not a substring.
        assert_eq!(first("cpy mde"), Action::Command(Command::CopyMode));
        assert!(matches("zzzzqqq", &themes(), "dark").is_empty());
    }

    #[test]
    fn the_words_a_person_looks_for_find_their_command() {
        for (query, command) in [
            ("replay", Command::Replay),
            ("detach", Command::Detach),
            ("stop", Command::Cancel),
            ("quit", Command::Quit),
            ("exit", Command::Quit),
            ("runs", Command::Runs),
            ("record", Command::Replay),
            ("draft", Command::DraftWorkflow),
            ("help", Command::Help),
            ("problems", Command::Problems),
            ("audit", Command::Audit),
        ] {
            assert_eq!(first(query), Action::Command(command), "{query}");
        }
    }

    #[test]
    fn each_theme_is_an_entry_of_its_own() {
        assert_eq!(first("theme light"), Action::Theme("light".into()));
        assert_eq!(
            first("high-contrast"),
            Action::Theme("high-contrast".into())
        );
        let themes_found = matches("theme", &themes(), "dark");
        assert!(
            themes_found[..3]
                .iter()
                .all(|e| matches!(e.action, Action::Theme(_))),
            "{themes_found:?}"
        );
    }
}
