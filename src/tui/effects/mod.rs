//! Effects carried out: each engine call an update asks for goes to the engine as a
//! [`Request`] (engine/request.rs), through the studio's [`Link`] (the engine here, or the
//! folder's server), and its answer comes back as an [`Event`]. With the engine here, quick
//! reads are answered before the next key; what may wait (files, processes, runs, and every
//! call to a server) runs as a task that reports back through `done`. The rest are the
//! studio's own (the clipboard, the mouse, the terminal's title, the person's editor).
//!
//! Here: the outlet, the order in which the jobs are offered an effect, and the ways of
//! asking the engine they share. The studio's own effects are in own.rs, file work in
//! files.rs, runs in runs.rs, terminal sessions in terminals.rs, and the reads in reads.rs.

mod files;
mod own;
mod reads;
mod runs;
mod terminals;

pub use own::screen_text;
pub use reads::{read, read_run_events};

use super::effect::Effect;
use super::link::{Link, message};
use super::update::Event;
use crate::engine::request::{Answer, Request};
use std::collections::VecDeque;
use tokio::sync::mpsc;

/// How many of the latest tool calls the audit view reads.
pub const AUDIT_SHOWN: usize = 500;

/// How many past runs the run view lists.
pub const RUNS_SHOWN: usize = 50;

/// Where the effects of one update go, and where their answers come back.
#[allow(missing_debug_implementations)]
pub struct Outlet<'a> {
    pub link: &'a Link,
    /// Answers of tasks, fed back to the loop.
    pub done: &'a mpsc::UnboundedSender<Event>,
    /// Answers given at once, handled before the next key.
    pub now: &'a mut VecDeque<Event>,
    /// The studio runs inside tmux (the clipboard goes through it too).
    pub tmux: bool,
    /// A file to open in the person's editor once the update is done.
    pub external: &'a mut Option<String>,
}

/// Carries out one effect.
pub fn execute(out: &mut Outlet<'_>, effect: Effect) {
    let effect = match out.link.local() {
        Some(engine) => match read(engine, effect) {
            Ok(event) => return out.now.push_back(event),
            Err(effect) => effect,
        },
        None => effect,
    };
    // Each job carries out the effects that are its own and gives the others back.
    let Some(effect) = own::studio_own(out, effect) else {
        return;
    };
    let Some(effect) = files::file_work(out, effect) else {
        return;
    };
    let Some(effect) = runs::run_work(out, effect) else {
        return;
    };
    let Some(effect) = terminals::terminal_work(out, effect) else {
        return;
    };
    // Reads: answered above with the engine here, else asked of the server.
    let (link, done) = (out.link.clone(), out.done.clone());
    tokio::spawn(async move {
        match reads::reply(&link, effect).await {
            Ok(event) => {
                let _ = done.send(event);
            }
            Err(other) => tracing::warn!("an effect nobody carries out: {other:?}"),
        }
    });
}

/// Answered at once when the engine is here, so that the next key sees it; else as
/// [`later`].
fn at_once(out: &mut Outlet<'_>, request: Request, then: fn(Answer) -> Option<Event>) {
    match out.link.ask_now(&request) {
        Some(answer) => out.now.extend(then(answer)),
        None => later(out.link.clone(), out.done.clone(), request, then),
    }
}

/// Sends `request` to the engine off the loop and reports `then` of its answer, if any.
fn later(
    link: Link,
    done: mpsc::UnboundedSender<Event>,
    request: Request,
    then: impl FnOnce(Answer) -> Option<Event> + Send + 'static,
) {
    // Asked now, answered later: calls leave in the order they were made.
    let answer = link.call(request);
    tokio::spawn(async move {
        if let Some(event) = then(answer.await) {
            let _ = done.send(event);
        }
    });
}

/// What to tell the person when an answer is an error (nothing when it is not).
fn failure(answer: Answer) -> Option<Event> {
    answer.err().map(|e| Event::Failed(e.message))
}

fn failed(answer: Answer, what: &str) -> Event {
    Event::Failed(format!("{what}: {}", message(answer)))
}
