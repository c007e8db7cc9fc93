//! `flowdeck ls`: this user's folder servers, as each says what it holds. They are found where
//! every front end puts a folder's socket (`$XDG_RUNTIME_DIR/flowdeck/`, else
//! `$TMPDIR/flowdeck-$UID/`), and at the socket the workflows folder's record names
//! (`DIR/.flowdeck/server.json`) when a server of it listens elsewhere. Each is asked over
//! its socket, after the trust checks every front end makes (server/connect.rs), all at once
//! and each within [`DEADLINE`], so that a stopped server is listed as not answering and never
//! holds the command up. A socket nothing listens on is a server that died: listed as stale
//! (the next server of its folder replaces it), never as live.

use super::words::{count, lasting, who};
use crate::server::attendance::Attendee;
use crate::server::status::{self, State};
use crate::workflow::names::sanitize;
use anyhow::Result;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// How long each server has to say what it holds.
pub(super) const DEADLINE: Duration = Duration::from_secs(5);

/// `flowdeck ls`'s options.
#[derive(Debug, clap::Args)]
pub struct LsArgs {
    /// Print JSON: {"servers": [...], "not_answering": [...], "stale": [...]}
    #[arg(long)]
    json: bool,
}

/// `flowdeck ls --help`'s examples.
pub(super) const EXAMPLES: &str = "Examples:
  flowdeck ls                 the servers, who is attached, what they hold
  flowdeck ls --json | jq -r '.servers[] | \"\\(.pid) \\(.folder)\"'
  flowdeck stop ~/src/app/workflows   end one of them";

/// One server listed: where it listens and what it said.
#[derive(Debug, Serialize)]
struct Listed {
    socket: PathBuf,
    #[serde(flatten)]
    state: State,
}

/// A socket whose server did not say what it holds: why.
#[derive(Debug, Serialize)]
struct Silent {
    socket: PathBuf,
    error: String,
}

/// A socket nothing listens on, and the process its pid file named.
#[derive(Debug, Serialize)]
struct Stale {
    socket: PathBuf,
    pid: Option<u32>,
}

#[derive(Debug, Default, Serialize)]
struct Report {
    servers: Vec<Listed>,
    not_answering: Vec<Silent>,
    stale: Vec<Stale>,
}

pub(super) fn ls(folder: &Path, args: &LsArgs, out: &mut impl Write) -> Result<ExitCode> {
    let dir = crate::server::socket::socket_dir();
    let sockets = sockets(&dir, folder);
    let runtime = super::runtime()?;
    let report = runtime.block_on(ask_all(sockets));
    runtime.shutdown_timeout(Duration::from_millis(200));
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
    } else {
        print(&report, &dir, out)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The sockets in the sockets' folder, and the one the folder's record names when it is
/// elsewhere (a server started with another XDG_RUNTIME_DIR or TMPDIR).
fn sockets(dir: &Path, folder: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| Some(e.ok()?.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "sock"))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    if let Some(record) = crate::engine::claim::read(folder)
        && record.socket.is_absolute()
        && std::fs::symlink_metadata(&record.socket).is_ok()
        && !found.contains(&record.socket)
    {
        found.push(record.socket);
    }
    found
}

/// Every socket asked at once, each within [`DEADLINE`].
async fn ask_all(sockets: Vec<PathBuf>) -> Report {
    let mut asking = tokio::task::JoinSet::new();
    for (at, socket) in sockets.into_iter().enumerate() {
        asking.spawn(async move {
            let answer = tokio::time::timeout(DEADLINE, status::at_socket(&socket)).await;
            (at, socket, answer)
        });
    }
    let mut answers = Vec::new();
    while let Some(joined) = asking.join_next().await {
        if let Ok(answer) = joined {
            answers.push(answer);
        }
    }
    answers.sort_by_key(|(at, ..)| *at);
    let mut report = Report::default();
    for (_, socket, answer) in answers {
        match answer {
            Ok(Ok(Some(state))) => {
                // One server reached at two paths (its record and the sockets' folder).
                if !report.servers.iter().any(|s| s.state.pid == state.pid) {
                    report.servers.push(Listed { socket, state });
                }
            }
            Ok(Ok(None)) => report.stale.push(Stale {
                pid: pid_beside(&socket),
                socket,
            }),
            Ok(Err(e)) => report.not_answering.push(Silent {
                socket,
                error: format!("{e:#}"),
            }),
            Err(_) => report.not_answering.push(Silent {
                socket,
                error: format!("did not say what it holds within {} s", DEADLINE.as_secs()),
            }),
        }
    }
    report
}

/// The pid file a server writes beside its socket (server/socket.rs).
fn pid_beside(socket: &Path) -> Option<u32> {
    std::fs::read_to_string(crate::server::socket::pid_path(socket))
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn print(report: &Report, dir: &Path, out: &mut impl Write) -> Result<()> {
    if report.servers.is_empty() {
        writeln!(
            out,
            "no flowdeck server runs for you (looked in {})",
            sanitize(&dir.display().to_string())
        )?;
    }
    for (n, listed) in report.servers.iter().enumerate() {
        if n > 0 {
            writeln!(out)?;
        }
        describe(&listed.state, out)?;
    }
    for silent in &report.not_answering {
        writeln!(
            out,
            "not answering: {}: {}",
            sanitize(&silent.socket.display().to_string()),
            sanitize(&silent.error)
        )?;
    }
    for stale in &report.stale {
        let whose = stale
            .pid
            .map_or_else(String::new, |pid| format!(", process {pid},"));
        writeln!(
            out,
            "stale: {} (its server{whose} has ended; the next server of its folder replaces it)",
            sanitize(&stale.socket.display().to_string())
        )?;
    }
    Ok(())
}

/// A server as a block of lines: its folder, then its process, who is attached, what it
/// holds and what waits for a person.
pub(super) fn describe(state: &State, out: &mut impl Write) -> Result<()> {
    writeln!(out, "{}", sanitize(&state.folder.display().to_string()))?;
    writeln!(
        out,
        "  process {}, flowdeck {}, up {}",
        state.pid,
        sanitize(&state.version),
        lasting(Duration::from_secs(state.uptime_s))
    )?;
    writeln!(out, "  attached: {}", attached(state))?;
    writeln!(out, "  holds: {}", held(state))?;
    if let Some(line) = abandoned(state) {
        writeln!(out, "  {line}")?;
    }
    if let Some(line) = attention(state) {
        writeln!(out, "  {line}")?;
    }
    Ok(())
}

/// `attention: ◉ 1 needs you · 1 failed · 2 running`, when any run or terminal is there to
/// count (engine/attention/).
fn attention(state: &State) -> Option<String> {
    let counts = &state.attention;
    let mut parts = vec![counts.summary()];
    if counts.running > 0 {
        parts.push(format!("{} running", counts.running));
    }
    parts.retain(|p| !p.is_empty());
    if parts.is_empty() {
        return None;
    }
    let mark = if counts.needs_you > 0 {
        format!(
            "{} ",
            crate::engine::attention::AttentionState::NeedsYou.mark()
        )
    } else {
        String::new()
    };
    Some(format!("attention: {mark}{}", parts.join(" · ")))
}

/// `1 studio (pts/3), agents claude-code and codex, 1 flowdeck run`, or `nothing`.
fn attached(state: &State) -> String {
    let mut studios = Vec::new();
    let mut agents = Vec::new();
    let mut clis = 0;
    for attendee in &state.attached {
        match attendee {
            Attendee::Studio { at } => studios.push(at.clone()),
            Attendee::Agent { name } => agents.push(sanitize(name)),
            Attendee::Cli => clis += 1,
        }
    }
    let mut parts = Vec::new();
    if !studios.is_empty() {
        let at: Vec<String> = studios
            .iter()
            .filter(|at| !at.is_empty())
            .map(|at| sanitize(at))
            .collect();
        let at = if at.is_empty() {
            String::new()
        } else {
            format!(" ({})", at.join(", "))
        };
        parts.push(format!("{}{at}", count(studios.len(), "studio", "studios")));
    }
    if !agents.is_empty() {
        let word = if agents.len() == 1 { "agent" } else { "agents" };
        parts.push(format!("{word} {}", agents.join(", ")));
    }
    if state.http_agents > 0 {
        parts.push(count(
            state.http_agents,
            "MCP session over HTTP",
            "MCP sessions over HTTP",
        ));
    }
    if clis > 0 {
        parts.push(count(clis, "flowdeck run", "flowdeck runs"));
    }
    if parts.is_empty() {
        "nothing".into()
    } else {
        parts.join(", ")
    }
}

/// `abandoned: 2 terminals of agent claude-code, who left; closed in 23h 59m unless looked
/// at`, when some terminal's agent has gone and nobody looks at it (engine/abandoned.rs).
fn abandoned(state: &State) -> Option<String> {
    let abandoned: Vec<_> = state
        .terminals
        .iter()
        .filter_map(|t| t.abandoned.as_ref())
        .collect();
    let first = abandoned.iter().map(|a| a.closes_in_s).min()?;
    let mut agents: Vec<String> = abandoned.iter().map(|a| sanitize(&a.agent)).collect();
    agents.dedup();
    let word = if agents.len() == 1 { "agent" } else { "agents" };
    let when = if abandoned.len() == 1 {
        "closed"
    } else {
        "the first closed"
    };
    Some(format!(
        "abandoned: {} of {word} {}, who left; {when} in {} unless looked at",
        count(abandoned.len(), "terminal", "terminals"),
        agents.join(", "),
        lasting(Duration::from_secs(first))
    ))
}

/// `2 terminals (1 running), 1 run (deploy, by agent claude-code)`, or `nothing`.
pub(super) fn held(state: &State) -> String {
    if !state.holds_anything() {
        return "nothing".into();
    }
    let running = state.terminals.iter().filter(|t| t.running).count();
    let mut terminals = count(state.terminals.len(), "terminal", "terminals");
    if !state.terminals.is_empty() {
        terminals.push_str(&format!(" ({running} running)"));
    }
    let mut runs = count(state.runs.len(), "run", "runs");
    if !state.runs.is_empty() {
        let each: Vec<String> = state
            .runs
            .iter()
            .map(|r| {
                format!(
                    "{}, by {}",
                    sanitize(&r.workflow),
                    who(r.started_by.as_ref())
                )
            })
            .collect();
        runs.push_str(&format!(" ({})", each.join("; ")));
    }
    format!("{terminals}, {runs}")
}
