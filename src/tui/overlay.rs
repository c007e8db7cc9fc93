//! The box open over the studio's views, owning what it shows: one at a time, and while it is
//! open the keys go to it. Closing it is dropping it: the mode underneath comes back by
//! itself (see [`super::state::App::mode`]).

use super::keymap::Mode;
use super::state::{Naming, Palette, ProblemsView};
use crate::engine::audit_log::AuditEntry;

/// What is open over the views, with its state.
#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    /// The keys of `of` (the mode help was opened from), from the row `top` down: it pages
    /// when the terminal is short.
    Help { of: Mode, top: usize },
    /// Asked whether to close this pane, whose program still runs (`x`).
    ConfirmClose(String),
    /// The selected workflow's violations.
    Problems(ProblemsView),
    /// The audit log's latest tool calls, from the line `top` down.
    Audit {
        entries: Vec<AuditEntry>,
        top: usize,
    },
    /// The command palette.
    Palette(Palette),
    /// Naming a new, duplicated or renamed workflow.
    Naming(Naming),
}

impl Overlay {
    /// The mode whose keys this overlay takes.
    pub fn mode(&self) -> Mode {
        match self {
            Overlay::Help { .. } => Mode::Help,
            Overlay::ConfirmClose(_) => Mode::ConfirmClose,
            Overlay::Problems(_) => Mode::Problems,
            Overlay::Audit { .. } => Mode::Audit,
            Overlay::Palette(_) => Mode::Palette,
            Overlay::Naming(_) => Mode::Name,
        }
    }
}
