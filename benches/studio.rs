//! Studio figures (SPEC §5, §7; docs/PERFORMANCE.md): the cost of one frame, the studio's CPU
//! when nothing happens, and while a pane streams at full speed, with how long a key then
//! takes to show its answer. The studio is the real binary in a PTY, driven through
//! flowdeck's own terminal layer; CPU is read from /proc, so it does not depend on what else
//! the machine runs.
//!
//! `cargo bench --bench studio`; `FLOWDECK_BENCH_QUICK=1` shortens it.

#![allow(clippy::unwrap_used)]

#[path = "../tests/common/mod.rs"]
mod common;

#[path = "support/mod.rs"]
mod support;

use common::studio::{expect, timed_seq};
use flowdeck::engine::Actor;
use flowdeck::term::Terminals;
use flowdeck::term::{Session, TermConfig};
use flowdeck::tui::draw;
use flowdeck::tui::state::App;
use flowdeck::tui::theme::Theme;
use flowdeck::tui::update::{Event, update};
use flowdeck::workflow::action::{OpenTerminalParams, SendInputParams};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::Arc;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(60);

fn quick() -> bool {
    std::env::var_os("FLOWDECK_BENCH_QUICK").is_some()
}

use support::cpu_share;

/// `n` frames drawn (and, by a real backend, diffed and emitted), each timed, `gap` apart.
async fn time_frames<B: ratatui::backend::Backend>(
    terminal: &mut Terminal<B>,
    app: &App,
    theme: &Theme,
    engine: &flowdeck::engine::Engine,
    n: usize,
    gap: Option<Duration>,
) -> Vec<f64> {
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        terminal
            .draw(|frame| draw::draw(frame, app, theme, engine))
            .unwrap();
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
        if let Some(gap) = gap {
            tokio::time::sleep(gap).await;
        }
    }
    samples
}

/// One frame of the main screen at 120x40 with a pane full of coloured text, drawn in-process.
async fn frame_cost() {
    let dir = common::bundled_workflows_copy();
    let engine = common::test_engine(dir.path(), 1, false);
    let id = engine
        .open_terminal(
            &serde_json::from_value::<OpenTerminalParams>(serde_json::json!({
                "command": ["bash", "--norc", "--noprofile"], "cols": 118, "rows": 20,
            }))
            .unwrap(),
            &Actor::person(),
        )
        .await
        .unwrap()
        .session_id;
    engine
        .send_input(
            &id,
            &serde_json::from_value::<SendInputParams>(serde_json::json!({
                "input_text": "for i in $(seq 1 40); do printf '\\e[3%dm%s \\e[1mbold\\e[0m %s\\n' $((i%8)) line-$i \"$(printf '%.0s=' $(seq 1 80))\"; done\n"
            }))
            .unwrap(),
            &Actor::person(),
        )
        .unwrap();
    let mut app = App::new("workflows".into());
    app.size = (120, 40);
    for effect in update(&mut app, Event::Snapshot(Box::new(engine.snapshot()))) {
        if let flowdeck::tui::effect::Effect::LoadPlan(workflow) = effect {
            let plan = engine
                .workflow_step_plan(&workflow)
                .map_err(|e| e.to_string());
            update(&mut app, Event::Plan { workflow, plan });
        }
    }
    // The pane's output is in before frames are timed.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let theme = Theme::default();
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let n = if quick() { 200 } else { 2000 };
    let samples = time_frames(&mut terminal, &app, &theme, &engine, n, None).await;
    support::stats(
        "one frame, 120x40, list + plan + a full pane",
        samples,
        "ms",
    );
    engine.shutdown().await;
}

/// A full 200x50 frame of four busy panes in the grid: drawn, diffed against the frame before
/// and emitted as escape sequences into a sink, as the loop does to the terminal. Each pane's
/// program prints coloured lines every few milliseconds, so every frame has new rows to send.
async fn four_busy_panes_frame() {
    let dir = tempfile::tempdir().unwrap();
    let engine = common::test_engine(dir.path(), 1, false);
    let (cols, rows) = (200u16, 50u16);
    let mut app = App::new("workflows".into());
    app.size = (cols, rows);
    app.grid = true;
    for i in 0..4 {
        let script = format!(
            "i=0; while :; do i=$((i+1)); printf '\\033[3{}m%s \\033[1mbusy\\033[0m %s\\n' pane-{i}-$i \"$(date +%N)\"; sleep 0.005; done",
            i + 1
        );
        engine
            .open_terminal(
                &serde_json::from_value::<OpenTerminalParams>(serde_json::json!({
                    "command": ["sh", "-c", script], "cols": 98, "rows": 23,
                }))
                .unwrap(),
                &Actor::person(),
            )
            .await
            .unwrap();
    }
    update(&mut app, Event::Snapshot(Box::new(engine.snapshot())));
    assert_eq!(flowdeck::tui::layout::app_slots(&app).len(), 4);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let theme = Theme::default();
    let mut terminal = Terminal::with_options(
        ratatui::backend::CrosstermBackend::new(std::io::sink()),
        ratatui::TerminalOptions {
            viewport: ratatui::Viewport::Fixed(ratatui::layout::Rect::new(0, 0, cols, rows)),
        },
    )
    .unwrap();
    let n = if quick() { 200 } else { 1000 };
    // About a frame's time apart, as the loop draws under floods, so the panes move on.
    let gap = Some(Duration::from_millis(4));
    let samples = time_frames(&mut terminal, &app, &theme, &engine, n, gap).await;
    support::stats(
        "one frame, 200x50, four busy panes: draw + diff + emit",
        samples,
        "ms",
    );
    engine.shutdown().await;
}

/// `seq 1 2000000` in a pane the studio shows, against the same flood in a flowdeck session
/// no studio draws: the studio's cost to a program that floods its pane. Alternated, in one
/// run, so both see the same machine.
async fn flood_with_and_without_studio() {
    let dir = common::bundled_workflows_copy();
    let terminals = Terminals::new(TermConfig::default());
    let s = studio(&terminals, dir.path());
    expect(&s, "make_build").await;
    s.send_text("t", "bench").unwrap();
    expect(&s, r"\[s\d+ · ").await;
    s.send_text("i", "bench").unwrap();
    expect(&s, "FOCUS").await;
    // The pane's shell is ready for the command (the sum is printed only when it runs).
    s.send_text("echo ready-$((40+2))\r", "bench").unwrap();
    expect(&s, "ready-42").await;
    let plain = common::bash(&terminals, WAIT).await;
    let rounds = if quick() { 2 } else { 5 };
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        without.push(timed_seq(&plain, round).await);
        with.push(timed_seq(&s, round).await);
    }
    let without = support::stats("`seq 1 2000000`, a session no studio draws", without, "s");
    let with = support::stats("`seq 1 2000000`, a pane the studio shows", with, "s");
    println!(
        "{:<58} {:>9.3}x",
        "  with the studio / without (median)",
        with / without
    );
    terminals.close_all().await;
}

/// The studio binary in a 120x40 terminal on the bundled workflows.
fn studio(terminals: &Terminals, dir: &std::path::Path) -> Arc<Session> {
    common::studio::studio_with(
        terminals,
        &["--workflows", &dir.display().to_string()],
        None,
        120,
        40,
    )
}

async fn idle_and_flood() {
    let dir = common::bundled_workflows_copy();
    let terminals = Terminals::new(TermConfig::default());
    let s = studio(&terminals, dir.path());
    expect(&s, "make_build").await;
    let pid = s.pid();
    let span = Duration::from_secs(if quick() { 1 } else { 3 });
    // Settled, then nothing happens.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let idle = cpu_share(pid, span).await;
    println!(
        "{:<58} {idle:>9.2} % of a core over {span:?}",
        "studio CPU, idle"
    );

    // A shell pane that prints as fast as it can, for longer than the measurement.
    s.send_text("t", "bench").unwrap();
    expect(&s, r"\[s\d+ · ").await;
    s.send_text("i", "bench").unwrap();
    expect(&s, "FOCUS").await;
    s.send_text(
        "yes \"$(printf '\\e[32mgreen\\e[0m and plain text, all of it, quickly')\" | head -c 3000000000\r",
        "bench",
    )
    .unwrap();
    expect(&s, "green and plain").await;
    let flood = cpu_share(pid, span).await;
    println!(
        "{:<58} {flood:>9.2} % of a core over {span:?}",
        "studio CPU, a pane streaming `yes` at full speed"
    );
    // Keys answer while the pane streams: leave focus mode, open help, close it.
    let rounds = if quick() { 5 } else { 20 };
    let mut samples = Vec::with_capacity(rounds);
    s.send_text("\u{7}", "bench").unwrap();
    for _ in 0..rounds {
        let started = Instant::now();
        s.send_text("?", "bench").unwrap();
        expect(&s, r"Keys .*Esc closes").await;
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
        // Closed again before the next round (a frame is at most 16 ms away).
        s.send_text("\u{1b}", "bench").unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    support::stats(
        "key to its answer on screen while a pane streams (`?`)",
        samples,
        "ms",
    );
    terminals.close_all().await;
}

fn main() {
    let runtime = support::runtime();
    runtime.block_on(async {
        frame_cost().await;
        four_busy_panes_frame().await;
        flood_with_and_without_studio().await;
        idle_and_flood().await;
    });
}
