//! A workflow drafted in the studio from what a person typed in a shell pane: the real
//! binary in a terminal, `t`, the procedure typed in focus mode, `M` to leave out what came
//! before it, `W` and a name; the draft is saved as a new workflow and opens in the editor.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::studio::{expect, quit};
use flowdeck::term::{TermConfig, Terminals};

const SAYER: &str = "name: sayer\ndescription: Says a number.\ninitial_state: a\nstates:\n  a: { action: { tool: run_command, params: { command: 'echo said-$((6*7))' } } }\n";

#[tokio::test]
async fn w_drafts_a_workflow_from_the_panes_shell_and_opens_it_in_the_editor() {
    let dir = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sayer.yaml"), SAYER).unwrap();
    let terminals = Terminals::new(TermConfig::default());
    let studio = common::studio::studio(&terminals, dir.path(), 120, 36);
    expect(&studio, "sayer").await;
    studio.send_text("t", "test").unwrap();
    expect(&studio, r"(?m)^│\S*[$#] ").await;
    studio.send_text("i", "test").unwrap();
    // Before the mark: not in the draft.
    studio.send_text("echo before-the-mark\r", "test").unwrap();
    expect(&studio, r"(?m)^│before-the-mark").await;
    studio.send_text("\x07M", "test").unwrap();
    expect(&studio, "marked: a draft").await;
    studio.send_text("i", "test").unwrap();
    let made = format!("{}/from-the-pane", work.path().display());
    studio
        .send_text(&format!("mkdir -p {made}\r"), "test")
        .unwrap();
    studio.send_text("false\r", "test").unwrap();
    studio.send_text("echo typed-$((6*7))\r", "test").unwrap();
    expect(&studio, r"(?m)^│typed-42").await;
    studio.send_text("\x07W", "test").unwrap();
    expect(&studio, "Draft a workflow").await;
    studio.send_text("pane_draft\r", "test").unwrap();
    expect(&studio, "pane_draft drafted and saved").await;
    // The editor shows the draft.
    expect(&studio, "run_command").await;
    let saved = std::fs::read_to_string(dir.path().join("pane_draft.yaml")).unwrap();
    assert!(
        saved.contains(&format!("command: mkdir -p {made}")),
        "{saved}"
    );
    assert!(saved.contains("command: 'false'"), "{saved}");
    assert!(saved.contains("condition: failure"), "{saved}");
    assert!(!saved.contains("before-the-mark"), "{saved}");
    studio.send_text("\x1b", "test").unwrap();
    quit(&studio).await;
    terminals.close_all().await;
}
