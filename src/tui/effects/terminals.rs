//! Effects on terminal sessions: holding a session's input, opening and closing a shell,
//! typing keys and pasting, resizing. Typing is answered before the next key when the
//! engine is here, so that keys keep their order.

use super::{Outlet, at_once, failure, later};
use crate::engine::request::{Reply, Request};
use crate::tui::effect::{Effect, REPLAY_PANE};
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
                // The person's shell starts where they started the studio, not where the
                // folder's server happens to run (an agent's directory, when an agent
                // started it). A directory gone or not UTF-8 leaves it to the server.
                cwd: std::env::current_dir()
                    .ok()
                    .and_then(|d| d.to_str().map(str::to_string)),
                ..Default::default()
            };
            open_pane(link, done, params);
        }
        Effect::Replay {
            run_id,
            folder,
            cols,
            rows,
        } => {
            open_pane(link, done, replay_params(&run_id, &folder, cols, rows));
        }
        Effect::MarkSession(session_id) => {
            at_once(out, Request::MarkSession { session_id }, failure);
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

/// A terminal running this flowdeck's `replay` of a run. The folder's server may have another
/// working directory than the studio: the folder goes as an absolute path.
fn replay_params(run_id: &str, folder: &str, cols: u16, rows: u16) -> OpenTerminalParams {
    let exe = std::env::current_exe().unwrap_or_else(|_| "flowdeck".into());
    let folder = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.into());
    OpenTerminalParams {
        command: Some(vec![
            exe.display().to_string(),
            "--workflows".into(),
            folder.display().to_string(),
            "replay".into(),
            run_id.to_string(),
            // Navigable until the person quits it, the end included.
            "--stay".into(),
        ]),
        name: Some(format!("{REPLAY_PANE}{run_id}")),
        cols: Some(cols),
        rows: Some(rows),
        ..Default::default()
    }
}

/// Opens a terminal for a new pane; the pane shows once it is open.
fn open_pane(
    link: crate::tui::link::Link,
    done: tokio::sync::mpsc::UnboundedSender<Event>,
    params: OpenTerminalParams,
) {
    later(link, done, Request::OpenTerminal { params }, |a| {
        Some(Event::ShellOpened(match a {
            Ok(Reply::Session(session)) => Ok(*session),
            other => Err(message(other)),
        }))
    });
}
