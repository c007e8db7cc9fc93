//! A studio started where its workflows folder did not exist yet hosts the engine itself (no
//! server can hold a folder that is not there). Once the person has made the folder (`A`,
//! the first workflow) and nothing lives in that engine, the studio hands the folder over to
//! a server of its own and attaches to it, as every other studio is: agents can reach it from
//! then on, and `d` detaches.

use crate::tui::mode::Mode;
use crate::tui::state::App;

/// What the attached studio takes over from the one that hosted: the workflow selected.
#[derive(Debug, Clone, Default)]
pub struct Carried {
    pub selected: Option<String>,
}

impl Carried {
    pub fn from(app: &App) -> Carried {
        Carried {
            selected: app.selected_workflow().map(|w| w.name.clone()),
        }
    }

    /// Sets up a new studio's state as the person left the last one.
    pub fn onto(self, app: &mut App) {
        app.select_when_listed = self.selected;
    }
}

/// Whether a hosting studio can give its engine up now: the folder exists and lists a
/// workflow, and nothing would be lost (no terminal, no run, nothing open).
pub fn ready(app: &App) -> bool {
    !app.attached
        && app.folder_problem.is_none()
        && !app.workflows.is_empty()
        && app.mode() == Mode::Normal
        && app.editor.is_none()
        && app.panes.is_empty()
        && !app.any_run_active()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::test_support::shell_pane;

    #[test]
    fn a_hosting_studio_hands_over_only_when_nothing_would_be_lost() {
        let mut app = App::new("workflows".into());
        assert!(!ready(&app), "no workflow yet");
        app.workflows = vec![crate::tui::test_support::summary("first")];
        assert!(ready(&app));
        app.panes.push(shell_pane(80, 20));
        assert!(!ready(&app), "a terminal lives in this engine");
        app.panes.clear();
        app.open(crate::tui::overlay::Overlay::Help {
            of: Mode::Normal,
            top: 0,
        });
        assert!(!ready(&app), "something is open");
        app.overlay = None;
        app.attached = true;
        assert!(!ready(&app), "attached already");
    }
}
