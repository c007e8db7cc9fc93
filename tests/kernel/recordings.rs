//! Runs' recordings: every run records what its terminal showed as an asciicast v3 file
//! beside its journal (v2 when asked for), with a marker for each state it entered, read
//! back here event by event and read by asciinema's own tools (asciinema 3 converts the v3
//! files, asciinema 2 plays the v2 ones).

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use flowdeck::engine::{Actor, Engine, FinalState};
use flowdeck::term::recording::cast::{CastEvent, CastReader, Format};
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
    engine_recording(manifest, cap, Format::V3)
}

fn engine_recording(manifest: &str, cap: u64, format: Format) -> (tempfile::TempDir, Arc<Engine>) {
    let dir = tempfile::tempdir().unwrap();
    let name = manifest
        .lines()
        .next()
        .unwrap()
        .trim_start_matches("name: ");
    std::fs::write(dir.path().join(format!("{name}.yaml")), manifest).unwrap();
    let config = flowdeck::engine::EngineConfig {
        recording_cap: Some(cap),
        recording_format: format,
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

/// The text asciinema 3 converts a recording to (`asciinema convert -f txt`), when it is
/// installed.
fn asciinema3_text(path: &Path) -> Option<String> {
    let asciinema = common::asciinema3()?;
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("converted.txt");
    let out = std::process::Command::new(asciinema)
        .args(["convert", "--output-format", "txt"])
        .arg(path)
        .arg(&text)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "asciinema convert {} failed: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(std::fs::read_to_string(&text).unwrap())
}

/// asciinema 3 plays a recording in a terminal of its own (`asciinema play`, idle time cut
/// short) until it ends: `shown` appears, and it exits with 0. Nothing when it is not installed.
async fn asciinema3_plays(path: &Path, shown: &str) {
    let Some(asciinema) = common::asciinema3() else {
        return;
    };
    let terminals = flowdeck::term::Terminals::new(flowdeck::term::TermConfig::default());
    let program = vec![
        asciinema.display().to_string(),
        "play".into(),
        "--idle-time-limit".into(),
        "0.05".into(),
        path.display().to_string(),
    ];
    let session = terminals
        .open(flowdeck::term::OpenOptions {
            program: flowdeck::term::Program::Command(program),
            ..flowdeck::term::OpenOptions::default()
        })
        .unwrap();
    let seen = session
        .await_output(common::spec(
            shown,
            flowdeck::term::Since::All,
            common::LONG,
        ))
        .await
        .unwrap();
    assert_eq!(
        seen.outcome,
        flowdeck::term::WaitOutcome::Matched,
        "asciinema play: {}",
        seen.tail
    );
    let exit = common::poll_until(common::LONG, "asciinema play to end", || session.exit()).await;
    assert_eq!(exit.code, Some(0), "asciinema play: {exit}");
    terminals.close_all().await;
}

/// The names of a recording's markers, in order.
fn markers(events: &[CastEvent]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            CastEvent::Marker(_, name) => Some(name.as_str()),
            _ => None,
        })
        .collect()
}

/// Where in `events` the first one is that `matches`.
fn position(events: &[CastEvent], what: &str, matches: impl Fn(&CastEvent) -> bool) -> usize {
    events
        .iter()
        .position(matches)
        .unwrap_or_else(|| panic!("no {what} in {events:?}"))
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
    // asciicast v3: the terminal in the header, times as intervals.
    assert_eq!(header.format, Format::V3);
    let file = std::fs::read_to_string(&path).unwrap();
    let first: serde_json::Value = serde_json::from_str(file.lines().next().unwrap()).unwrap();
    // A run's own session has the default size.
    let size = flowdeck::term::OpenOptions::default().size;
    assert_eq!(
        first["term"],
        serde_json::json!({"cols": size.cols, "rows": size.rows, "type": "xterm-256color"}),
        "{first}"
    );
    assert_eq!((header.width, header.height), (size.cols, size.rows));
    // A marker for each state the run entered, in order, and one for how it ended; each
    // where its state's output begins.
    assert_eq!(markers(&events), ["greet", "count", "completed"]);
    let at = |name: &str| {
        position(
            &events,
            name,
            |e| matches!(e, CastEvent::Marker(_, n) if n == name),
        )
    };
    let printed = |text: &str| {
        position(
            &events,
            text,
            |e| matches!(e, CastEvent::Output(_, o) if o.contains(text)),
        )
    };
    assert!(at("greet") < printed("hello ********"), "{events:?}");
    assert!(printed("hello ********") < at("count"), "{events:?}");
    assert!(at("count") < printed("line-1"), "{events:?}");
    assert!(printed("line-3") < at("completed"), "{events:?}");
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
    if let Some(text) = asciinema3_text(&path) {
        assert!(text.contains("hello ********"), "{text}");
        assert!(text.contains("naïve ✓ done"), "{text}");
        assert!(text.contains("line-3"), "{text}");
    }
    asciinema3_plays(&path, "^line-3").await;

    // The history's purge takes the recording with the journal.
    engine.purge_history(Some("recorded"), &Actor::Cli).await;
    assert!(!path.exists(), "the recording outlived its run's history");
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_stops_its_recording_at_the_cap_and_says_what_was_left_out() {
    const CAP: u64 = 64 << 10;
    let flood = "name: flood\ndescription: Floods.\ninitial_state: a\nstates:\n  a: { action: { tool: run_command, params: { command: 'seq 1 200000', timeout: 120 } } }\n";
    // As asciicast v2, as FLOWDECK_RECORDING_FORMAT=v2 asks: asciinema 2 plays it.
    let (dir, engine) = engine_recording(flood, CAP, Format::V2);
    let result = engine.run(common::run_request("flood", &[])).await.unwrap();
    assert_eq!(result.final_state, FinalState::Completed, "{result:?}");
    let path = PathBuf::from(&result.recordings[0]);
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size <= CAP, "{size} bytes, over the cap of {CAP}");
    let (header, events, output) = read(&path);
    assert_eq!(header.format, Format::V2);
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .starts_with("{\"version\":2,"),
        "not v2"
    );
    // Markers are asciicast v2 too (asciinema 2 writes them); exits are not.
    assert_eq!(markers(&events), ["a"], "{:?}", &events[..3]);
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
            format: Format::V3,
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
async fn a_recording_begun_mid_session_starts_with_the_screen_and_follows_resizes_markers_and_the_exit()
 {
    let terminals = flowdeck::term::Terminals::new(flowdeck::term::TermConfig::default());
    let session = common::bash(&terminals, common::LONG).await;
    session.send_text("echo before-$((6*7))\n", "test").unwrap();
    shown(&session, "^before-42").await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mid.cast");
    let recording = record(&session, &path, "mid");
    session.resize(100, 30).unwrap();
    // A marker is masked as the output is.
    recording.marker("state-hunter2");
    session
        .send_text("echo after-$((6*7)) hunter2\n", "test")
        .unwrap();
    shown(&session, "^after-42").await;
    // The program's exit status, after what it showed.
    session.send_text("exit 3\n", "test").unwrap();
    common::poll_until(common::LONG, "bash to exit", || session.exit()).await;
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
    assert_eq!(markers(&events), ["state-***"]);
    let marked = position(&events, "the marker", |e| {
        matches!(e, CastEvent::Marker(..))
    });
    let after = position(
        &events,
        "after-42",
        |e| matches!(e, CastEvent::Output(_, o) if o.contains("after-42")),
    );
    assert!(marked < after, "{events:?}");
    assert!(
        matches!(events.last(), Some(CastEvent::Exit(_, 3))),
        "{events:?}"
    );
    terminals.close_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_cut_by_a_resize_or_learned_late_is_masked_in_the_whole_file() {
    let terminals = flowdeck::term::Terminals::new(flowdeck::term::TermConfig::default());
    let session = common::bash(&terminals, common::LONG).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("late.cast");
    let recording = record(&session, &path, "late");
    // Marked and shown before anyone knew it was a secret.
    recording.marker("before learned-later");
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
    assert_eq!(markers(&events), ["before ***"]);
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
