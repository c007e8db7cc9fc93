//! The box open over the studio's views, owning what it shows: one at a time, and while it is
//! open the keys go to it. Closing it is dropping it: the mode underneath comes back by
//! itself (see [`super::state::App::mode`]).

use super::keymap::Mode;

/// What is open over the views, with its state.
#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    /// Asked whether to close this pane, whose program still runs (`x`).
    ConfirmClose(String),
}

impl Overlay {
    /// The mode whose keys this overlay takes.
    pub fn mode(&self) -> Mode {
        match self {
            Overlay::ConfirmClose(_) => Mode::ConfirmClose,
        }
    }
}
