//! The studio's loop: terminal input (crossterm's `EventStream`), engine events, the results
//! of effects and termination signals, merged in one `select!`. It redraws only when
//! something shown changed, at most once per frame (so a flooding pane costs at most 60
//! frames a second and keys are still read between them), and sleeps otherwise.

use super::containment::{Faults, Recovery, contain};
use super::draw;
use super::effect::Effect;
use super::state::{App, Point, Selection};
use super::terminal::{self, Tui};
use super::theme::Theme;
use super::update::{Event, update};
use crate::engine::approval::Approver;
use crate::engine::{Actor, Change, Engine, EngineConfig, EngineEvent, RunRequest, WorkflowSource};
use crate::signals::Termination;
use crate::workflow::action::{
    ContentMode, GetScreenContentParams, OpenTerminalParams, SearchOrder, SearchOutputParams,
    SendInputParams,
};
use anyhow::{Context, Result};
use crossterm::event::{Event as TermEvent, EventStream};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// At most this many frames a second, however fast panes print.
const FRAME: Duration = Duration::from_millis(16);

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

/// Opens the studio on the folder and runs it until the person quits or a termination
/// signal arrives; the terminal is given back and the engine shut down either way.
pub fn run(options: StudioOptions) -> Result<ExitCode> {
    let runtime = crate::cli::runtime()?;
    let outcome = runtime.block_on(async {
        // Before the terminal is taken: a kill request from here on still restores it.
        let mut termination = Termination::register().context("cannot handle signals")?;
        // A folder that is missing or unreadable opens the studio all the same: the list says
        // what is wrong and follows the folder once it is fixed; shells work meanwhile.
        let engine = Engine::open_lenient(&options.folder, options.engine.clone())
            .context("cannot open the workflows folder")?;
        let (mut theme, theme_warning) = load_theme(options.theme.as_deref());
        if super::theme::no_color_requested(std::env::var_os("NO_COLOR").as_deref()) {
            theme = theme.without_colour();
        }
        let mut app = App::new(options.folder.display().to_string());
        app.message = theme_warning.or_else(|| {
            engine.approval_mode().then(|| {
                "approval mode: an agent's run of a manifest you have not approved waits for your yes".into()
            })
        });
        // Agents reach this studio's engine through the folder's socket (`flowdeck mcp`
        // relays to it). A folder another process hosts is not opened twice.
        let host = match crate::mcp::host::start(
            engine.clone(),
            &options.folder,
            crate::mcp::McpOptions::default(),
        ) {
            Ok(host) => Some(host),
            Err(e @ crate::mcp::socket::SocketError::Hosted { .. }) => {
                engine.shutdown().await;
                return Err(anyhow::Error::new(e));
            }
            Err(e) => {
                app.message = Some(format!("agents cannot reach this studio: {e}"));
                None
            }
        };
        // A person is here to answer agents' approval requests (approval mode) for as long as
        // the studio is open.
        let approver = engine.attach_approver();
        // Asked before the terminal is taken: tmux answers on its own socket.
        app.clipboard_hint = super::clipboard::hint();
        let log = match &options.log {
            Ok(path) => path.display().to_string(),
            Err(why) => format!("no log file: {why}"),
        };
        let outcome = match terminal::enter() {
            Ok((mut tui, guard)) => {
                let shown = Shown { tui: &mut tui, theme: &theme, log: &log };
                let outcome = event_loop(&engine, &approver, shown, app, &mut termination).await;
                drop(guard);
                outcome
            }
            Err(e) => Err(anyhow::Error::new(e).context("cannot take over the terminal")),
        };
        // The terminal is the person's again before shutdown waits for runs to end; nobody
        // is left to approve what still waits (a studio that gave up its screen included).
        drop(approver);
        let outcome = match outcome {
            Ok(Ended::Quit) => Ok(ExitCode::SUCCESS),
            Ok(Ended::GaveUp(why)) => {
                // The terminal is the person's again (cooked): plain lines.
                eprintln!(
                    "flowdeck: the studio stopped after repeated internal errors (a bug: {why}); details in {log}"
                );
                serve_after_giving_up(&engine, &mut termination).await;
                Ok(ExitCode::from(2))
            }
            Err(e) => Err(e),
        };
        if let Some(host) = host {
            host.stop().await;
        }
        engine.shutdown().await;
        outcome
    });
    runtime.shutdown_timeout(Duration::from_millis(200));
    outcome
}

fn load_theme(name: Option<&str>) -> (Theme, Option<String>) {
    super::themes::load(name, super::themes::user_dir_from_env().as_deref())
}

async fn next_input(stream: &mut EventStream) -> Option<std::io::Result<TermEvent>> {
    std::future::poll_fn(|cx| futures_core::Stream::poll_next(Pin::new(&mut *stream), cx)).await
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

async fn event_loop(
    engine: &Arc<Engine>,
    approver: &Approver,
    shown: Shown<'_>,
    mut app: App,
    termination: &mut Termination,
) -> Result<Ended> {
    let Shown { tui, theme, log } = shown;
    // Subscribed before the snapshot: no event can fall between them.
    let mut events = engine.subscribe();
    let size = tui.size()?;
    app.size = (size.width, size.height);
    let mut pending = VecDeque::from([Event::Snapshot(Box::new(engine.snapshot()))]);
    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<Event>();
    let mut input = EventStream::new();
    let clock = std::time::Instant::now();
    let mut dirty = true;
    let mut last_frame: Option<Instant> = None;
    let mut faults = Faults::default();
    loop {
        while let Some(event) = pending.pop_front() {
            dirty |= match &event {
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
                    if let Err(why) = recover(engine, &mut app, &mut faults, why, log, &mut pending)
                    {
                        return Ok(Ended::GaveUp(why));
                    }
                    continue;
                }
            };
            for effect in effects {
                let done = contain(|| {
                    execute(
                        engine,
                        approver,
                        effect,
                        &done_tx,
                        &mut pending,
                        tmux,
                        &mut external,
                    );
                });
                if let Err(why) = done
                    && let Err(why) = recover(engine, &mut app, &mut faults, why, log, &mut pending)
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
        let next_frame = last_frame.map(|at| at + FRAME);
        if dirty && next_frame.is_none_or(|at| Instant::now() >= at) {
            let drawn = contain(|| {
                #[cfg(debug_assertions)]
                super::containment::inject::on_draw();
                tui.draw(|frame| draw::draw(frame, &app, theme, engine.as_ref()))
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
                    if let Err(why) = recover(engine, &mut app, &mut faults, why, log, &mut pending)
                    {
                        return Ok(Ended::GaveUp(why));
                    }
                    continue;
                }
            }
        }
        let frame_due = if dirty { next_frame } else { None };
        tokio::select! {
            input = next_input(&mut input) => match input {
                Some(Ok(TermEvent::Key(key))) => pending.push_back(Event::Key(key)),
                Some(Ok(TermEvent::Paste(text))) => pending.push_back(Event::Paste(text)),
                Some(Ok(TermEvent::Mouse(event))) => {
                    let at_ms = u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX);
                    let reporting = pane_reporting(engine, &app);
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
            event = events.recv() => match event {
                Ok(event) => pending.push_back(Event::Engine(Box::new(event))),
                // Behind the stream: start again from a fresh snapshot, as the contract says.
                Err(RecvError::Lagged(_)) => {
                    pending.push_back(Event::Snapshot(Box::new(engine.snapshot())));
                }
                Err(RecvError::Closed) => return Ok(Ended::Quit),
            },
            Some(done) = done_rx.recv() => pending.push_back(done),
            _ = termination.recv() => return Ok(Ended::Quit),
            _ = tokio::time::sleep_until(frame_due.unwrap_or_else(Instant::now)), if frame_due.is_some() => {}
        }
    }
}

/// After a caught panic: the studio says so and follows the engine again from a fresh
/// snapshot; when the same trouble repeats, its view starts over; after that, `Err` with the
/// reason: the studio gives up its screen.
fn recover(
    engine: &Engine,
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
    pending.push_back(Event::Snapshot(Box::new(engine.snapshot())));
    Ok(())
}

/// The studio gave up its screen, but agents relayed to this process still have terminals and
/// runs here: they are served until none has lived for [`LAST_ANSWERS`], or until a
/// termination signal (Ctrl-C).
async fn serve_after_giving_up(engine: &Engine, termination: &mut Termination) {
    let mut events = engine.subscribe();
    let mut told = false;
    loop {
        let snapshot = engine.snapshot();
        let sessions = snapshot.sessions.iter().filter(|s| s.running).count();
        let runs = snapshot.runs.len();
        let idle = sessions == 0 && runs == 0;
        if !idle && !told {
            eprintln!(
                "flowdeck: {sessions} terminal(s) and {runs} run(s) live on for the agents using them, until they end; Ctrl-C ends them now."
            );
            told = true;
        }
        // The call that ended the last session is still being answered: a grace before the
        // process ends, and anything new started meanwhile is served in turn.
        tokio::select! {
            event = events.recv() => if let Err(RecvError::Closed) = event {
                return;
            },
            () = tokio::time::sleep(LAST_ANSWERS), if idle => return,
            _ = termination.recv() => return,
        }
    }
}

/// How long a studio that gave up its screen stays after the last terminal or run ended.
const LAST_ANSWERS: Duration = Duration::from_secs(2);

/// In focus mode, what the focused pane's program asked the terminal to report of the mouse.
fn pane_reporting(engine: &Engine, app: &App) -> Option<super::mouse_report::Reporting> {
    if app.mode != super::keymap::Mode::Focus {
        return None;
    }
    let pane = app.focused_pane()?;
    engine
        .with_session_screen(&pane.session_id, |screen| super::mouse_report::Reporting {
            mode: screen.mouse_protocol_mode(),
            encoding: screen.mouse_protocol_encoding(),
        })
        .ok()
}

/// Carries out one effect. Quick reads answer at once (into `now`); what may wait (starting
/// a run, opening a shell, cancelling) runs as a task that reports back through `done`.
fn execute(
    engine: &Arc<Engine>,
    approver: &Approver,
    effect: Effect,
    done: &mpsc::UnboundedSender<Event>,
    now: &mut VecDeque<Event>,
    tmux: bool,
    external: &mut Option<String>,
) {
    let person = Actor::Person;
    let effect = match read(engine, effect) {
        Ok(event) => return now.push_back(event),
        Err(effect) => effect,
    };
    match effect {
        // Reads, answered above.
        Effect::ReloadList
        | Effect::Resnapshot
        | Effect::LoadPlan(_)
        | Effect::LoadInputs(_)
        | Effect::ReadHistory { .. }
        | Effect::Search { .. }
        | Effect::LoadProblems(_)
        | Effect::LoadRuns(_)
        | Effect::LocateCursor(_)
        | Effect::LoadDocument(_)
        | Effect::LoadDisk(_)
        | Effect::ListRecovery
        | Effect::LoadAudit
        | Effect::LoadApprovals => {}
        // Quick (a small file written when approving), and answered before the next key.
        Effect::DecideApproval { run_id, approve } => {
            let error = approver
                .decide(&run_id, approve)
                .err()
                .map(|e| format!("cannot answer the approval request: {e}"));
            now.push_back(Event::Approvals {
                pending: engine.approvals_pending(),
                error,
            });
        }
        Effect::CheckLater(edits) => {
            let done = done.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(super::editor::CHECK_AFTER_MS)).await;
                let _ = done.send(Event::CheckDue(edits));
            });
        }
        // Checking and saving read and write files: off the loop, so typing never waits.
        Effect::Check { edits, text } => blocking(engine, done, move |engine| Event::Checked {
            edits,
            draft: Box::new(engine.workflow_draft(&text)),
        }),
        Effect::Recover { file, text } => blocking(engine, done, move |engine| {
            match engine.recovery_save(&file, &text) {
                Ok(()) => Event::Nothing,
                Err(e) => Event::Failed(format!("cannot keep a recovery copy of {file}: {e}")),
            }
        }),
        Effect::DiscardRecovery(file) => blocking(engine, done, move |engine| {
            match engine.recovery_discard(&file) {
                Ok(()) => Event::Nothing,
                Err(e) => Event::Failed(format!("cannot drop the recovery copy of {file}: {e}")),
            }
        }),
        Effect::Save {
            edits,
            file,
            text,
            expected_version,
        } => blocking(engine, done, move |engine| {
            let result = match engine.workflow_save_file(
                &file,
                &text,
                expected_version.as_deref(),
                &Actor::Person,
            ) {
                Ok(saved) => Ok((
                    saved.version.unwrap_or_default(),
                    engine.validate_manifest(&text).errors,
                )),
                Err(crate::engine::EngineError::Store(crate::store::StoreError::Conflict {
                    ..
                })) => Err(super::editor::SaveFailure::Conflict),
                Err(e) => Err(super::editor::SaveFailure::Other(e.to_string())),
            };
            Event::Saved { edits, result }
        }),
        Effect::ExternalEditor(path) => *external = Some(path),
        Effect::ExternalEditWorkflow(workflow) => match engine.workflow_file_path(&workflow) {
            Ok(path) => *external = Some(path.display().to_string()),
            Err(e) => now.push_back(Event::Failed(e.to_string())),
        },
        Effect::CreateWorkflow { template, name } => blocking(engine, done, move |engine| {
            let id = crate::engine::editing::TEMPLATES
                .get(template)
                .map_or("", |t| t.id);
            Event::Named {
                purpose: super::state::NameFor::New(template),
                result: engine
                    .workflow_from_template(id, &name, &Actor::Person)
                    .map(|s| s.name)
                    .map_err(|e| e.to_string()),
            }
        }),
        Effect::DuplicateWorkflow { from, name } => {
            blocking(engine, done, move |engine| Event::Named {
                result: engine
                    .workflow_duplicate(&from, &name, &Actor::Person)
                    .map(|s| s.name)
                    .map_err(|e| e.to_string()),
                purpose: super::state::NameFor::Duplicate(from),
            })
        }
        Effect::RenameWorkflow { from, to } => blocking(engine, done, move |engine| Event::Named {
            result: engine
                .workflow_rename(&from, &to, None, &Actor::Person)
                .map(|s| s.name)
                .map_err(|e| e.to_string()),
            purpose: super::state::NameFor::Rename(from),
        }),
        Effect::DeleteWorkflow(name) => blocking(engine, done, move |engine| Event::Named {
            result: engine
                .workflow_delete(&name, None, &Actor::Person)
                .map(|_| name.clone())
                .map_err(|e| e.to_string()),
            purpose: super::state::NameFor::Delete(name.clone()),
        }),
        Effect::CopyScreen(selection) => {
            let text = engine.with_session_screen(&selection.session_id, |screen| {
                screen_text(screen, &selection)
            });
            now.push_back(match text {
                Ok(text) => copied(&text, tmux),
                Err(e) => Event::Failed(e.to_string()),
            });
        }
        Effect::Clipboard(text) => now.push_back(copied(&text, tmux)),
        Effect::HoldInput(session_id) => {
            if let Err(e) = engine.hold_input(&session_id, &person) {
                now.push_back(Event::Failed(e.to_string()));
            }
        }
        Effect::ReleaseInput(session_id) => engine.release_input(&session_id, &person),
        Effect::MouseCapture(on) => {
            if let Err(e) = terminal::capture_mouse(on) {
                now.push_back(Event::Failed(format!("cannot change the mouse: {e}")));
            }
        }
        // A bell or title the terminal cannot take is nothing to tell the person about.
        Effect::Alert(text) => {
            let _ = terminal::alert(&text);
        }
        Effect::ClearAlert => {
            let _ = terminal::clear_alert();
        }
        // A journal read of a run in progress may wait for the run's status: off the loop.
        Effect::LoadRunEvents(run_id) => {
            let (engine, done) = (engine.clone(), done.clone());
            tokio::spawn(async move {
                let _ = done.send(read_run_events(&engine, run_id).await);
            });
        }
        Effect::StartRun { workflow, inputs } => {
            let (engine, done) = (engine.clone(), done.clone());
            tokio::spawn(async move {
                let started = engine
                    .start_run(RunRequest {
                        workflow: WorkflowSource::Name(workflow),
                        session_id: None,
                        inputs,
                        // Its screen stays to be read after the end; x closes it.
                        keep_session: true,
                        actor: Actor::Person,
                        require_approval: false,
                    })
                    .await;
                let _ = done.send(Event::RunStarted(
                    started.map(|s| s.run_id).map_err(|e| e.to_string()),
                ));
            });
        }
        Effect::CancelRun(run_id) => {
            let (engine, done) = (engine.clone(), done.clone());
            tokio::spawn(async move {
                if let Err(e) = engine.cancel_run(&run_id, &Actor::Person).await {
                    let _ = done.send(Event::Failed(e.to_string()));
                }
            });
        }
        Effect::AnswerPrompt { run_id, answer } => {
            if let Err(e) = engine.answer_prompt(&run_id, answer, &person) {
                now.push_back(Event::Failed(e.to_string()));
            }
        }
        Effect::OpenShell { cols, rows } => {
            let (engine, done) = (engine.clone(), done.clone());
            tokio::spawn(async move {
                let params = OpenTerminalParams {
                    cols: Some(cols),
                    rows: Some(rows),
                    ..OpenTerminalParams::default()
                };
                let opened = engine.open_terminal(&params, &Actor::Person).await;
                let _ = done.send(Event::ShellOpened(opened.map_err(|e| e.to_string())));
            });
        }
        Effect::CloseSession(session_id) => {
            let (engine, done) = (engine.clone(), done.clone());
            tokio::spawn(async move {
                if let Err(e) = engine.exit_terminal(&session_id, &Actor::Person).await {
                    let _ = done.send(Event::Failed(e.to_string()));
                }
            });
        }
        Effect::SendKeys { session_id, keys } => {
            let params = SendInputParams {
                keys: Some(keys),
                ..SendInputParams::default()
            };
            if let Err(e) = engine.send_input(&session_id, &params, &person) {
                now.push_back(Event::Failed(e.to_string()));
            }
        }
        Effect::Paste { session_id, text } => {
            let bracketed = engine
                .with_session_screen(&session_id, |s| s.bracketed_paste())
                .unwrap_or(false);
            let text = if bracketed {
                format!("\u{1b}[200~{text}\u{1b}[201~")
            } else {
                text
            };
            let params = SendInputParams {
                input_text: Some(text),
                ..SendInputParams::default()
            };
            if let Err(e) = engine.send_input(&session_id, &params, &person) {
                now.push_back(Event::Failed(e.to_string()));
            }
        }
        Effect::Resize {
            session_id,
            cols,
            rows,
        } => {
            if let Err(e) = engine.resize_terminal(&session_id, cols, rows, &person) {
                now.push_back(Event::Failed(e.to_string()));
            }
        }
    }
}

/// Runs `work` on the blocking pool and reports its event back to the loop.
fn blocking(
    engine: &Arc<Engine>,
    done: &mpsc::UnboundedSender<Event>,
    work: impl FnOnce(&Engine) -> Event + Send + 'static,
) {
    let (engine, done) = (engine.clone(), done.clone());
    tokio::task::spawn_blocking(move || {
        let _ = done.send(work(&engine));
    });
}

/// Answers an effect that only reads from the engine, at once, as the event it asks for;
/// any other effect is given back. Tests drive the studio's reads through this too.
pub fn read(engine: &Engine, effect: Effect) -> Result<Event, Effect> {
    Ok(match effect {
        Effect::ReloadList => Event::List(engine.workflow_list().workflows),
        Effect::Resnapshot => Event::Snapshot(Box::new(engine.snapshot())),
        Effect::LoadPlan(workflow) => {
            let plan = engine
                .workflow_step_plan(&workflow)
                .map_err(|e| e.to_string());
            Event::Plan { workflow, plan }
        }
        Effect::LoadInputs(workflow) => {
            let inputs = engine
                .workflow_preview_inputs(&workflow)
                .map(|p| p.inputs)
                .map_err(|e| e.to_string());
            Event::Inputs { workflow, inputs }
        }
        Effect::ReadHistory { session_id, lines } => {
            let lines = read_history(engine, &session_id, lines, &Actor::Person);
            Event::History { session_id, lines }
        }
        Effect::Search {
            session_id,
            pattern,
            cursor,
        } => {
            let more = cursor.is_some();
            let params = SearchOutputParams {
                session_id: None,
                pattern: pattern.clone(),
                ignore_case: false,
                context: None,
                order: Some(SearchOrder::NewestFirst),
                limit: Some(super::history::SEARCH_PAGE),
                cursor,
            };
            let found = engine
                .search_output(&session_id, &params)
                .map(|r| r.found)
                .map_err(|e| e.to_string());
            Event::Found {
                session_id,
                pattern,
                more,
                found,
            }
        }
        Effect::LoadProblems(workflow) => {
            let problems = engine
                .workflow_get(&workflow)
                .map(|d| (d.file, d.violations))
                .map_err(|e| e.to_string());
            Event::Problems { workflow, problems }
        }
        Effect::LoadRuns(workflow) => {
            let runs = engine.run_list(Some(&workflow), RUNS_SHOWN).runs;
            Event::Runs { workflow, runs }
        }
        Effect::LoadDocument(workflow) => {
            let document = engine
                .workflow_get(&workflow)
                .and_then(|d| {
                    Ok(super::editor::Document {
                        path: engine.workflow_file_path(&workflow)?.display().to_string(),
                        file: d.file,
                        version: d.version,
                        text: d.content,
                    })
                })
                .map_err(|e| e.to_string());
            Event::Document { workflow, document }
        }
        Effect::LoadDisk(workflow) => {
            let now = engine
                .workflow_get(&workflow)
                .ok()
                .map(|d| (d.version, d.content));
            Event::Disk { workflow, now }
        }
        Effect::ListRecovery => Event::Recovered(engine.recovery_list()),
        Effect::LoadAudit => Event::Audit(engine.audit_tail(AUDIT_SHOWN)),
        Effect::LoadApprovals => Event::Approvals {
            pending: engine.approvals_pending(),
            error: None,
        },
        Effect::LocateCursor(session_id) => {
            match engine.with_session_screen(&session_id, |s| {
                let (row, col) = s.cursor_position();
                (s.alternate_screen(), row, col)
            }) {
                Ok((alternate, row, col)) => Event::CursorLocated {
                    session_id,
                    alternate,
                    cursor: Point {
                        line: u64::from(row),
                        col,
                    },
                },
                Err(e) => Event::Failed(e.to_string()),
            }
        }
        other => return Err(other),
    })
}

/// The text of a selection on a session's screen (rows the terminal wrapped are joined).
pub fn screen_text(screen: &vt100::Screen, selection: &Selection) -> String {
    let (_, cols) = screen.size();
    let mut line = |n: u64| super::draw::pane::screen_row(screen, n, cols.get());
    let bounds = super::selection::bounds(selection, &mut line);
    let wrapped = |n: u64| u16::try_from(n).is_ok_and(|r| screen.row_wrapped(r));
    super::selection::text(bounds, &mut line, &wrapped)
}

/// Puts text on the clipboard through the terminal; what to tell the person.
fn copied(text: &str, tmux: bool) -> Event {
    match super::clipboard::copy(text, &mut std::io::stdout(), tmux) {
        Ok(chars) => Event::Copied(chars),
        Err(e) => Event::Failed(e),
    }
}

/// How many of the latest tool calls the audit view reads.
pub const AUDIT_SHOWN: usize = 500;

/// How many past runs the run view lists.
pub const RUNS_SHOWN: usize = 50;

/// A run's journal from its first line (`Effect::LoadRunEvents`), without waiting for more:
/// lines written later arrive as engine events. Tests drive the studio's journal reads
/// through this too.
pub async fn read_run_events(engine: &Engine, run_id: String) -> Event {
    let mut events = Vec::new();
    let result = loop {
        match engine
            .run_events(
                &run_id,
                events
                    .last()
                    .map_or(0, |e: &crate::engine::journal::JournalEvent| e.seq),
                1000,
                Duration::ZERO,
            )
            .await
        {
            Ok(page) => {
                let full = page.events.len() >= 1000;
                events.extend(page.events);
                if !full {
                    break Ok(events);
                }
            }
            Err(e) => break Err(e.to_string()),
        }
    };
    Event::RunEvents {
        run_id,
        events: result,
    }
}

/// The last `lines` lines of a session's history and the number of the last one (the
/// session's line count, read before and after so that output arriving between does not
/// shift the numbers; a few tries, then the count after).
fn read_history(
    engine: &Engine,
    session_id: &str,
    lines: usize,
    actor: &Actor,
) -> Result<(Vec<String>, u64), String> {
    let count = || {
        engine
            .list_terminal_sessions()
            .sessions
            .into_iter()
            .find(|s| s.session_id == session_id)
            .map_or(0, |s| s.history_lines)
    };
    let params = GetScreenContentParams {
        session_id: None,
        content_mode: Some(ContentMode::Tail),
        lines: Some(u32::try_from(lines).unwrap_or(u32::MAX)),
    };
    let mut tries = 0;
    loop {
        let before = count();
        let content = engine
            .get_screen_content(session_id, &params, actor)
            .map_err(|e| e.to_string())?;
        let after = count();
        tries += 1;
        if before == after || tries == 3 {
            let text: Vec<String> = if content.content.is_empty() {
                Vec::new()
            } else {
                content.content.split('\n').map(str::to_string).collect()
            };
            return Ok((text, after));
        }
    }
}
