//! The studio's loop: terminal input (crossterm's `EventStream`), engine events, the results
//! of effects and termination signals, merged in one `select!`. It redraws only when
//! something shown changed, at most once per frame (so a flooding pane costs at most 60
//! frames a second and keys are still read between them), and sleeps otherwise.

use super::containment::{Faults, Recovery, contain};
use super::draw;
use super::effects::{Outlet, execute};
use super::link::{Ask, Inbox, Link};
use super::state::App;
use super::terminal::{self, Tui};
use super::theme::Theme;
use super::update::{Event, update};
use crate::engine::{Change, Engine, EngineConfig, EngineEvent};
use crate::server::client::Inbound;
use crate::signals::Termination;
use anyhow::{Context, Result};
use crossterm::event::{Event as TermEvent, EventStream};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::server::protocol::{ECHO_WINDOW, FRAME};

/// How the studio was asked to start.
#[derive(Debug, Clone)]
pub struct StudioOptions {
    pub folder: PathBuf,
    /// A theme name (bundled, or in the person's theme folder: themes.rs) or a theme file's path.
    pub theme: Option<String>,
    pub engine: EngineConfig,
    /// Where the studio's log goes (log.rs), or why it cannot be written.
    pub log: Result<PathBuf, String>,
}

/// How the studio's loop ended.
enum Ended {
    /// The person quit, a termination signal came, or the terminal went away.
    Quit,
    /// The studio's own code kept failing: its screen is given up, with this reason.
    GaveUp(String),
}

/// Opens the studio on the folder and runs it until the person quits or detaches, or a
/// termination signal arrives; the terminal is given back either way. The studio attaches to
/// the folder's server, starting one when none answers, so that what runs goes on when it
/// ends. Only when no server can be started for the folder (it does not exist yet, or the
/// socket's folder is unusable) does the studio open the engine itself, saying why agents
/// cannot reach it; then everything ends with it.
pub async fn run(options: StudioOptions) -> Result<ExitCode> {
    {
        // Before the terminal is taken: a kill request from here on still restores it.
        let mut termination = Termination::register().context("cannot handle signals")?;
        let server = crate::server::spawn::ServerOptions {
            approve_agent_runs: options.engine.approve_agent_runs,
        };
        let mut again = crate::server::hello::ReachAgain::default();
        loop {
            let folder = options.folder.clone();
            let reached =
                tokio::task::spawn_blocking(move || crate::server::spawn::reach(&folder, server))
                    .await
                    .context("starting the folder's server")?;
            let outcome = match reached {
                Ok(stream) => attached(stream, &options, &mut termination).await,
                Err(
                    why @ (crate::server::spawn::StartError::Folder { .. }
                    | crate::server::spawn::StartError::Socket(_)),
                ) => return hosted(&options, &mut termination, why.to_string()).await,
                Err(why) => return Err(anyhow::Error::new(why)),
            };
            // A server that was ending as the studio connected served nothing: the next one.
            match outcome {
                Err(e) if again.after(&e) => {}
                outcome => return outcome,
            }
        }
    }
}

/// The studio attached to the folder's server.
async fn attached(
    stream: std::os::unix::net::UnixStream,
    options: &StudioOptions,
    termination: &mut Termination,
) -> Result<ExitCode> {
    let (remote, inbound) = crate::server::client::Remote::attach(
        stream,
        &options.folder,
        crate::server::hello::Client::Studio {
            approve_agent_runs: options.engine.approve_agent_runs,
        },
    )
    .await
    .context("cannot attach to the folder's server")?;
    tracing::info!("attached to {}", remote.server);
    let approval = approval_message(remote.approval_mode, remote.cannot_approve.as_deref());
    let me = remote.person.clone();
    let link = Link::Remote(remote);
    let Some(inbox) = link.inbox(Some(inbound)) else {
        anyhow::bail!("no events from the folder's server");
    };
    let (theme, message) = studio_theme(options);
    let mut app = App::new(options.folder.display().to_string());
    app.message = message.or(approval);
    app.attached = true;
    app.me = me;
    match show(&link, inbox, app, &theme, options, termination).await? {
        Ended::Quit => Ok(ExitCode::SUCCESS),
        Ended::GaveUp(why) => {
            eprintln!(
                "flowdeck: the studio stopped after repeated internal errors (a bug: {why}); the folder's server goes on"
            );
            Ok(ExitCode::from(2))
        }
    }
}

/// The studio with the engine in its own process, when no server can be started for the
/// folder (`why`): agents cannot reach it, and everything ends with the studio.
async fn hosted(
    options: &StudioOptions,
    termination: &mut Termination,
    why: String,
) -> Result<ExitCode> {
    tracing::warn!("no server for the folder ({why}): the studio hosts it");
    // A folder that is missing or unreadable opens the studio all the same: the list says
    // what is wrong and follows the folder once it is fixed; shells work meanwhile.
    let engine = Engine::open_lenient(&options.folder, options.engine.clone())
        .context("cannot open the workflows folder")?;
    let (theme, message) = studio_theme(options);
    let mut app = App::new(options.folder.display().to_string());
    app.message = message.or_else(|| {
        Some(format!(
            "agents cannot reach this studio, which hosts the folder itself: {why}"
        ))
    });
    // The person at this studio answers agents' approval requests, if any agent could ask.
    let link = Link::Local {
        engine: engine.clone(),
        approver: Arc::new(engine.attach_approver()),
    };
    let outcome = match link.inbox(None) {
        Some(inbox) => show(&link, inbox, app, &theme, options, termination).await,
        None => Err(anyhow::anyhow!("no events from the engine")),
    };
    drop(link);
    let outcome = match outcome {
        Ok(Ended::Quit) => Ok(ExitCode::SUCCESS),
        Ok(Ended::GaveUp(why)) => {
            // The terminal is the person's again (cooked): plain lines.
            eprintln!(
                "flowdeck: the studio stopped after repeated internal errors (a bug: {why}); details in {}",
                log_name(options)
            );
            Ok(ExitCode::from(2))
        }
        Err(e) => Err(e),
    };
    engine.shutdown().await;
    outcome
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
) -> Result<Ended> {
    // Asked before the terminal is taken: tmux answers on its own socket.
    app.clipboard_hint = super::clipboard::hint();
    let log = log_name(options);
    match terminal::enter() {
        Ok((mut tui, guard)) => {
            let shown = Shown {
                tui: &mut tui,
                theme,
                log: &log,
            };
            let outcome = event_loop(link, inbox, shown, app, termination).await;
            drop(guard);
            outcome
        }
        Err(e) => Err(anyhow::Error::new(e).context("cannot take over the terminal")),
    }
}

fn load_theme(name: Option<&str>) -> (Theme, Option<String>) {
    super::themes::load(name, super::themes::user_dir_from_env().as_deref())
}

async fn next_input(stream: &mut EventStream) -> Option<std::io::Result<TermEvent>> {
    std::future::poll_fn(|cx| futures_core::Stream::poll_next(Pin::new(&mut *stream), cx)).await
}

/// The sessions whose panes are on screen now.
fn shown_sessions(app: &App) -> Vec<String> {
    super::layout::app_slots(app)
        .iter()
        .filter_map(|s| app.panes.get(s.index).map(|p| p.session_id.clone()))
        .collect()
}

/// Whether an engine event changes what is on screen: output of a pane nobody sees does not.
fn is_shown(app: &App, event: &EngineEvent) -> bool {
    match &event.change {
        Change::SessionActivity { session_id, .. } => {
            super::layout::app_slots(app).iter().any(|s| {
                app.panes
                    .get(s.index)
                    .is_some_and(|p| &p.session_id == session_id)
            })
        }
        _ => true,
    }
}

/// Where the studio draws, and with what.
struct Shown<'a> {
    tui: &'a mut Tui,
    theme: &'a Theme,
    /// The log's path (or why there is none), for the message after a caught panic.
    log: &'a str,
}

#[expect(clippy::too_many_lines, reason = "issue 23 splits it by its jobs")]
async fn event_loop(
    link: &Link,
    mut inbox: Inbox,
    shown: Shown<'_>,
    mut app: App,
    termination: &mut Termination,
) -> Result<Ended> {
    let Shown { tui, theme, log } = shown;
    let size = tui.size()?;
    app.size = (size.width, size.height);
    app.inside = crate::engine::ancestry(std::process::id() as i32)
        .filter_map(|p| u32::try_from(p.pid).ok())
        .collect();
    // The inbox subscribed before this snapshot (a server sends its own first).
    let mut pending: VecDeque<Event> = super::link::first_snapshot(link)
        .map(Event::Snapshot)
        .into_iter()
        .collect();
    let mut watched: Vec<String> = Vec::new();
    let remote = link.local().is_none();
    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<Event>();
    let mut input = EventStream::new();
    let clock = std::time::Instant::now();
    let mut dirty = true;
    let mut last_frame: Option<Instant> = None;
    let mut faults = Faults::default();
    // The pane typed into in focus mode (until when its echo is awaited), and whether a change
    // of it has come: the echo is drawn at once, not at the next frame (a key typed right
    // after a frame would wait up to 16 ms).
    let mut echo_of: Option<(String, Instant)> = None;
    let mut echo_due = false;
    let mut own_log = crate::logfile::trouble();
    if let Some(why) = own_log.borrow_and_update().clone() {
        pending.push_back(Event::LogTrouble {
            server: false,
            trouble: Some(why),
        });
    }
    loop {
        while let Some(event) = pending.pop_front() {
            match &event {
                Event::Key(_) | Event::Paste(_) if app.mode == super::keymap::Mode::Focus => {
                    echo_of = app
                        .focused_pane()
                        .map(|p| (p.session_id.clone(), Instant::now() + ECHO_WINDOW));
                }
                Event::Engine(e) if !remote => {
                    if let Change::SessionActivity { session_id, .. } = &e.change {
                        echo_due |= awaits_echo(echo_of.as_ref(), session_id);
                    }
                }
                _ => {}
            }
            dirty |= match &event {
                // A server sends the screen itself after its activity: drawing on the event
                // would draw the old rows and hold the new ones a frame.
                Event::Engine(e) if remote => {
                    !matches!(e.change, Change::SessionActivity { .. }) && is_shown(&app, e)
                }
                Event::Engine(e) => is_shown(&app, e),
                _ => true,
            };
            let tmux = app.clipboard_hint.is_some();
            let mut external = None;
            // A bug in handling one event costs that event, never the engine (containment.rs).
            let effects = match contain(|| {
                #[cfg(debug_assertions)]
                if let Event::Key(key) = &event {
                    super::containment::inject::on_key(key);
                }
                update(&mut app, event)
            }) {
                Ok(effects) => effects,
                Err(why) => {
                    if let Err(why) = recover(
                        link,
                        &done_tx,
                        &mut app,
                        &mut faults,
                        why,
                        log,
                        &mut pending,
                    ) {
                        return Ok(Ended::GaveUp(why));
                    }
                    continue;
                }
            };
            for effect in effects {
                let done = contain(|| {
                    let mut out = Outlet {
                        link,
                        done: &done_tx,
                        now: &mut pending,
                        tmux,
                        external: &mut external,
                    };
                    execute(&mut out, effect);
                });
                if let Err(why) = done
                    && let Err(why) = recover(
                        link,
                        &done_tx,
                        &mut app,
                        &mut faults,
                        why,
                        log,
                        &mut pending,
                    )
                {
                    return Ok(Ended::GaveUp(why));
                }
            }
            if let Some(path) = external {
                // The person's editor gets the terminal, as lazygit and gitui hand it over:
                // nothing of the studio reads the keyboard or draws until it returns.
                drop(input);
                let result = terminal::run_external_editor(tui, &path, app.mouse);
                input = EventStream::new();
                dirty = true;
                pending.push_back(Event::ExternalDone(result));
            }
        }
        if app.quit {
            return Ok(Ended::Quit);
        }
        // A server sends the screens of the panes shown, and only theirs.
        let shown_now = shown_sessions(&app);
        if shown_now != watched {
            link.watch(shown_now.clone());
            watched = shown_now;
        }
        let next_frame = last_frame.map(|at| at + FRAME);
        if dirty && (echo_due || next_frame.is_none_or(|at| Instant::now() >= at)) {
            echo_due = false;
            let drawn = contain(|| {
                #[cfg(debug_assertions)]
                super::containment::inject::on_draw();
                tui.draw(|frame| draw::draw(frame, &app, theme, link.screens()))
                    .map(|_| ())
            });
            last_frame = Some(Instant::now());
            match drawn {
                Ok(written) => {
                    written?;
                    dirty = false;
                    faults.drawn();
                }
                Err(why) => {
                    // Half a frame was drawn into the buffer: the next starts from blank.
                    tui.current_buffer_mut().reset();
                    if let Err(why) = recover(
                        link,
                        &done_tx,
                        &mut app,
                        &mut faults,
                        why,
                        log,
                        &mut pending,
                    ) {
                        return Ok(Ended::GaveUp(why));
                    }
                    continue;
                }
            }
        }
        let frame_due = if dirty && !echo_due { next_frame } else { None };
        tokio::select! {
            input = next_input(&mut input) => match input {
                Some(Ok(TermEvent::Key(key))) => pending.push_back(Event::Key(key)),
                Some(Ok(TermEvent::Paste(text))) => pending.push_back(Event::Paste(text)),
                Some(Ok(TermEvent::Mouse(event))) => {
                    let at_ms = u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX);
                    let reporting = pane_reporting(link, &app);
                    pending.push_back(Event::Mouse { event, at_ms, reporting });
                }
                Some(Ok(TermEvent::FocusGained)) => pending.push_back(Event::TermFocus(true)),
                Some(Ok(TermEvent::FocusLost)) => pending.push_back(Event::TermFocus(false)),
                Some(Ok(TermEvent::Resize(cols, rows))) => {
                    pending.push_back(Event::Resize(cols, rows));
                }
                Some(Err(e)) => return Err(anyhow::Error::new(e).context("reading the terminal")),
                // The terminal is gone: nobody is left to show anything to.
                None => return Ok(Ended::Quit),
            },
            told = inbox.recv() => match told {
                Inbound::Event(event) => pending.push_back(Event::Engine(event)),
                Inbound::Snapshot(snapshot) => pending.push_back(Event::Snapshot(snapshot)),
                Inbound::Screen(session_id) => {
                    echo_due |= awaits_echo(echo_of.as_ref(), &session_id);
                    dirty |= watched.contains(&session_id);
                }
                Inbound::Studios(n) => pending.push_back(Event::Studios(n)),
                Inbound::ServerLog(trouble) => {
                    pending.push_back(Event::LogTrouble { server: true, trouble });
                }
                Inbound::Gone(why) => anyhow::bail!("{why}: the studio cannot go on without it"),
            },
            Some(done) = done_rx.recv() => pending.push_back(done),
            // The sender is a static: it never closes.
            Ok(()) = own_log.changed() => {
                let trouble = own_log.borrow_and_update().clone();
                pending.push_back(Event::LogTrouble { server: false, trouble });
            }
            _ = termination.recv() => return Ok(Ended::Quit),
            _ = tokio::time::sleep_until(frame_due.unwrap_or_else(Instant::now)), if frame_due.is_some() => {}
        }
    }
}

/// Whether a change of `session_id` may be the echo of a key typed into it a moment ago.
fn awaits_echo(echo_of: Option<&(String, Instant)>, session_id: &str) -> bool {
    echo_of.is_some_and(|(typed_into, until)| typed_into == session_id && Instant::now() < *until)
}

/// After a caught panic: the studio says so and follows the engine again from a fresh
/// snapshot; when the same trouble repeats, its view starts over; after that, `Err` with the
/// reason: the studio gives up its screen.
fn recover(
    link: &Link,
    done: &mpsc::UnboundedSender<Event>,
    app: &mut App,
    faults: &mut Faults,
    why: String,
    log: &str,
    pending: &mut VecDeque<Event>,
) -> Result<(), String> {
    match faults.caught() {
        Recovery::GiveUp => return Err(why),
        Recovery::Reset => {
            let mut fresh = App::new(app.folder.clone());
            fresh.size = app.size;
            fresh.mouse = app.mouse;
            fresh.clipboard_hint = app.clipboard_hint.take();
            *app = fresh;
        }
        Recovery::CarryOn => {}
    }
    app.message = Some(format!(
        "flowdeck hit a bug and carried on ({why}); details in {log}"
    ));
    // The snapshot to follow the engine again from, asked as an update asks it.
    let mut external = None;
    let mut out = Outlet {
        link,
        done,
        now: pending,
        tmux: false,
        external: &mut external,
    };
    execute(&mut out, super::effect::Effect::Resnapshot);
    Ok(())
}

/// In focus mode, what the focused pane's program asked the terminal to report of the mouse.
fn pane_reporting(link: &Link, app: &App) -> Option<super::mouse_report::Reporting> {
    if app.mode != super::keymap::Mode::Focus {
        return None;
    }
    let pane = app.focused_pane()?;
    link.mirror(&pane.session_id)
        .map(|screen| super::mouse_report::Reporting {
            mode: screen.mouse,
            encoding: screen.mouse_encoding,
        })
        .ok()
}
