//! What every benchmark prints the same way: a sample's median, p99, min and max, and the
//! runtime they run on (two workers, as the binary runs).

#![allow(dead_code)]

/// Prints the figures of `samples` (in `unit`) under `name`, and returns the median.
pub fn stats(name: &str, mut samples: Vec<f64>, unit: &str) -> f64 {
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| quantile(&samples, q);
    let median = at(0.5);
    println!(
        "{name:<58} median {median:>9.3} {unit}  p99 {:>9.3} {unit}  min {:>9.3}  max {:>9.3}  (n={})",
        at(0.99),
        samples[0],
        samples[samples.len() - 1],
        samples.len()
    );
    median
}

/// A multi-threaded runtime with two workers, as the `flowdeck` binary builds it.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("an async runtime")
}

/// The `q` quantile (0 to 1) of `samples`, nearest rank.
pub fn quantile(samples: &[f64], q: f64) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// CPU seconds (user + system) a process has used, from /proc: what else the machine runs does
/// not change it.
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// The CPU share (% of a core) `pid` used over `span`.
pub async fn cpu_share(pid: u32, span: std::time::Duration) -> f64 {
    let before = cpu_seconds(pid);
    tokio::time::sleep(span).await;
    (cpu_seconds(pid) - before) / span.as_secs_f64() * 100.0
}

/// The resident memory of `pid` in MiB (`VmRSS`).
pub fn resident_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib / 1024.0
}
