//! Terminal session figures (SPEC §7, docs/PERFORMANCE.md): ingest against a raw PTY read of
//! the same bytes in the same run (wall time, and the CPU each used, which a busy machine
//! does not change), await detection lag, echo and `run_command` round trips, open-to-prompt
//! time, memory of sessions with full history, parallel waits, searches of a full history and
//! how long each holds the session lock.
//!
//! `cargo bench --bench terminal` prints each figure. Set `FLOWDECK_BENCH_QUICK=1` for a short
//! run (fewer trials).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use flowdeck::term::decode::Decoder;
use flowdeck::term::search::{self, Order, Owner, Query};
use flowdeck::term::shell;
use flowdeck::term::transcript::Transcript;
use flowdeck::term::{
    AwaitSpec, OpenOptions, Program, Quiet, QuietOn, Session, Since, TermConfig, Terminals,
    WaitOutcome,
};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use std::io::Read;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

#[path = "../tests/common/mod.rs"]
mod common;
use common::bash_options;

const WAIT: Duration = Duration::from_secs(60);

fn quick() -> bool {
    std::env::var_os("FLOWDECK_BENCH_QUICK").is_some()
}

fn spec(pattern: &str, since: Since) -> AwaitSpec {
    common::spec(pattern, since, WAIT)
}

async fn bash(t: &Terminals) -> Arc<Session> {
    common::bash(t, WAIT).await
}

fn stats(name: &str, mut samples: Vec<f64>, unit: &str) -> f64 {
    samples.sort_by(f64::total_cmp);
    let pick = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    let median = pick(0.5);
    println!(
        "{name:<44} median {median:>9.3} {unit}  p99 {:>9.3} {unit}  min {:>9.3}  max {:>9.3}  (n={})",
        pick(0.99),
        samples[0],
        samples[samples.len() - 1],
        samples.len()
    );
    median
}

/// CPU time this process has used, in seconds (threads that ended included): what a drain
/// cost, whatever else the machine was doing.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// Time for a bare PTY (no parsing at all) to drain a program's output to EOF.
fn raw_drain(argv: &[&str]) -> Duration {
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 30,
            cols: 120,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut cmd = CommandBuilder::from_argv(argv.iter().map(Into::into).collect());
    cmd.env("TERM", "xterm-256color");
    let started = Instant::now();
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    while let Ok(n) = reader.read(&mut buf) {
        if n == 0 {
            break;
        }
    }
    let took = started.elapsed();
    child.wait().unwrap();
    took
}

/// Time for a flowdeck session to take the same output to its last line (history kept).
async fn session_drain(t: &Terminals, argv: &[&str], last: &str) -> Duration {
    let started = Instant::now();
    let s = t
        .open(OpenOptions {
            program: Program::Command(argv.iter().map(|a| a.to_string()).collect()),
            ..OpenOptions::default()
        })
        .unwrap();
    let r = s.await_output(spec(last, Since::All)).await.unwrap();
    assert_eq!(r.outcome, WaitOutcome::Matched, "{r:?}");
    let took = started.elapsed();
    t.close(s.id()).await.unwrap();
    took
}

async fn ingest(t: &Terminals) {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.txt");
    let sgr = dir.path().join("sgr.txt");
    let mut text = String::new();
    let mut colored = String::new();
    for i in 0..200_000 {
        text.push_str(&format!(
            "{i:>8} the quick brown fox jumps over the lazy dog, line of plain text\n"
        ));
        colored.push_str(&format!(
            "\x1b[1;3{}m{i:>8}\x1b[0m \x1b[38;5;{}mquick\x1b[0m \x1b[48;2;10;20;{}mbrown\x1b[0m \x1b[4mfox\x1b[24m jumps\n",
            i % 8,
            i % 256,
            i % 256
        ));
    }
    text.push_str("END_OF_PLAIN\n");
    colored.push_str("END_OF_SGR\n");
    std::fs::write(&plain, &text).unwrap();
    std::fs::write(&sgr, &colored).unwrap();
    let rounds = if quick() { 1 } else { 5 };
    let cases: [(&str, Vec<String>, &str, usize); 3] = [
        (
            "seq 1 2000000",
            vec!["seq".into(), "1".into(), "2000000".into()],
            "^2000000$",
            16_888_896,
        ),
        (
            "cat plain text",
            vec!["cat".into(), plain.display().to_string()],
            "^END_OF_PLAIN$",
            text.len(),
        ),
        (
            "cat SGR-heavy text",
            vec!["cat".into(), sgr.display().to_string()],
            "^END_OF_SGR$",
            colored.len(),
        ),
    ];
    for (name, argv, last, bytes) in cases {
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let mut raw = Vec::new();
        let mut ours = Vec::new();
        let (mut raw_cpu, mut our_cpu) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            let cpu = cpu_seconds();
            raw.push(raw_drain(&argv).as_secs_f64());
            raw_cpu.push(cpu_seconds() - cpu);
            let cpu = cpu_seconds();
            ours.push(session_drain(t, &argv, last).await.as_secs_f64());
            our_cpu.push(cpu_seconds() - cpu);
        }
        let raw_cpu = stats(&format!("ingest {name}: raw drain CPU"), raw_cpu, "s");
        let our_cpu = stats(&format!("ingest {name}: flowdeck CPU"), our_cpu, "s");
        let raw = stats(&format!("ingest {name}: raw PTY drain"), raw, "s");
        let ours = stats(&format!("ingest {name}: flowdeck session"), ours, "s");
        println!(
            "{:<44} ratio {:.3}x  ({:.1} MB/s raw, {:.1} MB/s flowdeck)",
            format!("ingest {name}"),
            ours / raw,
            bytes as f64 / raw / 1e6,
            bytes as f64 / ours / 1e6
        );
        println!(
            "{:<44} CPU {:.3} s raw reader, {:.3} s flowdeck (all its threads)",
            format!("ingest {name}"),
            raw_cpu,
            our_cpu
        );
    }
}

async fn echo_round_trip(t: &Terminals) {
    let s = bash(t).await;
    let n = if quick() { 100 } else { 1000 };
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let started = Instant::now();
        s.send_text(&format!("echo R{i}\n"), "bench").unwrap();
        let r = s
            .await_output(spec(&format!("^R{i}$"), Since::LastInput))
            .await
            .unwrap();
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(r.outcome, WaitOutcome::Matched);
    }
    stats("echo round trip (send_input + await_output)", samples, "ms");
    let n = if quick() { 50 } else { 300 };
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        let r = shell::run_command(&s, "true", WAIT, "bench").await.unwrap();
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(r.exit_code, Some(0));
    }
    stats("run_command `true`", samples, "ms");
    t.close(s.id()).await.unwrap();
}

/// A child that, for each line it reads, stamps the wall clock and prints the stamp.
fn stamping_child(t: &Terminals) -> Arc<Session> {
    t.open(OpenOptions {
        program: Program::Command(vec![
            "python3".into(),
            "-u".into(),
            "-c".into(),
            "import sys, time\nfor line in sys.stdin:\n    print('M%d' % time.time_ns(), flush=True)\n".into(),
        ]),
        ..OpenOptions::default()
    })
    .unwrap()
}

/// Milliseconds from the child's stamp in a wait's first group to now.
fn since_stamp(r: &flowdeck::term::AwaitResult) -> f64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as f64;
    let stamp: f64 = r.groups[0].as_deref().unwrap().parse().unwrap();
    (now - stamp) / 1e6
}

async fn detection_lag(t: &Terminals) {
    // The child stamps the wall clock just before it prints; the lag is from that stamp to
    // the moment await_output returns.
    let s = stamping_child(t);
    let n = if quick() { 100 } else { 1000 };
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        s.send_text("\n", "bench").unwrap();
        let r = s
            .await_output(spec(r"^M(\d+)$", Since::LastInput))
            .await
            .unwrap();
        samples.push(since_stamp(&r));
    }
    stats("await detection lag (print -> return)", samples, "ms");
    t.close(s.id()).await.unwrap();
}

async fn quiet_lag(t: &Terminals) {
    // As for the detection lag, the child stamps the clock just before it prints and then
    // stays silent; the lag is how long after the quiet period ends the wait returns.
    let s = stamping_child(t);
    let quiet = Duration::from_millis(20);
    for on in [QuietOn::Output, QuietOn::Screen] {
        let n = if quick() { 50 } else { 300 };
        let mut samples = Vec::with_capacity(n);
        for _ in 0..n {
            s.send_text("\n", "bench").unwrap();
            let mut wait = spec(r"^M(\d+)$", Since::LastInput);
            wait.quiet = Some(Quiet { quiet, on });
            let r = s.await_output(wait).await.unwrap();
            samples.push(since_stamp(&r) - quiet.as_secs_f64() * 1000.0);
        }
        stats(
            &format!("quiet lag, {on:?} (quiet end -> return, 20 ms quiet)"),
            samples,
            "ms",
        );
    }
    t.close(s.id()).await.unwrap();
}

async fn open_to_prompt(t: &Terminals) {
    let n = if quick() { 50 } else { 1000 };
    let mut samples = Vec::with_capacity(n);
    let mut failures = 0;
    for _ in 0..n {
        let started = Instant::now();
        let s = t.open(bash_options()).unwrap();
        if s.wait_for_output(Duration::from_secs(5)).await {
            samples.push(started.elapsed().as_secs_f64() * 1000.0);
        } else {
            failures += 1;
        }
        t.close(s.id()).await.unwrap();
    }
    stats("open bash --norc to its first prompt", samples, "ms");
    println!("{:<44} {failures} failures in {n} opens", "open failures");
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

async fn memory(t: &Terminals) {
    let before = rss_kib();
    let mut sessions = Vec::new();
    for _ in 0..10 {
        sessions.push(bash(t).await);
    }
    let opened = rss_kib();
    for s in &sessions {
        // 12,000 lines of 80 characters: the history is full (10,000 lines kept).
        s.send_text(
            "for i in $(seq 1 12000); do printf '%08d %070d\\n' $i 0; done; echo FILLED\n",
            "test",
        )
        .unwrap();
    }
    for s in &sessions {
        let r = s
            .await_output(spec("^FILLED$", Since::LastInput))
            .await
            .unwrap();
        assert_eq!(r.outcome, WaitOutcome::Matched);
        // A new input lets the history limit apply to that flood.
        s.send_text("echo next\n", "bench").unwrap();
        s.await_output(spec("^next$", Since::LastInput))
            .await
            .unwrap();
    }
    let filled = rss_kib();
    let lines: u64 = sessions.iter().map(|s| s.info().history_lines).sum();
    println!(
        "{:<44} {:.1} MiB for 10 sessions ({:.1} MiB to open them, {:.1} MiB of history; {lines} lines seen)",
        "memory: 10 sessions with full history",
        (filled - before) as f64 / 1024.0,
        (opened - before) as f64 / 1024.0,
        (filled - opened) as f64 / 1024.0,
    );
    for s in sessions {
        t.close(s.id()).await.unwrap();
    }
}

async fn parallel_waits(t: &Terminals) {
    let mut sessions = Vec::new();
    for _ in 0..10 {
        sessions.push(bash(t).await);
    }
    let n = if quick() { 10 } else { 100 };
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let started = Instant::now();
        for s in &sessions {
            s.send_text(&format!("echo GO{i}\n"), "bench").unwrap();
        }
        // `last_input` makes sending first safe: the waits see all output after the input.
        let results = futures::future::join_all(
            sessions
                .iter()
                .map(|s| s.await_output(spec(&format!("^GO{i}$"), Since::LastInput))),
        )
        .await;
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
        for (r, s) in results.iter().zip(&sessions) {
            let outcome = r.as_ref().map(|r| r.outcome);
            assert_eq!(
                outcome.ok(),
                Some(WaitOutcome::Matched),
                "{:?}",
                s.output_since(0)
            );
        }
    }
    stats("10 parallel awaits in 10 sessions (wall)", samples, "ms");
    for s in sessions {
        t.close(s.id()).await.unwrap();
    }
}

/// 10,000 numbered lines with `ERROR near N` after lines 1000, 3000, ..., 9000.
const TEN_THOUSAND: &str =
    "seq -f 'line %g' 1 10000 | awk '{print} NR%2000==1000 {print \"ERROR near \" NR}'";

/// Whose history a bench's direct search reads (what a cursor would name).
fn bench_owner() -> Owner {
    Owner {
        session: "bench".into(),
        instance: "0".into(),
    }
}

fn search_query(pattern: &str, order: Order, limit: usize, context: usize) -> Query {
    Query {
        regex: regex::Regex::new(&format!("(?mR){pattern}")).unwrap(),
        order,
        context,
        limit,
        cursor: None,
    }
}

async fn searches(t: &Terminals) {
    let s = bash(t).await;
    s.send_text(&format!("{TEN_THOUSAND}; echo FILLED\n"), "bench")
        .unwrap();
    let r = s
        .await_output(spec("^FILLED$", Since::LastInput))
        .await
        .unwrap();
    assert_eq!(r.outcome, WaitOutcome::Matched);
    let n = if quick() { 100 } else { 1000 };
    let cases = [
        (
            "search ^ERROR (5 hits), newest first",
            "^ERROR",
            Order::NewestFirst,
            20,
            0,
            5,
        ),
        (
            "search ^ERROR, oldest first, context 2",
            "^ERROR",
            Order::OldestFirst,
            20,
            2,
            5,
        ),
        (
            "search `line`, 20 hits, count capped",
            "line",
            Order::NewestFirst,
            20,
            0,
            20,
        ),
        (
            "search `line`, 200 hits, context 5",
            "line",
            Order::NewestFirst,
            200,
            5,
            200,
        ),
    ];
    for (name, pattern, order, limit, context, hits) in cases {
        let query = search_query(pattern, order, limit, context);
        let mut samples = Vec::with_capacity(n);
        for _ in 0..n {
            let started = Instant::now();
            let found = s.search(&query);
            samples.push(started.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(found.hits.len(), hits, "{name}");
        }
        stats(name, samples, "ms");
    }
    let found = s.search(&search_query("^ERROR", Order::NewestFirst, 20, 0));
    println!(
        "{:<44} {} lines searched",
        "search ^ERROR", found.lines_searched
    );
    t.close(s.id()).await.unwrap();

    // The same history in a transcript of this process, to time each hold of the lock.
    let mut history = Transcript::new(10_000, 8 << 20);
    let mut decoder = Decoder::default();
    for i in 1..=10_000 {
        decoder.feed(&mut history, format!("line {i}\r\n").as_bytes());
        if i % 2000 == 1000 {
            decoder.feed(&mut history, format!("ERROR near {i}\r\n").as_bytes());
        }
    }
    for (name, pattern) in [
        ("lock held, longest slice: ^ERROR", "^ERROR"),
        ("lock held, longest slice: ^line \\d+7$", r"^line \d+7$"),
    ] {
        let query = search_query(pattern, Order::NewestFirst, 20, 0);
        let mut samples = Vec::with_capacity(n);
        for _ in 0..n {
            let mut longest = Duration::ZERO;
            search::search(&query, &bench_owner(), None, |read| {
                let started = Instant::now();
                read(&history);
                longest = longest.max(started.elapsed());
            });
            samples.push(longest.as_secs_f64() * 1000.0);
        }
        stats(name, samples, "ms");
    }

    // A history at its byte limit: 10,000 lines of 700 characters (7 MB). Slices end at
    // 256 KiB as well as at 2,048 lines, so a hold stays short however long the lines.
    let mut wide = Transcript::new(10_000, 8 << 20);
    let filler = "x".repeat(690);
    for i in 1..=10_000 {
        decoder.feed(&mut wide, format!("{i:>8} {filler}\r\n").as_bytes());
    }
    let query = search_query("ERROR", Order::NewestFirst, 20, 0);
    let (mut whole, mut holds) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let mut longest = Duration::ZERO;
        let started = Instant::now();
        search::search(&query, &bench_owner(), None, |read| {
            let started = Instant::now();
            read(&wide);
            longest = longest.max(started.elapsed());
        });
        whole.push(started.elapsed().as_secs_f64() * 1000.0);
        holds.push(longest.as_secs_f64() * 1000.0);
    }
    stats("search ERROR in 7 MB of 700-char lines", whole, "ms");
    stats("lock held, longest slice: the same", holds, "ms");
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument picks sections.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wants = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let t = Terminals::new(TermConfig {
            kill_grace: Duration::from_millis(500),
            ..TermConfig::default()
        });
        if wants("ingest") {
            ingest(&t).await;
        }
        if wants("echo") {
            echo_round_trip(&t).await;
        }
        if wants("lag") {
            detection_lag(&t).await;
        }
        if wants("quiet") {
            quiet_lag(&t).await;
        }
        if wants("open") {
            open_to_prompt(&t).await;
        }
        if wants("memory") {
            memory(&t).await;
        }
        if wants("parallel") {
            parallel_waits(&t).await;
        }
        if wants("search") {
            searches(&t).await;
        }
        t.close_all().await;
    });
}
