//! What a run would send: each step's parameters with the given inputs written in (`$NAME`,
//! `${NAME}`), the names left unresolved listed.

use super::super::contract::{self, MASK};
use super::super::{Engine, EngineError};
use crate::workflow::action::Action;
use crate::workflow::plan::plan;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// One step of `workflow_preview_rendered`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RenderedStep {
    pub state: String,
    pub tool: String,
    /// What the step would type or run, `$NAME` and `${NAME}` replaced with the inputs given
    /// or defaulted (secrets masked); other variables stay as written.
    pub renders: Option<String>,
    pub params: Value,
}

/// The answer to `workflow_preview_rendered`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RenderedPreview {
    pub workflow: String,
    pub steps: Vec<RenderedStep>,
    /// Variables a step uses that no input provides (the shell may still have them).
    pub unresolved: Vec<String>,
}

impl Engine {
    /// What each step would type or run with these inputs; nothing is executed.
    pub fn workflow_preview_rendered(
        &self,
        name: &str,
        inputs: &IndexMap<String, String>,
    ) -> Result<RenderedPreview, EngineError> {
        let wf = self.runnable(name)?;
        let mut values: IndexMap<String, String> = wf
            .arguments
            .iter()
            .filter_map(|(k, v)| v.default.as_ref().map(|d| (k.clone(), d.to_string())))
            .collect();
        values.extend(inputs.iter().map(|(k, v)| (k.clone(), v.clone())));
        let values = contract::masked(&wf, &values);
        let mut unresolved = Vec::new();
        let steps = plan(&wf)
            .steps
            .iter()
            .filter_map(|step| wf.states.get(&step.state).map(|s| (step.state.clone(), s)))
            .map(|(state, s)| {
                let text = match &s.action {
                    Action::SendInput(p) => p.input_text.clone(),
                    Action::RunCommand(p) => Some(p.command.clone()),
                    _ => None,
                };
                let renders = text.map(|t| expand(&t, &values, &mut unresolved));
                RenderedStep {
                    state,
                    tool: s.action.tool().as_str().to_string(),
                    renders,
                    params: s.action.params(),
                }
            })
            .collect();
        unresolved.sort();
        unresolved.dedup();
        Ok(RenderedPreview {
            workflow: wf.name.clone(),
            steps,
            unresolved,
        })
    }
}

/// Replaces `$NAME` and `${NAME}` with known values; unknown names are noted and left as is.
pub(super) fn expand(
    text: &str,
    values: &IndexMap<String, String>,
    unresolved: &mut Vec<String>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        let (name, consumed) = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                Some(end) if is_name(&braced[..end]) => (&braced[..end], end + 2),
                _ => ("", 0),
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            if is_name(&after[..end]) {
                (&after[..end], end)
            } else {
                ("", 0)
            }
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
            continue;
        }
        match values.get(name) {
            Some(value) => out.push_str(if value == MASK { MASK } else { value }),
            None => {
                unresolved.push(name.to_string());
                out.push_str(&rest[pos..pos + 1 + consumed]);
            }
        }
        rest = &after[consumed..];
    }
    out.push_str(rest);
    out
}

fn is_name(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && s.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
}
