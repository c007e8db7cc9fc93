//! Effects on terminal sessions: holding a session's input, opening and closing a shell,
//! typing keys and pasting, resizing. Typing is answered before the next key when the
//! engine is here, so that keys keep their order.

use super::{Outlet, at_once, failure, later};
use crate::engine::request::{Reply, Request};
use crate::tui::effect::Effect;
use crate::tui::link::{Ask, message};
use crate::tui::update::Event;
use crate::workflow::action::{OpenTerminalParams, SendInputParams};

/// Carries out an effect on a terminal session; any other is given back.
pub(super) fn terminal_work(out: &mut Outlet<'_>, effect: Effect) -> Option<Effect> {
    let link = out.link.clone();
    let done = out.done.clone();
    match effect {
        Effect::HoldInput(session_id) => {
            at_once(out, Request::HoldInput { session_id }, |answer| {
                answer.err().map(|e| Event::HoldRefused(e.message))
            });
        }
        Effect::ReleaseInput(session_id) => {
            at_once(out, Request::ReleaseInput { session_id }, failure);
        }
        Effect::OpenShell { cols, rows } => {
            let params = OpenTerminalParams {
                cols: Some(cols),
                rows: Some(rows),
                ..Default::default()
            };
            later(link, done, Request::OpenTerminal { params }, |a| {
                Some(Event::ShellOpened(match a {
                    Ok(Reply::Session(session)) => Ok(*session),
                    other => Err(message(other)),
                }))
            });
        }
        Effect::CloseSession(session_id) => {
            later(link, done, Request::ExitTerminal { session_id }, failure);
        }
        Effect::SendKeys { session_id, keys } => {
            let params = SendInputParams {
                keys: Some(keys),
                ..SendInputParams::default()
            };
            at_once(out, Request::SendInput { session_id, params }, failure);
        }
        Effect::Paste { session_id, text } => {
            let bracketed = out
                .link
                .mirror(&session_id)
                .is_ok_and(|s| s.bracketed_paste);
            let text = if bracketed {
                format!("\u{1b}[200~{text}\u{1b}[201~")
            } else {
                text
            };
            let params = SendInputParams {
                input_text: Some(text),
                ..SendInputParams::default()
            };
            at_once(out, Request::SendInput { session_id, params }, failure);
        }
        Effect::Resize {
            session_id,
            cols,
            rows,
        } => {
            let request = Request::ResizeTerminal {
                session_id,
                cols,
                rows,
            };
            at_once(out, request, failure);
        }
        other => return Some(other),
    }
    None
}
