//! Runs' recordings: every run records what its terminal showed as an asciicast v2 file
//! beside its journal, read back here event by event and played by asciinema's own player.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use flowdeck::engine::{Actor, Engine, FinalState};
use flowdeck::term::recording::cast::{CastEvent, CastReader};
use flowdeck::term::recording::{DEFAULT_CAP, RecordOptions};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::common;

const TOKEN: &str = "Tok-3n-s3cret";

const RECORDED: &str = r#"name: recorded
description: Prints, with a secret among its inputs.
arguments:
  TOKEN: { description: a token, secret: true }
initial_state: greet
states:
  greet:
    action: { tool: run_command, params: { command: 'echo "hello $TOKEN"; printf "naïve ✓ %s\n" done' } }
    transitions: [ { condition: always, next_state: count } ]
  count:
    action: { tool: run_command, params: { command: 'for i in 1 2 3; do echo line-$i; done' } }
"#;

fn engine_with(manifest: &str, cap: u64) -> (tempfile::TempDir, Arc<Engine>) {
    let dir = tempfile::tempdir().unwrap();
    let name = manifest
        .lines()
        .next()
        .unwrap()
        .trim_start_matches("name: ");
    std::fs::write(dir.path().join(format!("{name}.yaml")), manifest).unwrap();
    let config = flowdeck::engine::EngineConfig {
        recording_cap: Some(cap),
        ..common::test_config(8, false)
    };
    let engine = Engine::open(dir.path(), config).unwrap();
    (dir, engine)
}

/// A recording's events, checked to be in time order, and its output joined.
fn read(
    path: &Path,
) -> (
    flowdeck::term::recording::cast::Header,
    Vec<CastEvent>,
    String,
) {
    let reader = CastReader::open(path).unwrap();
    let header = reader.header.clone();
    let events: Vec<CastEvent> = reader.map(Result::unwrap).collect();
    for pair in events.windows(2) {
        assert!(pair[0].time() <= pair[1].time(), "out of order: {pair:?}");
    }
    let output = events
        .iter()
        .filter_map(|e| match e {
            CastEvent::Output(_, text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    (header, events, output)
}

/// What `asciinema cat` prints of a recording, when asciinema is installed.
fn asciinema_cat(path: &Path) -> Option<String> {
    let asciinema = common::asciinema()?;
    let out = std::process::Command::new(asciinema)
        .arg("cat")
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "asciinema cat {} failed: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runs_recording_is_an_asciicast_of_its_terminal_without_its_secrets() {
    let (dir, engine) = engine_with(RECORDED, DEFAULT_CAP);
    let result = engine
        .run(common::run_request("recorded", &[("TOKEN", TOKEN)]))
        .await
        .unwrap();
    assert_eq!(result.final_state, FinalState::Completed, "{result:?}");
    let runs = dir.path().join(".flowdeck/runs");
    let path = runs.join(format!("{}.cast", result.run_id));
    assert_eq!(result.recordings, vec![path.display().to_string()]);

    let (header, events, output) = read(&path);
    // A run's own session has the default size.
    let size = flowdeck::term::OpenOptions::default().size;
    assert_eq!((header.width, header.height), (size.cols, size.rows));
    assert!(
        header.title.as_deref().unwrap().contains(&result.run_id),
        "{header:?}"
    );
    assert!(events.len() > 2, "{events:?}");
    // What a person watching the pane saw: the commands as typed, their output, the
    // secret masked as in the journal.
    for seen in [
        "hello ********",
        "naïve ✓ done",
        "line-1\r\nline-2\r\nline-3",
    ] {
        assert!(output.contains(seen), "{seen:?} is not in {output:?}");
    }
    let file = std::fs::read_to_string(&path).unwrap();
    assert!(
        !file.contains(TOKEN),
        "the secret is in the recording:\n{file}"
    );
    // flowdeck's own plumbing (the framing of run_command) stays off it, as off the screen.
    assert!(!file.contains("__flowdeck"), "{file}");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    // Its status names the recording, then asciinema plays it.
    let status = engine.run_status(&result.run_id).unwrap();
    assert_eq!(status.result.unwrap().recordings, result.recordings);
    if let Some(played) = asciinema_cat(&path) {
        assert!(played.contains("hello ********"), "{played}");
        assert!(played.contains("line-3"), "{played}");
    }

    // The history's purge takes the recording with the journal.
    engine.purge_history(Some("recorded"), &Actor::Cli).await;
    assert!(!path.exists(), "the recording outlived its run's history");
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_stops_its_recording_at_the_cap_and_says_what_was_left_out() {
    const CAP: u64 = 64 << 10;
    let flood = "name: flood\ndescription: Floods.\ninitial_state: a\nstates:\n  a: { action: { tool: run_command, params: { command: 'seq 1 200000', timeout: 120 } } }\n";
    let (dir, engine) = engine_with(flood, CAP);
    let result = engine.run(common::run_request("flood", &[])).await.unwrap();
    assert_eq!(result.final_state, FinalState::Completed, "{result:?}");
    let path = PathBuf::from(&result.recordings[0]);
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size <= CAP, "{size} bytes, over the cap of {CAP}");
    let (_, events, output) = read(&path);
    let Some(CastEvent::Output(_, last)) = events.last() else {
        panic!("no output at the end: {events:?}");
    };
    assert!(
        last.contains("the recording stopped at its cap of 65536 bytes")
            && last.contains("were not recorded"),
        "{last:?}"
    );
    assert!(output.contains("\r\n1\r\n2\r\n3\r\n"), "{output:.200}");
    if let Some(played) = asciinema_cat(&path) {
        assert!(
            played.contains("were not recorded"),
            "{}",
            &played[played.len().saturating_sub(300)..]
        );
    }
    drop(dir);
    engine.shutdown().await;
}

/// Records `session` into `path`, masking `hunter2` as `***`.
fn record(
    session: &flowdeck::term::Session,
    path: &Path,
    title: &str,
) -> flowdeck::term::recording::Recording {
    session
        .record(RecordOptions {
            path: path.to_path_buf(),
            title: title.into(),
            secrets: vec!["hunter2".into()],
            mask: "***".into(),
            cap: DEFAULT_CAP,
        })
        .unwrap()
}

/// Waits until `pattern` has been shown in `session`.
async fn shown(session: &flowdeck::term::Session, pattern: &str) {
    session
        .await_output(common::spec(
            pattern,
            flowdeck::term::Since::All,
            common::LONG,
        ))
        .await
        .unwrap();
}

/// Ends a recording (its thread joined off the runtime) and checks it was written whole.
async fn finished(
    recording: flowdeck::term::recording::Recording,
) -> flowdeck::term::recording::Recorded {
    let recorded = tokio::task::spawn_blocking(move || recording.finish())
        .await
        .unwrap();
    assert_eq!(recorded.error, None);
    recorded
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_begun_mid_session_starts_with_the_screen_and_follows_resizes() {
    let terminals = flowdeck::term::Terminals::new(flowdeck::term::TermConfig::default());
    let session = common::bash(&terminals, common::LONG).await;
    session.send_text("echo before-$((6*7))\n", "test").unwrap();
    shown(&session, "^before-42").await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mid.cast");
    let recording = record(&session, &path, "mid");
    session.resize(100, 30).unwrap();
    session
        .send_text("echo after-$((6*7)) hunter2\n", "test")
        .unwrap();
    shown(&session, "^after-42").await;
    let recorded = finished(recording).await;
    assert_eq!(recorded.bytes, std::fs::metadata(&path).unwrap().len());
    let (_, events, output) = read(&path);
    let CastEvent::Output(t, first) = &events[0] else {
        panic!("{events:?}");
    };
    assert_eq!(*t, 0.0);
    assert!(
        first.contains("before-42"),
        "the screen as it was: {first:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, CastEvent::Resize(_, 100, 30))),
        "{events:?}"
    );
    assert!(output.contains("after-42 ***"), "{output:?}");
    assert!(!output.contains("hunter2"), "{output:?}");
    terminals.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_cut_by_a_resize_or_learned_late_is_masked_in_the_whole_file() {
    let terminals = flowdeck::term::Terminals::new(flowdeck::term::TermConfig::default());
    let session = common::bash(&terminals, common::LONG).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("late.cast");
    let recording = record(&session, &path, "late");
    // Shown before anyone knew it was a secret.
    session
        .send_text("echo early-$((1+1)) learned-later\n", "test")
        .unwrap();
    shown(&session, "^early-2").await;
    recording.mask(vec!["learned-later".into()]);
    // Half a secret, a resize, the other half (`read -s` does not echo the Enter between).
    session
        .send_text(
            "printf hun; read -rs x; printf 'ter2 done-%s\\n' $((6*7))\n",
            "test",
        )
        .unwrap();
    shown(&session, "hun$").await;
    session.resize(90, 20).unwrap();
    session.send_text("\n", "test").unwrap();
    shown(&session, "done-42").await;
    finished(recording).await;
    let file = std::fs::read_to_string(&path).unwrap();
    assert!(!file.contains("learned-later"), "{file}");
    let (_, events, output) = read(&path);
    assert!(output.contains("early-2 ***"), "{output:?}");
    // Both halves of the one cut by the resize were held and masked whole.
    assert!(output.contains("\r*** done-42"), "{output:?}");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, CastEvent::Resize(_, 90, 20))),
        "{events:?}"
    );
    terminals.close_all().await;
}
