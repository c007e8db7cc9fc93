//! A past run's recording replayed in a pane of the studio: the real binary in a terminal,
//! the runs view (`h`), `p`, and the run's output drawn again in the new pane.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::studio::{expect, quit};
use flowdeck::term::{TermConfig, Terminals};

const SAYER: &str = "name: sayer\ndescription: Says a number.\ninitial_state: a\nstates:\n  a: { action: { tool: run_command, params: { command: 'echo replayed-$((6*7))' } } }\n";

#[tokio::test]
async fn p_in_the_runs_view_replays_the_selected_run_in_a_pane() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sayer.yaml"), SAYER).unwrap();
    common::run_to_success(dir.path(), "sayer");

    let terminals = Terminals::new(TermConfig::default());
    let studio = common::studio::studio(&terminals, dir.path(), 100, 30);
    expect(&studio, "sayer").await;
    studio.send_text("h", "test").unwrap();
    expect(&studio, r"completed ✓ .* recorded").await;
    studio.send_text("p", "test").unwrap();
    // The pane's tab, then what the run's terminal showed, played again.
    expect(&studio, r"replay-r\d+").await;
    expect(&studio, "replayed-42").await;
    quit(&studio).await;
    terminals.close_all().await;
}
