//! Effects on runs: starting one, cancelling it, answering its prompt, reading its journal,
//! and ending every run and terminal when the person quits.

use super::{Outlet, at_once, failure, later};
use crate::engine::request::{Reply, Request};
use crate::tui::effect::Effect;
use crate::tui::link::message;
use crate::tui::update::Event;

/// The codes of a run or terminal that had already ended when it was asked to end.
const GONE: [&str; 3] = ["run_not_found", "run_finished", "session_not_found"];

/// Carries out an effect on a run (or on all of them, on quitting); any other is given back.
pub(super) fn run_work(out: &mut Outlet<'_>, effect: Effect) -> Option<Effect> {
    let link = out.link.clone();
    let done = out.done.clone();
    match effect {
        // A journal read of a run in progress may wait for the run's status: off the loop.
        Effect::LoadRunEvents(run_id) => {
            tokio::spawn(async move {
                let _ = done.send(super::read_run_events(&link, run_id).await);
            });
        }
        // On hosts: a fleet (of one, for one host), each run's screen kept; its answer is
        // every host's result once all ended.
        Effect::StartRun {
            workflow,
            inputs,
            host: Some(on),
        } => {
            let request = Request::RunFleet {
                workflow,
                inputs,
                on: vec![on],
                parallel: crate::engine::fleet::DEFAULT_PARALLEL,
                keep_session: true,
            };
            later(link, done, request, |a| {
                Some(Event::FleetEnded(match a {
                    Ok(Reply::Fleet(fleet)) => Ok(*fleet),
                    other => Err(message(other)),
                }))
            });
        }
        Effect::StartRun {
            workflow,
            inputs,
            host: None,
        } => {
            let request = Request::StartRun {
                workflow,
                inputs,
                // Its screen stays to be read after the end; x closes it.
                keep_session: true,
                host: None,
            };
            later(link, done, request, |a| {
                Some(Event::RunStarted(match a {
                    Ok(Reply::Started(run_id)) => Ok(run_id),
                    other => Err(message(other)),
                }))
            });
        }
        Effect::CancelRun(run_id) => later(link, done, Request::CancelRun { run_id }, failure),
        Effect::AnswerPrompt { run_id, answer } => {
            at_once(out, Request::AnswerPrompt { run_id, answer }, failure);
        }
        Effect::Acknowledge(ids) => at_once(out, Request::Acknowledge { ids }, failure),
        Effect::EndAndQuit { sessions, runs } => {
            // Runs first: a run's cancel ends its own terminal too.
            let asked: Vec<_> = runs
                .into_iter()
                .map(|run_id| link.call(Request::CancelRun { run_id }))
                .chain(
                    sessions
                        .into_iter()
                        .map(|session_id| link.call(Request::ExitTerminal { session_id })),
                )
                .collect();
            tokio::spawn(async move {
                let mut failures = Vec::new();
                for answer in asked {
                    match answer.await {
                        // Ended meanwhile by itself: what was asked holds.
                        Err(e) if !GONE.contains(&e.code.as_str()) => failures.push(e.message),
                        _ => {}
                    }
                }
                let _ = done.send(Event::Ended(failures));
            });
        }
        other => return Some(other),
    }
    None
}
