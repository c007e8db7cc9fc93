//! The effects that are the studio's own, carried out without the engine: the clipboard,
//! the mouse, the terminal's bell and title, the person's editor, and answering an approval
//! (a file the studio writes itself).

use super::Outlet;
use crate::engine::request::{Reply, Request};
use crate::tui::effect::Effect;
use crate::tui::link::Ask;
use crate::tui::selection::Selection;
use crate::tui::terminal;
use crate::tui::themes;
use crate::tui::update::Event;

/// The effects that are the studio's own, carried out here; any other is given back.
pub(super) fn studio_own(out: &mut Outlet<'_>, effect: Effect) -> Option<Effect> {
    match effect {
        // Quick (a small file written when approving), and answered before the next key.
        Effect::DecideApproval {
            run_id,
            fingerprint,
            approve,
        } => {
            let (link, done) = (out.link.clone(), out.done.clone());
            tokio::spawn(async move {
                let error = link
                    .decide(&run_id, &fingerprint, approve)
                    .await
                    .err()
                    .map(|e| format!("cannot answer the approval request: {e}"));
                let pending = match link.ask(Request::ApprovalsPending).await {
                    Ok(Reply::Approvals(pending)) => pending,
                    _ => Vec::new(),
                };
                let _ = done.send(Event::Approvals { pending, error });
            });
        }
        Effect::ExternalEditor(path) => *out.external = Some(path),
        // A small folder listed and a small file read: before the next key.
        Effect::ListThemes => {
            let names = themes::available(themes::user_dir_from_env().as_deref());
            out.now.push_back(Event::Themes(names));
        }
        Effect::LoadTheme(name) => {
            let (theme, warning) =
                themes::load(Some(&name), themes::user_dir_from_env().as_deref());
            out.now.push_back(Event::Theme {
                theme: Box::new(theme),
                warning,
            });
        }
        Effect::CopyScreen(selection) => {
            let text = out
                .link
                .mirror(&selection.session_id)
                .map(|screen| screen_text(&screen, &selection));
            out.now.push_back(match text {
                Ok(text) => copied(&text, out.tmux),
                Err(e) => Event::Failed(e),
            });
        }
        Effect::Clipboard(text) => out.now.push_back(copied(&text, out.tmux)),
        Effect::MouseCapture(on) => {
            if let Err(e) = terminal::capture_mouse(on) {
                out.now
                    .push_back(Event::Failed(format!("cannot change the mouse: {e}")));
            }
        }
        // A bell or title the terminal cannot take is nothing to tell the person about.
        Effect::Alert(text) => {
            let _ = terminal::alert(&text);
        }
        Effect::ClearAlert => {
            let _ = terminal::clear_alert();
        }
        Effect::Ring { how, text, title } => {
            let _ = terminal::ring(how, &text, title, out.tmux);
        }
        other => return Some(other),
    }
    None
}

/// The text of a selection on a session's screen (rows the terminal wrapped are joined).
pub fn screen_text(screen: &crate::engine::panes::Mirror, selection: &Selection) -> String {
    let mut line = |n: u64| screen.row_text(n);
    let bounds = crate::tui::selection::bounds(selection, &mut line);
    let wrapped = |n: u64| screen.row_wrapped(n);
    crate::tui::selection::text(bounds, &mut line, &wrapped)
}

/// Puts text on the clipboard through the terminal; what to tell the person.
fn copied(text: &str, tmux: bool) -> Event {
    match crate::tui::clipboard::copy(text, &mut std::io::stdout(), tmux) {
        Ok(chars) => Event::Copied(chars),
        Err(e) => Event::Failed(e),
    }
}
