//! The studio under faults: a workflows folder that is missing, unreadable, a file or empty;
//! manifests that break or vanish while shown; panes that flood garbage or exit; absurd
//! terminal sizes; runs that fail, time out or are cancelled; names that carry escape
//! sequences. End to end in a PTY (the real `flowdeck` binary, driven by keys, its screen read
//! back with deadlines), and at the state level with the engine and a test backend.

#![allow(clippy::unwrap_used)]

use crate::common;

use common::LONG;
use common::studio;

use flowdeck::engine::{Change, Engine, EngineConfig, FolderProblemKind};
use flowdeck::term::{Content, TermConfig, Terminals};
use flowdeck::tui::draw;
use flowdeck::tui::state::App;
use flowdeck::tui::theme::Theme;
use flowdeck::tui::update::{Event, update};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use studio::{ASKER, expect, expect_gone, quit};

const ALPHA: &str = r#"
name: alpha
description: Two steps that say hello.
initial_state: first_step
states:
  first_step:
    action: { tool: run_command, params: { command: 'echo one' } }
    transitions:
      - { condition: success, next_state: second_step }
  second_step:
    action: { tool: run_command, params: { command: 'echo two' } }
"#;

/// The engine as the studio opens it: lenient about the folder, following it.
fn lenient_engine(dir: &Path) -> Arc<Engine> {
    Engine::open_lenient(
        dir,
        EngineConfig {
            terminals: TermConfig {
                kill_grace: Duration::from_millis(300),
                ..TermConfig::default()
            },
            ..EngineConfig::default()
        },
    )
    .unwrap()
}

/// The studio's state from a snapshot, with the plan the selection asks for.
fn state_of(engine: &Engine) -> App {
    let mut app = App::new("workflows".into());
    app.size = (100, 30);
    let effects = update(&mut app, Event::Snapshot(Box::new(engine.snapshot())));
    for effect in effects {
        if let Ok(event) = flowdeck::tui::effects::read(engine, effect) {
            update(&mut app, event);
        }
    }
    app
}

/// One frame of the studio as text.
fn render(engine: &Engine, app: &App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(app.size.0, app.size.1)).unwrap();
    terminal
        .draw(|frame| draw::draw(frame, app, &Theme::default(), engine))
        .unwrap();
    terminal.backend().to_string()
}

/// The rows of a rendered frame joined without their borders' line breaks, so that a message
/// wrapped over lines can be searched as words.
fn words(frame: &str) -> String {
    frame
        .lines()
        .map(|l| {
            l.trim_matches('"')
                .replace(['│', '╭', '╮', '╰', '╯', '─'], " ")
        })
        .collect::<Vec<_>>()
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The words of the workflow list alone (the top left box), so that the plan beside it does
/// not interleave with a message wrapped over its lines.
fn list_words(frame: &str) -> String {
    let left: Vec<String> = frame
        .lines()
        .map(|l| {
            let l = l.trim_matches('"');
            let cut = ["││", "╮╭", "╯╰"]
                .iter()
                .filter_map(|sep| l.find(sep))
                .min()
                .unwrap_or(l.len());
            l[..cut].to_string()
        })
        .collect();
    words(&left.join("\n"))
}

/// Waits (with a deadline) for an engine event that `pick` accepts.
async fn event_where(
    events: &mut tokio::sync::broadcast::Receiver<flowdeck::engine::EngineEvent>,
    what: &str,
    mut pick: impl FnMut(&Change) -> bool,
) {
    common::within(LONG, what, async {
        loop {
            let event = events.recv().await.unwrap();
            if pick(&event.change) {
                return;
            }
        }
    })
    .await;
}

/// Whether this process reads a folder its mode forbids (root, or CAP_DAC_OVERRIDE).
fn reads_anyway(folder: &Path) -> bool {
    std::fs::read_dir(folder).is_ok()
}

// --- Task A: the folder itself ----------------------------------------------------------------

/// Whether a change is `alpha.yaml` read whole. A rescan may catch the file between its
/// creation and its write (empty, so known by its file name until its text names it): then its
/// content arrives as a change of that entry rather than as its addition.
fn alpha_is_read(c: &Change) -> bool {
    matches!(
        c,
        Change::WorkflowAdded { name, .. } | Change::WorkflowChanged { name, .. } if name == "alpha"
    )
}

#[tokio::test]
async fn a_missing_folder_is_a_problem_in_the_snapshot_and_its_creation_an_event() {
    let top = tempfile::tempdir().unwrap();
    // Two levels missing: the watch sits on the nearest folder that exists and moves down.
    let folder = top.path().join("deeper").join("workflows");
    let engine = lenient_engine(&folder);
    let mut events = engine.subscribe();
    let snapshot = engine.snapshot();
    let problem = snapshot.folder_problem.clone().expect("a problem");
    assert_eq!(problem.kind, FolderProblemKind::Missing);
    assert_eq!(problem.reason, "No such file or directory", "{problem:?}");
    assert!(snapshot.workflows.is_empty());

    let app = state_of(&engine);
    let frame = list_words(&render(&engine, &app));
    // A folder not there yet is no fault: the list says `A` makes it (issue 37 F2).
    assert!(frame.contains("does not exist yet"), "{frame}");
    assert!(frame.contains("A creates it"), "{frame}");

    std::fs::create_dir(top.path().join("deeper")).unwrap();
    std::fs::create_dir(&folder).unwrap();
    event_where(&mut events, "the folder's problem to clear", |c| {
        matches!(c, Change::WorkflowFolder { problem: None })
    })
    .await;
    std::fs::write(folder.join("alpha.yaml"), ALPHA).unwrap();
    event_where(&mut events, "alpha to be added", alpha_is_read).await;
    let app = state_of(&engine);
    assert!(app.folder_problem.is_none());
    assert_eq!(app.workflows.len(), 1);

    // And back: removed, the folder is a problem again and its workflows go with it.
    std::fs::remove_dir_all(&folder).unwrap();
    event_where(&mut events, "the folder's problem to come back", |c| {
        matches!(c, Change::WorkflowFolder { problem: Some(p) } if p.kind == FolderProblemKind::Missing)
    })
    .await;
    common::poll_until(LONG, "alpha to be gone", || {
        engine.snapshot().workflows.is_empty().then_some(())
    })
    .await;
    engine.shutdown().await;
}

#[tokio::test]
async fn a_file_where_the_folder_should_be_is_not_a_folder_until_it_is_one() {
    let top = tempfile::tempdir().unwrap();
    let folder = top.path().join("workflows");
    std::fs::write(&folder, "not a folder").unwrap();
    let engine = lenient_engine(&folder);
    let mut events = engine.subscribe();
    let problem = engine.snapshot().folder_problem.expect("a problem");
    assert_eq!(problem.kind, FolderProblemKind::NotAFolder);
    let frame = list_words(&render(&engine, &state_of(&engine)));
    assert!(frame.contains("is not a folder"), "{frame}");
    assert!(frame.contains("Not a directory"), "{frame}");

    std::fs::remove_file(&folder).unwrap();
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("alpha.yaml"), ALPHA).unwrap();
    event_where(&mut events, "alpha to be added", alpha_is_read).await;
    assert!(engine.snapshot().folder_problem.is_none());
    engine.shutdown().await;
}

#[tokio::test]
async fn an_unreadable_folder_says_permission_denied_and_recovers_when_readable() {
    use std::os::unix::fs::PermissionsExt;
    let top = tempfile::tempdir().unwrap();
    let folder = top.path().join("workflows");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("alpha.yaml"), ALPHA).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o000)).unwrap();
    let privileged = reads_anyway(&folder);
    let engine = lenient_engine(&folder);
    let mut events = engine.subscribe();
    let snapshot = engine.snapshot();
    if privileged {
        // chmod 000 does not stop root from reading: nothing to be denied.
        eprintln!("note: running as root, where chmod 000 does not deny reading; skipped");
        assert!(snapshot.folder_problem.is_none());
    } else {
        let problem = snapshot.folder_problem.expect("a problem");
        assert_eq!(problem.kind, FolderProblemKind::PermissionDenied);
        let frame = list_words(&render(&engine, &state_of(&engine)));
        assert!(frame.contains("permission denied"), "{frame}");
        assert!(frame.contains("chmod u+rx"), "{frame}");
    }
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
    if !privileged {
        event_where(
            &mut events,
            "alpha once the folder is readable",
            alpha_is_read,
        )
        .await;
    }
    let snapshot = engine.snapshot();
    assert!(snapshot.folder_problem.is_none());
    assert_eq!(snapshot.workflows.len(), 1);
    engine.shutdown().await;
}

#[tokio::test]
async fn an_empty_folder_says_where_to_put_a_workflow() {
    let dir = tempfile::tempdir().unwrap();
    let engine = lenient_engine(dir.path());
    let app = state_of(&engine);
    assert!(app.folder_problem.is_none());
    let frame = list_words(&render(&engine, &app));
    assert!(frame.contains("no workflows in workflows yet"), "{frame}");
    assert!(frame.contains("NAME.yaml"), "{frame}");
    engine.shutdown().await;
}

#[tokio::test]
async fn the_cli_still_refuses_a_missing_folder() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .args(["--workflows", "/nonexistent/flowdeck", "run", "x"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/flowdeck"), "{err}");
}

/// Utime + stime of a process, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// An installed binary started in a directory with no `workflows/` (the default folder):
/// nothing alarming on the first screen (no word of a log it cannot write), the list says
/// `A` makes the folder, and `A` makes it with the first workflow (issue 37 F2, F3, F4).
#[tokio::test]
async fn a_first_workflow_is_made_where_no_workflows_folder_is() {
    let cwd = tempfile::tempdir().unwrap();
    let terminals = Terminals::new(TermConfig::default());
    let session = studio::studio_with(&terminals, &[], Some(cwd.path()), 120, 32);
    expect(&session, "workflows does not exist yet").await;
    expect(&session, "A creates it and your first workflow").await;
    let screen = session.content(Content::Screen);
    assert!(!screen.contains("log"), "{screen}");
    // Nothing a newcomer cannot act on: no word of servers and agents yet.
    assert!(!screen.contains("agents cannot reach"), "{screen}");
    session.send_text("A", "test").unwrap();
    expect(&session, "New workflow").await;
    session.send_text("first_check\r", "test").unwrap();
    expect(&session, r"Edit · first_check\.yaml").await;
    assert!(cwd.path().join("workflows/first_check.yaml").is_file());
    session.send_text("\x1b", "test").unwrap();
    expect(&session, r"Workflows \(1\)").await;
    expect(&session, r"▶ first_check").await;
    let screen = session.content(Content::Screen);
    assert!(!screen.contains("log"), "{screen}");

    // The folder exists now and nothing lives in the studio's own engine: it hands the
    // folder over to a server and attaches, as any studio is, so agents can reach it.
    let folder = cwd.path().join("workflows").canonicalize().unwrap();
    let runtime = studio::quiet_env()
        .into_iter()
        .find(|(k, _)| k == "XDG_RUNTIME_DIR")
        .map(|(_, v)| v)
        .unwrap();
    let attached = common::wait_until(LONG, "the studio attached to the folder's server", || {
        let server = common::listed_server(&folder, std::path::Path::new(&runtime))?;
        let studios = server["attached"]
            .as_array()?
            .iter()
            .filter(|a| a.to_string().contains("studio"))
            .count();
        (studios == 1).then_some(server)
    });
    expect(&session, r"▶ first_check").await;
    // Attached, `d` detaches; the terminal keeps the studio's last line.
    session.send_text("d", "test").unwrap();
    assert_eq!(studio::exit_code(&session).await, Some(0));
    let left = session.content(Content::Screen).replace('\n', "");
    assert!(
        left.contains("flowdeck: nothing left running in"),
        "{left}\n(server: {attached:#})"
    );
}

#[tokio::test]
async fn the_studio_opens_on_a_missing_folder_and_its_list_follows_the_folder() {
    let top = tempfile::tempdir().unwrap();
    let folder = top.path().join("later").join("workflows");
    let terminals = Terminals::new(TermConfig::default());
    let session = studio::studio(&terminals, &folder, 120, 32);
    expect(&session, "not exist yet").await;
    expect(&session, "A creates it").await;

    // Idle on a missing folder costs nothing: no timer looks for it (a generous bound: a
    // polling loop would take a whole core, 100 ticks a second).
    let pid = session.pid();
    let before = cpu_ticks(pid);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let used = cpu_ticks(pid) - before;
    assert!(used <= 10, "the idle studio used {used} ticks in 2 s");

    // Shells work meanwhile.
    session.send_text("t", "test").unwrap();
    expect(&session, r"\[s\d+ · ").await;

    // The folder appears, then a workflow in it: the list follows without a key.
    std::fs::create_dir_all(&folder).unwrap();
    expect(&session, "no workflows in").await;
    expect_gone(&session, "not exist yet").await;
    std::fs::write(folder.join("asker.yaml"), ASKER).unwrap();
    expect(&session, r"Workflows \(1\)").await;
    expect(&session, "asker").await;

    // Removed again: the problem is back and the workflow gone.
    std::fs::remove_dir_all(&folder).unwrap();
    expect(&session, "not exist yet").await;
    expect(&session, r"Workflows \(0\)").await;
    expect(&session, "nothing to plan yet").await;
    quit(&session).await;
}

#[tokio::test]
async fn bare_flowdeck_in_a_folder_without_workflows_opens_the_studio() {
    let cwd = tempfile::tempdir().unwrap();
    let terminals = Terminals::new(TermConfig::default());
    let session = studio::studio_with(&terminals, &[], Some(cwd.path()), 100, 30);
    expect(&session, "workflows does not exist yet").await;
    expect(&session, r"q quit").await;
    quit(&session).await;
}

/// Applies engine events to the studio's state as the loop does (reads answered at once)
/// until `done` holds, with a deadline.
async fn follow_until(
    engine: &Engine,
    app: &mut App,
    events: &mut tokio::sync::broadcast::Receiver<flowdeck::engine::EngineEvent>,
    what: &str,
    done: impl Fn(&App) -> bool,
) {
    common::within(LONG, what, async {
        while !done(app) {
            let event = events.recv().await.unwrap();
            let mut pending = vec![Event::Engine(Box::new(event))];
            while let Some(event) = pending.pop() {
                for effect in update(app, event) {
                    if let Ok(event) = flowdeck::tui::effects::read(engine, effect) {
                        pending.push(event);
                    }
                }
            }
        }
    })
    .await;
}

#[tokio::test]
async fn the_studio_state_follows_the_folder_and_a_removed_workflow_is_gone_from_the_plan() {
    let top = tempfile::tempdir().unwrap();
    let folder = top.path().join("workflows");
    let engine = lenient_engine(&folder);
    let mut events = engine.subscribe();
    let mut app = state_of(&engine);
    assert!(app.folder_problem.is_some());
    assert!(words(&render(&engine, &app)).contains("nothing to plan yet"));

    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("alpha.yaml"), ALPHA).unwrap();
    follow_until(&engine, &mut app, &mut events, "alpha's plan", |app| {
        app.folder_problem.is_none() && app.plan.as_ref().is_some_and(|p| p.plan.is_ok())
    })
    .await;
    assert!(words(&render(&engine, &app)).contains("second_step"));

    std::fs::remove_file(folder.join("alpha.yaml")).unwrap();
    // Its removal is an event, even when a list read already found the file gone.
    follow_until(&engine, &mut app, &mut events, "alpha to go", |app| {
        app.workflows.is_empty() && app.gone.is_some()
    })
    .await;
    assert_eq!(app.gone.as_deref(), Some("alpha"));
    let frame = words(&render(&engine, &app));
    assert!(frame.contains("alpha is gone"), "{frame}");
    assert!(frame.contains("alpha was removed"), "{frame}");

    // Back on disk: the gone note goes, the plan returns.
    std::fs::write(folder.join("alpha.yaml"), ALPHA).unwrap();
    follow_until(&engine, &mut app, &mut events, "alpha back", |app| {
        app.plan.is_some()
    })
    .await;
    assert!(app.gone.is_none());
    engine.shutdown().await;
}

// --- Task B: the studio under faults, end to end ------------------------------------------------

#[tokio::test]
async fn a_manifest_that_breaks_while_selected_keeps_its_last_good_plan_and_says_so() {
    let (dir, _terminals, session) = studio::on_files(&[("alpha.yaml", ALPHA)], 120, 32);
    expect(&session, "alpha +valid").await;
    expect(&session, "second_step").await;

    std::fs::write(
        dir.path().join("alpha.yaml"),
        "name: alpha\ndescription: broken\ninitial_state: [first_step\n",
    )
    .unwrap();
    expect(&session, r"alpha +✗ \d+ error").await;
    // The first error, in the list, with its place.
    expect(&session, r"alpha\.yaml:\d+:\d+: ").await;
    // The plan: the last good version, said to be that, still with its states.
    expect(&session, "the file is broken").await;
    expect(&session, "last good version").await;
    assert!(session.content(Content::Screen).contains("second_step"));

    // Fixed, it recovers by itself.
    std::fs::write(dir.path().join("alpha.yaml"), ALPHA).unwrap();
    expect(&session, "alpha +valid").await;
    expect_gone(&session, "the file is broken").await;
    quit(&session).await;
}

#[tokio::test]
async fn a_workflow_deleted_while_its_run_waits_is_gone_from_the_list_and_the_run_goes_on() {
    let (dir, _terminals, session) = studio::on_files(&[("asker.yaml", ASKER)], 120, 32);
    expect(&session, "asker").await;
    session.send_text("r", "test").unwrap();
    // The question's box (its text is on the plan too, which may be drawn first).
    expect(&session, "asker asks").await;
    expect(&session, "Esc later").await;
    // Put the question aside, then delete the file under the waiting run.
    session.send_text("\u{1b}", "test").unwrap();
    expect_gone(&session, "asker asks").await;
    std::fs::remove_file(dir.path().join("asker.yaml")).unwrap();
    expect(&session, r"Workflows \(0\)").await;
    expect(&session, "asker is gone").await;
    expect(&session, "its run goes on").await;
    // The run still answers and ends.
    session.send_text("a", "test").unwrap();
    expect(&session, "Esc later").await;
    session.send_text("prod\r", "test").unwrap();
    expect(&session, "result: completed in").await;
    expect(&session, "env=prod").await;
    quit(&session).await;
}

#[tokio::test]
async fn a_pane_flooding_garbage_leaves_the_studio_responsive_and_an_exited_pane_keeps_its_screen()
{
    let (_dir, _terminals, session) = studio::on_files(&[("alpha.yaml", ALPHA)], 120, 32);
    expect(&session, "alpha").await;
    session.send_text("t", "test").unwrap();
    expect(&session, r"\[s\d+ · ").await;
    session.send_text("i", "test").unwrap();
    expect(&session, "FOCUS").await;
    // Two megabytes of random bytes, then a reset of the pane's terminal and a marker.
    session
        .send_text(
            "head -c 2000000 /dev/urandom; printf '\\033c'; echo FLOOD_''DONE\r",
            "test",
        )
        .unwrap();
    expect(&session, "FLOOD_DONE").await;
    // Keys after the flood are taken at once: leave focus mode, open the help, close it.
    session.send_text("\u{7}", "test").unwrap();
    expect_gone(&session, "FOCUS").await;
    session.send_text("?", "test").unwrap();
    expect(&session, r"Keys · ").await;
    session.send_text("\u{1b}", "test").unwrap();
    // Nothing of the garbage reached the outer terminal: still the studio's screen, its
    // title untouched, its layout whole.
    expect(&session, r"Workflows \(1\)").await;
    expect(&session, "q quit").await;
    assert!(session.with_screen(|s| s.alternate_screen()));
    assert_eq!(session.info().title, "");
    // The pane's program exits: its last screen stays, with the exit status.
    session.send_text("i", "test").unwrap();
    expect(&session, "FOCUS").await;
    session
        // Ctrl-U first: the flood's terminal queries were answered, as any terminal does,
        // and the answers wait on the shell's command line.
        .send_text("\u{15}echo LAST_''WORDS; exit 3\r", "test")
        .unwrap();
    expect(&session, "exit code 3").await;
    expect(&session, "LAST_WORDS").await;
    quit(&session).await;
}

#[tokio::test]
async fn tiny_terminals_say_too_small_and_a_large_one_gets_the_studio_and_the_pane_its_size() {
    let (_dir, _terminals, session) = studio::on_files(&[("alpha.yaml", ALPHA)], 100, 30);
    expect(&session, "alpha").await;
    session.send_text("t", "test").unwrap();
    expect(&session, r"\[s\d+ · ").await;

    session.resize(20, 5).unwrap();
    expect(&session, r"too\s+small").await;
    for (cols, rows) in [(1, 1), (0, 0), (2, 1)] {
        // Whatever size the PTY takes, the studio lives through it.
        let _ = session.resize(cols, rows);
        assert!(session.exit().is_none(), "the studio died at {cols}x{rows}");
    }
    session.resize(300, 100).unwrap();
    expect(&session, r"Workflows \(1\)").await;
    expect(&session, "second_step").await;
    expect(&session, "q quit").await;
    assert!(session.exit().is_none());
    // The shown pane's PTY took the size it is drawn at.
    let (cols, rows) = {
        use flowdeck::tui::layout;
        let panes = layout::areas(ratatui::layout::Rect::new(0, 0, 300, 100), false).panes;
        layout::pty_size(layout::slots(panes, 1, 0, false)[0].inner)
    };
    session.send_text("i", "test").unwrap();
    expect(&session, "FOCUS").await;
    session.send_text("stty size\r", "test").unwrap();
    expect(&session, &format!(r"(?m)^│{rows} {cols} ")).await;
    session.send_text("\u{7}", "test").unwrap();
    quit(&session).await;
}

#[tokio::test]
async fn a_studio_started_on_a_zero_or_one_cell_terminal_lives_and_draws_once_resized() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("alpha.yaml"), ALPHA).unwrap();
    let terminals = Terminals::new(TermConfig::default());
    // The harness never makes a PTY smaller than 2x2; `stty` inside it can.
    for size in ["rows 0 cols 0", "rows 1 cols 1"] {
        let script = format!(
            r#"stty {size}; printf 'SIZE %s\n' "$(stty size)"; exec "$0" --workflows "$1""#
        );
        let session = terminals
            .open(flowdeck::term::OpenOptions {
                program: flowdeck::term::Program::Command(vec![
                    "sh".into(),
                    "-c".into(),
                    script,
                    env!("CARGO_BIN_EXE_flowdeck").into(),
                    dir.path().display().to_string(),
                ]),
                size: flowdeck::term::Size {
                    cols: 100,
                    rows: 30,
                },
                ..flowdeck::term::OpenOptions::default()
            })
            .unwrap();
        let expected = if size.starts_with("rows 0") {
            "SIZE 0 0"
        } else {
            "SIZE 1 1"
        };
        expect(&session, expected).await;
        // The studio has taken the terminal (the alternate screen) at that size.
        common::poll_until(LONG, "the studio to take the terminal", || {
            session.with_screen(|s| s.alternate_screen()).then_some(())
        })
        .await;
        assert!(session.exit().is_none(), "the studio died at {size}");
        session.resize(100, 30).unwrap();
        expect(&session, r"Workflows \(1\)").await;
        expect(&session, "q quit").await;
        quit(&session).await;
    }
}

const FAILS: &str = r#"
name: fails
description: Loops on a failing command until max_steps ends it.
initial_state: try_it
max_steps: 3
states:
  try_it:
    action: { tool: run_command, params: { command: 'false' } }
    transitions:
      - { condition: failure, next_state: try_it }
"#;

const SLOW: &str = r#"
name: slow
description: Sleeps past the run's time limit.
initial_state: nap
timeout_seconds: 1
states:
  nap:
    timeout_seconds: 60
    action: { tool: run_command, params: { command: 'sleep 30', timeout: 60 } }
"#;

const LONG_RUN: &str = r#"
name: long_run
description: Sleeps until cancelled.
initial_state: nap
states:
  nap:
    timeout_seconds: 120
    action: { tool: run_command, params: { command: 'sleep 100', timeout: 120 } }
"#;

/// Back to the list (a run shows its pane), filters it down to `name` and starts it.
async fn run_one(session: &flowdeck::term::Session, name: &str) {
    // The filter from whatever view is shown: the palette's command (`/` searches a pane),
    // then Esc, which clears a filter left from before.
    session
        .send_text("\u{10}filter the workflow list\r", "test")
        .unwrap();
    expect(session, r"Workflows \(\d+\) /").await;
    session.send_text("\u{1b}", "test").unwrap();
    expect_gone(session, r"Workflows \(\d+\) /").await;
    session.send_text(&format!("/{name}\r"), "test").unwrap();
    expect(session, &format!(r"Plan · {name} ")).await;
    session.send_text("r", "test").unwrap();
    expect(session, &format!(r"Plan · {name} · run r")).await;
}

#[tokio::test]
async fn runs_that_fail_time_out_and_are_cancelled_show_how_they_ended() {
    let dir = tempfile::tempdir().unwrap();
    for (file, text) in [
        ("fails.yaml", FAILS),
        ("slow.yaml", SLOW),
        ("long_run.yaml", LONG_RUN),
    ] {
        std::fs::write(dir.path().join(file), text).unwrap();
    }
    let terminals = Terminals::new(TermConfig::default());
    let session = studio::studio(&terminals, dir.path(), 120, 32);
    expect(&session, r"Workflows \(3\)").await;

    run_one(&session, "fails").await;
    expect(&session, "result: error in").await;
    expect(&session, "max_steps").await;
    expect(&session, "fails ended: error").await;

    run_one(&session, "slow").await;
    expect(&session, "result: timeout in").await;
    expect(&session, r"did not end within its timeout_seconds \(1 s\)").await;
    expect(&session, "slow ended: timeout").await;

    run_one(&session, "long_run").await;
    expect(&session, "▸ nap").await;
    session.send_text("c", "test").unwrap();
    expect(&session, "result: canceled in").await;
    expect(&session, "the run was cancelled by the person at pts/").await;
    expect(&session, "long_run ended: canceled").await;
    quit(&session).await;
}

#[tokio::test]
async fn escape_sequences_and_bidi_controls_in_a_manifest_never_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    // An invalid name is still listed as written (sanitized); a valid workflow's
    // description and states carry them too.
    std::fs::write(
        dir.path().join("evil.yaml"),
        "name: \"evil\\e]0;PWNED\\a\\e[31mred\\u202e\\e[2J\"\ndescription: \"x\\e]0;PWNED2\\a\"\ninitial_state: a\nstates:\n  a:\n    action: { tool: run_command, params: { command: \"echo \\e[31mhi\\u202e\" } }\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("zz_plain.yaml"),
        "name: zz_plain\ndescription: \"desc \\e]2;PWNED3\\a\\u202e\"\ninitial_state: a\nstates:\n  a:\n    action: { tool: run_command, params: { command: \"printf '\\e]0;T\\a\\u202e'\" } }\n",
    )
    .unwrap();
    let terminals = Terminals::new(TermConfig::default());
    let session = studio::studio(&terminals, dir.path(), 120, 32);
    expect(&session, r"Workflows \(2\)").await;
    // The controls are shown as escapes, not acted on.
    expect(&session, r"evil\\u\{1b\}\]0;PWNED").await;
    session.send_text("j", "test").unwrap();
    expect(&session, r"Plan · zz_plain").await;
    expect(&session, r"\\u\{202e\}").await;
    assert_eq!(session.info().title, "", "a title was set");
    session.with_screen(|s| {
        let (rows, cols) = s.size();
        for row in 0..rows.get() {
            let line: String = (0..cols.get())
                .map(|c| s.cell(row, c).unwrap().contents().to_string())
                .collect();
            assert!(
                !line
                    .chars()
                    .any(flowdeck::workflow::names::is_dangerous_char),
                "row {row}: {line:?}"
            );
            // The text after the would-be colour change is drawn as the name is.
            if let Some(at) = line.find("mred") {
                let col = line[..at].chars().count() as u16;
                let name_col = line.find("evil").map(|i| line[..i].chars().count() as u16);
                let name_col = name_col.unwrap();
                assert_eq!(
                    s.cell(row, col).unwrap().fgcolor(),
                    s.cell(row, name_col).unwrap().fgcolor(),
                    "row {row}: {line:?}"
                );
            }
        }
    });
    // And flowdeck still works: the help opens, and it quits cleanly.
    session.send_text("?", "test").unwrap();
    expect(&session, r"Keys · ").await;
    session.send_text("\u{1b}", "test").unwrap();
    quit(&session).await;
    assert_eq!(session.info().title, "", "a title was set");
    // The command line lists the same folder without passing the controls on either.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_flowdeck"))
        .args(["--workflows", &dir.path().display().to_string(), "list"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("zz_plain"), "{text}");
    assert!(
        !text
            .chars()
            .any(|c| c != '\n' && flowdeck::workflow::names::is_dangerous_char(c)),
        "{text:?}"
    );
}
