//! Telling the person something happened while they look elsewhere: engine events and
//! approval requests both call for it, so it sits beneath them.

use super::effect::Effect;
use super::state::App;

/// Something the person should know happened: the status line says it (the caller set the
/// message); while their terminal is not focused, the bell rings and the title says it too.
pub fn attention(app: &mut App, what: String) -> Vec<Effect> {
    if app.term_focused {
        return Vec::new();
    }
    app.attention = Some(what.clone());
    vec![Effect::Alert(what)]
}
