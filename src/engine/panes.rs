//! What a studio needs to draw a session: a copy of its screen (colours, attributes, cursor,
//! the modes a front end acts on), taken at once under the session's lock and drawn from
//! afterwards, so that drawing never holds up the session's output and the same copy can
//! cross the folder's socket (term/mirror.rs).

use super::{Engine, EngineError};
pub use crate::term::mirror::{Cell, Colour, Mirror, MouseEncoding, MouseMode, Style};

impl Engine {
    /// A copy of the session's screen as it is now.
    pub fn session_mirror(&self, session: &str) -> Result<Mirror, EngineError> {
        Ok(self.terminals().get(session)?.mirror())
    }
}
