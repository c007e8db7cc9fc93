//! `flowdeck run NAME --on h1,h2,h3`: one workflow on several hosts at once, in the folder's
//! server when one answers (a studio there shows each host's run), else here. Prints one
//! line per host, or every result with `--json`; the exit status is 0 only when every
//! host's run completed.

use super::inputs::parse_inputs;
use super::reach::Host;
use super::run::RunArgs;
use crate::engine::fleet::{DEFAULT_PARALLEL, FleetResult};
use crate::engine::request::{Reply, Request};
use crate::workflow::names::sanitize;
use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

pub(super) fn run(
    folder: &Path,
    args: &RunArgs,
    on: Vec<String>,
    out: &mut impl Write,
) -> Result<ExitCode> {
    let store = super::open_store(folder)?;
    if let Err(refusal) = super::named::find(&store, folder, &args.name) {
        return refusal.tell(folder, args.json, out);
    }
    drop(store);
    // The hosts' shells have their own environments: only what is given travels.
    let inputs = parse_inputs(&args.inputs)?;
    if args.keep_session {
        bail!("--session-keep keeps one run's terminal; a fleet's runs close theirs");
    }
    let parallel = args.parallel.unwrap_or(DEFAULT_PARALLEL);
    let runtime = super::runtime()?;
    let outcome = runtime.block_on(async {
        let mut termination =
            crate::signals::Termination::register().context("cannot handle signals")?;
        let (engine, _events) = Host::reach(folder).await?;
        eprintln!(
            "flowdeck: running {} on {}, {parallel} at a time",
            sanitize(&args.name),
            sanitize(&on.join(", "))
        );
        let asked = engine.ask(Request::RunFleet {
            workflow: args.name.clone(),
            inputs,
            on,
            parallel,
            keep_session: false,
        });
        // A signal drops the request: here, that cancels every run still going; in the
        // server, the connection's end does.
        let answer = tokio::select! {
            answer = asked => answer,
            signal = termination.recv() => {
                eprintln!("flowdeck: {signal}: cancelling the fleet's runs");
                Err(anyhow::anyhow!("the fleet was cancelled ({signal})"))
            }
        };
        if let Host::Here(engine) = &engine {
            engine.shutdown().await;
        }
        match answer? {
            Reply::Fleet(fleet) => Ok(*fleet),
            other => bail!("the folder's server answered with {}", other.kind()),
        }
    });
    runtime.shutdown_timeout(Duration::from_millis(100));
    let fleet = outcome?;
    print(&fleet, args.json, out)?;
    Ok(if fleet.success {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print(fleet: &FleetResult, json: bool, out: &mut impl Write) -> Result<()> {
    if json {
        serde_json::to_writer_pretty(&mut *out, fleet)?;
        writeln!(out)?;
        return Ok(());
    }
    let width = fleet
        .runs
        .iter()
        .map(|r| r.host.chars().count())
        .max()
        .unwrap_or(0);
    for run in &fleet.runs {
        let state = run
            .final_state
            .map_or_else(|| "not started".to_string(), |s| s.to_string());
        let took = run
            .result
            .as_ref()
            .map(|r| format!(" in {:.1} s", r.duration_ms / 1000.0))
            .unwrap_or_default();
        let id = run
            .run_id
            .as_ref()
            .map(|id| format!(" (run {id})"))
            .unwrap_or_default();
        writeln!(out, "{:width$}  {state}{took}{id}", sanitize(&run.host))?;
        if let Some(error) = run.error.as_ref().filter(|_| !run.success) {
            writeln!(out, "{:width$}  error: {}", "", sanitize(error))?;
        }
        if let Some(result) = &run.result {
            for (name, value) in &result.return_values {
                writeln!(out, "{:width$}  {name}={}", "", sanitize(value))?;
            }
        }
    }
    writeln!(
        out,
        "{}: {} of {} hosts completed in {:.1} s",
        sanitize(&fleet.workflow_name),
        fleet.completed,
        fleet.hosts,
        fleet.duration_ms / 1000.0
    )?;
    Ok(())
}
