//! Where the studio's theme comes from. The bundled themes are compiled into the binary, so
//! one installed with `cargo install` has them wherever it runs (they were read from
//! `./themes/`, which only exists in a checkout). A person's own folder,
//! `$XDG_CONFIG_HOME/flowdeck/themes/` (else `~/.config/flowdeck/themes/`), adds themes and
//! overrides bundled ones of the same name. A name with a `/` or ending in `.yaml` is a file.

use super::theme::Theme;
use crate::workflow::names::{display_safe, sanitize};
use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The themes shipped with flowdeck, by name.
pub const BUNDLED: &[(&str, &str)] = &[
    ("dark", include_str!("../../themes/dark.yaml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.yaml"),
    ),
    ("light", include_str!("../../themes/light.yaml")),
];

/// The theme when none is named, and the one used when the named one cannot be.
const DEFAULT: &str = "dark";

/// A theme is a dozen lines: a path given by mistake (a device, a log) is refused, not read
/// whole.
const MAX_BYTES: u64 = 64 * 1024;

/// The person's theme folder: `$XDG_CONFIG_HOME/flowdeck/themes`, else
/// `$HOME/.config/flowdeck/themes`. Empty or relative values are ignored, as the XDG base
/// directory specification asks: a relative one would depend on where the studio was started.
pub fn user_dir(xdg_config_home: Option<&OsStr>, home: Option<&OsStr>) -> Option<PathBuf> {
    fn absolute(value: Option<&OsStr>) -> Option<&Path> {
        value.map(Path::new).filter(|p| p.is_absolute())
    }
    absolute(xdg_config_home)
        .map(Path::to_path_buf)
        .or_else(|| absolute(home).map(|home| home.join(".config")))
        .map(|config| config.join("flowdeck").join("themes"))
}

/// The person's theme folder, from this process's environment.
pub fn user_dir_from_env() -> Option<PathBuf> {
    user_dir(
        std::env::var_os("XDG_CONFIG_HOME").as_deref(),
        std::env::var_os("HOME").as_deref(),
    )
}

/// The theme `name` asks for (dark when none is named), with what the person should be told
/// about it: a theme that cannot be used is replaced, never fatal, and the message says
/// where it was looked for and why it was not used.
pub fn load(name: Option<&str>, user_dir: Option<&Path>) -> (Theme, Option<String>) {
    // `FLOWDECK_THEME=` set empty names no theme, as an unset one does.
    let name = name.filter(|n| !n.is_empty()).unwrap_or(DEFAULT);
    if name.contains('/') || name.ends_with(".yaml") {
        return from_file(Path::new(name), None);
    }
    if let Some(dir) = user_dir {
        let path = dir.join(format!("{name}.yaml"));
        match read(&path) {
            Ok(text) => return parsed(&text, &shown(&path), Some(name)),
            // Not overridden: the bundled theme of that name, if there is one.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return unusable(&shown(&path), "cannot be read", &e, Some(name)),
        }
    }
    match bundled(name) {
        Some(text) => parsed(text, &format!("bundled theme {}", display_safe(name)), None),
        None => (
            Theme::default(),
            Some(format!(
                "theme {} not found: using {DEFAULT} (available: {}{})",
                display_safe(name),
                available(user_dir).join(", "),
                user_dir
                    .map(|dir| format!("; yours go in {}", shown(&dir.join("NAME.yaml"))))
                    .unwrap_or_default()
            )),
        ),
    }
}

/// Every theme `--theme` can name: the bundled ones and the person's, sorted, each once.
pub fn available(user_dir: Option<&Path>) -> Vec<String> {
    let mut names: Vec<String> = BUNDLED.iter().map(|(n, _)| n.to_string()).collect();
    let entries = user_dir
        .and_then(|dir| std::fs::read_dir(dir).ok())
        .into_iter()
        .flatten()
        .flatten();
    for entry in entries {
        let file = entry.file_name();
        let Some(stem) = file.to_str().and_then(|f| f.strip_suffix(".yaml")) else {
            continue;
        };
        if !stem.is_empty() {
            names.push(sanitize(stem));
        }
    }
    names.sort();
    names.dedup();
    names
}

/// The text of the bundled theme `name`.
pub fn bundled(name: &str) -> Option<&'static str> {
    BUNDLED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

fn from_file(path: &Path, overrides: Option<&str>) -> (Theme, Option<String>) {
    match read(path) {
        Ok(text) => parsed(&text, &shown(path), overrides),
        Err(e) => unusable(&shown(path), "cannot be read", &e, overrides),
    }
}

/// The theme in `text`, read from `source`; a colour written wrongly keeps the default's and
/// is named (the first of them: the status line has one line).
fn parsed(text: &str, source: &str, overrides: Option<&str>) -> (Theme, Option<String>) {
    match Theme::parse(text) {
        Ok((theme, warnings)) => {
            let warning = warnings
                .into_iter()
                .next()
                .map(|w| format!("{source}: {w}"));
            (theme, warning)
        }
        Err(e) => unusable(source, "is not valid", &e, overrides),
    }
}

/// What is used instead of a theme that cannot be: the bundled theme it overrides, if any
/// (the person asked for that name), else the default.
fn unusable(
    source: &str,
    why: &str,
    error: &dyn std::fmt::Display,
    overrides: Option<&str>,
) -> (Theme, Option<String>) {
    let theme = overrides
        .and_then(bundled)
        .and_then(|text| Theme::parse(text).ok())
        .map(|(theme, _)| theme)
        .unwrap_or_default();
    let message = format!("theme {source} {why} ({error}): using {}", theme.name);
    (theme, Some(message))
}

/// A theme file's text, refused past `MAX_BYTES` rather than read whole.
fn read(path: &Path) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {} KiB",
            MAX_BYTES / 1024
        )));
    }
    String::from_utf8(bytes)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()))
}

fn shown(path: &Path) -> String {
    display_safe(&path.display().to_string())
}
