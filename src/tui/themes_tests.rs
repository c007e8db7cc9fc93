//! Where themes come from: the bundled ones compiled in, the person's folder adding and
//! overriding, files by path, and what the person is told when a theme cannot be used.

use super::theme::Theme;
use super::themes::{BUNDLED, available, load, user_dir};
use ratatui::style::Color;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// A temporary `$XDG_CONFIG_HOME` and the theme folder in it, created, with `files` in it.
fn config_home(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let home = tempfile::tempdir().expect("a temporary folder");
    let dir = user_dir(Some(home.path().as_os_str()), None).expect("an absolute XDG folder");
    std::fs::create_dir_all(&dir).expect("the theme folder");
    for (name, text) in files {
        std::fs::write(dir.join(name), text).expect("a theme file");
    }
    (home, dir)
}

#[test]
fn every_bundled_theme_is_compiled_in_and_parses_without_warnings() {
    for (name, text) in BUNDLED {
        let (theme, warnings) = Theme::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(warnings.is_empty(), "{name}: {warnings:?}");
        assert_eq!(theme.name, *name);
        let (loaded, warning) = load(Some(name), None);
        assert_eq!((loaded, warning), (theme, None));
    }
    // The built-in default is the bundled dark theme, colour for colour.
    assert_eq!(load(None, None), (Theme::default(), None));
    // A theme added to themes/ but not to BUNDLED would work in a checkout only.
    let mut files: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("themes"))
            .expect("the repository's themes/")
            .filter_map(|e| {
                e.ok()?
                    .file_name()
                    .to_str()?
                    .strip_suffix(".yaml")
                    .map(String::from)
            })
            .collect();
    files.sort();
    let bundled: Vec<&str> = BUNDLED.iter().map(|(n, _)| *n).collect();
    assert_eq!(files, bundled);
}

#[test]
fn the_persons_folder_overrides_bundled_themes_and_adds_its_own() {
    let (_home, dir) = config_home(&[
        ("light.yaml", "name: light\naccent: \"#123456\"\n"),
        ("mine.yaml", "name: mine\naccent: red\n"),
        ("notes.txt", "not a theme"),
    ]);
    let (light, warning) = load(Some("light"), Some(&dir));
    assert_eq!(warning, None);
    assert_eq!(light.accent, Color::Rgb(0x12, 0x34, 0x56));
    let (mine, warning) = load(Some("mine"), Some(&dir));
    assert_eq!(
        (mine.name.as_str(), mine.accent, warning),
        ("mine", Color::Red, None)
    );
    // Not overridden: bundled.
    let (contrast, warning) = load(Some("high-contrast"), Some(&dir));
    assert_eq!((contrast.name.as_str(), warning), ("high-contrast", None));
    assert_eq!(load(None, Some(&dir)), (Theme::default(), None));
    assert_eq!(load(Some(""), Some(&dir)), (Theme::default(), None));
    assert_eq!(
        available(Some(&dir)),
        ["dark", "high-contrast", "light", "mine"]
    );
    // An override of dark is the theme when none is named.
    std::fs::write(dir.join("dark.yaml"), "name: dark\naccent: blue\n").expect("dark.yaml");
    assert_eq!(load(None, Some(&dir)).0.accent, Color::Blue);
}

#[test]
fn an_unknown_name_lists_the_themes_there_are_and_where_to_add_one() {
    let (_home, dir) = config_home(&[("mine.yaml", "name: mine\n")]);
    let (theme, warning) = load(Some("solarized"), Some(&dir));
    assert_eq!(theme, Theme::default());
    let warning = warning.expect("a warning");
    assert!(
        warning.contains("theme 'solarized' not found: using dark"),
        "{warning}"
    );
    assert!(
        warning.contains("available: dark, high-contrast, light, mine"),
        "{warning}"
    );
    assert!(
        warning.contains(&dir.join("NAME.yaml").display().to_string()),
        "{warning}"
    );
    // With no folder of the person's, the bundled ones.
    let (_, warning) = load(Some("solarized"), None);
    assert_eq!(
        warning.as_deref(),
        Some("theme 'solarized' not found: using dark (available: dark, high-contrast, light)")
    );
}

#[test]
fn a_broken_override_is_named_with_its_path_and_the_bundled_theme_is_used() {
    let (_home, dir) = config_home(&[
        ("light.yaml", "accent: [unclosed\n"),
        ("mine.yaml", "name: mine\naccent: notacolour\n"),
    ]);
    let (theme, warning) = load(Some("light"), Some(&dir));
    assert_eq!(theme.name, "light");
    let warning = warning.expect("a warning");
    let path = dir.join("light.yaml").display().to_string();
    assert!(
        warning.starts_with(&format!("theme '{path}' is not valid (")),
        "{warning}"
    );
    assert!(warning.ends_with("): using light"), "{warning}");
    // A wrong colour keeps the default's, and says in which file.
    let (theme, warning) = load(Some("mine"), Some(&dir));
    assert_eq!(theme.accent, Theme::default().accent);
    let warning = warning.expect("a warning");
    let path = dir.join("mine.yaml").display().to_string();
    assert!(
        warning.starts_with(&format!("'{path}': theme colour accent")),
        "{warning}"
    );
}

#[test]
fn a_name_with_a_slash_or_ending_in_yaml_is_a_file() {
    let (_home, dir) = config_home(&[("own.yaml", "name: own\naccent: green\n")]);
    let path = dir.join("own.yaml").display().to_string();
    let (theme, warning) = load(Some(&path), None);
    assert_eq!(
        (theme.name.as_str(), theme.accent, warning),
        ("own", Color::Green, None)
    );
    // Relative to where the studio runs, as given, never looked up in the folders.
    let (theme, warning) = load(Some("nowhere/light.yaml"), Some(&dir));
    assert_eq!(theme, Theme::default());
    let warning = warning.expect("a warning");
    assert!(
        warning.starts_with("theme 'nowhere/light.yaml' cannot be read (")
            && warning.ends_with("): using dark"),
        "{warning}"
    );
    // A file given by mistake is not read whole.
    let big = dir.join("big.yaml");
    std::fs::write(&big, "# x\n".repeat(20_000)).expect("a big file");
    let (_, warning) = load(Some(&big.display().to_string()), None);
    assert!(warning.is_some_and(|w| w.contains("larger than 64 KiB")));
}

#[test]
fn the_persons_folder_is_xdg_config_home_else_dot_config_in_home() {
    let dir =
        |xdg: Option<&str>, home: Option<&str>| user_dir(xdg.map(OsStr::new), home.map(OsStr::new));
    let expected = |p: &str| Some(PathBuf::from(p));
    assert_eq!(dir(Some("/x"), Some("/h")), expected("/x/flowdeck/themes"));
    assert_eq!(
        dir(None, Some("/h")),
        expected("/h/.config/flowdeck/themes")
    );
    // Empty or relative values are not folders to trust (the XDG specification).
    assert_eq!(
        dir(Some(""), Some("/h")),
        expected("/h/.config/flowdeck/themes")
    );
    assert_eq!(
        dir(Some("cfg"), Some("/h")),
        expected("/h/.config/flowdeck/themes")
    );
    assert_eq!(dir(None, Some("")), None);
    assert_eq!(dir(None, None), None);
}

/// A theme with a background paints every cell the views left in the terminal's defaults, so
/// `light` reads on a dark terminal; `dark` keeps the terminal's own, and so does `NO_COLOR`.
#[test]
fn a_theme_with_a_background_paints_the_whole_studio_in_it() {
    use ratatui::style::Color;
    let drawn = |theme: &Theme| {
        let mut app = crate::tui::state::App::new("workflows".into());
        app.workflows = vec![crate::tui::test_support::summary("build")];
        let mut terminal =
            ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).unwrap();
        terminal
            .draw(|frame| {
                crate::tui::draw::draw(frame, &app, theme, &crate::tui::test_support::NoScreens)
            })
            .unwrap();
        terminal.backend().buffer().clone()
    };
    let (light, warning) = super::themes::load(Some("light"), None);
    assert_eq!(warning, None);
    assert_ne!(light.background, Color::Reset, "light sets its background");
    let buffer = drawn(&light);
    assert!(
        buffer
            .content
            .iter()
            .all(|c| c.bg != Color::Reset && c.fg != Color::Reset),
        "a cell in the terminal's default colours under light"
    );
    let (dark, _) = super::themes::load(Some("dark"), None);
    assert_eq!(dark.background, Color::Reset);
    assert!(drawn(&dark).content.iter().any(|c| c.bg == Color::Reset));
    let plain = drawn(&light.without_colour());
    assert!(plain.content.iter().all(|c| c.bg == Color::Reset));
}
