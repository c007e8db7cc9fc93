//! What a studio needs to draw a session: its live screen grid (colours, attributes, cursor),
//! lent for the time of one frame rather than copied, so that a pane streaming at full speed
//! costs one walk over its cells per frame.

use super::{Engine, EngineError};

impl Engine {
    /// Runs `draw` on the session's live vt100 screen. The session's output is held still
    /// while `draw` runs: keep it to one frame's work.
    pub fn with_session_screen<R>(
        &self,
        session: &str,
        draw: impl FnOnce(&vt100::Screen) -> R,
    ) -> Result<R, EngineError> {
        let s = self.terminals().get(session)?;
        Ok(s.with_screen(draw))
    }
}
