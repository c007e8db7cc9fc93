//! Ctrl-z by the steps a person takes: a run of typing is one, an indented Enter one.

use super::editing_tests::{TEXT, ctrl, open_deploy, typed};
use crate::tui::state::App;
use crate::tui::test_support::{key, summary};
use crate::tui::update::update;
use crossterm::event::KeyCode;

fn editing() -> App {
    let mut app = App::new("workflows".into());
    app.size = (120, 30);
    app.workflows = vec![summary("deploy")];
    open_deploy(&mut app, TEXT);
    app
}

fn lines(app: &App) -> Vec<String> {
    app.editor
        .as_ref()
        .map(|e| e.text.lines().to_vec())
        .unwrap_or_default()
}

#[test]
fn one_ctrl_z_undoes_one_enter_and_the_next_the_typing_before_it() {
    let mut app = editing();
    let before = lines(&app);
    // At the end of `states:`: Enter indents the new line one level deeper.
    for _ in 0..2 {
        update(&mut app, key(KeyCode::Down));
    }
    update(&mut app, key(KeyCode::End));
    // Trailing spaces: the line still opens a block.
    typed(&mut app, "  ");
    let typed_line = lines(&app);
    update(&mut app, key(KeyCode::Enter));
    assert_eq!(lines(&app)[3], "  ", "Enter indents: {:?}", lines(&app));
    typed(&mut app, "c: 1");
    update(&mut app, ctrl('z'));
    assert_eq!(lines(&app)[3], "  ", "the typing after Enter first");
    update(&mut app, ctrl('z'));
    assert_eq!(
        lines(&app),
        typed_line,
        "then the Enter, indentation and all"
    );
    update(&mut app, ctrl('z'));
    assert_eq!(lines(&app), before, "then the run of typing, whole");
    // And forward again, a step at a time.
    update(&mut app, ctrl('y'));
    assert_eq!(lines(&app), typed_line);
    update(&mut app, ctrl('y'));
    assert_eq!(lines(&app)[3], "  ");
}

#[test]
fn moving_the_cursor_ends_a_run_of_typing() {
    let mut app = editing();
    typed(&mut app, "ab");
    update(&mut app, key(KeyCode::Left));
    typed(&mut app, "X");
    assert!(lines(&app)[0].starts_with("aXb"), "{:?}", lines(&app));
    update(&mut app, ctrl('z'));
    assert!(lines(&app)[0].starts_with("abname"), "{:?}", lines(&app));
    update(&mut app, ctrl('z'));
    assert_eq!(lines(&app)[0], "name: deploy");
}
