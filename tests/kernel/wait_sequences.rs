//! `since: last_input` over random sequences of operations (SPEC §3.3): whatever ran before
//! in the session (framed commands, environment writes and reads, typed lines, keys, a
//! program interrupted with Ctrl-C, `less` or `vim` opened and quit), a line typed next is
//! matched on its output, never on the command line it typed; a pattern that appears only in
//! the typed command never matches. Operations follow each other at once, as a workflow's
//! steps do, without waiting for the prompt; only after quitting a full-screen program does
//! the sequence wait for the prompt, since a program that is quitting reads what is typed.
//!
//! Seeded and reproducible: every failure names its seed, and `FLOWDECK_SEED=<n>` replays
//! it (`FLOWDECK_SEQUENCES` sets how many sequences run).
// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use flowdeck::engine::{Actor, Engine};
use flowdeck::term::WaitOutcome;
use flowdeck::workflow::action::{
    AwaitOutputParams, GetScreenContentParams, OpenTerminalParams, RunCommandParams,
    SendInputParams, SetEnvParams,
};
use indexmap::IndexMap;
use serde_json::json;
use std::sync::Arc;

use crate::common;
use common::params;

/// Every wait's deadline; a healthy run needs a small fraction of it.
const WAIT_SECONDS: f64 = 15.0;

#[derive(Debug, Clone, Copy)]
enum Op {
    RunCommand,
    SetEnv,
    ReadEnv,
    TypedLine,
    Keys,
    InterruptSleep,
    Less,
    Vim,
}

const OPS: [Op; 8] = [
    Op::RunCommand,
    Op::SetEnv,
    Op::ReadEnv,
    Op::TypedLine,
    Op::Keys,
    Op::InterruptSleep,
    Op::Less,
    Op::Vim,
];

/// One sequence in one fresh session.
struct Run<'a> {
    engine: &'a Engine,
    id: String,
    file: String,
    /// What the session's shell should hold, as set so far.
    env: IndexMap<String, String>,
    /// Seed, sequence and operations so far, for failure messages.
    trail: String,
}

impl Run<'_> {
    fn fail(&self, what: &str) -> ! {
        let history = self
            .engine
            .get_screen_content(
                &self.id,
                &params::<GetScreenContentParams>(json!({"content_mode": "history"})),
                &Actor::Cli,
            )
            .map(|c| c.content)
            .unwrap_or_default();
        let tail: Vec<&str> = history.lines().rev().take(30).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        panic!(
            "{what}\n{}\nlast lines of the session:\n{}",
            self.trail,
            tail.join("\n")
        );
    }

    fn send(&self, input: serde_json::Value) {
        if let Err(e) =
            self.engine
                .send_input(&self.id, &params::<SendInputParams>(input), &Actor::Cli)
        {
            self.fail(&format!("send_input failed: {e}"));
        }
    }

    async fn wait(&self, pattern: &str, since: &str) -> (String, String) {
        let out = self
            .engine
            .await_output(
                &self.id,
                &params::<AwaitOutputParams>(
                    json!({"pattern": pattern, "since": since, "timeout": WAIT_SECONDS}),
                ),
                None,
                &Actor::Cli,
            )
            .await
            .unwrap_or_else(|e| self.fail(&format!("await_output {pattern:?} failed: {e}")));
        if out.result.outcome != WaitOutcome::Matched {
            self.fail(&format!(
                "await_output {pattern:?} ({since}) ended {:?}",
                out.result.outcome
            ));
        }
        (
            out.result.matched_text.unwrap_or_default(),
            out.result.matched_line.unwrap_or_default(),
        )
    }

    /// Waits until the session printed nothing for `ms` milliseconds.
    async fn quiet(&self, ms: u64) {
        let out = self
            .engine
            .await_output(
                &self.id,
                &params::<AwaitOutputParams>(
                    json!({"quiet_ms": ms, "since": "entry", "timeout": WAIT_SECONDS}),
                ),
                None,
                &Actor::Cli,
            )
            .await
            .unwrap_or_else(|e| self.fail(&format!("await_output quiet failed: {e}")));
        if out.result.outcome != WaitOutcome::Matched {
            self.fail(&format!("waiting for quiet ended {:?}", out.result.outcome));
        }
    }

    /// Types a line whose command holds a marker it never prints, and waits, since the last
    /// input, for a pattern that the marker and the output both match: only the output may.
    async fn typed_line(&self, n: usize, delay: u64) {
        let sleep = if delay == 0 {
            String::new()
        } else {
            format!("sleep 0.0{delay}; ")
        };
        self.send(json!({
            "input_text": format!(": ONLY_IN_COMMAND_{n}; {sleep}echo TOKEN_{n}_$((40 + 2))\n")
        }));
        let (text, line) = self
            .wait(&format!("ONLY_IN_COMMAND_{n}|TOKEN_{n}_\\S*"), "last_input")
            .await;
        if text != format!("TOKEN_{n}_42") || line != format!("TOKEN_{n}_42") {
            self.fail(&format!(
                "typed line {n}: matched {text:?} on line {line:?}, not the output TOKEN_{n}_42"
            ));
        }
    }

    async fn step(&mut self, op: Op, n: usize, rng: &mut fastrand::Rng) {
        match op {
            Op::RunCommand => {
                let code = rng.u64(..4);
                let r = self
                    .engine
                    .run_command(
                        &self.id,
                        &params::<RunCommandParams>(json!({
                            "command": format!("echo RC_{n}; (exit {code})"),
                            "timeout": WAIT_SECONDS,
                        })),
                        None,
                        &Actor::Cli,
                    )
                    .await
                    .unwrap_or_else(|e| self.fail(&format!("run_command failed: {e}")));
                let got = (r.result.exit_code, r.result.output.as_str());
                if got != (Some(code as i32), format!("RC_{n}").as_str()) {
                    self.fail(&format!("run_command {n} returned {got:?}"));
                }
            }
            Op::SetEnv => {
                let name = format!("SEQ_VAR_{}", rng.u64(..3));
                let value = format!("v{n} it's \"$(quoted)\" {}", rng.u64(..1000));
                self.engine
                    .set_env(
                        &self.id,
                        &params::<SetEnvParams>(json!({"vars": {name.clone(): value.clone()}})),
                        Some(WAIT_SECONDS),
                        &Actor::Cli,
                    )
                    .await
                    .unwrap_or_else(|e| self.fail(&format!("set_env failed: {e}")));
                self.env.insert(name, value);
            }
            Op::ReadEnv => {
                let names: Vec<&str> = ["SEQ_VAR_0", "SEQ_VAR_1", "SEQ_VAR_2"].into();
                let read = self
                    .engine
                    .read_env(&self.id, &names, Some(WAIT_SECONDS), &Actor::Cli)
                    .await
                    .unwrap_or_else(|e| self.fail(&format!("read_env failed: {e}")));
                for name in names {
                    let want = self.env.get(name).cloned();
                    if read.values.get(name) != Some(&want) {
                        self.fail(&format!("read_env {name}: {:?}, not {want:?}", read.values));
                    }
                }
            }
            Op::TypedLine => self.typed_line(n, rng.u64(..4)).await,
            Op::Keys => {
                // Typed with keys, edited on the line: the echo holds the marker too.
                self.send(json!({"keys": [
                    {"text": format!("echo KEY{n}_$((6 * 7)) # ONLY_IN_COMMAND_{n}")},
                    {"key": "home"}, {"key": "end"}, {"key": "left"}, {"key": "right"},
                    {"key": "enter"},
                ]}));
                let (text, line) = self
                    .wait(&format!("ONLY_IN_COMMAND_{n}|KEY{n}_\\S*"), "last_input")
                    .await;
                if text != format!("KEY{n}_42") || line != text {
                    self.fail(&format!("keys {n}: matched {text:?} on line {line:?}"));
                }
            }
            Op::InterruptSleep => {
                // The program prints once it holds the terminal, so Ctrl-C is for it.
                self.send(json!({
                    "input_text": format!("sh -c 'echo SLEEPING_{n}; exec sleep 30'\n")
                }));
                let (_, line) = self.wait(&format!("SLEEPING_{n}"), "last_input").await;
                if line != format!("SLEEPING_{n}") {
                    self.fail(&format!("interrupt {n}: matched on line {line:?}"));
                }
                self.send(json!({"keys": [{"ctrl": "c"}]}));
            }
            Op::Less | Op::Vim => {
                let command = match op {
                    Op::Less => format!("LESS= less {}\n", self.file),
                    _ => format!("vim -u NONE -i NONE -N {}\n", self.file),
                };
                self.send(json!({ "input_text": command }));
                self.wait("^row 1$", "screen").await;
                // vim asks the terminal questions after it draws (cursor position, colours);
                // quitting before the answers arrive would leave them to the shell, as typed
                // input. A person looks at the screen first: so does the sequence, until the
                // program has been quiet a moment.
                self.quiet(150).await;
                self.send(json!({ "input_text": match op { Op::Less => "q", _ => ":q!\r" } }));
                // A program that is quitting may still read what comes (vim takes it for
                // answers to its queries), as it would from a person typing that fast: the
                // prompt tells that the shell has the terminal again.
                self.wait("^\\$ $", "last_input").await;
            }
        }
    }
}

async fn sequence(engine: &Engine, file: &str, seed: u64, index: usize) {
    let mut rng = fastrand::Rng::with_seed(seed ^ (index as u64).wrapping_mul(0x9e37_79b9));
    let info = engine
        .open_terminal(
            &params::<OpenTerminalParams>(json!({
                "command": ["bash", "--norc", "--noprofile"],
                "env": {"PS1": "$ ", "HISTFILE": "/dev/null"},
            })),
            &Actor::Cli,
        )
        .await
        .unwrap();
    let mut run = Run {
        engine,
        id: info.session_id,
        file: file.to_string(),
        env: IndexMap::new(),
        trail: format!(
            "seed {seed} (replay with FLOWDECK_SEED={seed}), sequence {index}; operations:"
        ),
    };
    let count = 5 + rng.u64(..6) as usize;
    for n in 0..count {
        let op = OPS[rng.usize(..OPS.len())];
        run.trail.push_str(&format!(" {op:?}"));
        run.step(op, n, &mut rng).await;
    }
    // Whatever came last, a typed line is matched on its output.
    run.trail.push_str(" TypedLine");
    run.typed_line(count, rng.u64(..4)).await;
    engine.exit_terminal(&run.id, &Actor::Cli).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waits_match_output_whatever_ran_before() {
    let seed = std::env::var("FLOWDECK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        });
    let sequences: usize = std::env::var("FLOWDECK_SEQUENCES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(24);
    println!("seed {seed}");
    let dir = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let file = files.path().join("rows.txt");
    let rows: String = (1..=200).map(|i| format!("row {i}\n")).collect();
    std::fs::write(&file, rows).unwrap();
    let engine: Arc<Engine> = common::test_engine(dir.path(), 8, false);
    let file = file.display().to_string();
    for index in 0..sequences {
        sequence(&engine, &file, seed, index).await;
    }
    engine.shutdown().await;
}
