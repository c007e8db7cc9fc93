//! How the studio calls the person when something starts needing them: the bell, a desktop
//! notification through the terminal (OSC 9, which iTerm2, WezTerm, Ghostty, Windows
//! Terminal and kitty show; OSC 777, which foot, rxvt-unicode and VTE terminals that carry
//! the patch show), both, or nothing. `FLOWDECK_NOTIFY` chooses; by default the bell, and
//! the notification too in a terminal known to show one.

/// The setting that chooses.
pub const ENV: &str = "FLOWDECK_NOTIFY";

/// How the person's terminal is called.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Ring {
    /// The bell alone.
    #[default]
    Bell,
    /// The bell and an OSC 9 notification.
    Osc9,
    /// The bell and an OSC 777 notification.
    Osc777,
    /// Nothing: the status line and the marks say it.
    Off,
}

impl Ring {
    /// The setting's value, or why it is not one.
    pub fn parse(text: &str) -> Result<Option<Ring>, String> {
        Ok(Some(match text.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => return Ok(None),
            "bell" => Ring::Bell,
            "osc9" | "9" => Ring::Osc9,
            "osc777" | "777" => Ring::Osc777,
            "off" | "none" => Ring::Off,
            other => {
                return Err(format!(
                    "`{other}` is not a way to ring: use auto, bell, osc9, osc777 or off"
                ));
            }
        }))
    }

    /// As `FLOWDECK_NOTIFY` says, else as the terminal described by `var` is known to take.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Ring, String> {
        if let Some(text) = var(ENV)
            && let Some(ring) = Ring::parse(&text).map_err(|why| format!("{ENV}={text}: {why}"))?
        {
            return Ok(ring);
        }
        Ok(Ring::guess(&var))
    }

    /// The notification the terminal is known to show, else the bell alone. Inside tmux
    /// the outer terminal's own variables are not seen, so tmux gets the bell, which it
    /// passes on (and marks the window with).
    fn guess(var: &impl Fn(&str) -> Option<String>) -> Ring {
        let program = var("TERM_PROGRAM").unwrap_or_default();
        let term = var("TERM").unwrap_or_default();
        if term.starts_with("tmux") || term.starts_with("screen") {
            return Ring::Bell;
        }
        match program.as_str() {
            "iTerm.app" | "WezTerm" | "ghostty" => return Ring::Osc9,
            _ => {}
        }
        if var("WT_SESSION").is_some() || term == "xterm-kitty" || term == "xterm-ghostty" {
            return Ring::Osc9;
        }
        if term.starts_with("foot") || term.starts_with("rxvt-unicode") {
            return Ring::Osc777;
        }
        Ring::Bell
    }

    /// What is written to the terminal to ring it about `title` and `body` (control
    /// characters already taken out by the caller).
    pub fn sequence(self, title: &str, body: &str) -> String {
        // Neither field may end the sequence early.
        let field = |text: &str| text.replace(['\x07', '\x1b', ';'], " ");
        match self {
            Ring::Off => String::new(),
            Ring::Bell => "\x07".into(),
            Ring::Osc9 => format!("\x07\x1b]9;{}: {}\x07", field(title), field(body)),
            Ring::Osc777 => format!("\x07\x1b]777;notify;{};{}\x07", field(title), field(body)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_setting_wins_and_the_terminal_is_guessed_otherwise() {
        assert_eq!(
            Ring::from_env(env(&[
                ("FLOWDECK_NOTIFY", "off"),
                ("TERM_PROGRAM", "WezTerm")
            ])),
            Ok(Ring::Off)
        );
        assert_eq!(
            Ring::from_env(env(&[("TERM_PROGRAM", "iTerm.app")])),
            Ok(Ring::Osc9)
        );
        assert_eq!(Ring::from_env(env(&[("TERM", "foot")])), Ok(Ring::Osc777));
        assert_eq!(
            Ring::from_env(env(&[
                ("TERM", "tmux-256color"),
                ("TERM_PROGRAM", "WezTerm")
            ])),
            Ok(Ring::Bell),
            "inside tmux the outer terminal is unknown"
        );
        assert_eq!(
            Ring::from_env(env(&[("TERM", "xterm-256color")])),
            Ok(Ring::Bell)
        );
        assert_eq!(
            Ring::from_env(env(&[("FLOWDECK_NOTIFY", "auto"), ("TERM", "foot")])),
            Ok(Ring::Osc777)
        );
        let bad = Ring::from_env(env(&[("FLOWDECK_NOTIFY", "loud")])).unwrap_err();
        assert!(
            bad.contains("FLOWDECK_NOTIFY=loud") && bad.contains("osc777"),
            "{bad}"
        );
    }

    #[test]
    fn a_notification_cannot_be_ended_early_by_its_text() {
        assert_eq!(
            Ring::Osc9.sequence("flowdeck", "deploy asks; ok?\x07\x1b]0;x"),
            "\x07\x1b]9;flowdeck: deploy asks  ok?  ]0 x\x07"
        );
        assert_eq!(
            Ring::Osc777.sequence("flowdeck", "a;b"),
            "\x07\x1b]777;notify;flowdeck;a b\x07"
        );
        assert_eq!(Ring::Off.sequence("a", "b"), "");
    }
}
