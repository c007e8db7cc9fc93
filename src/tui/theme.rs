//! The studio's colours. The dark theme is built in so that the studio never depends on a
//! file to start; a theme file (`themes.rs` finds it) can replace it. `NO_COLOR`
//! (no-color.org) turns every colour off: selection and focus are then marked by attributes
//! (bold, reverse) only.

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;
use std::ffi::OsStr;

#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub name: String,
    /// The theme's own background, or `Reset` for the terminal's (the dark theme's): a
    /// theme whose foreground needs a background (light) sets it.
    pub background: Color,
    pub foreground: Color,
    pub accent: Color,
    pub muted: Color,
    pub border: Color,
    pub focus_border: Color,
    pub selection_bg: Color,
    pub valid: Color,
    pub warning: Color,
    pub error: Color,
    pub running: Color,
    /// False under `NO_COLOR`: every colour above is `Reset`, panes drop their programs'
    /// colours, and attributes mark what colours would.
    pub colour: bool,
}

impl Default for Theme {
    fn default() -> Self {
        Theme {
            name: "dark".into(),
            background: Color::Reset,
            foreground: Color::Rgb(0xd4, 0xd4, 0xd4),
            accent: Color::Rgb(0x61, 0xaf, 0xef),
            muted: Color::Rgb(0x7f, 0x84, 0x8e),
            border: Color::Rgb(0x3e, 0x44, 0x51),
            focus_border: Color::Rgb(0x61, 0xaf, 0xef),
            selection_bg: Color::Rgb(0x2c, 0x31, 0x3a),
            valid: Color::Rgb(0x98, 0xc3, 0x79),
            warning: Color::Rgb(0xe5, 0xc0, 0x7b),
            error: Color::Rgb(0xe0, 0x6c, 0x75),
            running: Color::Rgb(0x56, 0xb6, 0xc2),
            colour: true,
        }
    }
}

/// Whether `NO_COLOR`'s value asks for no colour: set and not empty (no-color.org).
pub fn no_color_requested(value: Option<&OsStr>) -> bool {
    value.is_some_and(|v| !v.is_empty())
}

/// A theme file as written: colour names or `#rrggbb`, any of them left out.
#[derive(Debug, Deserialize)]
struct ThemeFile {
    name: Option<String>,
    background: Option<String>,
    foreground: Option<String>,
    accent: Option<String>,
    muted: Option<String>,
    border: Option<String>,
    focus_border: Option<String>,
    selection_bg: Option<String>,
    valid: Option<String>,
    warning: Option<String>,
    error: Option<String>,
    running: Option<String>,
}

impl Theme {
    /// This theme without colours (`NO_COLOR`): every colour is the terminal's own.
    pub fn without_colour(self) -> Theme {
        Theme {
            background: Color::Reset,
            foreground: Color::Reset,
            accent: Color::Reset,
            muted: Color::Reset,
            border: Color::Reset,
            focus_border: Color::Reset,
            selection_bg: Color::Reset,
            valid: Color::Reset,
            warning: Color::Reset,
            error: Color::Reset,
            running: Color::Reset,
            colour: false,
            ..self
        }
    }

    /// What a selected row or field looks like: a background, or reverse video without
    /// colours.
    pub fn selection(&self) -> Style {
        let style = Style::default().add_modifier(Modifier::BOLD);
        if self.colour {
            style.bg(self.selection_bg)
        } else {
            style.add_modifier(Modifier::REVERSED)
        }
    }

    /// Parses a theme file; colours it leaves out or writes wrongly keep the default's, and
    /// each wrong one is named in the warnings.
    pub fn parse(text: &str) -> Result<(Theme, Vec<String>), String> {
        let file: ThemeFile = serde_norway::from_str(text).map_err(|e| e.to_string())?;
        let mut theme = Theme::default();
        let mut warnings = Vec::new();
        if let Some(name) = file.name {
            theme.name = crate::workflow::names::sanitize(&name);
        }
        let mut set = |slot: &mut Color, value: Option<String>, key: &str| {
            if let Some(value) = value {
                match value.parse::<Color>() {
                    Ok(c) => *slot = c,
                    Err(_) => warnings.push(format!(
                        "theme colour {key}: {} is not a colour",
                        crate::workflow::names::display_safe(&value)
                    )),
                }
            }
        };
        set(&mut theme.background, file.background, "background");
        set(&mut theme.foreground, file.foreground, "foreground");
        set(&mut theme.accent, file.accent, "accent");
        set(&mut theme.muted, file.muted, "muted");
        set(&mut theme.border, file.border, "border");
        set(&mut theme.focus_border, file.focus_border, "focus_border");
        set(&mut theme.selection_bg, file.selection_bg, "selection_bg");
        set(&mut theme.valid, file.valid, "valid");
        set(&mut theme.warning, file.warning, "warning");
        set(&mut theme.error, file.error, "error");
        set(&mut theme.running, file.running, "running");
        Ok((theme, warnings))
    }
}
