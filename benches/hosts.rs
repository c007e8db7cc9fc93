//! Terminals on hosts through ssh (issue 25, docs/PERFORMANCE.md), against the tests' real
//! sshd on loopback (tests/common/sshd.rs), beside local sessions in the same run: the echo
//! round trip (`send_input` + `await_output` of `echo R<n>`, as the terminal bench times it)
//! and `run_command`, alternating a local bash and a shell on `h1`; opening a session to its
//! first prompt, each way; then one small workflow run on 20 host aliases at once
//! (`run_fleet`, 20 in parallel) against the same workflow on one host, with this process's
//! resident memory before, at its peak during the fleets (sampled every 10 ms) and after,
//! and for scale the same on one and 20 hosts with plain `ssh -tt` and no flowdeck: a login
//! shell saying `hi`, and `echo hi` alone (*: which sshd still runs with `bash -c`, and
//! Debian's bash reads `~/.bashrc` for commands sshd runs).
//!
//! Everything runs in this one process on one engine, whose ssh is `ssh -F CONFIG`: a config
//! of the bench's own that defines `f1`..`f20` (127.0.0.2, .3 and .4 in turn) and includes
//! the fixture's (which defines `h1`). The far shells are this machine's too: the user's
//! login shell, which reads the user's rc files.
//!
//! `cargo bench --bench hosts`; `FLOWDECK_BENCH_QUICK=1` for a short run. Needs
//! `/usr/sbin/sshd` and `ssh` (Debian: openssh-server, openssh-client).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;

#[path = "support/mod.rs"]
mod support;

use common::params;
use common::sshd::{ADDRESSES, Sshd};
use flowdeck::engine::{Actor, Engine, FleetResult, RunRequest};
use flowdeck::term::WaitOutcome;
use flowdeck::workflow::action::{
    AwaitOutputParams, OpenTerminalParams, RunCommandParams, SendInputParams,
};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Host aliases of the fleet.
const FLEET: usize = 20;

/// The fleet's workflow: a command on the host, and a return value that says which address
/// the run reached. (No history file: the far shell is the user's own login shell.)
const HELLO: &str = r#"name: hello_host
description: Says hi on a host.
return_values:
  REACHED: { description: "the address the run's shell was reached at" }
initial_state: hi
states:
  hi:
    action: { tool: run_command, params: { command: 'unset HISTFILE; echo hi && export REACHED="${SSH_CONNECTION#* * }"' } }
"#;

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// An ssh client config in `dir` with the aliases `f1`..`f20` (127.0.0.2, .3, .4 in turn),
/// logging in as the fixture's `h1`..`h3` do, and the fixture's own aliases through its
/// config, included.
fn fleet_config(sshd: &Sshd, dir: &Path) -> std::path::PathBuf {
    let mut text = String::new();
    for i in 1..=FLEET {
        text.push_str(&format!(
            "Host f{i}\n  HostName {}\n",
            ADDRESSES[(i - 1) % ADDRESSES.len()]
        ));
    }
    // The fixture's key for `h1`..`h3`, in its directory; its `Host *` block (port, user,
    // known hosts, no agent) comes with the include.
    text.push_str(&format!(
        "Host f*\n  IdentityFile {}\n  PreferredAuthentications publickey\n\
         Host *\n  Include {}\n",
        sshd.dir().join("user_key").display(),
        sshd.config().display()
    ));
    let path = dir.join("ssh_config");
    std::fs::write(&path, text).unwrap();
    path
}

/// The address alias `f<i>` reaches.
fn address_of(host: &str) -> &'static str {
    let i: usize = host.trim_start_matches('f').parse().unwrap();
    ADDRESSES[(i - 1) % ADDRESSES.len()]
}

/// A local bash, quiet and predictable (`--norc`, `PS1='$ '`, no history file).
async fn open_local(e: &Engine) -> String {
    let p: OpenTerminalParams = params(json!({
        "command": ["bash", "--norc", "--noprofile"],
        "env": {"PS1": "$ ", "HISTFILE": "/dev/null"},
    }));
    e.open_terminal(&p, &Actor::Cli).await.unwrap().session_id
}

/// The login shell on `host`, reached and set up.
async fn open_remote(e: &Engine, host: &str) -> String {
    let p: OpenTerminalParams = params(json!({"host": host}));
    let info = e.open_terminal(&p, &Actor::Cli).await.unwrap();
    assert_eq!(info.host.as_deref(), Some(host), "{info:?}");
    info.session_id
}

/// Makes the far login shell as quiet as the local `bash --norc`: the user's
/// `PROMPT_COMMAND` (here pyenv's hook, some 4 ms before every prompt) and history file
/// gone, so that the two differ by the connection alone.
async fn quieten(e: &Engine, id: &str) {
    let r = run(e, id, "unset PROMPT_COMMAND HISTFILE").await;
    assert_eq!(r.exit_code, Some(0), "{r:?}");
}

async fn run(e: &Engine, id: &str, command: &str) -> flowdeck::term::CommandResult {
    let p: RunCommandParams = params(json!({"command": command, "timeout": 30}));
    e.run_command(id, &p, None, &Actor::Cli)
        .await
        .unwrap()
        .result
}

/// One echo round trip, in ms: `echo R<i>` typed, until `^R<i>$` is seen.
async fn echo(e: &Engine, id: &str, i: usize) -> f64 {
    let send: SendInputParams = params(json!({"input_text": format!("echo R{i}\n")}));
    let wait: AwaitOutputParams = params(json!({"pattern": format!("^R{i}$"), "timeout": 30}));
    let started = Instant::now();
    e.send_input(id, &send, &Actor::Cli).unwrap();
    let r = e.await_output(id, &wait, None, &Actor::Cli).await.unwrap();
    let took = ms(started);
    assert_eq!(r.result.outcome, WaitOutcome::Matched, "{r:?}");
    assert_eq!(r.result.matched_line.as_deref(), Some(&*format!("R{i}")));
    took
}

/// One `run_command`, in ms, checked: exit status 0 and the output expected.
async fn command(e: &Engine, id: &str, line: &str, output: &str) -> f64 {
    let started = Instant::now();
    let r = run(e, id, line).await;
    let took = ms(started);
    assert_eq!(r.exit_code, Some(0), "{line}: {r:?}");
    assert_eq!(r.output, output, "{line}: {r:?}");
    took
}

/// Prints `name`'s local and remote figures and the ratio of their medians.
fn compare(name: &str, local: Vec<f64>, remote: Vec<f64>) {
    let l = support::stats(&format!("{name}, local bash"), local, "ms");
    let r = support::stats(&format!("{name}, on h1 through ssh"), remote, "ms");
    println!("  ssh / local, medians {:>40.2}x", r / l);
}

async fn round_trips(e: &Engine, quick: bool) {
    let local = open_local(e).await;
    let remote = open_remote(e, "h1").await;
    quieten(e, &remote).await;
    // The far shell is the one sshd started for the connection to h1's address.
    let there = run(e, &remote, "echo \"${SSH_CONNECTION#* * }\"").await;
    assert!(there.output.starts_with("127.0.0.2 "), "{there:?}");
    let (warm, n) = if quick { (5, 50) } else { (20, 200) };
    for i in 0..warm {
        echo(e, &local, i).await;
        echo(e, &remote, i).await;
    }
    let (mut l, mut r) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in warm..warm + n {
        l.push(echo(e, &local, i).await);
        r.push(echo(e, &remote, i).await);
    }
    compare("echo round trip (send_input + await_output)", l, r);

    let n = if quick { 30 } else { 100 };
    for (line, output) in [("true", ""), ("echo x", "x")] {
        for _ in 0..warm / 2 {
            command(e, &local, line, output).await;
            command(e, &remote, line, output).await;
        }
        let (mut l, mut r) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for _ in 0..n {
            l.push(command(e, &local, line, output).await);
            r.push(command(e, &remote, line, output).await);
        }
        compare(&format!("run_command `{line}`"), l, r);
    }
    for id in [local, remote] {
        e.exit_terminal(&id, &Actor::Cli).await.unwrap();
    }
}

/// `open_terminal` until the session takes input: a local bash's first prompt; on `h1`, the
/// host reached, its login shell started (with the user's rc files) and set up.
async fn opens(e: &Engine, quick: bool) {
    let n = if quick { 3 } else { 10 };
    let (mut l, mut r) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let started = Instant::now();
        let id = open_local(e).await;
        l.push(ms(started));
        e.exit_terminal(&id, &Actor::Cli).await.unwrap();
        let started = Instant::now();
        let id = open_remote(e, "h1").await;
        r.push(ms(started));
        e.exit_terminal(&id, &Actor::Cli).await.unwrap();
    }
    compare("open_terminal until it takes input", l, r);
    // What part of the remote open is the far login shell's own start, on this machine.
    let mut shell = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        let status = std::process::Command::new("bash")
            .args(["-l", "-i", "-c", "true"])
            .env("HISTFILE", "/dev/null")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        shell.push(ms(started));
        assert!(status.success());
    }
    support::stats(
        "  of which: a login shell's start here (bash -lic true)",
        shell,
        "ms",
    );
}

fn request() -> RunRequest {
    common::run_request("hello_host", &[])
}

/// Every run of `fleet` completed on the host it was given, which it reached.
fn check(fleet: &FleetResult, hosts: &[String]) {
    assert_eq!(
        (fleet.completed, fleet.hosts),
        (hosts.len(), hosts.len()),
        "{:#?}",
        fleet
            .runs
            .iter()
            .map(|r| (&r.host, &r.error))
            .collect::<Vec<_>>()
    );
    for (run, host) in fleet.runs.iter().zip(hosts) {
        assert_eq!(&run.host, host);
        let result = run.result.as_ref().unwrap();
        let reached = &result.return_values["REACHED"];
        assert!(
            reached.starts_with(&format!("{} ", address_of(host))),
            "{host} reached {reached}"
        );
    }
}

/// The resident memory of this process and the sessions open, sampled every 10 ms until
/// stopped: their peaks.
struct Sampler {
    stop: Arc<AtomicBool>,
    sessions: Arc<AtomicUsize>,
    thread: std::thread::JoinHandle<f64>,
}

impl Sampler {
    fn start(engine: Arc<Engine>) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let sessions = Arc::new(AtomicUsize::new(0));
        let (s, n) = (stop.clone(), sessions.clone());
        let thread = std::thread::spawn(move || {
            let mut peak: f64 = 0.0;
            while !s.load(Ordering::Relaxed) {
                peak = peak.max(support::resident_mib(std::process::id()));
                n.fetch_max(
                    engine.list_terminal_sessions().sessions.len(),
                    Ordering::Relaxed,
                );
                std::thread::sleep(Duration::from_millis(10));
            }
            peak
        });
        Sampler {
            stop,
            sessions,
            thread,
        }
    }

    /// The peak resident memory in MiB and the most sessions open at once.
    fn finish(self) -> (f64, usize) {
        self.stop.store(true, Ordering::Relaxed);
        let peak = self.thread.join().unwrap();
        (peak, self.sessions.load(Ordering::Relaxed))
    }
}

/// A login shell on the far side, interactive as a terminal's is (so it reads the same rc
/// files), saying `hi`.
const LOGIN_HI: &str = "unset HISTFILE; exec \"${SHELL:-/bin/sh}\" -l -i -c 'echo hi'";

/// Work without flowdeck, for scale: `ssh -tt HOST REMOTE` on every host at once, each
/// checked to say `hi`; the wall time in ms to the last one's end.
async fn bare_ssh(config: &Path, hosts: &[String], remote: &str) -> f64 {
    let (config, hosts) = (config.to_path_buf(), hosts.to_vec());
    let remote = remote.to_string();
    tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let children: Vec<_> = hosts
            .iter()
            .map(|host| {
                std::process::Command::new("ssh")
                    .arg("-F")
                    .arg(&config)
                    .args(["-tt", "-o", "BatchMode=yes", "--", host])
                    .arg(&remote)
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for (child, host) in children.into_iter().zip(&hosts) {
            let out = child.wait_with_output().unwrap();
            let said = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && said.lines().any(|l| l.trim_end() == "hi"),
                "ssh {host}: {}: {said}{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        ms(started)
    })
    .await
    .unwrap()
}

/// CPU seconds (user + system) process `pid` used itself, and those of the children it
/// waited for (with their own children's), from /proc.
fn cpu_of(pid: u32) -> (f64, f64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let ticks: Vec<f64> = stat[stat.rfind(')').unwrap() + 2..]
        .split(' ')
        .skip(11)
        .take(4)
        .map(|t| t.parse().unwrap())
        .collect();
    ((ticks[0] + ticks[1]) / 100.0, (ticks[2] + ticks[3]) / 100.0)
}

/// The live processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|child| {
            std::fs::read_to_string(format!("/proc/{child}/stat")).is_ok_and(|stat| {
                let rest = &stat[stat.rfind(')').unwrap() + 2..];
                rest.split(' ').nth(1) == Some(&*pid.to_string())
            })
        })
        .collect()
}

/// The fixture's sshd: the child of this process that runs with its config.
fn sshd_pid(sshd: &Sshd) -> u32 {
    let config = sshd.dir().join("sshd_config");
    let config = config.to_str().unwrap();
    children_of(std::process::id())
        .into_iter()
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(config))
        })
        .expect("the fixture's sshd among this process's children")
}

/// CPU seconds used by what runs sessions on hosts: flowdeck (this process), and everything
/// else: the ssh clients and the far side (sshd, the processes serving its connections, the
/// shells and what they ran), each counted once waited for, whatever else the machine runs.
/// (The two cannot be told apart here: a far shell whose connection ended first is an orphan
/// that this process, an ancestor of sshd and a subreaper, waits for.)
#[derive(Debug, Clone, Copy)]
struct Cpu {
    flowdeck: f64,
    rest: f64,
}

impl Cpu {
    fn now(sshd: u32) -> Cpu {
        let (flowdeck, children) = cpu_of(std::process::id());
        let (listener, served) = cpu_of(sshd);
        Cpu {
            flowdeck,
            rest: children + listener + served,
        }
    }
}

/// Waits until every ssh client has ended and been waited for, and sshd serves no
/// connection: their CPU is then counted.
async fn settle(sshd: u32) {
    common::poll_until(common::LONG, "the connections to end", || {
        (children_of(std::process::id()) == [sshd] && children_of(sshd).is_empty()).then_some(())
    })
    .await;
}

/// `work`'s result, its wall time in ms, and the CPU it cost (see [`Cpu`]).
async fn measured<T>(sshd: u32, work: impl std::future::Future<Output = T>) -> (T, f64, Cpu) {
    settle(sshd).await;
    let before = Cpu::now(sshd);
    let started = Instant::now();
    let value = work.await;
    let wall = ms(started);
    settle(sshd).await;
    let after = Cpu::now(sshd);
    let cost = Cpu {
        flowdeck: after.flowdeck - before.flowdeck,
        rest: after.rest - before.rest,
    };
    (value, wall, cost)
}

/// Prints the CPU of `samples`: their totals' figures, and the medians of the two parts.
fn cpu_stats(name: &str, samples: Vec<Cpu>) {
    let median =
        |f: fn(&Cpu) -> f64| support::quantile(&samples.iter().map(f).collect::<Vec<_>>(), 0.5);
    let (flowdeck, rest) = (median(|c| c.flowdeck), median(|c| c.rest));
    support::stats(
        name,
        samples.iter().map(|c| c.flowdeck + c.rest).collect(),
        "s",
    );
    println!("  medians: flowdeck {flowdeck:.2} s, ssh, sshd and the far shells {rest:.2} s");
}

async fn fleets(e: &Arc<Engine>, ssh_config: &Path, sshd: u32, quick: bool) {
    let all: Vec<String> = (1..=FLEET).map(|i| format!("f{i}")).collect();
    let rounds = if quick { 2 } else { 3 };
    // Warm-up: one host, then the whole fleet once.
    check(
        &e.run_fleet(request(), vec!["f1".into()], 1).await,
        &all[..1],
    );
    check(&e.run_fleet(request(), all.clone(), FLEET).await, &all);
    let before = support::resident_mib(std::process::id());
    let sampler = Sampler::start(e.clone());
    let (mut one, mut many, mut runs) = (Vec::new(), Vec::new(), Vec::new());
    let (mut login_one, mut login_many) = (Vec::new(), Vec::new());
    let (mut echo_one, mut echo_many) = (Vec::new(), Vec::new());
    let (mut cpu, mut login_cpu, mut echo_cpu) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let host = vec![all[round % FLEET].clone()];
        let (fleet, wall, _) = measured(sshd, e.run_fleet(request(), host.clone(), 1)).await;
        one.push(wall);
        check(&fleet, &host);
        let (fleet, wall, cost) = measured(sshd, e.run_fleet(request(), all.clone(), FLEET)).await;
        many.push(wall);
        cpu.push(cost);
        check(&fleet, &all);
        runs.extend(
            fleet
                .runs
                .iter()
                .map(|r| r.result.as_ref().unwrap().duration_ms),
        );
        let (wall, _, _) = measured(sshd, bare_ssh(ssh_config, &host, LOGIN_HI)).await;
        login_one.push(wall);
        let (wall, _, cost) = measured(sshd, bare_ssh(ssh_config, &all, LOGIN_HI)).await;
        login_many.push(wall);
        login_cpu.push(cost);
        let (wall, _, _) = measured(sshd, bare_ssh(ssh_config, &host, "echo hi")).await;
        echo_one.push(wall);
        let (wall, _, cost) = measured(sshd, bare_ssh(ssh_config, &all, "echo hi")).await;
        echo_many.push(wall);
        echo_cpu.push(cost);
    }
    let (peak, most) = sampler.finish();
    let after = support::resident_mib(std::process::id());
    let one = support::stats("the workflow on one host (run_fleet, 1 host)", one, "ms");
    let many = support::stats(
        &format!("the workflow on {FLEET} hosts at once (parallel {FLEET})"),
        many,
        "ms",
    );
    println!("  {FLEET} hosts / one host, medians {:>36.2}x", many / one);
    support::stats("  each run of the fleets, start to end", runs, "ms");
    cpu_stats(&format!("CPU of a {FLEET}-host fleet"), cpu);
    let login_one = support::stats(
        "no flowdeck: ssh -tt, login shell, `echo hi`, one host",
        login_one,
        "ms",
    );
    let login_many = support::stats(
        &format!("the same on {FLEET} hosts at once"),
        login_many,
        "ms",
    );
    println!(
        "  {FLEET} hosts / one host, medians {:>36.2}x",
        login_many / login_one
    );
    println!(
        "  flowdeck / no flowdeck, medians: one host {:.2}x, {FLEET} hosts {:.2}x",
        one / login_one,
        many / login_many
    );
    cpu_stats(&format!("CPU of those {FLEET}"), login_cpu);
    let echo_one = support::stats(
        "no flowdeck, no login shell: ssh -tt HOST 'echo hi' (*)",
        echo_one,
        "ms",
    );
    let echo_many = support::stats(
        &format!("the same on {FLEET} hosts at once"),
        echo_many,
        "ms",
    );
    println!(
        "  {FLEET} hosts / one host, medians {:>36.2}x",
        echo_many / echo_one
    );
    cpu_stats(&format!("CPU of those {FLEET}"), echo_cpu);
    println!(
        "memory (this process's VmRSS): {before:.1} MiB before the fleets, {peak:.1} MiB at the peak \
         ({most} sessions open at once), {after:.1} MiB after"
    );
}

fn main() {
    let quick = std::env::var_os("FLOWDECK_BENCH_QUICK").is_some();
    let started = Instant::now();
    let sshd = Sshd::start();
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("hello_host.yaml"), HELLO).unwrap();
    let config_dir = tempfile::tempdir().unwrap();
    let ssh_config = fleet_config(&sshd, config_dir.path());
    let runtime = support::runtime();
    runtime.block_on(async {
        let mut config = common::test_config(FLEET + 4, false);
        config.ssh_command = Some(vec![
            "ssh".into(),
            "-F".into(),
            ssh_config.display().to_string(),
        ]);
        let e = Engine::open(folder.path(), config).unwrap();
        round_trips(&e, quick).await;
        opens(&e, quick).await;
        fleets(&e, &ssh_config, sshd_pid(&sshd), quick).await;
        e.shutdown().await;
    });
    println!("(bench took {:.1} s)", started.elapsed().as_secs_f64());
}
