//! The loop itself. Each turn applies the events waiting (their updates and effects, each
//! contained), tells a server which panes are shown, draws if something shown changed and a
//! frame is due, then sleeps until the terminal, the engine, an effect, the log or a signal
//! has news, or the frame that was held back is due, or a changed question may be answered
//! again (a tick).

use super::Ended;
use crate::engine::{Change, EngineEvent};
use crate::server::client::Inbound;
use crate::server::protocol::{ECHO_WINDOW, FRAME};
use crate::signals::Termination;
use crate::tui::containment::{Faults, Recovery, contain};
use crate::tui::draw;
use crate::tui::effect::Effect;
use crate::tui::effects::{Outlet, execute};
use crate::tui::link::{Ask, Inbox, Link};
use crate::tui::mode::Mode;
use crate::tui::mouse_report::Reporting;
use crate::tui::state::App;
use crate::tui::terminal::{self, Tui};
use crate::tui::theme::Theme;
use crate::tui::update::{Event, update};
use anyhow::Result;
use crossterm::event::{Event as TermEvent, EventStream};
use std::collections::VecDeque;
use std::pin::Pin;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// Where the studio draws, and with what. `hands_over`: the studio hosts the folder because
/// it did not exist, and ends (`Ended::HandOver`) once it can give it to a server
/// (handover.rs).
pub(super) struct Shown<'a> {
    pub tui: &'a mut Tui,
    pub theme: &'a Theme,
    /// The log's path (or why there is none), for the message after a caught panic.
    pub log: &'a str,
}

/// The studio as the loop keeps it from one turn to the next.
struct Studio<'a> {
    link: &'a Link,
    /// The log's path (or why there is none), for the message after a caught panic.
    log: &'a str,
    app: App,
    /// Events to apply before the next frame, in the order they came.
    pending: VecDeque<Event>,
    /// Where effects that finish later send their results.
    done: mpsc::UnboundedSender<Event>,
    /// The sessions a server was last told are shown.
    watched: Vec<String>,
    /// Attached to a server rather than hosting the engine.
    remote: bool,
    /// Something shown changed since the last frame.
    dirty: bool,
    last_frame: Option<Instant>,
    faults: Faults,
    /// The pane typed into in focus mode (until when its echo is awaited), and whether a change
    /// of it has come: the echo is drawn at once, not at the next frame (a key typed right
    /// after a frame would wait up to 16 ms).
    echo_of: Option<(String, Instant)>,
    echo_due: bool,
}

/// Where the loop's news comes from, besides the terminal.
struct Sources<'t> {
    inbox: Inbox,
    done: mpsc::UnboundedReceiver<Event>,
    own_log: watch::Receiver<Option<String>>,
    termination: &'t mut Termination,
    /// When the loop started: mouse events are timed from it.
    clock: std::time::Instant,
}

/// How a turn goes on after its frame.
enum AfterFrame {
    Wait,
    /// Drawing hit a bug and the studio carried on: the turn starts over with what the
    /// recovery asked for.
    Again,
    GaveUp(String),
}

pub(super) async fn event_loop(
    link: &Link,
    inbox: Inbox,
    shown: Shown<'_>,
    app: App,
    termination: &mut Termination,
    hands_over: bool,
) -> Result<Ended> {
    let Shown { tui, theme, log } = shown;
    // The palette switches themes: the one drawn is the state's from here on.
    let mut app = app;
    app.theme = theme.clone();
    let size = tui.size()?;
    let (done_tx, done_rx) = mpsc::unbounded_channel::<Event>();
    let mut studio = Studio::new(link, log, app, (size.width, size.height), done_tx);
    let mut input = EventStream::new();
    let mut sources = Sources {
        inbox,
        done: done_rx,
        own_log: crate::logfile::trouble(),
        termination,
        clock: std::time::Instant::now(),
    };
    if let Some(why) = sources.own_log.borrow_and_update().clone() {
        studio.pending.push_back(Event::LogTrouble {
            server: false,
            trouble: Some(why),
        });
    }
    loop {
        while let Some(event) = studio.pending.pop_front() {
            match studio.apply(event) {
                Ok(None) => {}
                Ok(Some(path)) => {
                    // The person's editor gets the terminal, as lazygit and gitui hand it
                    // over: nothing of the studio reads the keyboard or draws until it returns.
                    drop(input);
                    let result = terminal::run_external_editor(tui, &path, studio.app.mouse);
                    input = EventStream::new();
                    studio.dirty = true;
                    studio.pending.push_back(Event::ExternalDone(result));
                }
                Err(why) => return Ok(Ended::GaveUp(why)),
            }
        }
        if studio.app.quit {
            return Ok(Ended::Quit(Some(Box::new(studio.app))));
        }
        if hands_over && super::handover::ready(&studio.app) {
            return Ok(Ended::HandOver(super::handover::Carried::from(&studio.app)));
        }
        studio.watch_shown();
        match studio.draw_when_due(tui)? {
            AfterFrame::Wait => {}
            AfterFrame::Again => continue,
            AfterFrame::GaveUp(why) => return Ok(Ended::GaveUp(why)),
        }
        if let Some(ended) = studio.wait(&mut input, &mut sources).await? {
            return Ok(ended);
        }
    }
}

impl<'a> Studio<'a> {
    fn new(
        link: &'a Link,
        log: &'a str,
        mut app: App,
        size: (u16, u16),
        done: mpsc::UnboundedSender<Event>,
    ) -> Self {
        app.size = size;
        app.inside = crate::engine::ancestry(std::process::id() as i32)
            .filter_map(|p| u32::try_from(p.pid).ok())
            .collect();
        // The inbox subscribed before this snapshot (a server sends its own first).
        let pending = crate::tui::link::first_snapshot(link)
            .map(Event::Snapshot)
            .into_iter()
            .collect();
        Studio {
            link,
            log,
            app,
            pending,
            done,
            watched: Vec::new(),
            remote: link.local().is_none(),
            dirty: true,
            last_frame: None,
            faults: Faults::default(),
            echo_of: None,
            echo_due: false,
        }
    }

    /// Applies one event: its update, then the effects the update asks for. `Ok` with a file's
    /// path when an effect asks for the person's editor on it; `Err` when the studio gives up.
    fn apply(&mut self, event: Event) -> Result<Option<String>, String> {
        self.note(&event);
        let tmux = self.app.clipboard_hint.is_some();
        let mut external = None;
        // A bug in handling one event costs that event, never the engine (containment.rs).
        let effects = match contain(|| {
            #[cfg(debug_assertions)]
            if let Event::Key(key) = &event {
                crate::tui::containment::inject::on_key(key);
            }
            update(&mut self.app, event)
        }) {
            Ok(effects) => effects,
            Err(why) => {
                self.recover(why)?;
                return Ok(None);
            }
        };
        for effect in effects {
            let done = contain(|| {
                let mut out = Outlet {
                    link: self.link,
                    done: &self.done,
                    now: &mut self.pending,
                    tmux,
                    external: &mut external,
                };
                execute(&mut out, effect);
            });
            if let Err(why) = done {
                self.recover(why)?;
            }
        }
        Ok(external)
    }

    /// What an event means for the next frame: whether it changes what is shown, and
    /// whether it types into the focused pane or may be that typing's echo.
    fn note(&mut self, event: &Event) {
        match event {
            Event::Key(_) | Event::Paste(_) if self.app.mode() == Mode::Focus => {
                self.echo_of = self
                    .app
                    .focused_pane()
                    .map(|p| (p.session_id.clone(), Instant::now() + ECHO_WINDOW));
            }
            Event::Engine(e) if !self.remote => {
                if let Change::SessionActivity { session_id, .. } = &e.change {
                    self.echo_due |= awaits_echo(self.echo_of.as_ref(), session_id);
                }
            }
            _ => {}
        }
        self.dirty |= match event {
            // A server sends the screen itself after its activity: drawing on the event
            // would draw the old rows and hold the new ones a frame.
            Event::Engine(e) if self.remote => {
                !matches!(e.change, Change::SessionActivity { .. }) && is_shown(&self.app, e)
            }
            Event::Engine(e) => is_shown(&self.app, e),
            _ => true,
        };
    }

    /// A server sends the screens of the panes shown, and only theirs.
    fn watch_shown(&mut self) {
        let shown_now = shown_sessions(&self.app);
        if shown_now != self.watched {
            self.link.watch(shown_now.clone());
            self.watched = shown_now;
        }
    }

    /// The frame after the last one, at the most frames a second the studio draws.
    fn next_frame(&self) -> Option<Instant> {
        self.last_frame.map(|at| at + FRAME)
    }

    /// Draws when something shown changed and a frame is due (an awaited echo is due at once).
    fn draw_when_due(&mut self, tui: &mut Tui) -> Result<AfterFrame> {
        let due = self.echo_due || self.next_frame().is_none_or(|at| Instant::now() >= at);
        if !(self.dirty && due) {
            return Ok(AfterFrame::Wait);
        }
        self.echo_due = false;
        let drawn = contain(|| {
            #[cfg(debug_assertions)]
            crate::tui::containment::inject::on_draw();
            tui.draw(|frame| draw::draw(frame, &self.app, &self.app.theme, self.link.screens()))
                .map(|_| ())
        });
        self.last_frame = Some(Instant::now());
        match drawn {
            Ok(written) => {
                written?;
                self.dirty = false;
                self.faults.drawn();
                Ok(AfterFrame::Wait)
            }
            Err(why) => {
                // Half a frame was drawn into the buffer: the next starts from blank.
                tui.current_buffer_mut().reset();
                Ok(match self.recover(why) {
                    Ok(()) => AfterFrame::Again,
                    Err(why) => AfterFrame::GaveUp(why),
                })
            }
        }
    }

    /// Sleeps until there is news, or until the frame held back is due. `Some` when the
    /// studio ends.
    async fn wait(
        &mut self,
        input: &mut EventStream,
        from: &mut Sources<'_>,
    ) -> Result<Option<Ended>> {
        let frame_due = if self.dirty && !self.echo_due {
            self.next_frame()
        } else {
            None
        };
        // A question that changed takes answers again then (tui/settling.rs).
        let settled = self.app.due().map(Instant::from_std);
        tokio::select! {
            term = next_input(input) => return self.terminal_input(term, from.clock),
            told = from.inbox.recv() => self.told(told)?,
            Some(done) = from.done.recv() => self.pending.push_back(done),
            // The sender is a static: it never closes.
            Ok(()) = from.own_log.changed() => {
                let trouble = from.own_log.borrow_and_update().clone();
                self.pending.push_back(Event::LogTrouble { server: false, trouble });
            }
            _ = from.termination.recv() => return Ok(Some(Ended::Quit(None))),
            _ = tokio::time::sleep_until(frame_due.unwrap_or_else(Instant::now)), if frame_due.is_some() => {}
            _ = tokio::time::sleep_until(settled.unwrap_or_else(Instant::now)), if settled.is_some() => {
                self.pending.push_back(Event::Tick(std::time::Instant::now()));
            }
        }
        Ok(None)
    }

    /// What the terminal sent, for the next turn. `Some` when the terminal is gone.
    fn terminal_input(
        &mut self,
        input: Option<std::io::Result<TermEvent>>,
        clock: std::time::Instant,
    ) -> Result<Option<Ended>> {
        let event = match input {
            Some(Ok(TermEvent::Key(key))) => Event::Key(key),
            Some(Ok(TermEvent::Paste(text))) => Event::Paste(text),
            Some(Ok(TermEvent::Mouse(event))) => {
                let at_ms = u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX);
                let reporting = pane_reporting(self.link, &self.app);
                Event::Mouse {
                    event,
                    at_ms,
                    reporting,
                }
            }
            Some(Ok(TermEvent::FocusGained)) => Event::TermFocus(true),
            Some(Ok(TermEvent::FocusLost)) => Event::TermFocus(false),
            Some(Ok(TermEvent::Resize(cols, rows))) => Event::Resize(cols, rows),
            Some(Err(e)) => return Err(anyhow::Error::new(e).context("reading the terminal")),
            // The terminal is gone: nobody is left to show anything to.
            None => return Ok(Some(Ended::Quit(None))),
        };
        self.pending.push_back(event);
        Ok(None)
    }

    /// What the engine (or the server) told, for the next turn; a new screen of a pane shown
    /// is drawn with no event to apply.
    fn told(&mut self, told: Inbound) -> Result<()> {
        match told {
            Inbound::Event(event) => self.pending.push_back(Event::Engine(event)),
            Inbound::Snapshot(snapshot) => self.pending.push_back(Event::Snapshot(snapshot)),
            Inbound::Screen(session_id) => {
                self.echo_due |= awaits_echo(self.echo_of.as_ref(), &session_id);
                self.dirty |= self.watched.contains(&session_id);
            }
            Inbound::Studios(n) => self.pending.push_back(Event::Studios(n)),
            Inbound::ServerLog(trouble) => {
                self.pending.push_back(Event::LogTrouble {
                    server: true,
                    trouble,
                });
            }
            Inbound::Gone(why) => anyhow::bail!("{why}: the studio cannot go on without it"),
        }
        Ok(())
    }

    /// After a caught panic: the studio says so and follows the engine again from a fresh
    /// snapshot; when the same trouble repeats, its view starts over; after that, `Err` with
    /// the reason: the studio gives up its screen.
    fn recover(&mut self, why: String) -> Result<(), String> {
        match self.faults.caught() {
            Recovery::GiveUp => return Err(why),
            Recovery::Reset => {
                let mut fresh = App::new(self.app.folder.clone());
                fresh.size = self.app.size;
                fresh.mouse = self.app.mouse;
                fresh.ring = self.app.ring;
                fresh.clipboard_hint = self.app.clipboard_hint.take();
                self.app = fresh;
            }
            Recovery::CarryOn => {}
        }
        self.app.message = Some(format!(
            "flowdeck hit a bug and carried on ({why}); details in {}",
            self.log
        ));
        // The snapshot to follow the engine again from, asked as an update asks it.
        let mut external = None;
        let mut out = Outlet {
            link: self.link,
            done: &self.done,
            now: &mut self.pending,
            tmux: false,
            external: &mut external,
        };
        execute(&mut out, Effect::Resnapshot);
        Ok(())
    }
}

/// Whether a change of `session_id` may be the echo of a key typed into it a moment ago.
fn awaits_echo(echo_of: Option<&(String, Instant)>, session_id: &str) -> bool {
    echo_of.is_some_and(|(typed_into, until)| typed_into == session_id && Instant::now() < *until)
}

/// In focus mode, what the focused pane's program asked the terminal to report of the mouse.
fn pane_reporting(link: &Link, app: &App) -> Option<Reporting> {
    if app.mode() != Mode::Focus {
        return None;
    }
    let pane = app.focused_pane()?;
    link.mirror(&pane.session_id)
        .map(|screen| Reporting {
            mode: screen.mouse,
            encoding: screen.mouse_encoding,
        })
        .ok()
}

async fn next_input(stream: &mut EventStream) -> Option<std::io::Result<TermEvent>> {
    std::future::poll_fn(|cx| futures_core::Stream::poll_next(Pin::new(&mut *stream), cx)).await
}

/// The sessions whose panes are on screen now.
fn shown_sessions(app: &App) -> Vec<String> {
    crate::tui::layout::app_slots(app)
        .iter()
        .filter_map(|s| app.panes.get(s.index).map(|p| p.session_id.clone()))
        .collect()
}

/// Whether an engine event changes what is on screen: output of a pane nobody sees does not.
fn is_shown(app: &App, event: &EngineEvent) -> bool {
    match &event.change {
        Change::SessionActivity { session_id, .. } => {
            crate::tui::layout::app_slots(app).iter().any(|s| {
                app.panes
                    .get(s.index)
                    .is_some_and(|p| &p.session_id == session_id)
            })
        }
        _ => true,
    }
}
