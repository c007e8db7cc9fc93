//! The commands that reach the folder's server: `flowdeck mcp` (an agent's connection,
//! relayed to the server, which starts one when none answers), `flowdeck serve` (the server
//! itself, in the foreground or in the background) and `flowdeck approve` (a person's yes to
//! a workflow's content, refused to anything started from flowdeck's own terminals).

use super::settings::engine_config;
use super::{FOLDER_HELP, ServeArgs, ServeCommand, open_engine, runtime};
use crate::workflow::names::sanitize;
use anyhow::{Context, Result, bail};
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

/// What a connection is offered: the toolsets `--toolsets` names, or `unnamed` when it names
/// none.
fn mcp_options(
    args: ServeArgs,
    approve: bool,
    unnamed: &[crate::mcp::Toolset],
) -> Result<crate::mcp::McpOptions> {
    let mut sets = std::collections::HashSet::new();
    for name in &args.toolsets {
        let named = crate::mcp::Toolset::parse_word(name.trim()).with_context(|| {
            let words = crate::mcp::Toolset::ALL
                .iter()
                .map(|t| t.as_str())
                .chain(["default", "all"]);
            let hint = crate::workflow::suggest::closest(name.trim(), words)
                .map(|word| format!("did you mean {word}? "))
                .unwrap_or_default();
            format!(
                "unknown toolset {} ({hint}choose from {})",
                sanitize(name),
                crate::mcp::Toolset::WORDS
            )
        })?;
        sets.extend(named);
    }
    if args.toolsets.is_empty() {
        sets.extend(unnamed.iter().copied());
    }
    Ok(crate::mcp::McpOptions {
        toolsets: sets,
        read_only: args.read_only,
        dynamic_filters: crate::mcp::dynamic::DynamicFilter::any_of(args.dynamic_filters),
        approve_agent_runs: approve,
        max_wait: args.max_wait,
    })
}

/// What `flowdeck serve` offers: relayed agents, which ask for their toolsets and get what
/// it offers of them; and agents over HTTP, which ask for none, so they get what `flowdeck
/// mcp` gives, unless `--toolsets` named what to offer.
fn served_options(
    offer: ServeArgs,
    approve: bool,
) -> Result<(crate::mcp::McpOptions, crate::mcp::McpOptions)> {
    let named = !offer.toolsets.is_empty();
    let options = mcp_options(offer, approve, &crate::mcp::Toolset::ALL)?;
    let http = if named {
        options.clone()
    } else {
        crate::mcp::McpOptions {
            toolsets: crate::mcp::Toolset::DEFAULT.into_iter().collect(),
            ..options.clone()
        }
    };
    Ok((options, http))
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

pub(super) fn mcp(folder: &Path, args: ServeArgs, approve: bool) -> Result<ExitCode> {
    // Given before the command (`flowdeck --approve agent-runs mcp`) or after it.
    let approve = approve || args.approve.agent_runs();
    let options = mcp_options(args, approve, &crate::mcp::Toolset::DEFAULT)?;
    // Checked up front for a clear error before a server is started for it.
    folder_must_exist(folder)?;
    if std::io::stdin().is_terminal() {
        tell_a_person(folder);
    }
    let server_options = crate::server::spawn::ServerOptions {
        approve_agent_runs: approve,
    };
    let runtime = runtime()?;
    // Installed before anything else, so a SIGTERM at any moment (reaching the server, or
    // relaying) ends the relay cleanly (the server then ends what this agent started).
    let relayed = runtime.block_on(async {
        let mut termination = crate::signals::Termination::register()?;
        let hello = crate::server::hello::Hello::new(crate::server::hello::Client::Mcp {
            options: crate::mcp::options::AgentOptions::of(&options),
        });
        let reach = crate::server::connect::IfNone::Start(server_options);
        let connection = tokio::select! {
            reached = crate::server::connect::connect(folder, &hello, reach) => reached?,
            signal = termination.recv() => {
                tracing::info!("{signal} while reaching the folder's server: ending");
                return Ok(());
            }
        };
        let Some(connection) = connection else {
            bail!("no server answers for {}", folder.display());
        };
        if let Some(trouble) = &connection.welcome().http_trouble {
            tracing::warn!("{trouble}");
            say(&sanitize(trouble));
        }
        tokio::select! {
            relayed = crate::server::relay::relay(connection, folder) => relayed,
            signal = termination.recv() => {
                tracing::info!("{signal}: ending the relay");
                Ok(())
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
pub(super) fn serve(folder: &Path, command: ServeCommand, approve: bool) -> Result<ExitCode> {
    let approve = approve || command.offer.approve.agent_runs();
    if command.background {
        // Its own session first: the front end that started it, its terminal and its process
        // group may all go, and the server stays.
        let _ = rustix::process::setsid();
        if let Err(why) = crate::logfile::init(folder, crate::logfile::SERVER) {
            tracing::warn!("no server log: {why}");
        }
    }
    let idle = (command.close_abandoned_after.0, command.quiet_after.0);
    let (options, http_options) = served_options(command.offer, approve)?;
    folder_must_exist(folder)?;
    let http = command.http.map(|addr| crate::server::http::HttpOptions {
        addr,
        allow_remote: command.http_allow_remote,
    });
    let runtime = runtime()?;
    runtime.block_on(async {
        let mut termination = crate::signals::Termination::register()?;
        // The folder first, before its engine reads a journal: one server per folder,
        // whatever socket folder each process has (engine/claim.rs).
        let canonical = folder.canonicalize().context(FOLDER_HELP)?;
        let Some(claim) = claim_folder(&canonical, command.background)? else {
            // Another front end's server won the folder: it serves, this one goes quietly.
            return anyhow::Ok(());
        };
        let engine = open_served(folder, approve, idle)?;
        // HTTP before the socket: a front end welcomed by this server is told if HTTP
        // could not be served (hello.rs).
        let http_stop = tokio_util::sync::CancellationToken::new();
        let serving = match &http {
            Some(http) => {
                let started = start_http(&engine, &canonical, &http_options, http, &http_stop).await;
                match started {
                    Ok(serving) => {
                        tell_http(&serving, command.background);
                        Some(serving)
                    }
                    // A server a front end started serves its socket whatever happens to
                    // HTTP (a port another program holds): the front end that wanted it
                    // must not lose the folder's server for it, and every front end is told.
                    Err(e) if command.background => {
                        tracing::warn!("serving without MCP over HTTP: {e}");
                        crate::server::http::trouble::set(Some(
                            crate::server::http::trouble::sentence(&e),
                        ));
                        None
                    }
                    Err(e) => {
                        engine.shutdown().await;
                        return Err(e);
                    }
                }
            }
            None => None,
        };
        let host = match crate::server::host::start(engine.clone(), folder, options.clone()) {
            Ok(host) => host,
            Err(e) => {
                http_stop.cancel();
                engine.shutdown().await;
                return Err(e.into());
            }
        };
        let version = crate::server::hello::version();
        if let Some(Err(e)) = claim.as_ref().map(|c| c.publish(host.socket(), &version)) {
            tracing::warn!(
                "cannot record where the server listens ({e}): front ends with another socket folder will not find it"
            );
        }
        if let Some(serving) = &serving {
            host.attendance().count_http(serving.sessions());
        }
        let attached = match &serving {
            Some(serving) => crate::server::lifetime::together(host.clients(), serving.sessions()),
            None => host.clients(),
        };
        let background = command.background.then_some(attached);
        let told = tell_events(&engine, command.background);
        let why = until_stopped(&engine, folder, &host, &mut termination, background).await;
        http_stop.cancel();
        drop(serving);
        host.stop().await;
        engine.shutdown().await;
        drop(claim);
        told.finish(&why).await;
        anyhow::Ok(())
    })?;
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    Ok(ExitCode::SUCCESS)
}

/// The served folder's engine, closing what nobody watches after `idle.0` and counting
/// terminals quiet on the attention list after `idle.1`.
fn open_served(
    folder: &Path,
    approve: bool,
    idle: (Option<std::time::Duration>, Option<std::time::Duration>),
) -> Result<std::sync::Arc<crate::engine::Engine>> {
    let mut config = engine_config(true, approve)?;
    (config.close_abandoned_after, config.quiet_after) = idle;
    let engine = crate::engine::Engine::open_lenient(folder, config).context(FOLDER_HELP)?;
    engine.watch_abandoned();
    engine.watch_attention();
    Ok(engine)
}

/// The folder claimed for this server (engine/claim.rs): `Some(None)` when it cannot hold the lock
/// (a folder this user may not write in, or a read-only one, holds no journal either, so
/// there is nothing two engines could both write); `None` when a background server finds
/// another serving it (it then ends quietly); an error naming the live server otherwise.
fn claim_folder(
    folder: &Path,
    background: bool,
) -> Result<Option<Option<crate::engine::claim::Claim>>> {
    use crate::engine::claim::ClaimError;
    match crate::engine::claim::claim(folder) {
        Ok(claim) => Ok(Some(Some(claim))),
        Err(e @ ClaimError::Served { .. }) if background => {
            tracing::info!("{e}");
            Ok(None)
        }
        Err(e @ ClaimError::Served { .. }) => Err(e.into()),
        Err(e @ ClaimError::Lock { .. }) => {
            tracing::warn!("{e}: serving without the folder's lock");
            Ok(Some(None))
        }
    }
}

/// Starts MCP over HTTP for the folder's engine; its token's file goes beside the folder's
/// socket, in the owner-only socket folder.
async fn start_http(
    engine: &std::sync::Arc<crate::engine::Engine>,
    folder: &Path,
    options: &crate::mcp::McpOptions,
    http: &crate::server::http::HttpOptions,
    stop: &tokio_util::sync::CancellationToken,
) -> Result<crate::server::http::Serving> {
    let socket = crate::server::socket::socket_path(folder)?;
    let dir = socket
        .parent()
        .map_or_else(crate::server::socket::socket_dir, Path::to_path_buf);
    crate::server::socket::ensure_private_dir(&dir)?;
    let engine = engine.clone();
    let options = options.clone();
    Ok(crate::server::http::start(engine, &socket, options, http, stop.clone()).await?)
}

/// Tells the engine's events as lines (serve_log.rs): on stderr in the foreground, in the
/// server's log in the background. The token's cancel tells what is left and ends it; the
/// task is waited for, so that the lines come before the last one.
fn tell_events(engine: &crate::engine::Engine, background: bool) -> TellingEvents {
    let done = tokio_util::sync::CancellationToken::new();
    let task = tokio::spawn(super::serve_log::tell(
        engine.subscribe(),
        done.clone(),
        move |line| {
            if background {
                tracing::info!("{line}");
            } else {
                let _ = writeln!(std::io::stderr(), "{line}");
            }
        },
    ));
    TellingEvents {
        done,
        task,
        background,
    }
}

/// The task telling the engine's events.
struct TellingEvents {
    done: tokio_util::sync::CancellationToken,
    task: tokio::task::JoinHandle<()>,
    background: bool,
}

impl TellingEvents {
    /// Tells what is left, then that the server stopped and why (in the foreground).
    async fn finish(self, why: &str) {
        self.done.cancel();
        // Its last lines are already queued: it ends at once.
        let _ = self.task.await;
        if !self.background {
            say(&format!("stopped ({why})"));
        }
    }
}

/// Serves until a termination signal or, for a server a front end started (`background`:
/// how many front ends are attached, over the socket and over HTTP), until nothing is
/// attached and nothing runs. Returns why it stopped.
async fn until_stopped(
    engine: &std::sync::Arc<crate::engine::Engine>,
    folder: &Path,
    host: &crate::server::host::Host,
    termination: &mut crate::signals::Termination,
    background: Option<tokio::sync::watch::Receiver<usize>>,
) -> String {
    if let Some(attached) = background {
        tracing::info!(
            "serving {} on {}",
            folder.display(),
            host.socket().display()
        );
        let idle_then_retired = async {
            loop {
                crate::server::lifetime::until_idle(
                    engine,
                    folder,
                    attached.clone(),
                    crate::server::lifetime::GRACE,
                )
                .await;
                // A front end that connected just now keeps the server.
                if *attached.borrow() == 0 && host.retire().await {
                    return;
                }
            }
        };
        tokio::select! {
            () = idle_then_retired => {
                tracing::info!("nothing attached and nothing running: ending");
                "nothing attached and nothing running".into()
            }
            signal = termination.recv() => {
                tracing::info!("{signal}: stopping");
                signal.to_string()
            }
        }
    } else {
        say(&format!(
            "serving {} on {} (the studio and `flowdeck mcp` attach to it)",
            sanitize(&folder.display().to_string()),
            host.socket().display()
        ));
        let signal = termination.recv().await;
        tracing::info!("{signal}: stopping");
        say(&format!(
            "{signal}: stopping (runs in progress are cancelled, terminals closed)"
        ));
        signal.to_string()
    }
}

/// Says where MCP is served over HTTP and where its token is (never the token itself): on
/// stderr in the foreground, in the server's log in the background.
fn tell_http(serving: &crate::server::http::Serving, background: bool) {
    let token = match &serving.token_file {
        Some(file) => format!("the token in {}", file.display()),
        None => format!("the token in {}", crate::server::http::TOKEN_VARIABLE),
    };
    let told = format!(
        "MCP over HTTP at {}; every request needs Authorization: Bearer with {token}",
        serving.url()
    );
    if background {
        tracing::info!("{told}");
    } else {
        say(&told);
    }
}

/// A line for the person who started the server, on stderr; lost, not a panic, when stderr
/// is gone (the server goes on serving).
/// `flowdeck mcp` typed at a terminal waits silently for JSON-RPC, which reads as a hang:
/// say what it is for and how to use it instead. Stdout stays the protocol's; it goes on
/// serving, since a person may be trying the wire by hand.
fn tell_a_person(folder: &Path) {
    let dir = folder
        .canonicalize()
        .unwrap_or_else(|_| folder.to_path_buf());
    let dir = sanitize(&dir.display().to_string());
    let _ = write!(
        std::io::stderr(),
        "flowdeck mcp is the MCP server for agents: an agent's host (Claude Code, Claude Desktop, \
         Cursor, any MCP client) starts it and speaks JSON-RPC on its stdin and stdout.\n\
         To give an agent this folder's workflows:\n\
         \x20 Claude Code:   claude mcp add flowdeck -- flowdeck mcp --workflows {dir}\n\
         \x20 other clients: the command `flowdeck` with arguments [\"mcp\", \"--workflows\", \"{dir}\"]\n\
         \x20 (`flowdeck mcp --help` says more)\n\
         To work with the workflows yourself, `flowdeck` opens the studio.\n\
         Serving on this terminal now: Ctrl-D or Ctrl-C ends it.\n"
    );
}

fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "flowdeck: {line}");
}

/// `flowdeck approve`: each workflow's content that would run now, approved for agents. Only
/// for a person at a terminal that is not one of flowdeck's (server/peer.rs): with the
/// folder's server up, the server checks and approves; with none up, this process checks
/// itself and approves in the folder.
pub(super) fn approve_workflows(
    folder: &Path,
    names: &[String],
    out: &mut impl Write,
) -> Result<ExitCode> {
    let runtime = runtime()?;
    let asked = runtime.block_on(crate::server::approve::ask(folder, names))?;
    let versions: Vec<(String, Result<String, String>)> = match asked {
        Some(answers) => answers
            .into_iter()
            .map(|a| (a.workflow, a.approved))
            .collect(),
        None => {
            crate::server::peer::may_approve(Some(std::process::id()), None, &[])
                .map_err(|why| anyhow::anyhow!("this process may not approve: {why}"))?;
            let engine = open_engine(folder, engine_config(false, false)?)?;
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
