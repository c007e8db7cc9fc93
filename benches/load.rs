//! Loading and validating a folder of 1,000 generated manifests (SPEC §7: "well under a
//! second"), and validating one manifest on its own.
//!
//! Before timing, one load in this fresh process prints its memory: the process's peak RSS
//! (`VmHWM`) and what it holds with the catalog loaded (`VmRSS`), from `/proc/self/status`.
//! A second folder has a different pattern in every state of every manifest, so that what
//! compiling them costs shows too (manifests of one folder usually share most patterns, and
//! a pattern is checked once per process).

use criterion::{Criterion, criterion_group, criterion_main};
use flowdeck::store::Store;
use flowdeck::workflow::{Format, check_bytes};
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

/// A realistic manifest: a contract, eight states with waits, captures, guards and retries.
/// With `distinct`, each state's pattern is this manifest's own.
fn manifest(i: usize, distinct: bool) -> String {
    let mut s = format!(
        "name: generated_{i:04}\ndescription: Generated workflow {i} for the load benchmark\nversion: 1.0.{i}\ncategory: bench\n\
arguments:\n  PROJECT_ROOT: {{description: Project root, type: path}}\n  MODE: {{description: Build mode, enum: [debug, release], default: debug}}\n\
return_values:\n  STATUS: {{description: OK or FAILED}}\ninitial_state: s0\nmax_steps: 50\nstates:\n"
    );
    for n in 0..8 {
        let next = (n + 1) % 8;
        let step = if distinct {
            format!("{n} of {i}")
        } else {
            n.to_string()
        };
        s.push_str(&format!(
            "  s{n}:\n    description: Step {n}\n    action:\n      tool: await_output\n      params: {{pattern: 'STEP {step} (OK|FAIL) code=(\\d+)', timeout: 30, stop_patterns: [error, fatal], captures: {{CODE_{n}: 2}}}}\n    transitions:\n      - {{condition: pattern_match, pattern: OK, next_state: s{next}, when: {{var: MODE, in: [debug, release]}}}}\n      - {{condition: timeout, next_state: fail}}\n"
        ));
    }
    s.push_str("  fail:\n    action: {tool: set_env, params: {vars: {STATUS: FAILED}}}\n");
    s
}

fn folder(distinct: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for i in 0..1000 {
        std::fs::write(
            dir.path().join(format!("generated_{i:04}.yaml")),
            manifest(i, distinct),
        )
        .expect("write");
    }
    dir
}

/// A line of `/proc/self/status` in MiB.
fn status_mib(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn first_load(dir: &Path) {
    let before = status_mib("VmRSS");
    let start = Instant::now();
    let store = Store::open(dir).expect("open");
    let took = start.elapsed();
    assert_eq!(store.catalog().len(), 1000);
    let (peak, loaded) = (status_mib("VmHWM"), status_mib("VmRSS"));
    let start = Instant::now();
    drop(store);
    println!(
        "load/first_load_in_process: {took:.1?} (then {:.1?} to drop it); peak RSS {peak:.1} MiB (the process before the load: {before:.1} MiB), RSS with the catalog loaded {loaded:.1} MiB",
        start.elapsed()
    );
}

fn bench(c: &mut Criterion) {
    let shared = folder(false);
    let distinct = folder(true);
    first_load(shared.path());
    let one = manifest(7, false);
    let mut group = c.benchmark_group("load");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for (name, dir) in [
        ("open_folder_1000_manifests", &shared),
        ("open_folder_1000_manifests_distinct_patterns", &distinct),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let store = Store::open(dir.path()).expect("open");
                assert_eq!(store.catalog().len(), 1000);
                black_box(store);
            })
        });
    }
    group.finish();
    c.bench_function("validate_one_manifest", |b| {
        b.iter(|| black_box(check_bytes(black_box(one.as_bytes()), Format::Yaml)))
    });
    let checked = check_bytes(one.as_bytes(), Format::Yaml);
    assert!(checked.is_valid(), "{:?}", checked.violations);
    let checked = check_bytes(manifest(7, true).as_bytes(), Format::Yaml);
    assert!(checked.is_valid(), "{:?}", checked.violations);
}

criterion_group!(benches, bench);
criterion_main!(benches);
