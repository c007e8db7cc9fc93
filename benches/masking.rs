//! What masking a run's secrets costs (docs/PERFORMANCE.md): the one masker (term/mask.rs)
//! reads every character of a recording's output once a run has a secret, and the journal's
//! texts pass through it too. Measured on the output of `seq 1 2000000` (16.9 MB, what the
//! recording bench floods with), on the same with a colour code a line (what `ls --color` and
//! compilers print), fed in 4 KiB chunks as the session's reader hands them over; and on a
//! screen's text (120x30) as a step's result holds it. Each figure is the median of its
//! samples, in MB/s of output (or µs a screen); the masker with no secret is the floor.
//!
//! `cargo bench --bench masking`; `FLOWDECK_BENCH_QUICK=1` for a short run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/mod.rs"]
mod support;

use flowdeck::term::mask::{Masker, Needles};
use std::time::Instant;

fn seq() -> String {
    (1..=2_000_000).map(|n| format!("{n}\r\n")).collect()
}

fn coloured() -> String {
    (1..=1_000_000)
        .map(|n| format!("\x1b[1;34m{n}\x1b[0m file-{n}.txt\r\n"))
        .collect()
}

/// MB/s of streaming `text` through a masker of `needles`, 4 KiB at a time.
fn stream(text: &str, needles: &Needles) -> f64 {
    let started = Instant::now();
    let mut masker = Masker::new(needles.clone(), "********");
    let mut out = 0usize;
    let mut from = 0;
    while from < text.len() {
        let mut to = (from + 4096).min(text.len());
        while !text.is_char_boundary(to) {
            to += 1;
        }
        out += masker.push(&text[from..to]).len();
        from = to;
    }
    out += masker.finish().len();
    assert!(out >= text.len() / 2);
    text.len() as f64 / 1e6 / started.elapsed().as_secs_f64()
}

fn main() {
    let quick = std::env::var_os("FLOWDECK_BENCH_QUICK").is_some();
    let runs = if quick { 3 } else { 11 };
    let none = Needles::default();
    let one = Needles::new(&["S3cr3t-T0ken-value"]);
    let three = Needles::new(&["S3cr3t-T0ken-value", "it'\\''s a pass", "tab\\011secret"]);
    for (name, text) in [
        ("seq 1 2000000", seq()),
        ("coloured ls-like lines", coloured()),
    ] {
        for (secrets, needles) in [
            ("no secret", &none),
            ("1 secret", &one),
            ("3 secrets", &three),
        ] {
            let samples: Vec<f64> = (0..runs).map(|_| stream(&text, needles)).collect();
            support::stats(&format!("stream {name}, {secrets}"), samples, "MB/s");
        }
    }
    // A step's screen: 30 rows of 120 columns, the last rows wrapped.
    let screen: String = (0..30)
        .map(|r| format!("{:0>120}", r))
        .collect::<Vec<_>>()
        .join("\n");
    let samples: Vec<f64> = (0..runs * 100)
        .map(|_| {
            let started = Instant::now();
            let masked = one.mask(&screen, "********");
            assert_eq!(masked.len(), screen.len());
            started.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    support::stats("a 120x30 screen's text, 1 secret", samples, "µs");
}
