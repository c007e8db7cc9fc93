//! The overlays a newcomer meets first: the inputs form (scrolling, toggles, one cursor),
//! help (the keys of where you are, paged), the palette (found by words, themes switched).

use super::command::Command;
use super::effect::Effect;
use super::form::InputsForm;
use super::mode::{Mode, View};
use super::palette::Action;
use super::state::App;
use super::test_support::{drawn_text, help_open, key, problems_open, summary};
use super::theme::Theme;
use super::update::{Event, run_command, update};
use crate::engine::authoring::InputSpec;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

fn studio() -> App {
    let mut app = App::new("workflows".into());
    app.workflows = vec![summary("archive_logs"), summary("deploy")];
    app
}

fn spec(name: &str, kind: &str, description: &str) -> InputSpec {
    InputSpec {
        name: name.into(),
        description: description.into(),
        required: false,
        kind: kind.into(),
        default: None,
        choices: None,
        pattern: None,
        secret: false,
        last_value: None,
    }
}

/// A form like archive_logs': eight arguments with descriptions, and `on host`.
fn long_form(app: &mut App) {
    let inputs: Vec<InputSpec> = (1..=8)
        .map(|i| {
            spec(
                &format!("ARG_{i}"),
                if i == 7 { "boolean" } else { "string" },
                "what this argument is for, in a sentence long enough to take a row of its own",
            )
        })
        .collect();
    update(
        app,
        Event::Inputs {
            workflow: "archive_logs".into(),
            inputs: Ok(inputs),
            on_host: false,
        },
    );
    assert_eq!(app.mode(), Mode::Form);
}

#[test]
fn a_long_form_keeps_its_focused_field_and_footer_on_screen_at_80x24() {
    let mut app = studio();
    app.size = (80, 24);
    long_form(&mut app);
    for at in 0..9 {
        let screen = drawn_text(&app, 80, 24);
        let name = app.form().map(|f| f.fields[at].spec.name.clone());
        let name = name.unwrap_or_default();
        assert!(
            screen.contains(&format!("▶ {name}")),
            "field {at} ({name}) not shown:\n{screen}"
        );
        assert!(screen.contains("Enter runs"), "no footer:\n{screen}");
        update(&mut app, key(KeyCode::Tab));
    }
    // Round again to the first, and back with Shift-Tab to the last (`on host`).
    assert_eq!(app.form().map(|f| f.selected), Some(0));
    update(&mut app, key(KeyCode::BackTab));
    let screen = drawn_text(&app, 80, 24);
    assert!(screen.contains("▶ on host"), "{screen}");
    assert!(
        screen.contains(" more ╮"),
        "what is above is said:\n{screen}"
    );
}

#[test]
fn only_the_focused_text_field_shows_a_cursor() {
    let mut app = studio();
    app.size = (160, 45);
    long_form(&mut app);
    let screen = drawn_text(&app, 160, 45);
    assert_eq!(screen.matches('▏').count(), 1, "{screen}");
    // On a boolean: no text cursor at all, its value between arrows.
    for _ in 0..6 {
        update(&mut app, key(KeyCode::Down));
    }
    let screen = drawn_text(&app, 160, 45);
    assert_eq!(screen.matches('▏').count(), 0, "{screen}");
    assert!(screen.contains("◂  ▸"), "{screen}");
}

#[test]
fn a_boolean_toggles_and_takes_no_free_text() {
    let mut form = InputsForm::new("w".into(), vec![spec("DRY_RUN", "boolean", "")]);
    for c in "yes".chars() {
        form.type_char(c);
    }
    assert_eq!(form.fields[0].value, "", "no free text in a boolean");
    form.type_char(' ');
    assert_eq!(form.fields[0].value, "true");
    form.cycle_choice(1);
    assert_eq!(form.fields[0].value, "false");
    form.cycle_choice(-1);
    assert_eq!(form.fields[0].value, "true");
    form.delete_char();
    assert_eq!(form.fields[0].value, "true");
    let submitted = form.submit().map(|s| s.inputs);
    assert_eq!(
        submitted.and_then(|i| i.get("DRY_RUN").cloned()).as_deref(),
        Some("true")
    );
}

#[test]
fn space_and_arrows_in_the_form_pick_a_choice_through_the_keys() {
    let mut app = studio();
    let mut compression = spec("COMPRESSION", "string", "");
    compression.choices = Some(vec!["gzip".into(), "xz".into(), "none".into()]);
    compression.default = Some("gzip".into());
    update(
        &mut app,
        Event::Inputs {
            workflow: "archive_logs".into(),
            inputs: Ok(vec![compression]),
            on_host: false,
        },
    );
    update(&mut app, key(KeyCode::Right));
    update(&mut app, key(KeyCode::Char(' ')));
    let value = app.form().map(|f| f.fields[0].value.clone());
    assert_eq!(value.as_deref(), Some("none"));
    update(&mut app, key(KeyCode::Left));
    let value = app.form().map(|f| f.fields[0].value.clone());
    assert_eq!(value.as_deref(), Some("xz"));
}

#[test]
fn help_shows_the_keys_of_where_you_are_grouped_with_pairs_on_one_row() {
    let mut app = studio();
    app.size = (80, 24);
    update(&mut app, key(KeyCode::Char('?')));
    assert_eq!(app.mode(), Mode::Help);
    assert_eq!(help_open(&app).map(|h| h.0).unwrap(), Mode::Normal);
    let groups = super::help::groups(Mode::Normal, View::List);
    let titles: Vec<&str> = groups.iter().map(|(g, _)| g.title()).collect();
    assert_eq!(titles, ["Move", "Run", "Workflows", "Panes", "Studio"]);
    let keys: Vec<String> = groups
        .iter()
        .flat_map(|(_, k)| k.iter().map(|k| k.keys.clone()))
        .collect();
    assert!(keys.contains(&"j/↓".to_string()), "{keys:?}");
    assert!(keys.contains(&"k/↑".to_string()), "{keys:?}");
    assert!(keys.contains(&"Ctrl-p/:".to_string()), "{keys:?}");
    // Panes: their history's keys, and `/` searches there instead of filtering.
    let panes = super::help::groups(Mode::Normal, View::Panes);
    let titles: Vec<&str> = panes.iter().map(|(g, _)| g.title()).collect();
    assert!(titles.contains(&"History, search and copy"), "{titles:?}");
    assert!(!titles.contains(&"Workflows"), "{titles:?}");
    let screen = drawn_text(&app, 80, 24);
    assert!(screen.contains("all keys: Ctrl-p"), "{screen}");
    assert!(screen.contains("page 1/"), "{screen}");
}

#[test]
fn help_pages_with_pgdn_space_and_back_and_stops_at_its_end() {
    let mut app = studio();
    app.size = (80, 24);
    update(&mut app, key(KeyCode::Char('?')));
    let page = super::help::page(24);
    update(&mut app, key(KeyCode::PageDown));
    let last = super::help::last_top(Mode::Normal, View::List, (80, 24));
    assert_eq!(help_open(&app).map(|h| h.1).unwrap(), page.min(last));
    let screen = drawn_text(&app, 80, 24);
    assert!(screen.contains("page 2/"), "{screen}");
    for _ in 0..10 {
        update(&mut app, key(KeyCode::Char(' ')));
    }
    assert_eq!(help_open(&app).map(|h| h.1).unwrap(), last);
    update(&mut app, key(KeyCode::PageUp));
    assert_eq!(
        help_open(&app).map(|h| h.1).unwrap(),
        last.saturating_sub(page)
    );
    update(&mut app, key(KeyCode::Char('j')));
    assert_eq!(
        help_open(&app).map(|h| h.1).unwrap(),
        last.saturating_sub(page) + 1
    );
    update(&mut app, key(KeyCode::Esc));
    assert_eq!(app.mode(), Mode::Normal);
}

#[test]
fn help_from_the_form_lists_the_forms_keys_and_from_the_editor_the_editors() {
    let mut form = studio();
    long_form(&mut form);
    // `?` is text in the form; help is asked from the palette (Ctrl-p is not the form's)
    // or by the command itself.
    run_command(&mut form, Command::Help);
    assert_eq!(help_open(&form).map(|h| h.0).unwrap(), Mode::Form);
    let keys: Vec<String> = super::help::groups(Mode::Form, View::List)
        .into_iter()
        .flat_map(|(_, k)| k.into_iter().map(|k| k.keys))
        .collect();
    assert!(keys.contains(&"Tab/↓".to_string()), "{keys:?}");
    let mut app = studio();
    app.editor = Some(super::editor::Editor::new(
        "w".into(),
        "w.yaml".into(),
        "/w.yaml".into(),
        "v".into(),
        "name: w\n",
    ));
    update(
        &mut app,
        Event::Key(KeyEvent::new(KeyCode::Char('p'), KeyModifiers::CONTROL)),
    );
    for c in "this help".chars() {
        update(&mut app, key(KeyCode::Char(c)));
    }
    update(&mut app, key(KeyCode::Enter));
    assert_eq!(app.mode(), Mode::Help);
    assert_eq!(help_open(&app).map(|h| h.0).unwrap(), Mode::Edit);
    // Esc closes help, not the editor under it.
    update(&mut app, key(KeyCode::Esc));
    assert_eq!(app.mode(), Mode::Edit);
    assert!(app.editor.is_some(), "Esc on help closed the editor");
}

fn palette_choose(app: &mut App, query: &str) -> Vec<Effect> {
    update(
        app,
        Event::Key(KeyEvent::new(KeyCode::Char('p'), KeyModifiers::CONTROL)),
    );
    for c in query.chars() {
        update(app, key(KeyCode::Char(c)));
    }
    update(app, key(KeyCode::Enter))
}

#[test]
fn the_palette_switches_the_theme_at_once_and_no_color_still_wins() {
    let mut app = studio();
    let effects = palette_choose(&mut app, "theme light");
    assert_eq!(effects, vec![Effect::LoadTheme("light".into())]);
    let (light, _) = super::themes::load(Some("light"), None);
    update(
        &mut app,
        Event::Theme {
            theme: Box::new(light.clone()),
            warning: None,
        },
    );
    assert_eq!(app.theme, light);
    assert_eq!(app.message.as_deref(), Some("theme light"));
    // Under NO_COLOR the studio started without colours: a theme chosen later keeps none.
    let mut plain = studio();
    plain.theme = Theme::default().without_colour();
    update(
        &mut plain,
        Event::Theme {
            theme: Box::new(light.clone()),
            warning: None,
        },
    );
    assert!(!plain.theme.colour);
    assert_eq!(plain.theme, light.without_colour());
}

#[test]
fn the_palette_lists_the_persons_themes_as_entries() {
    let mut app = studio();
    let effects = update(
        &mut app,
        Event::Key(KeyEvent::new(KeyCode::Char('p'), KeyModifiers::CONTROL)),
    );
    assert_eq!(effects, vec![Effect::ListThemes]);
    update(&mut app, Event::Themes(vec!["dark".into(), "mine".into()]));
    let found = app
        .palette_matches()
        .into_iter()
        .map(|e| e.action)
        .find(|a| matches!(a, Action::Theme(n) if n == "mine"));
    assert!(found.is_some());
}

#[test]
fn replay_from_the_palette_opens_the_runs_to_choose_from() {
    let mut app = studio();
    let effects = palette_choose(&mut app, "replay");
    assert_eq!(effects, vec![Effect::LoadRuns("archive_logs".into())]);
}

#[test]
fn enter_on_a_problem_opens_the_editor_at_its_line_and_column() {
    use crate::workflow::violation::Violation;
    let mut app = studio();
    let mut first = Violation::error("unknown_key", "/states/a/x", "unknown key 'x'");
    first.line = Some(2);
    first.column = Some(3);
    let mut second = Violation::error("type", "/states/a/timeout", "expected number");
    second.line = Some(4);
    second.column = Some(5);
    update(
        &mut app,
        Event::Problems {
            workflow: "archive_logs".into(),
            problems: Ok(("archive_logs.yaml".into(), vec![first, second])),
        },
    );
    assert_eq!(app.mode(), Mode::Problems);
    update(&mut app, key(KeyCode::Char('j')));
    let effects = update(&mut app, key(KeyCode::Enter));
    assert_eq!(effects, vec![Effect::LoadDocument("archive_logs".into())]);
    assert!(problems_open(&app).is_none());
    update(
        &mut app,
        Event::Document {
            workflow: "archive_logs".into(),
            document: Ok(super::editor::Document {
                file: "archive_logs.yaml".into(),
                path: "/w/archive_logs.yaml".into(),
                version: "v1".into(),
                text: "name: a\ndescription: d\ninitial_state: s\ntimeout: abc\n".into(),
            }),
        },
    );
    assert_eq!(app.mode(), Mode::Edit);
    let cursor = app.editor.as_ref().map(|e| e.text.cursor());
    assert_eq!(cursor, Some((3, 4)), "line 4, column 5");
}

#[test]
fn space_is_a_space_in_a_typed_field_and_help_lists_it_for_the_form() {
    let mut app = studio();
    long_form(&mut app);
    for c in "a b".chars() {
        update(&mut app, key(KeyCode::Char(c)));
    }
    let value = app.form().map(|f| f.fields[0].value.clone());
    assert_eq!(value.as_deref(), Some("a b"));
    let keys: Vec<String> = super::help::groups(Mode::Form, View::List)
        .into_iter()
        .flat_map(|(_, k)| k.into_iter().map(|k| k.keys))
        .collect();
    assert!(keys.contains(&"Space".to_string()), "{keys:?}");
}

#[test]
fn every_templates_title_fits_the_new_workflow_box_at_80_columns() {
    let mut app = studio();
    app.size = (80, 24);
    update(&mut app, key(KeyCode::Char('A')));
    for template in crate::engine::editing::TEMPLATES {
        let screen = drawn_text(&app, 80, 24);
        assert!(
            screen.contains(&format!("◂ {} ▸", template.title)),
            "{}:\n{screen}",
            template.title
        );
        update(&mut app, key(KeyCode::Right));
    }
}

#[test]
fn the_editors_title_says_what_its_counts_are() {
    let mut app = studio();
    app.size = (100, 30);
    let mut editor = super::editor::Editor::new(
        "w".into(),
        "w.yaml".into(),
        "/w.yaml".into(),
        "v".into(),
        "name: w\n",
    );
    editor.checked_edits = editor.edits;
    editor.check = Some(super::editor::Check {
        errors: 1,
        warnings: 0,
        violations: Vec::new(),
        name: None,
        plan: None,
    });
    app.editor = Some(editor);
    let screen = drawn_text(&app, 100, 30);
    assert!(screen.contains("· ✗ 1 error "), "{screen}");
    assert!(!screen.contains("! 0"), "{screen}");
}
