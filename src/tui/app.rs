//! The studio's loop: terminal input (crossterm's `EventStream`), engine events, the results
//! of effects and termination signals, merged in one `select!`. It redraws only when
//! something shown changed, at most once per frame (so a flooding pane costs at most 60
//! frames a second and keys are still read between them), and sleeps otherwise.

mod event_loop;
mod handover;

use super::link::{Inbox, Link};
use super::persons_work::farewell;
use super::state::App;
use super::terminal;
use super::theme::Theme;
use crate::engine::{Engine, EngineConfig};
use crate::server::connect::{IfNone, connect};
use crate::server::hello::{Client, Hello};
use crate::signals::Termination;
use anyhow::{Context, Result};
use event_loop::{Shown, event_loop};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// How the studio was asked to start.
#[derive(Debug, Clone)]
pub struct StudioOptions {
    pub folder: PathBuf,
    /// A theme name (bundled, or in the person's theme folder: themes.rs) or a theme file's path.
    pub theme: Option<String>,
    pub engine: EngineConfig,
    /// Where the studio's log goes (log.rs), or why it cannot be written.
    pub log: Result<PathBuf, String>,
    /// How the person is called when something starts needing them (`FLOWDECK_NOTIFY`).
    pub ring: super::ring::Ring,
}

/// How the studio's loop ended.
enum Ended {
    /// The person quit (with the studio as it was then), or a termination signal came or the
    /// terminal went away (`None`: nobody is there to read a last line).
    Quit(Option<Box<App>>),
    /// The studio's own code kept failing: its screen is given up, with this reason.
    GaveUp(String),
    /// A studio hosting a folder that did not exist saw it made: a server takes it over,
    /// and a studio attached to it goes on from here (handover.rs).
    HandOver(handover::Carried),
}

/// How a studio that hosted the folder ended.
enum Hosted {
    Ended(ExitCode),
    /// The folder exists now: the studio goes on attached to its server.
    HandOver(handover::Carried),
}

/// Opens the studio on the folder and runs it until the person quits or detaches, or a
/// termination signal arrives; the terminal is given back either way. The studio attaches to
/// the folder's server, starting one when none answers, so that what runs goes on when it
/// ends. Only when no server can be started for the folder (it does not exist yet, or the
/// socket's folder is unusable) does the studio open the engine itself, saying why agents
/// cannot reach it; then everything ends with it. A folder that did not exist is handed over
/// to a server once the person has made it (handover.rs).
pub async fn run(options: StudioOptions) -> Result<ExitCode> {
    {
        // Before the terminal is taken: a kill request from here on still restores it.
        let mut termination = Termination::register().context("cannot handle signals")?;
        let server = crate::server::spawn::ServerOptions {
            approve_agent_runs: options.engine.approve_agent_runs,
        };
        let hello = Hello::new(Client::Studio {
            approve_agent_runs: options.engine.approve_agent_runs,
        });
        let mut carried = None;
        loop {
            let reach = connect(&options.folder, &hello, IfNone::Start(server));
            let reached = tokio::select! {
                reached = reach => reached,
                signal = termination.recv() => {
                    tracing::info!("{signal} while reaching the folder's server: ending");
                    return Ok(ExitCode::from(1));
                }
            };
            return match reached {
                Ok(Some(connection)) => {
                    attached(connection, &options, &mut termination, carried).await
                }
                Ok(None) => anyhow::bail!("no server answers for {}", options.folder.display()),
                Err(why) if cannot_host(&why) => {
                    match hosted(&options, &mut termination, why.to_string(), carried).await? {
                        Hosted::Ended(code) => Ok(code),
                        Hosted::HandOver(what) => {
                            tracing::info!("the folder exists now: handing it over to a server");
                            carried = Some(what);
                            continue;
                        }
                    }
                }
                Err(why) => Err(why),
            };
        }
    }
}

/// Whether the folder's server cannot be started for a reason that leaves the studio to host
/// the folder itself: the folder or the socket's folder cannot be used. A socket that is not
/// this user's is never such a reason: it is refused (connect.rs).
fn cannot_host(why: &anyhow::Error) -> bool {
    use crate::server::connect::LocateError;
    use crate::server::spawn::StartError;
    why.chain().any(|e| {
        matches!(
            e.downcast_ref::<StartError>(),
            Some(StartError::Folder { .. } | StartError::Socket(_))
        ) || matches!(
            e.downcast_ref::<LocateError>(),
            Some(LocateError::Io { .. })
        )
    })
}

/// The studio attached to the folder's server.
async fn attached(
    connection: crate::server::connect::Connection,
    options: &StudioOptions,
    termination: &mut Termination,
    carried: Option<handover::Carried>,
) -> Result<ExitCode> {
    let (remote, inbound) = crate::server::client::Remote::attach(connection, &options.folder);
    tracing::info!("attached to {}", remote.server);
    // What the person must not miss first: agents may be reaching an impostor over HTTP.
    let approval = remote
        .http_trouble
        .clone()
        .or_else(|| approval_message(remote.approval_mode, remote.cannot_approve.as_deref()));
    let me = remote.person.clone();
    let link = Link::Remote(remote);
    let Some(inbox) = link.inbox(Some(inbound)) else {
        anyhow::bail!("no events from the folder's server");
    };
    let (theme, message) = studio_theme(options);
    let mut app = App::new(options.folder.display().to_string());
    app.ring = options.ring;
    app.message = message.or(approval);
    app.attached = true;
    app.me = me;
    if let Some(carried) = carried {
        carried.onto(&mut app);
    }
    match show(&link, inbox, app, &theme, options, termination, false).await? {
        Ended::Quit(app) => {
            // The terminal is the person's again: one line of what goes on without them.
            if let Some(line) =
                app.and_then(|app| farewell(&app, &reattach_command(&options.folder)))
            {
                let _ = writeln!(std::io::stderr(), "{line}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Ended::GaveUp(why) => {
            eprintln!(
                "flowdeck: the studio stopped after repeated internal errors (a bug: {why}); the folder's server goes on"
            );
            Ok(ExitCode::from(2))
        }
        // Only a hosting studio hands over.
        Ended::HandOver(_) => Ok(ExitCode::SUCCESS),
    }
}

/// The studio with the engine in its own process, when no server can be started for the
/// folder (`why`): agents cannot reach it, and everything ends with the studio.
async fn hosted(
    options: &StudioOptions,
    termination: &mut Termination,
    why: String,
    carried: Option<handover::Carried>,
) -> Result<Hosted> {
    tracing::warn!("no server for the folder ({why}): the studio hosts it");
    // A folder that is missing or unreadable opens the studio all the same: the list says
    // what is wrong and follows the folder once it is fixed; shells work meanwhile.
    let engine = Engine::open_lenient(&options.folder, options.engine.clone())
        .context("cannot open the workflows folder")?;
    engine.watch_attention();
    let (theme, message) = studio_theme(options);
    let mut app = App::new(options.folder.display().to_string());
    app.ring = options.ring;
    // A folder that does not exist yet is a newcomer's first minute: the list says so and
    // how to make it; a word of servers and agents would only alarm.
    let first_minute = !options.folder.exists();
    app.message = message.or_else(|| {
        (!first_minute).then(|| {
            format!("agents cannot reach this studio, which hosts the folder itself: {why}")
        })
    });
    if let Some(carried) = carried {
        carried.onto(&mut app);
    }
    // The person at this studio answers agents' approval requests, if any agent could ask.
    let link = Link::Local {
        engine: engine.clone(),
        approver: Arc::new(engine.attach_approver()),
    };
    let outcome = match link.inbox(None) {
        Some(inbox) => {
            show(
                &link,
                inbox,
                app,
                &theme,
                options,
                termination,
                first_minute,
            )
            .await
        }
        None => Err(anyhow::anyhow!("no events from the engine")),
    };
    drop(link);
    let outcome = match outcome {
        Ok(Ended::Quit(_)) => Ok(Hosted::Ended(ExitCode::SUCCESS)),
        Ok(Ended::HandOver(carried)) => Ok(Hosted::HandOver(carried)),
        Ok(Ended::GaveUp(why)) => {
            // The terminal is the person's again (cooked): plain lines.
            eprintln!(
                "flowdeck: the studio stopped after repeated internal errors (a bug: {why}); details in {}",
                log_name(options)
            );
            Ok(Hosted::Ended(ExitCode::from(2)))
        }
        Err(e) => Err(e),
    };
    engine.shutdown().await;
    outcome
}

/// The command that opens this folder's studio again from where the person is: `flowdeck`
/// for `./workflows`, else `flowdeck DIR`.
fn reattach_command(folder: &std::path::Path) -> String {
    let here = std::env::current_dir().ok();
    let default = here.as_ref().map(|d| d.join("workflows"));
    let same = |a: &std::path::Path, b: &std::path::Path| {
        a == b
            || a.canonicalize()
                .ok()
                .zip(b.canonicalize().ok())
                .is_some_and(|(a, b)| a == b)
    };
    if default.as_deref().is_some_and(|d| same(folder, d)) {
        return "flowdeck".into();
    }
    let shown = here
        .as_deref()
        .and_then(|d| folder.strip_prefix(d).ok())
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(folder);
    let shown = crate::workflow::names::sanitize(&shown.display().to_string());
    // A path the shell would split or expand is quoted.
    if shown
        .chars()
        .all(|c| c.is_alphanumeric() || "/._-+,@%:".contains(c))
    {
        format!("flowdeck {shown}")
    } else {
        format!("flowdeck '{}'", shown.replace('\'', "'\\''"))
    }
}

/// What the studio says first in approval mode: who answers an agent's run of content no
/// person approved, here or (`cannot_approve`) not here.
fn approval_message(approval_mode: bool, cannot_approve: Option<&str>) -> Option<String> {
    match (approval_mode, cannot_approve) {
        (false, _) => None,
        (true, None) => Some(
            "approval mode: an agent's run of a manifest you have not approved waits for your yes"
                .into(),
        ),
        (true, Some(why)) => Some(format!(
            "approval mode: this studio cannot answer agents' requests ({why})"
        )),
    }
}

/// The theme asked for, without colours under `NO_COLOR`, and what to say about it.
fn studio_theme(options: &StudioOptions) -> (Theme, Option<String>) {
    let (mut theme, warning) = load_theme(options.theme.as_deref());
    if super::theme::no_color_requested(std::env::var_os("NO_COLOR").as_deref()) {
        theme = theme.without_colour();
    }
    (theme, warning)
}

fn log_name(options: &StudioOptions) -> String {
    match &options.log {
        Ok(path) => path.display().to_string(),
        Err(why) => format!("no log file: {why}"),
    }
}

/// Takes the terminal, runs the loop, gives the terminal back.
async fn show(
    link: &Link,
    inbox: Inbox,
    mut app: App,
    theme: &Theme,
    options: &StudioOptions,
    termination: &mut Termination,
    hands_over: bool,
) -> Result<Ended> {
    // Asked before the terminal is taken: tmux answers on its own socket.
    app.clipboard_hint = super::clipboard::hint();
    let log = log_name(options);
    // The panic hook first: it gives the terminal back (terminal.rs) before a panic's message
    // is printed, so it is installed by whoever takes the terminal, not by the terminal.
    super::containment::install_hook();
    match terminal::enter() {
        Ok((mut tui, guard)) => {
            let shown = Shown {
                tui: &mut tui,
                theme,
                log: &log,
            };
            let outcome = event_loop(link, inbox, shown, app, termination, hands_over).await;
            drop(guard);
            outcome
        }
        Err(e) => Err(anyhow::Error::new(e).context("cannot take over the terminal")),
    }
}

fn load_theme(name: Option<&str>) -> (Theme, Option<String>) {
    super::themes::load(name, super::themes::user_dir_from_env().as_deref())
}
