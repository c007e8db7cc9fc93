//! Naming a workflow: a new one from a template or drafted from a pane's shell, a duplicate, a
//! rename, and a delete that is confirmed by typing the workflow's name. The engine's rules
//! decide (identifier names, no rename onto an existing name or of a running workflow); this
//! only gathers the name.

use super::effect::Effect;
use super::mode::BaseMode;
use super::overlay::{NameFor, Naming, Overlay};
use super::state::App;
use crate::engine::editing::TEMPLATES;

/// Opens the name box for `purpose`, pre-filled where a name is likely.
pub fn start(app: &mut App, purpose: NameFor) {
    let name = match &purpose {
        NameFor::New(_) | NameFor::Delete(_) | NameFor::Draft(_) => String::new(),
        NameFor::Duplicate(from) => format!("{from}_copy"),
        NameFor::Rename(from) => from.clone(),
    };
    app.open(Overlay::Naming(Naming { purpose, name }));
}

/// ←/→ choose the template of a new workflow.
pub fn cycle(app: &mut App, step: isize) {
    if let Some(Overlay::Naming(Naming {
        purpose: NameFor::New(at),
        ..
    })) = &mut app.overlay
    {
        *at = (*at as isize + step).rem_euclid(TEMPLATES.len() as isize) as usize;
    }
}

/// Enter: ask the engine.
pub fn submit(app: &mut App) -> Vec<Effect> {
    let Some(Overlay::Naming(naming)) = &app.overlay else {
        return Vec::new();
    };
    let name = naming.name.trim().to_string();
    let effect = match &naming.purpose {
        NameFor::New(template) => Effect::CreateWorkflow {
            template: *template,
            name,
        },
        NameFor::Duplicate(from) => Effect::DuplicateWorkflow {
            from: from.clone(),
            name,
        },
        NameFor::Rename(from) if *from == name => {
            app.message = Some("that is its name already".into());
            return Vec::new();
        }
        NameFor::Rename(from) => Effect::RenameWorkflow {
            from: from.clone(),
            to: name,
        },
        NameFor::Draft(session_id) => Effect::DraftWorkflow {
            session_id: session_id.clone(),
            name,
        },
        NameFor::Delete(from) if *from == name => Effect::DeleteWorkflow(from.clone()),
        NameFor::Delete(from) => {
            app.message = Some(format!("type {from} to delete it, Esc keeps it"));
            return Vec::new();
        }
    };
    vec![effect]
}

/// The engine's answer. A new or duplicated workflow opens in the editor; a refused name
/// leaves the box open to fix it.
pub fn named(app: &mut App, purpose: NameFor, result: Result<String, String>) -> Vec<Effect> {
    match result {
        Err(e) => {
            app.message = Some(e);
            Vec::new()
        }
        Ok(name) => {
            app.overlay = None;
            app.base = BaseMode::Normal;
            if !matches!(purpose, NameFor::Delete(_)) {
                app.select_when_listed = Some(name.clone());
            }
            let mut effects = vec![Effect::ReloadList];
            match purpose {
                NameFor::Draft(_) => {
                    app.message = Some(format!(
                        "{name} drafted and saved: tidy it; Ctrl-s saves, Esc closes"
                    ));
                    app.filter.clear();
                    effects.push(Effect::LoadDocument(name));
                }
                NameFor::New(_) | NameFor::Duplicate(_) => {
                    app.message = Some(format!("{name} created: Ctrl-s saves, Esc closes"));
                    app.filter.clear();
                    effects.push(Effect::LoadDocument(name));
                }
                NameFor::Rename(from) => {
                    app.message = Some(format!("{from} is now {name}"));
                }
                NameFor::Delete(_) => app.message = Some(format!("{name} deleted")),
            }
            effects
        }
    }
}
