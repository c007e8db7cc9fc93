//! `flowdeck run NAME`: a workflow run headless, with progress on stderr and the result on
//! stdout. A thin front end over [`crate::engine`]: it starts the run, follows the engine's
//! events, answers `prompt` steps from stdin, and cancels on Ctrl-C.

use crate::engine::{
    Actor, Change, Engine, EngineEvent, Phase, RunEvent, RunRequest, RunResult, WorkflowSource,
};
use crate::signals::Termination;
use crate::workflow::action::GetScreenContentParams;
use crate::workflow::names::sanitize;
use anyhow::{Context, Result, bail};
use indexmap::IndexMap;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

/// What `flowdeck run` was asked.
#[derive(Debug)]
pub struct RunArgs {
    pub name: String,
    pub inputs: Vec<String>,
    pub keep_session: bool,
    pub json: bool,
}

/// Parses `KEY=VALUE` inputs (the value may itself hold `=`).
fn parse_inputs(inputs: &[String]) -> Result<IndexMap<String, String>> {
    let mut parsed = IndexMap::new();
    for input in inputs {
        let Some((key, value)) = input.split_once('=') else {
            bail!("input {} is not KEY=VALUE", sanitize(input));
        };
        if parsed.insert(key.to_string(), value.to_string()).is_some() {
            bail!("input {} is given twice", sanitize(key));
        }
    }
    Ok(parsed)
}

pub fn run(folder: &Path, args: RunArgs, out: &mut impl Write) -> Result<ExitCode> {
    let inputs = parse_inputs(&args.inputs)?;
    let runtime = super::runtime()?;
    let outcome = runtime.block_on(async {
        // Registered first: a hang-up or a kill request from here on cancels the run and
        // still prints its result, rather than leave its processes running.
        let mut termination = Termination::register().context("cannot handle signals")?;
        let engine = super::open_engine(folder, super::engine_config(false, false))?;
        let result = follow(&engine, &args, inputs, &mut termination).await;
        let printed = match &result {
            Ok(result) => print_result(result, &engine, &args, out).map(|()| {
                if result.success {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(1)
                }
            }),
            Err(_) => Ok(ExitCode::from(2)),
        };
        // Sessions end even when the result could not be printed (a closed terminal).
        engine.shutdown().await;
        let code = printed?;
        result.map(|_| code)
    });
    // A question left unanswered leaves a thread blocked on stdin; do not wait for it.
    runtime.shutdown_timeout(Duration::from_millis(100));
    outcome
}

/// Starts the run and shows its progress until it ends.
async fn follow(
    engine: &std::sync::Arc<Engine>,
    args: &RunArgs,
    inputs: IndexMap<String, String>,
    termination: &mut Termination,
) -> Result<RunResult> {
    let mut events = engine.subscribe();
    let mut input = StdinLines::new();
    // Followed: should this command stop following before the end, the run is cancelled.
    let started = engine
        .follow_run(RunRequest {
            workflow: WorkflowSource::Name(args.name.clone()),
            session_id: None,
            inputs,
            keep_session: args.keep_session,
            actor: Actor::Cli,
            require_approval: false,
        })
        .await?;
    let run_id = started.run_id().to_string();
    let progress = Progress::new(std::io::stderr().is_terminal(), &args.name);
    let finished = started.finished();
    tokio::pin!(finished);
    loop {
        tokio::select! {
            result = &mut finished => {
                progress.done();
                return Ok(result);
            }
            signal = termination.recv() => {
                progress.line(&format!("{signal}: cancelling the run"));
                let _ = engine.cancel_run(&run_id, &Actor::Cli).await;
            }
            event = events.recv() => match event {
                Ok(EngineEvent { change: Change::Run { run_id: id, line, .. }, .. }) if id == run_id => {
                    if let RunEvent::WaitingForInput { prompt, .. } = &line {
                        progress.pause();
                        ask(engine, &run_id, prompt, &mut input, &mut events, termination).await;
                        progress.resume();
                    } else {
                        progress.show(&line);
                    }
                }
                Err(RecvError::Lagged(_)) => {
                    // Events were missed: the run's status says whether a question waits.
                    if let Ok(status) = engine.run_status(&run_id)
                        && status.status == Phase::WaitingForInput
                        && let Some(prompt) = status.prompt
                    {
                        progress.pause();
                        ask(engine, &run_id, &prompt, &mut input, &mut events, termination).await;
                        progress.resume();
                    }
                }
                Err(RecvError::Closed) => {
                    // No more events (the engine is going away): only the result is left.
                    let result = (&mut finished).await;
                    progress.done();
                    return Ok(result);
                }
                Ok(_) => {}
            },
        }
    }
}

/// Lines of standard input, read by one thread for the whole command: a question withdrawn
/// while its reader waits must not leave a reader behind to take the next question's answer.
struct StdinLines {
    lines: Option<tokio::sync::mpsc::Receiver<String>>,
}

impl StdinLines {
    fn new() -> Self {
        StdinLines { lines: None }
    }

    /// The next line, or `None` at the end of input.
    async fn next(&mut self) -> Option<String> {
        let lines = self.lines.get_or_insert_with(|| {
            let (tx, rx) = tokio::sync::mpsc::channel(1);
            let spawned = std::thread::Builder::new()
                .name("stdin-lines".into())
                .spawn(move || {
                    for line in std::io::stdin().lock().lines() {
                        let Ok(line) = line else { break };
                        if tx
                            .blocking_send(line.trim_end_matches('\r').to_string())
                            .is_err()
                        {
                            break;
                        }
                    }
                });
            if let Err(e) = spawned {
                tracing::warn!("cannot read standard input: {e}");
            }
            rx
        });
        lines.recv().await
    }
}

/// Asks a `prompt` step's question on stderr and answers it with a line of stdin; no line
/// (end of input) or a termination signal cancels the run. A question the run withdraws (its
/// state timed out) stops being asked.
async fn ask(
    engine: &Engine,
    run_id: &str,
    prompt: &str,
    input: &mut StdinLines,
    events: &mut tokio::sync::broadcast::Receiver<EngineEvent>,
    termination: &mut Termination,
) {
    eprint!("? {} ", sanitize(prompt));
    let _ = std::io::stderr().flush();
    let withdrawn = async {
        loop {
            match events.recv().await {
                Ok(EngineEvent {
                    change:
                        Change::Run {
                            run_id: id,
                            line:
                                RunEvent::PromptWithdrawn { reason, .. }
                                | RunEvent::RunFinished {
                                    error: Some(reason),
                                    ..
                                },
                            ..
                        },
                    ..
                }) if id == run_id => return reason,
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => std::future::pending::<()>().await,
            }
        }
    };
    let answer = tokio::select! {
        answer = input.next() => answer,
        _ = termination.recv() => None,
        reason = withdrawn => {
            eprintln!("\nflowdeck: the question was withdrawn: {}", sanitize(&reason));
            return;
        }
    };
    match answer {
        Some(answer) => {
            if let Err(e) = engine.answer_prompt(run_id, answer, &Actor::Cli) {
                eprintln!("flowdeck: {}", sanitize(&e.to_string()));
            }
        }
        None => {
            eprintln!("\nflowdeck: no answer; cancelling the run");
            let _ = engine.cancel_run(run_id, &Actor::Cli).await;
        }
    }
}

/// Progress on stderr: a spinner on a terminal, plain lines otherwise.
struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    fn new(tty: bool, name: &str) -> Self {
        let bar = tty.then(|| {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} {prefix} {wide_msg} {elapsed}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_prefix(sanitize(name));
            bar.enable_steady_tick(Duration::from_millis(100));
            bar
        });
        Progress { bar }
    }

    fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    fn show(&self, line: &RunEvent) {
        match line {
            RunEvent::StepStarted {
                step, state, tool, ..
            } => {
                let text = format!("[{step}] {} ({tool})", sanitize(state));
                match &self.bar {
                    Some(bar) => bar.set_message(text),
                    None => eprintln!("{text}"),
                }
            }
            RunEvent::StepFinished {
                step,
                state,
                status,
                elapsed_ms,
                ..
            } => {
                self.line(&format!(
                    "[{step}] {} {status} in {elapsed_ms:.0} ms",
                    sanitize(state)
                ));
            }
            RunEvent::PromptWithdrawn { reason, .. } => {
                self.line(&format!("the question was withdrawn: {}", sanitize(reason)));
            }
            _ => {}
        }
    }

    /// Hides the spinner while a question waits for its answer.
    fn pause(&self) {
        if let Some(bar) = &self.bar {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
    }

    fn resume(&self) {
        if let Some(bar) = &self.bar {
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

fn print_result(
    result: &RunResult,
    engine: &Engine,
    args: &RunArgs,
    out: &mut impl Write,
) -> Result<()> {
    if let Some(problem) = &result.journal_error {
        eprintln!("flowdeck: warning: {}", sanitize(problem));
    }
    if args.json {
        serde_json::to_writer_pretty(&mut *out, result)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "{}: {} after {} state{} in {:.1} s (run {})",
        sanitize(&result.workflow_name),
        result.final_state,
        result.states_executed,
        if result.states_executed == 1 { "" } else { "s" },
        result.duration_ms / 1000.0,
        result.run_id
    )?;
    if let Some(error) = &result.error {
        writeln!(out, "error: {}", sanitize(error))?;
    }
    for (name, value) in &result.return_values {
        writeln!(out, "  {name}={}", sanitize(value))?;
    }
    if args.keep_session
        && let Some(id) = &result.session_id
        && let Ok(screen) =
            engine.get_screen_content(id, &GetScreenContentParams::default(), &Actor::Cli)
    {
        writeln!(
            out,
            "--- session {id}, final screen (it ends when flowdeck exits) ---"
        )?;
        writeln!(out, "{}", sanitize(&screen.content))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_key_value_pairs() {
        let parsed = parse_inputs(&["A=1".into(), "B=x=y".into(), "C=".into()]).unwrap();
        assert_eq!(parsed["B"], "x=y");
        assert_eq!(parsed["C"], "");
        assert!(parse_inputs(&["novalue".into()]).is_err());
        assert!(parse_inputs(&["A=1".into(), "A=2".into()]).is_err());
    }
}
