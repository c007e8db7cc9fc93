//! Scrollback, pane search and the problems list: keys → state and effects, without a
//! terminal or an engine.

use super::effect::Effect;
use super::history::{self, HISTORY_MAX};
use super::keymap::{self};
use super::mode::{Mode, View};
use super::state::App;
use super::test_support::{key, problems_open, shell_pane, summary};
use super::theme::{Theme, no_color_requested};
use super::update::{Event, update};
use crate::engine::WorkflowStatus;
use crate::engine::authoring::WorkflowSummary;
use crate::engine::search::{Found, Hit, Source};
use crate::workflow::violation::Violation;
use crossterm::event::KeyCode;
use std::ffi::OsStr;

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        update(app, key(KeyCode::Char(c)));
    }
}

/// A studio with one workflow and one shell pane, the panes view active.
fn app() -> App {
    let mut app = App::new("workflows".into());
    app.workflows = vec![WorkflowSummary {
        status: WorkflowStatus::Invalid,
        states: None,
        errors: 1,
        ..summary("broken")
    }];
    app.panes.push(shell_pane(78, 10));
    app.view = View::Panes;
    app
}

fn rows(app: &App) -> usize {
    history::rows(app)
}

/// Lines `from..=to` of a history, as the engine gives them.
fn lines(from: u64, to: u64) -> Vec<String> {
    (from..=to).map(|n| format!("line {n}")).collect()
}

fn history(app: &mut App, from: u64, to: u64) {
    update(
        app,
        Event::History {
            session_id: "s1".into(),
            lines: Ok((lines(from, to), to)),
        },
    );
}

fn hit(line: u64) -> Hit {
    Hit {
        source: Source::History,
        line,
        column: 5,
        length: 3,
        matched_text: "err".into(),
        text: format!("line err {line}"),
        text_column: 0,
        before: Vec::new(),
        after: Vec::new(),
    }
}

fn found(hits: Vec<Hit>, total: usize, next_cursor: Option<&str>, last_line: u64) -> Found {
    Found {
        hits,
        total_hits: total,
        truncated: false,
        lines_searched: last_line,
        first_line: Some(1),
        last_line: Some(last_line),
        missed_lines: 0,
        screen_searched: false,
        next_cursor: next_cursor.map(str::to_string),
    }
}

#[test]
fn no_color_means_set_and_not_empty() {
    assert!(!no_color_requested(None));
    assert!(!no_color_requested(Some(OsStr::new(""))));
    assert!(no_color_requested(Some(OsStr::new("1"))));
    let plain = Theme::default().without_colour();
    assert!(!plain.colour);
    assert_eq!(plain.accent, ratatui::style::Color::Reset);
    // Selection stays visible without colours: reverse video.
    assert!(
        plain
            .selection()
            .add_modifier
            .contains(ratatui::style::Modifier::REVERSED)
    );
}

#[test]
fn page_up_reads_the_history_and_new_output_does_not_move_the_view() {
    let mut app = app();
    let rows = rows(&app);
    let page = rows - 1;
    let effects = update(&mut app, key(KeyCode::PageUp));
    assert_eq!(
        effects,
        vec![Effect::ReadHistory {
            session_id: "s1".into(),
            lines: 500,
        }]
    );
    history(&mut app, 1, 300);
    let scroll = app.scroll.clone().unwrap();
    assert_eq!((scroll.offset, scroll.last_line), (page, 300));
    // Another page: the lines read are enough, no read.
    assert!(update(&mut app, key(KeyCode::PageUp)).is_empty());
    assert_eq!(app.scroll.as_ref().unwrap().offset, 2 * page);
    // Home: the oldest line; the whole history (300 < 500 asked) is already here.
    assert!(update(&mut app, key(KeyCode::Home)).is_empty());
    assert_eq!(app.scroll.as_ref().unwrap().offset, 300 - rows);
    // PageDown twice, then a re-read after 40 more lines: still on the same lines.
    update(&mut app, key(KeyCode::PageDown));
    let before = app.scroll.as_ref().unwrap().offset;
    history(&mut app, 1, 340);
    assert_eq!(app.scroll.as_ref().unwrap().offset, before + 40);
    // End leaves the history for the live screen.
    update(&mut app, key(KeyCode::End));
    assert!(app.scroll.is_none());
}

#[test]
fn home_on_the_live_screen_reads_the_whole_history_and_shows_its_oldest_line() {
    let mut app = app();
    let rows = rows(&app);
    // Before this, the read it opened with was dropped: the view said "reading…" for ever.
    let effects = update(&mut app, key(KeyCode::Home));
    assert_eq!(
        effects,
        vec![Effect::ReadHistory {
            session_id: "s1".into(),
            lines: HISTORY_MAX,
        }]
    );
    history(&mut app, 1, 300);
    assert_eq!(app.scroll.as_ref().unwrap().offset, 300 - rows);
    // Home again: all of it is here, no read.
    assert!(update(&mut app, key(KeyCode::Home)).is_empty());
}

#[test]
fn scrolling_past_the_lines_read_reads_further_back_up_to_the_cap() {
    let mut app = app();
    update(&mut app, key(KeyCode::PageUp));
    history(&mut app, 501, 1000);
    // Every line asked for came back: there may be more.
    let mut asked = Vec::new();
    for _ in 0..200 {
        for effect in update(&mut app, key(KeyCode::PageUp)) {
            if let Effect::ReadHistory { lines, .. } = effect {
                asked.push(lines);
            }
        }
    }
    assert_eq!(asked.first(), Some(&1000));
    assert!(asked.iter().all(|n| *n <= HISTORY_MAX), "{asked:?}");
    // PageDown back to the bottom leaves the history.
    for _ in 0..2000 {
        update(&mut app, key(KeyCode::PageDown));
    }
    assert!(app.scroll.is_none());
}

#[test]
fn slash_searches_in_the_panes_view_and_filters_in_the_list() {
    let mut app = app();
    app.view = View::List;
    update(&mut app, key(KeyCode::Char('/')));
    assert_eq!(app.mode(), Mode::Filter);
    update(&mut app, key(KeyCode::Esc));
    app.view = View::Panes;
    update(&mut app, key(KeyCode::Char('/')));
    assert_eq!(app.mode(), Mode::Search);
    typed(&mut app, "err");
    let effects = update(&mut app, key(KeyCode::Enter));
    assert_eq!(
        effects,
        vec![Effect::Search {
            session_id: "s1".into(),
            pattern: "err".into(),
            cursor: None,
        }]
    );
    assert_eq!(app.mode(), Mode::Normal);
    // The status line offers the view's keys: search, not filter.
    let hints = keymap::hints(Mode::Normal, View::Panes);
    assert!(hints.contains(&("/", "search")), "{hints:?}");
    assert!(!hints.contains(&("/", "filter")), "{hints:?}");
    assert!(keymap::hints(Mode::Normal, View::List).contains(&("/", "filter")));
}

#[test]
fn hits_are_shown_newest_first_and_n_pages_with_the_cursor() {
    let mut app = app();
    let effects = update(
        &mut app,
        Event::Found {
            session_id: "s1".into(),
            pattern: "err".into(),
            more: false,
            found: Ok(found(vec![hit(900), hit(100)], 3, Some("c1"), 1000)),
        },
    );
    // Hit 1 (line 900) needs the last 101 lines and the view's rows at least.
    assert!(matches!(&effects[..], [Effect::ReadHistory { lines, .. }] if *lines >= 101));
    assert_eq!(app.message.as_deref(), Some("/err: hit 1 of 3"));
    history(&mut app, 1, 1000);
    let scroll = app.scroll.clone().unwrap();
    let bottom = scroll.lines.len() - scroll.offset;
    let top = bottom - rows(&app);
    assert!(
        (top..bottom).contains(&899),
        "line 900 in view: {top}..{bottom}"
    );
    // n: the next hit is among the lines read.
    assert!(update(&mut app, key(KeyCode::Char('n'))).is_empty());
    assert_eq!(app.message.as_deref(), Some("/err: hit 2 of 3"));
    let scroll = app.scroll.clone().unwrap();
    let bottom = scroll.lines.len() - scroll.offset;
    assert!((bottom - rows(&app)..bottom).contains(&99));
    // n again: past the page, the engine's cursor reads the next one.
    let effects = update(&mut app, key(KeyCode::Char('n')));
    assert_eq!(
        effects,
        vec![Effect::Search {
            session_id: "s1".into(),
            pattern: "err".into(),
            cursor: Some("c1".into()),
        }]
    );
    update(
        &mut app,
        Event::Found {
            session_id: "s1".into(),
            pattern: "err".into(),
            more: true,
            found: Ok(found(vec![hit(50)], 1, None, 1000)),
        },
    );
    assert_eq!(app.message.as_deref(), Some("/err: hit 3 of 3"));
    update(&mut app, key(KeyCode::Char('n')));
    assert_eq!(
        app.message.as_deref(),
        Some("/err: hit 3 of 3: the oldest hit")
    );
    // N goes back to newer hits.
    update(&mut app, key(KeyCode::Char('N')));
    update(&mut app, key(KeyCode::Char('N')));
    assert_eq!(app.message.as_deref(), Some("/err: hit 1 of 3"));
    // Esc leaves the history and the search.
    update(&mut app, key(KeyCode::Esc));
    assert!(app.scroll.is_none() && app.search.is_none());
}

#[test]
fn a_bad_regex_shows_the_engines_error() {
    let mut app = app();
    let error = "invalid pattern `(`: unclosed group".to_string();
    let effects = update(
        &mut app,
        Event::Found {
            session_id: "s1".into(),
            pattern: "(".into(),
            more: false,
            found: Err(error.clone()),
        },
    );
    assert!(effects.is_empty());
    assert_eq!(app.message, Some(error));
    assert!(app.search.is_none());
    update(&mut app, key(KeyCode::Char('n')));
    assert_eq!(
        app.message.as_deref(),
        Some("no search in this pane: / searches")
    );
}

#[test]
fn e_lists_the_selected_workflows_problems() {
    let mut app = app();
    app.view = View::List;
    let effects = update(&mut app, key(KeyCode::Char('e')));
    assert_eq!(effects, vec![Effect::LoadProblems("broken".into())]);
    let mut v = Violation::error("unknown_next_state", "/states/a", "no state b");
    v.line = Some(4);
    v.column = Some(7);
    update(
        &mut app,
        Event::Problems {
            workflow: "broken".into(),
            problems: Ok(("broken.yaml".into(), vec![v.clone(), v])),
        },
    );
    assert_eq!(app.mode(), Mode::Problems);
    update(&mut app, key(KeyCode::Char('j')));
    assert_eq!(problems_open(&app).unwrap().top, 1);
    update(&mut app, key(KeyCode::Esc));
    assert_eq!(app.mode(), Mode::Normal);
    assert!(problems_open(&app).is_none());
    // A workflow without problems says so instead.
    update(
        &mut app,
        Event::Problems {
            workflow: "broken".into(),
            problems: Ok(("broken.yaml".into(), Vec::new())),
        },
    );
    assert_eq!(app.mode(), Mode::Normal);
    assert_eq!(app.message.as_deref(), Some("broken has no problems"));
}
