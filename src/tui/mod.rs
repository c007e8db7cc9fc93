//! The studio: a ratatui front end over the live engine (SPEC §5). A thin layer: it calls
//! engine methods and follows the engine's snapshot and events, and holds no business logic.
//!
//! - [`state`]: what is shown; [`update`]: `(state, event) → effects`, with [`apply`] for
//!   engine events and [`history`] for a pane's scrollback and search, [`runs`] for the run view; [`effect`]: what an update asks of the engine;
//! - [`command`]: every action, one type; [`keymap`]: keys → commands per mode (help and
//!   the status line are generated from it); [`keys`]: focus-mode keys for the PTY;
//! - [`draw`]: pure drawing; [`layout`]: where views go; [`theme`]: colours, [`themes`]: where
//!   they come from;
//! - [`app`]: the loop that merges terminal input, engine events and timers; [`terminal`]:
//!   taking the terminal over and giving it back.

pub mod app;
pub mod approvals;
pub mod attention;
pub mod clipboard;
pub mod command;
pub mod containment;
pub mod copy;
pub mod diff;
pub mod draw;
pub mod editing;
pub mod editor;
pub mod effect;
pub mod effects;
pub mod form;
pub mod help;
pub mod history;
pub mod keymap;
pub mod keys;
pub mod layout;
pub mod link;
pub mod mode;
pub mod mouse_report;
pub mod naming;
pub mod overlay;
pub mod palette;
pub mod persons_work;
pub mod quitting;
pub mod ring;
pub mod runs;
pub mod selection;
pub mod settling;
pub mod state;
pub mod syntax;
pub mod terminal;
pub mod text;
pub mod theme;
pub mod themes;
pub mod update;

pub use app::{StudioOptions, run};

#[cfg(test)]
mod approvals_tests;
#[cfg(test)]
mod copy_tests;
#[cfg(test)]
mod editor_unicode_tests;
#[cfg(test)]
mod history_tests;
#[cfg(test)]
mod inbox_tests;
#[cfg(test)]
mod overlays_tests;
#[cfg(test)]
mod quitting_tests;
#[cfg(test)]
mod runs_tests;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod themes_tests;
#[cfg(test)]
mod update_tests;
