//! The studio runs a workflow on other machines (issue 25): the inputs form's last field
//! takes hosts, a fleet's runs show one pane per host titled with it, and the status line
//! says how the fleet ended. The real binary in a PTY, a real sshd on loopback.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::sshd::Sshd;
use common::studio::{expect, open, quit};
use flowdeck::term::{TermConfig, Terminals};

/// The studio on a folder holding `on_a_host`, with the fixture's ssh, its inputs form open:
/// what must live as long as the test, and the studio.
async fn form_open() -> (
    Sshd,
    tempfile::TempDir,
    tempfile::TempDir,
    Terminals,
    std::sync::Arc<flowdeck::term::Session>,
) {
    let sshd = tokio::task::spawn_blocking(Sshd::start).await.unwrap();
    let folder = tempfile::tempdir().unwrap();
    let runtime = tempfile::tempdir().unwrap();
    std::fs::write(
        folder.path().join("on_a_host.yaml"),
        common::sshd::ON_A_HOST,
    )
    .unwrap();
    let terminals = Terminals::new(TermConfig::default());
    let studio = open(
        &terminals,
        vec![
            env!("CARGO_BIN_EXE_flowdeck").to_string(),
            "--workflows".into(),
            folder.path().display().to_string(),
        ],
        None,
        (110, 32),
        vec![
            ("FLOWDECK_SSH_COMMAND".into(), sshd.ssh_command()),
            (
                "XDG_RUNTIME_DIR".into(),
                runtime.path().display().to_string(),
            ),
        ],
    );
    expect(&studio, "on_a_host").await;
    studio.send_text("r", "test").unwrap();
    expect(&studio, "on host").await;
    (sshd, folder, runtime, terminals, studio)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_started_from_the_inputs_form_shows_a_pane_per_host() {
    let (_sshd, _folder, _runtime, _terminals, studio) = form_open().await;
    // MESSAGE, TOKEN, then the hosts.
    studio.send_text("hi\tt0k3n\th1,h2\r", "test").unwrap();
    // Each host's run kept its terminal: a pane each, titled with its host.
    expect(&studio, r"on_a_host @h1").await;
    expect(&studio, r"on_a_host @h2").await;
    // The status line's last word: the fleet's count, or (its answer and the last run's
    // end crossing) that run's end.
    expect(
        &studio,
        r"on_a_host on 2 of 2 hosts: completed|on_a_host ended: completed",
    )
    .await;
    expect(&studio, r"result: completed").await;
    quit(&studio).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passphrase_ssh_asks_for_is_typed_in_the_runs_pane_and_the_run_goes_on() {
    let (_sshd, _folder, _runtime, _terminals, studio) = form_open().await;
    studio.send_text("hi\tt0k3n\tpassphrase\r", "test").unwrap();
    // ssh asks in the run's pane; the person focuses it and answers there.
    expect(&studio, "Enter passphrase").await;
    studio.send_text("i", "test").unwrap();
    expect(&studio, "FOCUS").await;
    studio
        .send_text(&format!("{}\r", common::sshd::PASSPHRASE), "test")
        .unwrap();
    expect(&studio, r"result: completed in").await;
    studio.send_text("\x07", "test").unwrap();
    quit(&studio).await;
}
