//! Loading and validating a folder of 1,000 generated manifests (SPEC §7: "well under a
//! second"), and validating one manifest on its own.

use criterion::{Criterion, criterion_group, criterion_main};
use flowdeck::store::Store;
use flowdeck::workflow::{Format, check_bytes};
use std::hint::black_box;
use std::time::Duration;

/// A realistic manifest: a contract, eight states with waits, captures, guards and retries.
fn manifest(i: usize) -> String {
    let mut s = format!(
        "name: generated_{i:04}\ndescription: Generated workflow {i} for the load benchmark\nversion: 1.0.{i}\ncategory: bench\n\
arguments:\n  PROJECT_ROOT: {{description: Project root, type: path}}\n  MODE: {{description: Build mode, enum: [debug, release], default: debug}}\n\
return_values:\n  STATUS: {{description: OK or FAILED}}\ninitial_state: s0\nmax_steps: 50\nstates:\n"
    );
    for n in 0..8 {
        let next = (n + 1) % 8;
        s.push_str(&format!(
            "  s{n}:\n    description: Step {n}\n    action:\n      tool: await_output\n      params: {{pattern: 'STEP {n} (OK|FAIL) code=(\\d+)', timeout: 30, stop_patterns: [error, fatal], captures: {{CODE_{n}: 2}}}}\n    transitions:\n      - {{condition: pattern_match, pattern: OK, next_state: s{next}, when: {{var: MODE, in: [debug, release]}}}}\n      - {{condition: timeout, next_state: fail}}\n"
        ));
    }
    s.push_str("  fail:\n    action: {tool: set_env, params: {vars: {STATUS: FAILED}}}\n");
    s
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    for i in 0..1000 {
        std::fs::write(
            dir.path().join(format!("generated_{i:04}.yaml")),
            manifest(i),
        )
        .expect("write");
    }
    let one = manifest(7);
    let mut group = c.benchmark_group("load");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("open_folder_1000_manifests", |b| {
        b.iter(|| {
            let store = Store::open(dir.path()).expect("open");
            assert_eq!(store.catalog().len(), 1000);
            black_box(store);
        })
    });
    group.finish();
    c.bench_function("validate_one_manifest", |b| {
        b.iter(|| black_box(check_bytes(black_box(one.as_bytes()), Format::Yaml)))
    });
    let checked = check_bytes(one.as_bytes(), Format::Yaml);
    assert!(checked.is_valid(), "{:?}", checked.violations);
}

criterion_group!(benches, bench);
criterion_main!(benches);
