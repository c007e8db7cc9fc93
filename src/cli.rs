//! The command line: `flowdeck validate`, `list`, `plan`, `schema`, `run`. A thin front end:
//! it reads the folder through [`crate::store`] and the model through [`crate::workflow`],
//! runs workflows through [`crate::engine`] (`cli/run.rs`), and only formats what they return.

mod run;

use crate::store::{Entry, FileRead, Status, Store};
use crate::workflow::names::sanitize;
use crate::workflow::plan::{Plan, plan};
use crate::workflow::{Checked, Format, Workflow};
use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use serde::Serialize;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// flowdeck: a terminal workflow studio.
///
/// Workflows are YAML/JSON manifests in a folder: state machines whose steps drive real
/// terminal sessions, with a contract of inputs they need and values they must produce.
/// Without a command, flowdeck opens the studio on a terminal, and prints the workflows of the
/// folder and their state when its output is not a terminal.
#[derive(Debug, Parser)]
#[command(name = "flowdeck", version, about, long_about)]
pub struct Cli {
    /// The workflows folder [default: ./workflows]
    #[arg(long, global = true, env = "FLOWDECK_WORKFLOWS", value_name = "DIR")]
    pub workflows: Option<PathBuf>,

    /// The studio's theme: dark, light, high-contrast, or NAME.yaml of your own in
    /// $XDG_CONFIG_HOME/flowdeck/themes/ (default ~/.config/flowdeck/themes/); a path with a /
    /// or ending in .yaml is a theme file
    #[arg(long, global = true, env = "FLOWDECK_THEME", value_name = "NAME")]
    pub theme: Option<String>,

    /// Approval mode: with `agent-runs`, an agent's run of a manifest whose exact content no
    /// person has approved waits for a person's yes in the studio (refused when no studio is
    /// open)
    #[arg(
        long,
        global = true,
        env = "FLOWDECK_APPROVE",
        value_name = "WHAT",
        value_enum,
        default_value_t = Approve::Off
    )]
    pub approve: Approve,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// What needs a person's approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Approve {
    /// Nothing: agents run workflows as they ask
    Off,
    /// Every agent's run of manifest content no person has approved
    AgentRuns,
}

/// What MCP offers: the same for `flowdeck mcp` and `flowdeck serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Toolsets to offer, comma-separated: terminal, authoring, runs, guided, dynamic
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "terminal,authoring,runs,guided,dynamic"
    )]
    toolsets: Vec<String>,
    /// Offer only tools that change nothing (reads, lists, validation, waits)
    #[arg(long)]
    read_only: bool,
    /// Offer `wf_<name>` tools only for workflows matching this glob (repeatable)
    #[arg(long = "dynamic-filter", value_name = "GLOB")]
    dynamic_filters: Vec<String>,
}

/// `flowdeck serve`'s arguments.
#[derive(Debug, Args)]
pub struct ServeCommand {
    #[command(flatten)]
    offer: ServeArgs,
    /// Started by a front end: a session of its own, the log in DIR/.flowdeck/server.log, and
    /// an end once nothing is attached and nothing runs
    #[arg(long, hide = true)]
    background: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate manifests: every violation as `file:line:col: rule: message (path)`.
    ///
    /// PATHs may be files or folders (a folder is checked as a workflows folder, so duplicate
    /// names and file names that do not match are reported too). Without PATH, the workflows
    /// folder is checked. Exits 1 when any manifest has errors.
    Validate {
        /// Files or folders to check [default: the workflows folder]
        paths: Vec<PathBuf>,
        /// Print a JSON report instead of lines
        #[arg(long)]
        json: bool,
    },
    /// List the workflows of the folder with their state.
    List {
        /// Print JSON instead of a table
        #[arg(long)]
        json: bool,
    },
    /// Show a workflow's step plan: its states in run order, with their actions and transitions.
    Plan {
        /// The workflow's name
        name: String,
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// Open the studio: the workflows, their step plans, runs and terminal panes.
    Tui,
    /// Print the manifest JSON Schema (draft 2020-12).
    Schema,
    /// Serve MCP on stdin/stdout for an agent (Claude Code, Claude Desktop, any MCP client).
    ///
    /// The agent is relayed to the folder's server (started in the background when none is
    /// up), so it works on the same live engine as the person in the studio, whoever came
    /// first; the stricter of the server's options and these apply (toolsets both offer,
    /// read-only or approval mode if either asks). Logs go to stderr; stdout carries only the
    /// protocol. It ends when the client closes stdin, or on SIGTERM; the runs and terminal
    /// sessions the agent started end with it.
    Mcp(ServeArgs),
    /// Run the folder's server in the foreground: the engine every front end attaches to (the
    /// studio, and agents through `flowdeck mcp`) on the folder's local socket, until SIGTERM
    /// or Ctrl-C.
    ///
    /// Without it, the first front end that needs a server starts one in the background,
    /// which ends by itself once nothing is attached and nothing runs.
    Serve(ServeCommand),
    /// Approve the current content of workflows for agents' runs (approval mode).
    ///
    /// In approval mode an agent's run of content no person has approved waits for a yes in
    /// the studio; a folder hosted headless (`flowdeck serve --approve agent-runs`) has nobody
    /// to ask, so approve ahead what agents may run. An approval is of the exact content (its
    /// SHA-256): any change to the file needs a new one. Kept in DIR/.flowdeck/approved.json.
    /// Only a person at a terminal may approve: not a script without one, and not a terminal
    /// flowdeck opened (agents type there).
    Approve {
        /// The workflows' names
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Run a workflow headless: progress on stderr, the result on stdout.
    ///
    /// The run gets a terminal session of its own (your $SHELL), closed at the end. Inputs
    /// fill the workflow's arguments; arguments not given fall back to their defaults.
    /// `prompt` steps are asked on stderr and answered with a line of stdin. Ctrl-C cancels
    /// the run. With the folder's server up (a studio or an agent on the folder), the run
    /// happens there and an open studio shows it. Exits 0 when the run completed, 1 when it
    /// ended any other way, 2 when it could not start.
    Run {
        /// The workflow's name
        name: String,
        /// A value for an argument (repeatable): -i PROJECT_ROOT=/src/app
        #[arg(short = 'i', long = "input", value_name = "KEY=VALUE")]
        inputs: Vec<String>,
        /// Keep the run's terminal open at the end and print its final screen
        #[arg(long)]
        session_keep: bool,
        /// Print the full result as JSON (the seed's shape plus run_id and return_values)
        #[arg(long)]
        json: bool,
    },
}

/// Runs the command line and turns failures into an exit status: 0 success, 1 when what was
/// checked has errors, 2 when the command itself could not run.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // The studio and a server started in the background log to a file of their folder
    // (logfile.rs), set up once the folder is known: their stderr is a screen or nothing.
    let to_file = opens_studio(&cli)
        || matches!(&cli.command, Some(Command::Serve(serve)) if serve.background);
    if !to_file {
        init_logging();
    }
    match run(cli) {
        Ok(code) => code,
        // A reader that stops early (`flowdeck list | head`) is not a failure.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("flowdeck: {}", sanitize(&format!("{e:#}")));
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}

/// Bare `flowdeck` is the studio only for a person at a terminal: scripts that read its
/// output keep getting the list.
fn opens_studio(cli: &Cli) -> bool {
    match cli.command {
        Some(Command::Tui) => true,
        None => std::io::stdout().is_terminal() && std::io::stdin().is_terminal(),
        Some(_) => false,
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("FLOWDECK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // Logs go to stderr, never stdout: stdout carries results (and, for `flowdeck mcp`, the
    // protocol).
    // Colours only for a person at a terminal: agent hosts keep stderr in log files.
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(colour)
        .with_writer(std::io::stderr)
        .try_init();
}

fn run(cli: Cli) -> Result<ExitCode> {
    let studio = opens_studio(&cli);
    let folder = cli.workflows.unwrap_or_else(|| PathBuf::from("workflows"));
    let approve = cli.approve == Approve::AgentRuns;
    // Not locked for the whole command: `flowdeck mcp` writes the protocol from its own thread,
    // and a lock held here would block it forever.
    let mut out = std::io::stdout();
    if studio {
        let log = crate::logfile::init(&folder, crate::logfile::STUDIO);
        let runtime = runtime()?;
        let outcome = runtime.block_on(crate::tui::run(crate::tui::StudioOptions {
            folder,
            log,
            theme: cli.theme,
            engine: engine_config(true, approve),
        }));
        // Blocking readers of the terminal must not hold the exit.
        runtime.shutdown_timeout(std::time::Duration::from_millis(200));
        return outcome;
    }
    match cli.command {
        None | Some(Command::Tui) | Some(Command::List { json: false }) => {
            list(&folder, false, &mut out)
        }
        Some(Command::List { json }) => list(&folder, json, &mut out),
        Some(Command::Validate { paths, json }) => {
            let paths = if paths.is_empty() {
                vec![folder]
            } else {
                paths
            };
            validate(&paths, json, &mut out)
        }
        Some(Command::Plan { name, json }) => show_plan(&folder, &name, json, &mut out),
        Some(Command::Run {
            name,
            inputs,
            session_keep,
            json,
        }) => run::run(
            &folder,
            run::RunArgs {
                name,
                inputs,
                keep_session: session_keep,
                json,
            },
            &mut out,
        ),
        Some(Command::Mcp(args)) => mcp(&folder, args, approve),
        Some(Command::Serve(command)) => serve(&folder, command, approve),
        Some(Command::Approve { names }) => approve_workflows(&folder, &names, &mut out),
        Some(Command::Schema) => {
            out.write_all(crate::workflow::schema::workflow_schema_text().as_bytes())?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn mcp_options(args: ServeArgs, approve: bool) -> Result<crate::mcp::McpOptions> {
    let mut sets = std::collections::HashSet::new();
    for name in &args.toolsets {
        let set = crate::mcp::Toolset::parse(name.trim()).with_context(|| {
            format!(
                "unknown toolset {} (choose from terminal, authoring, runs, guided, dynamic)",
                sanitize(name)
            )
        })?;
        sets.insert(set);
    }
    Ok(crate::mcp::McpOptions {
        toolsets: sets,
        read_only: args.read_only,
        dynamic_filters: args.dynamic_filters,
        approve_agent_runs: approve,
    })
}

fn folder_must_exist(folder: &Path) -> Result<()> {
    if !folder.is_dir() {
        bail!(
            "workflows folder {} does not exist or is not a folder (use --workflows DIR or FLOWDECK_WORKFLOWS)",
            sanitize(&folder.display().to_string())
        );
    }
    Ok(())
}

fn mcp(folder: &Path, args: ServeArgs, approve: bool) -> Result<ExitCode> {
    let options = mcp_options(args, approve)?;
    // Checked up front for a clear error before a server is started for it.
    folder_must_exist(folder)?;
    let server_options = crate::server::spawn::ServerOptions {
        approve_agent_runs: approve,
    };
    let mut server = crate::server::spawn::reach(folder, server_options)?;
    let runtime = runtime()?;
    // Installed before anything else, so a SIGTERM at any moment ends the relay cleanly (the
    // server then ends what this agent started).
    let relayed = runtime.block_on(async {
        let mut termination = crate::signals::Termination::register()?;
        let mut again = crate::server::hello::ReachAgain::default();
        loop {
            let relayed = tokio::select! {
                relayed = crate::server::relay::relay(server, folder, &options) => relayed,
                signal = termination.recv() => {
                    tracing::info!("{signal}: ending the relay");
                    return Ok(());
                }
            };
            // A server that was ending as this relay connected served nothing: the next one.
            match relayed {
                Err(e) if again.after(&e) => {
                    let folder = folder.to_path_buf();
                    server = tokio::task::spawn_blocking(move || {
                        crate::server::spawn::reach(&folder, server_options)
                    })
                    .await??;
                }
                other => return other,
            }
        }
    });
    // Blocking readers of a closed stdin must not hold the exit.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    relayed?;
    Ok(ExitCode::SUCCESS)
}

/// `flowdeck serve`: the folder's server, in the foreground until a termination signal, or
/// started by a front end in the background until it is idle.
fn serve(folder: &Path, command: ServeCommand, approve: bool) -> Result<ExitCode> {
    if command.background {
        // Its own session first: the front end that started it, its terminal and its process
        // group may all go, and the server stays.
        let _ = rustix::process::setsid();
        if let Err(why) = crate::logfile::init(folder, crate::logfile::SERVER) {
            tracing::warn!("no server log: {why}");
        }
    }
    let options = mcp_options(command.offer, approve)?;
    folder_must_exist(folder)?;
    let runtime = runtime()?;
    runtime.block_on(async {
        let mut termination = crate::signals::Termination::register()?;
        let engine = crate::engine::Engine::open_lenient(folder, engine_config(true, approve))
            .context(FOLDER_HELP)?;
        let host = match crate::server::host::start(engine.clone(), folder, options) {
            Ok(host) => host,
            // Another front end's server won the folder: it serves, this one goes quietly.
            Err(e @ crate::server::socket::SocketError::Hosted { .. }) if command.background => {
                tracing::info!("{e}");
                engine.shutdown().await;
                return anyhow::Ok(());
            }
            Err(e) => {
                engine.shutdown().await;
                return Err(e.into());
            }
        };
        if command.background {
            tracing::info!(
                "serving {} on {}",
                folder.display(),
                host.socket().display()
            );
            let idle_then_retired = async {
                loop {
                    crate::server::lifetime::until_idle(
                        &engine,
                        folder,
                        host.clients(),
                        crate::server::lifetime::GRACE,
                    )
                    .await;
                    // A front end that connected just now keeps the server.
                    if host.retire().await {
                        return;
                    }
                }
            };
            tokio::select! {
                () = idle_then_retired => {
                    tracing::info!("nothing attached and nothing running: ending");
                }
                signal = termination.recv() => tracing::info!("{signal}: stopping"),
            }
        } else {
            eprintln!(
                "flowdeck: serving {} on {} (the studio and `flowdeck mcp` attach to it)",
                sanitize(&folder.display().to_string()),
                host.socket().display()
            );
            let signal = termination.recv().await;
            tracing::info!("{signal}: stopping");
        }
        host.stop().await;
        engine.shutdown().await;
        anyhow::Ok(())
    })?;
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    Ok(ExitCode::SUCCESS)
}

/// `flowdeck approve`: each workflow's content that would run now, approved for agents. Only
/// for a person at a terminal that is not one of flowdeck's (server/peer.rs): with the
/// folder's server up, the server checks and approves; with none up, this process checks
/// itself and approves in the folder.
fn approve_workflows(folder: &Path, names: &[String], out: &mut impl Write) -> Result<ExitCode> {
    let versions: Vec<(String, Result<String, String>)> =
        match crate::server::relay::connect(folder) {
            Some(stream) => {
                let runtime = runtime()?;
                let mut asked =
                    runtime.block_on(crate::server::approve::ask(stream, folder, names));
                // A server that was ending as this connected: the next one, if one is up.
                let mut again = crate::server::hello::ReachAgain::default();
                while let Err(e) = &asked
                    && again.after(e)
                {
                    let Some(stream) = crate::server::relay::connect(folder) else {
                        return approve_workflows(folder, names, out);
                    };
                    asked = runtime.block_on(crate::server::approve::ask(stream, folder, names));
                }
                asked?
                    .into_iter()
                    .map(|a| (a.workflow, a.approved))
                    .collect()
            }
            None => {
                crate::server::peer::may_approve(Some(std::process::id()), None, &[])
                    .map_err(|why| anyhow::anyhow!("this process may not approve: {why}"))?;
                let engine = open_engine(folder, engine_config(false, false))?;
                names
                    .iter()
                    .map(|name| {
                        let approved = engine
                            .approve_workflow(name, &crate::engine::Actor::Cli)
                            .map(|a| a.version)
                            .map_err(|e| e.to_string());
                        (name.clone(), approved)
                    })
                    .collect()
            }
        };
    for (name, approved) in versions {
        let version =
            approved.map_err(|why| anyhow::anyhow!("cannot approve {}: {why}", sanitize(&name)))?;
        writeln!(
            out,
            "approved {} (content {}) for agents' runs",
            sanitize(&name),
            &version[..12.min(version.len())]
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The engine's settings for the commands that open sessions: the folder followed or not,
/// approval mode, and this binary as the session watchdog, so that a `kill -9` leaves no
/// process behind.
fn engine_config(watch: bool, approve_agent_runs: bool) -> crate::engine::EngineConfig {
    let mut config = crate::engine::EngineConfig {
        watch,
        approve_agent_runs,
        ..crate::engine::EngineConfig::default()
    };
    config.terminals.watchdog = Some(PathBuf::from("/proc/self/exe"));
    config
}

/// What a command says when the folder it was given cannot be opened.
const FOLDER_HELP: &str =
    "cannot open the workflows folder (use --workflows DIR or FLOWDECK_WORKFLOWS)";

fn open_store(folder: &Path) -> Result<std::sync::Arc<Store>> {
    Store::open(folder).context(FOLDER_HELP)
}

/// The async runtime of the commands that run the engine: two workers, one per core of a
/// small machine, so that a busy reader never starves the loop.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// The engine on `folder`, or an error that says how to name another folder.
pub(crate) fn open_engine(
    folder: &Path,
    config: crate::engine::EngineConfig,
) -> Result<std::sync::Arc<crate::engine::Engine>> {
    crate::engine::Engine::open(folder, config).context(FOLDER_HELP)
}

// --- validate ------------------------------------------------------------------------------

#[derive(Debug, Serialize)]
struct FileReport {
    file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    valid: bool,
    errors: usize,
    warnings: usize,
    violations: Vec<crate::workflow::Violation>,
}

#[derive(Debug, Serialize)]
struct ValidateReport {
    valid: bool,
    files: usize,
    errors: usize,
    warnings: usize,
    reports: Vec<FileReport>,
}

fn validate(paths: &[PathBuf], json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let mut reports = Vec::new();
    for path in paths {
        if path.is_dir() {
            let store = open_store(path)?;
            let catalog = store.catalog();
            for entry in catalog.entries() {
                reports.push(entry_report(&path.join(&entry.file_name), entry));
            }
        } else {
            // Read as the folder's files are: a named pipe or a device is reported as what it
            // is, without blocking, and never more than the size limit is read.
            let Some(read) = FileRead::at(path) else {
                bail!("cannot read {}: no such file", path.display());
            };
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            let format = Format::from_file_name(name).unwrap_or_else(|| {
                Format::sniff(&String::from_utf8_lossy(
                    &read.bytes[..read.bytes.len().min(64)],
                ))
            });
            reports.push(checked_report(path, &read.check(format)));
        }
    }
    let errors: usize = reports.iter().map(|r| r.errors).sum();
    let warnings: usize = reports.iter().map(|r| r.warnings).sum();
    let report = ValidateReport {
        valid: errors == 0,
        files: reports.len(),
        errors,
        warnings,
        reports,
    };
    if json {
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
    } else {
        for file in &report.reports {
            for v in &file.violations {
                writeln!(out, "{}", sanitize(&v.to_line(&file.file)))?;
            }
        }
        writeln!(
            out,
            "{} {} checked: {} {}, {} {}",
            report.files,
            plural(report.files, "manifest", "manifests"),
            errors,
            plural(errors, "error", "errors"),
            warnings,
            plural(warnings, "warning", "warnings"),
        )?;
    }
    Ok(if errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn entry_report(path: &Path, entry: &Entry) -> FileReport {
    FileReport {
        file: path.display().to_string(),
        name: Some(entry.name().to_string()),
        valid: entry.error_count() == 0,
        errors: entry.error_count(),
        warnings: entry.warning_count(),
        violations: entry.violations(),
    }
}

fn checked_report(path: &Path, checked: &Checked) -> FileReport {
    FileReport {
        file: path.display().to_string(),
        name: checked.name.clone(),
        valid: checked.is_valid(),
        errors: checked.error_count(),
        warnings: checked.warning_count(),
        violations: checked.violations.clone(),
    }
}

/// The first `max` characters of `text`, with `…` when it was longer.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

// --- list ----------------------------------------------------------------------------------

#[derive(Debug, Serialize)]
struct ListItem {
    name: String,
    file: String,
    status: Status,
    errors: usize,
    warnings: usize,
    /// Whether a valid version (current or last good) can run.
    runnable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    category: Option<String>,
    states: usize,
    arguments: Vec<String>,
    return_values: Vec<String>,
    version: String,
}

fn list_items(store: &Store) -> Vec<ListItem> {
    let catalog = store.catalog();
    catalog
        .entries()
        .map(|e| {
            let workflow: Option<&Workflow> =
                e.current().or(e.last_good.as_ref().map(|g| &*g.workflow));
            ListItem {
                name: e.name().to_string(),
                file: e.file_name.clone(),
                status: e.status(),
                errors: e.error_count(),
                warnings: e.warning_count(),
                runnable: store.runnable(e.name()).is_ok(),
                description: workflow.map(|w| w.description.clone()),
                category: workflow.and_then(|w| w.category.clone()),
                states: workflow.map_or(0, |w| w.states.len()),
                arguments: workflow
                    .map(|w| w.arguments.keys().cloned().collect())
                    .unwrap_or_default(),
                return_values: workflow
                    .map(|w| w.return_values.keys().cloned().collect())
                    .unwrap_or_default(),
                version: e.version.clone(),
            }
        })
        .collect()
}

fn list(folder: &Path, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let store = open_store(folder)?;
    let items = list_items(&store);
    if json {
        serde_json::to_writer_pretty(&mut *out, &serde_json::json!({ "workflows": items }))?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if items.is_empty() {
        writeln!(
            out,
            "No workflows in {}.",
            sanitize(&folder.display().to_string())
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let width = items
        .iter()
        .map(|i| i.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    writeln!(
        out,
        "{:width$}  {:<22}  {:>6}  DESCRIPTION",
        "NAME", "STATUS", "STATES"
    )?;
    for item in &items {
        let status = match item.status {
            Status::Valid => "valid".to_string(),
            Status::Warnings => format!(
                "valid, {} {}",
                item.warnings,
                plural(item.warnings, "warning", "warnings")
            ),
            Status::Invalid if item.runnable => format!("INVALID ({}), runs last", item.errors),
            Status::Invalid => format!(
                "INVALID ({} {})",
                item.errors,
                plural(item.errors, "error", "errors")
            ),
        };
        let description = shorten(item.description.as_deref().unwrap_or("-"), 72);
        writeln!(
            out,
            "{:width$}  {:<22}  {:>6}  {}",
            sanitize(&item.name),
            status,
            item.states,
            sanitize(&description)
        )?;
    }
    let invalid = items.iter().filter(|i| i.status == Status::Invalid).count();
    if invalid > 0 {
        writeln!(
            out,
            "\n{invalid} invalid: run `flowdeck validate` for details."
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

// --- plan ----------------------------------------------------------------------------------

fn show_plan(folder: &Path, name: &str, json: bool, out: &mut impl Write) -> Result<ExitCode> {
    let store = open_store(folder)?;
    let entry = store.entry(name)?;
    let (workflow, note) = match (entry.current(), &entry.last_good) {
        (Some(w), _) => (w.clone(), None),
        (None, Some(good)) => (
            (*good.workflow).clone(),
            Some(format!(
                "{} is currently invalid ({} errors); this is its last valid version",
                entry.file_name,
                entry.error_count()
            )),
        ),
        (None, None) => bail!(
            "workflow '{name}' ({}) is invalid: run `flowdeck validate {}` for the errors",
            entry.file_name,
            folder.join(&entry.file_name).display()
        ),
    };
    let plan = plan(&workflow);
    if json {
        serde_json::to_writer_pretty(&mut *out, &serde_json::json!({"note": note, "plan": plan}))?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(note) = note {
        writeln!(out, "note: {}", sanitize(&note))?;
    }
    write_plan(&workflow, &plan, out)?;
    Ok(ExitCode::SUCCESS)
}

#[expect(clippy::too_many_lines, reason = "issue 23 splits it by its jobs")]
fn write_plan(workflow: &Workflow, plan: &Plan, out: &mut impl Write) -> Result<()> {
    writeln!(
        out,
        "{} — {}",
        sanitize(&workflow.name),
        sanitize(&workflow.description)
    )?;
    let vars = |vars: &indexmap::IndexMap<String, crate::workflow::Variable>| {
        vars.iter()
            .map(|(k, v)| {
                let mut s = k.clone();
                if !v.required {
                    s.push('?');
                }
                if let Some(d) = &v.default {
                    s.push_str(&format!("={d}"));
                }
                s
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !workflow.arguments.is_empty() {
        writeln!(out, "inputs:  {}", sanitize(&vars(&workflow.arguments)))?;
    }
    if !workflow.return_values.is_empty() {
        writeln!(out, "returns: {}", sanitize(&vars(&workflow.return_values)))?;
    }
    let mut limits = format!(
        "starts at '{}', at most {} steps",
        workflow.initial_state,
        workflow.max_steps()
    );
    if let Some(t) = workflow.timeout_seconds {
        limits.push_str(&format!(", {t} s in all"));
    }
    writeln!(out, "{limits}\n")?;
    let width = plan.steps.iter().map(|s| s.state.len()).max().unwrap_or(0);
    let mut unreachable_header = false;
    for step in &plan.steps {
        if !step.reachable && !unreachable_header {
            writeln!(out, "\nunreachable (no run gets here):")?;
            unreachable_header = true;
        }
        writeln!(
            out,
            "{:>3}. {:width$}  {}",
            step.number,
            step.state,
            sanitize(&step.action)
        )?;
        let indent = " ".repeat(width + 7);
        if let Some(d) = &step.description {
            writeln!(out, "{indent}{}", sanitize(d))?;
        }
        if let Some(when) = &step.when {
            writeln!(out, "{indent}only when {}", sanitize(when))?;
        }
        for t in &step.transitions {
            let guard = t
                .when
                .as_ref()
                .map(|w| format!(" if {w}"))
                .unwrap_or_default();
            writeln!(
                out,
                "{indent}{}{} → {}",
                sanitize(&t.condition),
                sanitize(&guard),
                t.next_state
            )?;
        }
        if step.can_end {
            let how = if step.transitions.is_empty() {
                "then the run ends"
            } else {
                "otherwise the run ends"
            };
            writeln!(out, "{indent}{how}")?;
        }
    }
    Ok(())
}
