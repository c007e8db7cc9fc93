//! The command line: `flowdeck validate`, `list`, `plan`, `schema`, `run`, `mcp`, `serve`,
//! `approve`, `ls`, `stop`, `runs`. A thin front end: it reads the folder through [`crate::store`] and the model
//! through [`crate::workflow`], runs workflows through [`crate::engine`] (`cli/run.rs`), and
//! only formats what they return. Here: the arguments and the dispatch; the folder's reports
//! in `cli/inspect.rs`, the server's commands in `cli/serve.rs`.

mod docs;
mod fleet;
mod idle;
mod inputs;
mod inspect;
mod ls;
mod manual;
mod named;
mod reach;
mod record;
mod replay;
mod run;
mod runs;
mod serve;
mod serve_log;
mod settings;
mod stop;
mod words;

use inspect::{list, schema, show_plan, validate};
use serve::{approve_workflows, mcp, serve};
use settings::{engine_config, recording_format_from_env, recordings_from_env};

use crate::store::Store;
use crate::workflow::names::sanitize;
use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use std::io::IsTerminal;
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
    #[arg(long, env = "FLOWDECK_THEME", value_name = "NAME")]
    pub theme: Option<String>,

    #[command(flatten)]
    pub approve: ApproveArg,

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

/// `--approve`, as the studio, `flowdeck mcp` and `flowdeck serve` take it.
#[derive(Debug, Args)]
pub struct ApproveArg {
    /// Approval mode: with `agent-runs`, an agent's run of a manifest whose exact content no
    /// person has approved waits for a person's yes in a studio (refused when none is open)
    #[arg(
        long = "approve",
        env = "FLOWDECK_APPROVE",
        value_name = "WHAT",
        value_enum,
        default_value_t = Approve::Off
    )]
    pub mode: Approve,
}

impl ApproveArg {
    pub fn agent_runs(&self) -> bool {
        self.mode == Approve::AgentRuns
    }
}

/// What MCP offers: the same for `flowdeck mcp` and `flowdeck serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Toolsets to offer, comma-separated: terminal, runs, guided, authoring, history,
    /// dynamic, or `default` (terminal,runs,guided) and `all`. `flowdeck mcp` offers the
    /// default; `flowdeck serve` lets a relayed agent have all it asks for, and gives an
    /// agent over HTTP the default. From FLOWDECK_TOOLSETS too
    #[arg(
        long,
        env = "FLOWDECK_TOOLSETS",
        value_delimiter = ',',
        value_name = "LIST"
    )]
    toolsets: Vec<String>,
    /// The longest a tool call waits before it answers (run_workflow, await_output,
    /// run_command, run_events, wf_ tools): a longer wait asked for is cut to it, and a run
    /// still going is answered with its id. Below the 60 s agent hosts allow a call. From
    /// FLOWDECK_MAX_WAIT too
    #[arg(
        long,
        env = "FLOWDECK_MAX_WAIT",
        value_name = "DURATION",
        default_value = "50s",
        value_parser = settings::max_wait
    )]
    max_wait: std::time::Duration,
    /// Offer only tools that change nothing (reads, lists, validation, waits)
    #[arg(long)]
    read_only: bool,
    /// Offer `wf_<name>` tools only for workflows matching this glob (repeatable)
    #[arg(long = "dynamic-filter", value_name = "GLOB")]
    dynamic_filters: Vec<String>,
    #[command(flatten)]
    approve: ApproveArg,
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
    /// Also serve MCP over streamable HTTP at http://ADDR:PORT/mcp, on the same engine. Every
    /// request needs `Authorization: Bearer TOKEN`: FLOWDECK_HTTP_TOKEN, or a token made at
    /// start into an owner-only file whose path is printed. Loopback addresses only, unless
    /// --http-allow-remote. From FLOWDECK_HTTP too, which also reaches the server that the
    /// studio or `flowdeck mcp` starts in the background
    #[arg(long, env = "FLOWDECK_HTTP", value_name = "ADDR:PORT", value_parser = crate::server::http::parse_addr)]
    http: Option<std::net::SocketAddr>,
    /// Allow --http on an address that is not loopback (anyone who reaches it with the token
    /// can type into your terminals: prefer an ssh tunnel to a loopback address)
    #[arg(long, env = "FLOWDECK_HTTP_ALLOW_REMOTE", requires = "http")]
    http_allow_remote: bool,
    /// Close a terminal an agent opened once its agent has gone and nobody has looked at it
    /// (no studio showed it, no tool call read or wrote it) for this long: 24h, 90m, 30s, or
    /// off; written in the audit log, shown by `flowdeck ls` until then. From
    /// FLOWDECK_CLOSE_ABANDONED_AFTER too, which also reaches a server started in the background
    #[arg(
        long,
        env = "FLOWDECK_CLOSE_ABANDONED_AFTER",
        value_name = "DURATION",
        default_value = "24h",
        value_parser = idle::after
    )]
    close_abandoned_after: idle::After,
    /// A running terminal (or run) with no output for this long is `quiet` on the attention
    /// list (the studio's inbox, the `attention` tool, `flowdeck ls`): 60s, 5m, or off. From
    /// FLOWDECK_QUIET_AFTER too, which also reaches a server started in the background
    #[arg(
        long,
        env = "FLOWDECK_QUIET_AFTER",
        value_name = "DURATION",
        default_value = "60s",
        value_parser = idle::after
    )]
    quiet_after: idle::After,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate manifests: every violation as `file:line:col: rule: message (path)`.
    ///
    /// PATHs may be files or folders (a folder is checked as a workflows folder, so duplicate
    /// names and file names that do not match are reported too), or the name of a workflow of
    /// the folder. Without PATH, the workflows folder is checked. Exits 1 when any manifest
    /// has errors, 2 when a PATH is neither a file nor a workflow's name.
    Validate {
        /// Files, folders or workflow names to check [default: the workflows folder]
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
    ///
    /// Without NAME, lists the workflows of the folder. A name no workflow has exits 2 with
    /// the closest name there is; a broken file is named with its errors, as `validate` does.
    Plan {
        /// The workflow's name [default: list the workflows]
        name: Option<String>,
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// Open the studio: the workflows, their step plans, runs and terminal panes.
    Tui,
    /// Print the manifest JSON Schema (draft 2020-12).
    Schema,
    /// Print a shell completion script: bash, zsh, fish, elvish or powershell.
    ///
    /// For example `flowdeck completions bash > ~/.local/share/bash-completion/completions/flowdeck`,
    /// `flowdeck completions zsh > "${fpath[1]}/_flowdeck"`, or
    /// `flowdeck completions fish > ~/.config/fish/completions/flowdeck.fish`.
    Completions {
        /// The shell to complete in
        shell: clap_complete::Shell,
    },
    /// Read flowdeck's documentation, built in: the manifest reference, the studio's keys, the
    /// MCP tools.
    ///
    /// `flowdeck docs` lists the topics; `flowdeck docs workflows` shows one (through `$PAGER`
    /// at a terminal, printed as it is when piped).
    Docs {
        /// readme, workflows, studio, mcp, glossary or architecture
        topic: Option<String>,
    },
    /// Print flowdeck's manual page (roff), every command included.
    ///
    /// For example `flowdeck man > ~/.local/share/man/man1/flowdeck.1`, then `man flowdeck`;
    /// or at once: `flowdeck man | man -l -`.
    Man,
    /// Serve MCP on stdin/stdout for an agent (Claude Code, Claude Desktop, any MCP client).
    ///
    /// The agent is relayed to the folder's server (started in the background when none is
    /// up), so it works on the same live engine as the person in the studio, whoever came
    /// first; the stricter of the server's options and these apply (toolsets both offer,
    /// read-only or approval mode if either asks, workflows both dynamic filters pass). Nothing
    /// is sent to a socket whose folder, file or listening process is not yours: it exits
    /// saying which. Logs go to stderr; stdout carries only the protocol. It ends once the
    /// client closed stdin and every answer owed was written, or on SIGTERM; a call the agent
    /// was waiting on is cancelled, while the runs and terminals it started stay in the server.
    /// Typed by a person at a terminal, it first says on stderr what it is for and how to give
    /// it to an agent (`flowdeck` alone opens the studio), then serves all the same.
    Mcp(ServeArgs),
    /// Run the folder's server in the foreground: the engine every front end attaches to (the
    /// studio, and agents through `flowdeck mcp`) on the folder's local socket, until SIGTERM
    /// or Ctrl-C.
    ///
    /// Without it, the first front end that needs a server starts one in the background,
    /// which ends by itself once nothing is attached and nothing runs. A folder has one server:
    /// it holds DIR/.flowdeck/server.lock while it lives, and a second one is refused naming it,
    /// whatever XDG_RUNTIME_DIR or TMPDIR each has. With --http, a port it cannot take is an
    /// error.
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
    /// fill the workflow's arguments; an argument not given is taken from your environment
    /// (`export LOG_DIR=/var/log`; only the workflow's declared arguments are read), else
    /// its default. On another host (--on, or the workflow's `host:`), the far shell's
    /// environment is used instead. `prompt` steps are asked on stderr and answered with a
    /// line of stdin. Ctrl-C cancels the run. With the folder's server up (a studio or an
    /// agent on the folder), the run happens there and an open studio shows it; the answer
    /// is the same either way. Exits 0 when the run completed; 1 when it ended any other way,
    /// or its file is invalid (its errors are printed as `validate` prints them); 2 when it
    /// could not start (a name no workflow has, with the closest one there is: nothing is
    /// run or journaled). Without NAME, lists the workflows.
    Run {
        /// The workflow's name [default: list the workflows]
        name: Option<String>,
        /// A value for an argument (repeatable): -i PROJECT_ROOT=/src/app
        #[arg(short = 'i', long = "input", value_name = "KEY=VALUE")]
        inputs: Vec<String>,
        /// Keep the run's terminal open at the end and print its final screen
        #[arg(long)]
        session_keep: bool,
        /// Run on this host, through ssh (a name, user@host or an alias of your ssh config;
        /// FLOWDECK_SSH_COMMAND gives the ssh command and its options). Default: the
        /// workflow's `host:`, else this machine. Several hosts (`--on web-1,web-2`) or a group
        /// of the folder's hosts.conf run the workflow on each of them at once: a fleet, one
        /// run per host
        #[arg(long, value_name = "HOST[,HOST...]")]
        on: Option<String>,
        /// A fleet's runs at once, at most (default 8)
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
        parallel: Option<u16>,
        /// Print the full result as JSON (the seed's shape plus run_id and return_values)
        #[arg(long)]
        json: bool,
    },
    /// Play a run's recording: what its terminal showed, with the pauses it had.
    ///
    /// Every run records each terminal session it works in as an asciicast v3 file beside its
    /// journal (DIR/.flowdeck/runs/RUN_ID.cast; asciinema 3 and any asciicast v3 player play
    /// it too), with a marker where the run entered each state. While it plays: `]` and `[`
    /// go to the next and previous state, `←` and `→` 5 s back and forth, `/` searches
    /// forward for text (`n` again), `+` and `-` change the speed, space pauses, `.` steps,
    /// `q` stops; the status line says the state and the time. Only what draws the screen
    /// reaches your terminal (no clipboard, title, hyperlink or query sequences; --raw for
    /// everything). When stdout is not a terminal, its plain text is written at once (with
    /// --raw, the output stream as recorded, as `asciinema cat` writes it). A recording stops
    /// at 64 MiB; FLOWDECK_RECORDINGS=16M (any size, K, M or G) sets another cap,
    /// FLOWDECK_RECORDINGS=off records nothing and FLOWDECK_RECORDING_FORMAT=v2 records
    /// asciicast v2 (older players; v2 files play here too), set where the runs happen: where
    /// the folder's server starts (the studio, `flowdeck mcp`, `flowdeck serve`), which keeps
    /// its setting.
    Replay {
        /// The run's id (as `flowdeck run`, the studio's runs view and run_status show it),
        /// or the path of an asciicast file
        #[arg(value_name = "RUN_ID")]
        run: String,
        /// Another session the run worked in than the one it began in (its id, e.g. s3)
        #[arg(long)]
        session: Option<String>,
        /// Play this many times as fast
        #[arg(long, default_value_t = 1.0, value_parser = positive)]
        speed: f64,
        /// Play no pause longer than this, in seconds
        #[arg(long, value_name = "SECONDS", default_value_t = 2.0, value_parser = positive, conflicts_with = "no_idle_limit")]
        idle_limit: f64,
        /// Play every pause as long as it was
        #[arg(long)]
        no_idle_limit: bool,
        /// Write the recorded output as it is, every escape sequence included. By default
        /// only what draws the screen reaches your terminal: a recording cannot set your
        /// clipboard or window title, hide a link's target or query your terminal. At a
        /// terminal, --raw plays without navigation (space, `.` and `q` only)
        #[arg(long)]
        raw: bool,
        /// Start where the run entered this state (piped: the plain text shown from there on)
        #[arg(long, value_name = "STATE")]
        at: Option<String>,
        /// At the end, stay on the last screen, still navigable, until `q` (the studio's
        /// replay pane plays so)
        #[arg(long)]
        stay: bool,
    },
    /// Record a procedure done by hand and write it as a draft workflow.
    ///
    /// Starts your shell ($SHELL; bash if it is no POSIX shell) in this terminal, recorded
    /// (like `asciinema rec`). Do the procedure, then leave the shell (`exit` or Ctrl-D): the
    /// workflow NAME is drafted from it and written to the workflows folder as NAME.yaml, with
    /// the recording beside it as NAME.cast. Each command typed at the prompt becomes a
    /// `run_command` step (in bash and zsh, a command that failed keeps its failure branch);
    /// what was typed into a program it started (a REPL, an installer's questions) becomes
    /// `send_input` after an `await_output` of the prompt that was seen; what was typed where
    /// it was not shown (a password) becomes a secret argument, never text in the draft. Tidy
    /// the draft before you run it (`flowdeck docs workflows`, "Drafts").
    Record {
        /// The workflow's name: lowercase letters, digits and _
        name: String,
        /// Replace a workflow NAME (NAME.yaml, .yml or .json) and NAME.cast if they exist
        /// (refused otherwise, before the shell starts)
        #[arg(long)]
        force: bool,
    },
    /// List your folder servers: folder, process, uptime, who is attached, what they hold.
    ///
    /// A folder's server is the background process the studio, `flowdeck mcp` or `flowdeck
    /// run` attach to; it ends by itself once nothing is attached and nothing runs, and until
    /// then it holds the terminals and runs people and agents started. Each server found in
    /// your sockets' folder ($XDG_RUNTIME_DIR/flowdeck, else $TMPDIR/flowdeck-UID; and the one
    /// the workflows folder's DIR/.flowdeck/server.json names) is asked over its socket, after
    /// the same ownership checks as every front end, within 5 s: one that does not answer is
    /// listed as not answering, a socket left by a server that died as stale. Exits 0, also
    /// when no server runs.
    #[command(after_long_help = ls::EXAMPLES)]
    Ls(ls::LsArgs),
    /// Stop a folder's server, as SIGTERM does: its runs canceled and journaled, its terminals
    /// closed.
    ///
    /// When the server holds terminals or runs, a person at a terminal is shown them and asked
    /// first; a script says --yes (without it and without a terminal, nothing is stopped and
    /// the exit status is 2). It then waits up to 10 s for the server to end and says so. The
    /// process signalled is the one the server names over its checked socket, and only if it
    /// is yours and the one listening there.
    #[command(after_long_help = stop::EXAMPLES)]
    Stop(stop::StopArgs),
    /// List the folder's runs, newest first: id, workflow, who started it, how it ended, when,
    /// how long, recorded.
    ///
    /// Read from the folder's journal (DIR/.flowdeck/runs/), with or without a server up. Who
    /// started a run: a person (at a terminal), an agent by its client's name, or cli
    /// (`flowdeck run`). A run still going shows as running; one whose flowdeck died, as
    /// interrupted. `flowdeck replay RUN_ID` plays a recorded one.
    #[command(after_long_help = runs::EXAMPLES)]
    Runs(runs::RunsArgs),
}

/// A number above zero, for `--speed` and `--idle-limit`.
fn positive(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(n) if n.is_finite() && n > 0.0 => Ok(n),
        _ => Err(format!("{text} is not a number above 0")),
    }
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
    // A log line that cannot be written is dropped: by default tracing would report it with
    // `eprintln!`, which panics when stderr is gone (a closed pipe, a terminal that went
    // away), and would take down whatever task was logging, an agent's call among them.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(colour)
        .with_writer(std::io::stderr)
        .log_internal_errors(false)
        .try_init();
}

/// The studio on this terminal, until the person leaves it.
fn open_studio(folder: PathBuf, theme: Option<String>, approve: bool) -> Result<ExitCode> {
    // A folder that is not there yet is one `A` creates: the log waits elsewhere meanwhile
    // rather than fail and say so on the first screen.
    let missing =
        std::fs::symlink_metadata(&folder).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
    let log = if missing {
        crate::logfile::init_for_missing(&folder, crate::logfile::STUDIO)
    } else {
        crate::logfile::init(&folder, crate::logfile::STUDIO)
    };
    let runtime = runtime()?;
    let outcome = runtime.block_on(crate::tui::run(crate::tui::StudioOptions {
        folder,
        log,
        theme,
        engine: engine_config(true, approve)?,
        ring: crate::tui::ring::Ring::from_env(|name| std::env::var(name).ok())
            .map_err(anyhow::Error::msg)?,
    }));
    // Blocking readers of the terminal must not hold the exit.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    outcome
}

fn run(cli: Cli) -> Result<ExitCode> {
    recordings_from_env()?;
    recording_format_from_env()?;
    idle::check_env()?;
    let studio = opens_studio(&cli);
    let folder = cli.workflows.unwrap_or_else(|| PathBuf::from("workflows"));
    let approve = cli.approve.agent_runs();
    // Not locked for the whole command: `flowdeck mcp` writes the protocol from its own thread,
    // and a lock held here would block it forever.
    let mut out = std::io::stdout();
    if studio {
        return open_studio(folder, cli.theme, approve);
    }
    match cli.command {
        None | Some(Command::Tui) | Some(Command::List { json: false }) => {
            list(&folder, false, &mut out)
        }
        Some(Command::List { json }) => list(&folder, json, &mut out),
        Some(Command::Validate { paths, json }) => validate(&folder, &paths, json, &mut out),
        Some(Command::Plan { name, json }) => show_plan(&folder, name, json, &mut out),
        Some(Command::Run { name: None, .. }) => named::choose(&folder, "run"),
        Some(Command::Run {
            name: Some(name),
            inputs,
            session_keep,
            on,
            parallel,
            json,
        }) => {
            let args = run::RunArgs {
                name,
                inputs,
                keep_session: session_keep,
                host: on,
                parallel: parallel.map(usize::from),
                json,
            };
            match args.fleet(&folder) {
                Some(hosts) => fleet::run(&folder, &args, hosts, &mut out),
                None => run::run(&folder, args, &mut out),
            }
        }
        Some(Command::Replay {
            run,
            session,
            speed,
            idle_limit,
            no_idle_limit,
            raw,
            at,
            stay,
        }) => {
            let args = replay::ReplayArgs {
                what: run,
                session,
                speed,
                idle_limit: (!no_idle_limit).then_some(idle_limit),
                raw,
                at,
                stay,
            };
            replay::replay(&folder, &args, &mut out)
        }
        Some(Command::Record { name, force }) => {
            record::record(&folder, &record::RecordArgs { name, force })
        }
        Some(Command::Mcp(args)) => mcp(&folder, args, approve),
        Some(Command::Serve(command)) => serve(&folder, command, approve),
        Some(Command::Completions { shell }) => manual::completions(shell, &mut out),
        Some(Command::Man) => manual::man(&mut out),
        Some(Command::Docs { topic }) => docs::docs(topic.as_deref(), &mut out),
        Some(Command::Approve { names }) => approve_workflows(&folder, &names, &mut out),
        Some(Command::Ls(args)) => ls::ls(&folder, &args, &mut out),
        Some(Command::Stop(args)) => stop::stop(&folder, &args, &mut out),
        Some(Command::Runs(args)) => runs::runs(&folder, &args, &mut out),
        Some(Command::Schema) => schema(&mut out),
    }
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
