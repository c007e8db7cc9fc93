//! `search_output` through the engine, on real bash sessions: 10,000 lines, context, both
//! orders, paging with the cursor while output arrives and old history is dropped, bad
//! patterns, and the screen of full-screen programs.
// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use flowdeck::engine::search::Source;
use flowdeck::engine::{Actor, Engine, EngineConfig, EngineError, SearchResult};
use flowdeck::mcp::errors::ToolError;
use flowdeck::term::TermConfig;
use flowdeck::workflow::action::{OpenTerminalParams, SearchOutputParams, SendInputParams};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use crate::common;
use common::params;

/// An engine whose sessions keep `history_lines` lines.
fn engine(history_lines: usize) -> (Arc<Engine>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(
        dir.path(),
        EngineConfig {
            terminals: TermConfig {
                history_lines,
                kill_grace: Duration::from_millis(300),
                ..TermConfig::default()
            },
            watch: false,
            ..EngineConfig::default()
        },
    )
    .unwrap();
    (engine, dir)
}

async fn bash(e: &Engine) -> String {
    e.open_terminal(
        &params::<OpenTerminalParams>(json!({
            "command": ["bash", "--norc", "--noprofile"],
            "env": {"PS1": "$ ", "HISTFILE": "/dev/null"},
        })),
        &Actor::Cli,
    )
    .await
    .unwrap()
    .session_id
}

/// Types a line and waits (at most 30 s) for `pattern` in what it prints.
async fn run(e: &Engine, id: &str, line: &str, pattern: &str) {
    run_until(e, id, line, pattern, "last_input").await;
}

/// Types a line and waits (at most 30 s) for `pattern` in the output `since` names.
async fn run_until(e: &Engine, id: &str, line: &str, pattern: &str, since: &str) {
    e.send_input(
        id,
        &params::<SendInputParams>(json!({"input_text": format!("{line}\n")})),
        &Actor::Cli,
    )
    .unwrap();
    common::engine_expect(e, id, pattern, since).await;
}

fn search(e: &Engine, id: &str, args: Value) -> SearchResult {
    e.search_output(id, &params::<SearchOutputParams>(args))
        .unwrap_or_else(|err| panic!("search_output failed: {err}"))
}

/// Every page from `args` on: the hits as (line, text), and the pages.
fn every_page(e: &Engine, id: &str, mut args: Value) -> (Vec<(u64, String)>, usize) {
    let mut hits = Vec::new();
    for pages in 1.. {
        let page = search(e, id, args.clone());
        hits.extend(page.found.hits.iter().map(|h| (h.line, h.text.clone())));
        match page.found.next_cursor {
            Some(cursor) => args["cursor"] = json!(cursor),
            None => return (hits, pages),
        }
        assert!(pages < 10_000, "paging does not end");
    }
    unreachable!()
}

/// 10,000 numbered lines, and `ERROR near N` after lines 500, 1500, ..., 9500.
const TEN_THOUSAND: &str =
    "seq -f 'line %g' 1 10000 | awk '{print} NR%1000==500 {print \"ERROR near \" NR}'; echo DONE";

async fn ten_thousand_lines(e: &Engine) -> String {
    let id = bash(e).await;
    run(e, &id, TEN_THOUSAND, "^DONE$").await;
    id
}

#[tokio::test]
async fn ten_thousand_lines_with_context_in_both_orders() {
    let (e, _dir) = engine(10_000);
    let id = ten_thousand_lines(&e).await;
    let newest = search(
        &e,
        &id,
        json!({"pattern": "^ERROR near (\\d+)$", "context": 2}),
    );
    assert_eq!(newest.limit, 20);
    assert_eq!(newest.context, 2);
    assert_eq!(newest.found.total_hits, 10);
    assert!(!newest.found.truncated);
    assert!(newest.found.next_cursor.is_none());
    assert!(!newest.found.screen_searched);
    let texts: Vec<&str> = newest.found.hits.iter().map(|h| h.text.as_str()).collect();
    let expected: Vec<String> = (0..10)
        .rev()
        .map(|k| format!("ERROR near {}", k * 1000 + 500))
        .collect();
    assert_eq!(texts, expected);
    let hit = &newest.found.hits[0];
    assert_eq!(hit.source, Source::History);
    assert_eq!((hit.column, hit.length), (0, "ERROR near 9500".len()));
    assert_eq!(hit.matched_text, "ERROR near 9500");
    let around: Vec<(u64, &str)> = hit
        .before
        .iter()
        .chain(&hit.after)
        .map(|c| (c.line, c.text.as_str()))
        .collect();
    let n = hit.line;
    assert_eq!(
        around,
        [
            (n - 2, "line 9499"),
            (n - 1, "line 9500"),
            (n + 1, "line 9501"),
            (n + 2, "line 9502")
        ]
    );
    // Line numbers are the lines' places in the output: "line k" and the ERROR lines
    // before it account for every number.
    let line_9500 = search(&e, &id, json!({"pattern": "^line 9500$"}))
        .found
        .hits[0]
        .line;
    let line_1 = search(&e, &id, json!({"pattern": "^line 1$"})).found.hits[0].line;
    assert_eq!(line_9500 - line_1, 9499 + 9);
    assert_eq!(hit.line, line_9500 + 1);
    assert!(newest.found.first_line.unwrap() <= line_1);
    assert!(newest.found.last_line.unwrap() > line_9500 + 500);
    assert!(newest.found.lines_searched > 10_010);

    let oldest = search(
        &e,
        &id,
        json!({"pattern": "^error NEAR", "ignore_case": true, "order": "oldest_first", "limit": 3}),
    );
    let texts: Vec<&str> = oldest.found.hits.iter().map(|h| h.text.as_str()).collect();
    assert_eq!(
        texts,
        ["ERROR near 500", "ERROR near 1500", "ERROR near 2500"]
    );
    assert_eq!(oldest.found.total_hits, 10);
    assert!(oldest.found.next_cursor.is_some());

    // A common pattern: a full page, the count capped.
    let common = search(&e, &id, json!({"pattern": "line"}));
    assert_eq!(common.found.hits.len(), 20);
    assert_eq!(common.found.hits[0].text, "line 10000");
    assert_eq!(
        (common.found.total_hits, common.found.truncated),
        (1000, true)
    );
    // Asks beyond the bounds are clamped.
    let clamped = search(
        &e,
        &id,
        json!({"pattern": "x", "limit": 100000, "context": 99}),
    );
    assert_eq!((clamped.limit, clamped.context), (200, 20));
    e.shutdown().await;
}

#[tokio::test]
async fn paging_gives_every_hit_once_while_output_arrives_and_history_is_dropped() {
    let (e, _dir) = engine(10_000);
    let id = ten_thousand_lines(&e).await;
    // 100 hits (77, 177, ..., 9977), seven a page, in both orders.
    let expected: Vec<String> = (0..100).map(|k| format!("line {}", k * 100 + 77)).collect();
    for order in ["oldest_first", "newest_first"] {
        let (hits, pages) = every_page(
            &e,
            &id,
            json!({"pattern": "^line \\d*77$", "order": order, "limit": 7}),
        );
        assert_eq!(pages, 15, "{order}");
        let mut texts: Vec<String> = hits.iter().map(|(_, t)| t.clone()).collect();
        let mut lines: Vec<u64> = hits.iter().map(|(n, _)| *n).collect();
        if order == "newest_first" {
            texts.reverse();
            lines.reverse();
        }
        assert_eq!(texts, expected, "{order}");
        assert!(lines.windows(2).all(|w| w[0] < w[1]), "{order}: {lines:?}");
    }

    // Newest first, pages go on below where they ended: output that arrives meanwhile is
    // for a new search.
    let args = json!({"pattern": "^ERROR", "limit": 3});
    let first = search(&e, &id, args.clone());
    run(&e, &id, "printf '%s\\n' ERR''OR-late", "^ERROR-late$").await;
    let mut rest = args.clone();
    rest["cursor"] = json!(first.found.next_cursor.clone().unwrap());
    let (more, _) = every_page(&e, &id, rest);
    let all: Vec<String> = first
        .found
        .hits
        .iter()
        .map(|h| h.text.clone())
        .chain(more.into_iter().map(|(_, t)| t))
        .collect();
    let expected: Vec<String> = (0..10)
        .rev()
        .map(|k| format!("ERROR near {}", k * 1000 + 500))
        .collect();
    assert_eq!(all, expected);
    assert_eq!(search(&e, &id, args).found.hits[0].text, "ERROR-late");

    // Oldest first, the last pages reach the output that arrived meanwhile.
    let args = json!({"pattern": "^ERROR", "limit": 4, "order": "oldest_first"});
    let first = search(&e, &id, args.clone());
    run(&e, &id, "printf '%s\\n' ERR''OR-later", "^ERROR-later$").await;
    let mut rest = args;
    rest["cursor"] = json!(first.found.next_cursor.clone().unwrap());
    let (more, _) = every_page(&e, &id, rest);
    let texts: Vec<&str> = more.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(texts.len(), 8, "{texts:?}");
    assert_eq!(&texts[6..], ["ERROR-late", "ERROR-later"]);
    e.shutdown().await;
}

#[tokio::test]
async fn history_dropped_between_pages_is_counted_and_numbers_stay() {
    // 200 lines of history: each new input lets the lines before it go.
    let (e, _dir) = engine(200);
    let id = bash(&e).await;
    run(&e, &id, "seq -f 'old %g' 1 150", "^old 150$").await;
    let args = json!({"pattern": "^old", "order": "oldest_first", "limit": 10});
    let first = search(&e, &id, args.clone());
    assert_eq!(first.found.hits.len(), 10);
    assert_eq!(first.found.hits[9].text, "old 10");
    run(&e, &id, "seq -f 'new %g' 1 300", "^new 300$").await;
    let numbered = search(&e, &id, json!({"pattern": "^new 250$"})).found.hits[0].line;
    // A small input lets the old lines go; numbers stay what they were.
    run(&e, &id, "echo x", "^x$").await;
    let again = search(&e, &id, json!({"pattern": "^new 250$"}));
    assert_eq!(again.found.hits[0].line, numbered);
    assert!(again.found.first_line.unwrap() > first.found.first_line.unwrap());
    let mut rest = args;
    rest["cursor"] = json!(first.found.next_cursor.clone().unwrap());
    let second = search(&e, &id, rest);
    assert!(second.found.hits.is_empty(), "{:?}", second.found.hits);
    assert!(
        second.found.missed_lines >= 140,
        "{}",
        second.found.missed_lines
    );
    assert!(second.found.next_cursor.is_none());

    // Newest first: the page after a flood goes on below, and counts what went.
    let args = json!({"pattern": "^new", "limit": 10});
    let first = search(&e, &id, args.clone());
    assert_eq!(first.found.hits[0].text, "new 300");
    let cursor_line = first.found.hits[9].line;
    run(&e, &id, "seq -f 'more %g' 1 300", "^more 300$").await;
    run(&e, &id, "echo y", "^y$").await;
    let mut rest = args;
    rest["cursor"] = json!(first.found.next_cursor.clone().unwrap());
    let second = search(&e, &id, rest);
    assert!(second.found.hits.iter().all(|h| h.line < cursor_line));
    assert!(second.found.missed_lines > 0);
    assert!(second.found.next_cursor.is_none());
    e.shutdown().await;
}

#[tokio::test]
async fn bad_patterns_cursors_and_sessions_are_clear_errors() {
    let (e, _dir) = engine(10_000);
    let id = bash(&e).await;
    for (pattern, code, says) in [
        ("(unclosed", "invalid_regex", "unclosed"),
        ("(a{1000}){1000}", "regex_too_large", "more than 1 MiB"),
        (&*"a".repeat(1001), "regex_too_large", "at most 1000 bytes"),
        ("", "invalid_regex", "empty"),
    ] {
        let error = e
            .search_output(&id, &params(json!({"pattern": pattern})))
            .unwrap_err();
        assert!(
            matches!(error, EngineError::Pattern { .. }),
            "{pattern}: {error}"
        );
        assert_eq!(error.code(), code, "{pattern}");
        let payload = ToolError::from(error);
        assert_eq!(payload.error_code, "INVALID_PATTERN");
        assert_eq!(payload.category, "validation");
        assert_eq!(payload.context["pattern"], json!(pattern));
        assert!(payload.message.contains(says), "{}", payload.message);
    }
    run(&e, &id, "echo one; echo two", "^two$").await;
    let newest = search(&e, &id, json!({"pattern": "o", "limit": 1}));
    let other_order = e
        .search_output(
            &id,
            &params(json!({"pattern": "x", "order": "oldest_first",
                "cursor": newest.found.next_cursor.clone().unwrap()})),
        )
        .unwrap_err();
    assert!(
        other_order.to_string().contains("newest_first"),
        "{other_order}"
    );
    // Malformed, and of the first format, which named no session.
    for cursor in ["garbage", "c2.s1.0.n.h.1.2", "n.h.1.2.0", "n.h.-1.2.0"] {
        let error = e
            .search_output(&id, &params(json!({"pattern": "x", "cursor": cursor})))
            .unwrap_err();
        assert_eq!(
            ToolError::from(error).error_code,
            "INVALID_ARGUMENTS",
            "{cursor}"
        );
    }
    let missing = e
        .search_output("nope", &params(json!({"pattern": "x"})))
        .unwrap_err();
    assert_eq!(ToolError::from(missing).error_code, "SESSION_NOT_FOUND");
    // Unknown fields are refused, as for every tool's parameters.
    assert!(
        serde_json::from_value::<SearchOutputParams>(json!({"pattern": "x", "regex": "y"}))
            .is_err()
    );
    e.shutdown().await;
}

/// Issue 36: a cursor names its session. s2's cursor given for s1 was read as a place in
/// s1's history (its lines 2 and 1), skipping s1's newer matches without a word.
#[tokio::test]
async fn a_cursor_of_another_session_is_refused_naming_both() {
    let (e, _dir) = engine(10_000);
    let many = "for i in $(seq 1 300); do echo \"match $i\"; done; echo DONE";
    let s1 = bash(&e).await;
    let s2 = bash(&e).await;
    run(&e, &s1, many, "^DONE$").await;
    run(&e, &s2, many, "^DONE$").await;
    let args =
        |cursor: Option<String>| json!({"pattern": "^match \\d+$", "limit": 10, "cursor": cursor});
    let theirs = search(&e, &s2, args(None));
    let cursor = theirs.found.next_cursor.clone().unwrap();
    let error = e
        .search_output(&s1, &params(args(Some(cursor.clone()))))
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains(&format!("`{s2}`")) && message.contains(&format!("`{s1}`")),
        "{message}"
    );
    let payload = ToolError::from(error);
    assert_eq!(payload.error_code, "INVALID_ARGUMENTS", "{message}");
    assert_eq!(payload.context["session_id"], json!(s1));
    assert_eq!(payload.context["cursor_session_id"], json!(s2));
    assert_eq!(payload.context["reason"], json!("foreign_cursor"));
    // With its own session, the same cursor goes on where s2's page ended.
    let next = search(&e, &s2, args(Some(cursor)));
    assert_eq!(next.found.hits[0].text, "match 290");
    // And s1's own pages give its 300 matches, newest first.
    let (hits, _) = every_page(&e, &s1, args(None));
    let lines: Vec<&str> = hits.iter().map(|(_, text)| text.as_str()).collect();
    let expected: Vec<String> = (1..=300).rev().map(|i| format!("match {i}")).collect();
    assert_eq!(lines, expected);
    e.shutdown().await;
}

#[tokio::test]
async fn a_full_screen_programs_screen_is_searched_and_marked() {
    let (e, _dir) = engine(10_000);
    let id = bash(&e).await;
    // Row 5, column 10 of the alternate screen; the typed line cannot match the pattern.
    run_until(
        &e,
        &id,
        "printf '\\033[?1049h\\033[2J\\033[5;10HSCREEN''_MARK\\033[1;1H'; sleep 60",
        "SCREEN_MARK",
        "screen",
    )
    .await;
    let found = search(&e, &id, json!({"pattern": "SCREEN_MARK", "context": 1}));
    assert!(found.found.screen_searched);
    let first = &found.found.hits[0];
    assert_eq!(
        (first.source, first.line, first.column),
        (Source::Screen, 5, 9)
    );
    assert_eq!(first.text, "         SCREEN_MARK");
    assert_eq!(first.before.len(), 1);
    // The program's text is in the history too, stripped of its cursor moves.
    assert_eq!(found.found.total_hits, 2);
    assert_eq!(found.found.hits[1].source, Source::History);
    let oldest = search(
        &e,
        &id,
        json!({"pattern": "SCREEN_MARK", "order": "oldest_first"}),
    );
    let sources: Vec<Source> = oldest.found.hits.iter().map(|h| h.source).collect();
    assert_eq!(sources, [Source::History, Source::Screen]);

    let less = std::process::Command::new("sh")
        .args(["-c", "command -v less"])
        .output()
        .is_ok_and(|o| o.status.success());
    if less {
        let other = bash(&e).await;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rows.txt");
        let rows: String = (1..=200).map(|i| format!("row {i}\n")).collect();
        std::fs::write(&file, rows).unwrap();
        let line = format!("LESS= less {}", file.display());
        run_until(&e, &other, &line, "^row 29$", "screen").await;
        let found = search(&e, &other, json!({"pattern": "^row 2\\d$", "limit": 10}));
        let on_screen: BTreeSet<u64> = found
            .found
            .hits
            .iter()
            .filter(|h| h.source == Source::Screen)
            .map(|h| h.line)
            .collect();
        assert_eq!(on_screen, (20..=29).collect(), "{:?}", found.found.hits);
        assert_eq!(found.found.hits[0].text, "row 29");
    } else {
        eprintln!("less is not installed: its part of the test is skipped");
    }
    e.shutdown().await;
}
