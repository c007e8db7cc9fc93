//! `flowdeck runs [WORKFLOW]`: the folder's runs from its journal (`DIR/.flowdeck/runs/`),
//! newest first: who started each, how it ended, when, how long it took, and whether
//! `flowdeck replay` can play it. Read from the files, so it answers the same with a server up
//! or not; a run still going is one whose journal a live process holds (engine/journal).

use super::words::{lasting, who};
use crate::actor::Actor;
use crate::engine::journal::{Journal, RunSummary, runs_dir};
use crate::workflow::names::sanitize;
use anyhow::{Result, bail};
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// `flowdeck runs`'s arguments.
#[derive(Debug, clap::Args)]
pub struct RunsArgs {
    /// Only the runs of this workflow
    workflow: Option<String>,
    /// At most this many runs, the newest
    #[arg(long, value_name = "N", default_value_t = 20,
          value_parser = clap::value_parser!(u16).range(1..=1000))]
    limit: u16,
    /// Print JSON: {"runs": [...]}
    #[arg(long)]
    json: bool,
}

/// `flowdeck runs --help`'s examples.
pub(super) const EXAMPLES: &str = "Examples:
  flowdeck runs                   the 20 newest runs of the folder
  flowdeck runs deploy --limit 5  the 5 newest of deploy
  flowdeck replay $(flowdeck runs deploy --limit 1 --json | jq -r '.runs[0].run_id')";

/// One run as listed.
#[derive(Debug, Serialize)]
struct Listed {
    run_id: String,
    workflow: String,
    /// Who started it, as its journal says (absent in journals of older flowdeck versions).
    started_by: Option<Actor>,
    /// `started_by` as the table shows it: `person at pts/3`, `agent claude-code`, `cli`.
    who: String,
    /// How it ended (`completed`, `failed`, `canceled`, `interrupted`, ...), or `running`.
    state: String,
    /// RFC 3339, UTC.
    started_at: String,
    duration_ms: Option<f64>,
    /// `flowdeck replay RUN_ID` plays what its terminal showed.
    recorded: bool,
    /// Why it did not complete, when its journal says.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Debug, Serialize)]
struct Report {
    runs: Vec<Listed>,
}

pub(super) fn runs(folder: &Path, args: &RunsArgs, out: &mut impl Write) -> Result<ExitCode> {
    if !folder.is_dir() {
        bail!(
            "workflows folder {} does not exist or is not a folder (use --workflows DIR or FLOWDECK_WORKFLOWS)",
            sanitize(&folder.display().to_string())
        );
    }
    let journal = Journal::new(runs_dir(folder));
    let runs: Vec<Listed> = journal
        .list(args.workflow.as_deref(), usize::from(args.limit))
        .into_iter()
        .map(listed)
        .collect();
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &Report { runs })?;
        writeln!(out)?;
    } else if runs.is_empty() {
        let of = match &args.workflow {
            Some(name) => format!("of {} ", sanitize(name)),
            None => String::new(),
        };
        writeln!(
            out,
            "no runs {of}in {} yet",
            sanitize(&folder.display().to_string())
        )?;
    } else {
        table(&runs, out)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn listed(summary: RunSummary) -> Listed {
    Listed {
        who: who(summary.started_by.as_ref()),
        started_by: summary.started_by,
        state: summary
            .final_state
            .as_ref()
            .map_or_else(|| "running".to_string(), |s| s.as_str().to_string()),
        run_id: summary.run_id,
        workflow: summary.workflow,
        started_at: summary.started_at,
        duration_ms: summary.duration_ms,
        recorded: summary.recorded,
        error: summary.error,
    }
}

fn table(runs: &[Listed], out: &mut impl Write) -> Result<()> {
    let rows: Vec<[String; 7]> = runs
        .iter()
        .map(|run| {
            [
                run.run_id.clone(),
                sanitize(&run.workflow),
                run.who.clone(),
                sanitize(&run.state),
                local_time(&run.started_at),
                run.duration_ms.map_or_else(
                    || "-".into(),
                    |ms| lasting(Duration::from_millis(ms.max(0.0) as u64)),
                ),
                if run.recorded { "yes" } else { "no" }.into(),
            ]
        })
        .collect();
    let head = [
        "RUN", "WORKFLOW", "BY", "STATE", "STARTED", "TOOK", "RECORDED",
    ];
    let mut widths = head.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &[&str]| {
        let mut text = String::new();
        for (n, (cell, width)) in cells.iter().zip(widths).enumerate() {
            if n + 1 == cells.len() {
                text.push_str(cell);
            } else {
                let pad = width - cell.chars().count();
                text.push_str(cell);
                text.push_str(&" ".repeat(pad + 2));
            }
        }
        text
    };
    writeln!(out, "{}", line(&head))?;
    for row in &rows {
        let cells: Vec<&str> = row.iter().map(String::as_str).collect();
        writeln!(out, "{}", line(&cells))?;
    }
    Ok(())
}

/// A journal's UTC time as this machine's local time, to the minute: `2025-11-27 14:03`.
fn local_time(at: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(at) {
        Ok(at) => at
            .with_timezone(&chrono::Local)
            .format("%Y-%m-%d %H:%M")
            .to_string(),
        Err(_) => sanitize(at),
    }
}
