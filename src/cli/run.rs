//! `flowdeck run NAME`: a workflow run headless, with progress on stderr and the result on
//! stdout. A thin front end over [`crate::engine`]: it starts the run, follows the engine's
//! events, answers `prompt` steps from stdin, and cancels on Ctrl-C. With the folder's server
//! up it runs there (an open studio shows it), else in an engine of its own.

use super::reach::{Events, Host, Told};
use crate::engine::request::{Reply, Request};
use crate::engine::run::{FollowedRun, RunNews};
use crate::engine::{Actor, EngineEvent, Phase, RunEvent, RunRequest, RunResult, WorkflowSource};
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

/// What `flowdeck run` was asked.
#[derive(Debug)]
pub struct RunArgs {
    pub name: String,
    pub inputs: Vec<String>,
    pub keep_session: bool,
    /// `--on`: the host the run's terminal opens on, or the hosts (and groups) of a fleet.
    pub host: Option<String>,
    /// `--parallel`: a fleet's runs at once.
    pub parallel: Option<usize>,
    pub json: bool,
}

impl RunArgs {
    /// The hosts of a fleet, when `--on` names one: several hosts, a group of the folder's
    /// hosts.conf, or any `--on` with `--parallel`.
    pub fn fleet(&self, folder: &Path) -> Option<Vec<String>> {
        let on = self.host.as_deref()?;
        let fleet = on.contains(',')
            || self.parallel.is_some()
            || crate::engine::fleet::is_group(folder, on.trim());
        fleet.then(|| on.split(',').map(|h| h.trim().to_string()).collect())
    }
}

/// Runs the workflow and prints its result. Whatever could stop it before it starts (a name
/// no file defines, a broken file, inputs that are not KEY=VALUE) is decided here, before
/// the folder's server is reached, and the inputs are completed from this command's
/// environment here too: the same answer, exit status and advice whoever runs it.
pub fn run(folder: &Path, args: RunArgs, out: &mut impl Write) -> Result<ExitCode> {
    let store = super::open_store(folder)?;
    let workflow = match super::named::find(&store, folder, &args.name) {
        Ok(workflow) => workflow,
        Err(refusal) => return refusal.tell(folder, args.json, out),
    };
    drop(store);
    let inputs = super::inputs::for_run(&workflow, &args.inputs, args.host.is_some(), |name| {
        std::env::var_os(name)
    })?;
    let runtime = super::runtime()?;
    let outcome = runtime.block_on(async {
        // Registered first: a hang-up or a kill request from here on cancels the run and
        // still prints its result, rather than leave its processes running.
        let mut termination = Termination::register().context("cannot handle signals")?;
        // A server that is stopped or not answering must not hold the command past a signal.
        let (engine, mut events) = tokio::select! {
            reached = Host::reach(folder) => reached?,
            signal = termination.recv() => bail!(
                "{signal} while waiting for the folder's server to answer: no run was started"
            ),
        };
        let result = follow(&engine, &mut events, &args, inputs, &mut termination).await;
        let printed = match &result {
            Ok(result) => print_result(result, &engine, &args, out).await.map(|()| {
                if result.success {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(1)
                }
            }),
            Err(_) => Ok(ExitCode::from(2)),
        };
        // Sessions end even when the result could not be printed (a closed terminal); a
        // server's go on in the server.
        if let Host::Here(engine) = &engine {
            engine.shutdown().await;
        }
        let code = printed?;
        result.map(|_| code)
    });
    // A question left unanswered leaves a thread blocked on stdin; do not wait for it.
    runtime.shutdown_timeout(Duration::from_millis(100));
    outcome
}

/// A run this command follows to its end: here, dropped before the end, it is cancelled; in
/// the server, the server cancels it if this command goes away first.
enum Followed {
    Here(FollowedRun),
    Server(String),
}

impl Followed {
    fn run_id(&self) -> &str {
        match self {
            Followed::Here(run) => run.run_id(),
            Followed::Server(run_id) => run_id,
        }
    }
}

/// Starts the run and shows its progress until it ends.
async fn follow(
    engine: &Host,
    events: &mut Events,
    args: &RunArgs,
    inputs: IndexMap<String, String>,
    termination: &mut Termination,
) -> Result<RunResult> {
    let followed = tokio::select! {
        followed = start(engine, args, inputs) => followed?,
        // The server cancels a run this command started once it sees the command gone.
        signal = termination.recv() => bail!(
            "{signal} while waiting for the folder's server to start the run"
        ),
    };
    let mut following = Following {
        engine,
        run_id: followed.run_id().to_string(),
        progress: Progress::new(std::io::stderr().is_terminal(), &args.name),
        input: StdinLines::new(),
    };
    let finished = async {
        match followed {
            Followed::Here(run) => Ok(run.finished().await),
            // The server's run ends with its last event; its result comes after.
            Followed::Server(_) => std::future::pending().await,
        }
    };
    tokio::pin!(finished);
    loop {
        tokio::select! {
            result = &mut finished => {
                following.progress.done();
                return result;
            }
            signal = termination.recv() => {
                following.progress.line(&format!("{signal}: cancelling the run"));
                // A second signal while a server that does not answer is asked: end now.
                let cancelled = tokio::select! {
                    cancelled = engine.cancel(&following.run_id) => cancelled,
                    again = termination.recv() => Err(anyhow::anyhow!("{again} while cancelling")),
                };
                if let Err(e) = cancelled {
                    following.progress.done();
                    // The server cancels it once it sees this command gone.
                    bail!("{signal}: the run was not cancelled: {e}");
                }
            }
            told = events.next() => {
                let ended = match told {
                    Told::Event(event) => following.told(&event, events, termination).await,
                    Told::Missed => following.missed(events, termination).await,
                    Told::Gone => following.gone(&mut finished).await,
                };
                if let Some(result) = ended {
                    return result;
                }
            }
        }
    }
}

/// Starts the run, here or in the folder's server.
async fn start(
    engine: &Host,
    args: &RunArgs,
    inputs: IndexMap<String, String>,
) -> Result<Followed> {
    Ok(match engine {
        Host::Here(engine) => Followed::Here(
            engine
                .follow_run(RunRequest {
                    workflow: WorkflowSource::Name(args.name.clone()),
                    session_id: None,
                    inputs,
                    keep_session: args.keep_session,
                    host: args.host.clone(),
                    actor: Actor::Cli,
                    require_approval: false,
                })
                .await?,
        ),
        Host::Server(_) => match engine
            .ask(Request::StartRun {
                workflow: args.name.clone(),
                inputs,
                keep_session: args.keep_session,
                host: args.host.clone(),
            })
            .await?
        {
            Reply::Started(run_id) => Followed::Server(run_id),
            other => bail!("the folder's server answered with {}", other.kind()),
        },
    })
}

/// A run being followed: where it runs, its progress shown, and the input its questions are
/// answered from. Each of its answers to what the engine tells is the run's result once it
/// has ended, `None` while it goes on.
struct Following<'a> {
    engine: &'a Host,
    run_id: String,
    progress: Progress,
    input: StdinLines,
}

impl Following<'_> {
    /// An event: shown, or a question asked, when it is about this run.
    async fn told(
        &mut self,
        event: &EngineEvent,
        events: &mut Events,
        termination: &mut Termination,
    ) -> Option<Result<RunResult>> {
        let Some(RunNews::Line(line)) = RunNews::of(&self.run_id, event) else {
            return None;
        };
        match &line {
            RunEvent::WaitingForInput { prompt, .. } => {
                self.ask(prompt, events, termination).await;
            }
            RunEvent::RunFinished { .. } if matches!(self.engine, Host::Server(_)) => {
                self.progress.done();
                return Some(result_of(self.engine, &self.run_id).await);
            }
            _ => self.progress.show(&line),
        }
        None
    }

    /// Events were missed: the run's status says whether a question waits, or whether it
    /// ended meanwhile.
    async fn missed(
        &mut self,
        events: &mut Events,
        termination: &mut Termination,
    ) -> Option<Result<RunResult>> {
        let Ok(Reply::Run(status)) = self
            .engine
            .ask(Request::RunStatus {
                run_id: self.run_id.clone(),
            })
            .await
        else {
            return None;
        };
        if status.status == Phase::WaitingForInput
            && let Some(prompt) = status.prompt
        {
            self.ask(&prompt, events, termination).await;
        } else if let (Host::Server(_), Some(result)) = (self.engine, status.result) {
            self.progress.done();
            return Some(Ok(result));
        }
        None
    }

    /// No more events: only the result is left (here), or nothing (the server went away,
    /// taking the run with it).
    async fn gone(
        &self,
        finished: impl std::future::Future<Output = Result<RunResult>>,
    ) -> Option<Result<RunResult>> {
        if matches!(self.engine, Host::Server(_)) {
            self.progress.done();
            return Some(Err(anyhow::anyhow!(
                "the folder's server went away before run {} ended",
                self.run_id
            )));
        }
        let result = finished.await;
        self.progress.done();
        Some(result)
    }

    /// Asks the run's question with the spinner out of its way.
    async fn ask(&mut self, prompt: &str, events: &mut Events, termination: &mut Termination) {
        self.progress.pause();
        ask(
            self.engine,
            &self.run_id,
            prompt,
            &mut self.input,
            events,
            termination,
        )
        .await;
        self.progress.resume();
    }
}

/// A run's result in the server, once its last event has come: where it stands then.
async fn result_of(engine: &Host, run_id: &str) -> Result<RunResult> {
    match engine
        .ask(Request::RunStatus {
            run_id: run_id.to_string(),
        })
        .await?
    {
        Reply::Run(status) => status
            .result
            .with_context(|| format!("run {run_id} ended, but the server has no result for it")),
        other => bail!("the folder's server answered with {}", other.kind()),
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
/// (end of input) or a termination signal cancels the run. With the folder's server, a studio
/// or an agent may answer it as well (the run is on their attention list as needing someone):
/// the question says so, and once someone else has answered, or the run withdraws it (its
/// state timed out), it stops being asked.
async fn ask(
    engine: &Host,
    run_id: &str,
    prompt: &str,
    input: &mut StdinLines,
    events: &mut Events,
    termination: &mut Termination,
) {
    if matches!(engine, Host::Server(_)) {
        eprintln!(
            "flowdeck: run {run_id} needs an answer: type it here, or answer it in a studio (a, or ! for everything that needs you) or through an agent (workflow_next)"
        );
    }
    eprint!("? {} ", sanitize(prompt));
    let _ = std::io::stderr().flush();
    let withdrawn = async {
        loop {
            match events.next().await {
                Told::Event(event) => match RunNews::of(run_id, &event) {
                    Some(RunNews::Line(
                        RunEvent::PromptWithdrawn { reason, .. }
                        | RunEvent::RunFinished {
                            error: Some(reason),
                            ..
                        },
                    )) => return format!("the question was withdrawn: {reason}"),
                    Some(RunNews::Line(RunEvent::Answered { actor, .. }))
                        if actor.as_ref().is_some_and(|a| *a != Actor::Cli) =>
                    {
                        let by = actor.map_or_else(|| "someone".into(), |a| a.label());
                        return format!("answered by {by}");
                    }
                    _ => {}
                },
                Told::Missed => {}
                Told::Gone => std::future::pending::<()>().await,
            }
        }
    };
    let answer = tokio::select! {
        answer = input.next() => answer,
        _ = termination.recv() => None,
        reason = withdrawn => {
            eprintln!("\nflowdeck: {}", sanitize(&reason));
            return;
        }
    };
    match answer {
        Some(answer) => {
            let answered = engine
                .ask(Request::AnswerPrompt {
                    run_id: run_id.to_string(),
                    answer,
                })
                .await;
            if let Err(e) = answered {
                eprintln!("flowdeck: {}", sanitize(&e.to_string()));
            }
        }
        None => {
            eprintln!("\nflowdeck: no answer; cancelling the run");
            if let Err(e) = engine.cancel(run_id).await {
                eprintln!("flowdeck: {}", sanitize(&e.to_string()));
            }
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

async fn print_result(
    result: &RunResult,
    engine: &Host,
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
        && let Ok(Reply::Content(screen)) = engine
            .ask(Request::GetScreenContent {
                session_id: id.clone(),
                params: GetScreenContentParams::default(),
            })
            .await
    {
        let lasts = match engine {
            Host::Here(_) => "it ends when flowdeck exits",
            Host::Server(_) => "kept in the folder's server: the studio shows it",
        };
        writeln!(out, "--- session {id}, final screen ({lasts}) ---")?;
        writeln!(out, "{}", sanitize(&screen.content))?;
    }
    Ok(())
}
