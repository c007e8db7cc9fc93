//! A past run's recording replayed in a pane of the studio: the real binary in a terminal,
//! the runs view (`h`), `p`, and the run's output drawn again in the new pane, which opens
//! focused with the player's keys (issue 39): it stays at the end, goes back to the start
//! and from state to state, and `q` ends it.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::studio::{expect, quit};
use flowdeck::term::{Content, TermConfig, Terminals};

const SAYER: &str = "name: sayer\ndescription: Says a number, then another.\ninitial_state: a\nstates:\n  a:\n    action: { tool: run_command, params: { command: 'echo replayed-$((6*7))' } }\n    transitions: [ { condition: always, next_state: b } ]\n  b: { action: { tool: run_command, params: { command: 'echo second-$((2*3))' } } }\n";

#[tokio::test]
async fn p_in_the_runs_view_replays_the_selected_run_in_a_pane_with_the_players_keys() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sayer.yaml"), SAYER).unwrap();
    common::run_to_success(dir.path(), "sayer");

    let terminals = Terminals::new(TermConfig::default());
    let studio = common::studio::studio(&terminals, dir.path(), 100, 30);
    expect(&studio, "sayer").await;
    studio.send_text("h", "test").unwrap();
    expect(&studio, r"completed ✓ .* recorded").await;
    studio.send_text("p", "test").unwrap();
    // The pane's tab, then what the run's terminal showed, played again to its end, where
    // it stays.
    expect(&studio, r"replay-r\d+").await;
    expect(&studio, "replayed-42").await;
    expect(&studio, "second-6").await;
    expect(&studio, r"state completed .*end").await;
    // The pane has the keyboard: paused, back to the start, then state by state.
    studio.send_text(" ", "test").unwrap();
    expect(&studio, r"state completed .*paused").await;
    studio.send_text("\x1b[D\x1b[D\x1b[D", "test").unwrap();
    expect(&studio, r"state - +0:00\.0").await;
    studio.send_text("]", "test").unwrap();
    expect(&studio, r"state a +").await;
    studio.send_text("]", "test").unwrap();
    expect(&studio, r"state b +").await;
    let screen = studio.content(Content::Screen);
    assert!(screen.contains("replayed-42"), "{screen}");
    assert!(!screen.contains("second-6"), "{screen}");
    // `q` ends the replay; Ctrl-g gives the studio its keys back.
    studio.send_text("q", "test").unwrap();
    common::studio::expect_gone(&studio, r"state b +").await;
    studio.send_text("\x07", "test").unwrap();
    quit(&studio).await;
    terminals.close_all().await;
}
