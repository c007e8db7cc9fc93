//! The guided `workflow_next`: the next step of a workflow given the steps completed and a
//! context, with its prompt and the criteria its output is checked against, and the answer
//! to a run's paused prompt.

use super::super::events::Actor;
use super::super::{Engine, EngineError};
use crate::workflow::action::Action;
use crate::workflow::names::display_safe;
use crate::workflow::plan::plan;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

/// One step as `workflow_next` describes it (workrail's shape).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NextStep {
    pub id: String,
    pub title: String,
    pub prompt: String,
    pub require_confirmation: bool,
    pub run_condition: Option<Value>,
}

/// Guidance for the next step.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Guidance {
    pub prompt: String,
    pub requires_confirmation: bool,
    pub validation_criteria: Vec<String>,
}

/// The answer to `workflow_next`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Next {
    pub step: Option<NextStep>,
    pub guidance: Option<Guidance>,
    pub is_complete: bool,
    /// When a live run was answered: its id and whether it accepted the answer.
    pub run_id: Option<String>,
    pub answered: bool,
}

impl Engine {
    /// workrail's `workflow_next`: the next step of a workflow given the steps completed and a
    /// context of variables. Given a `run_id` and an `answer`, it answers that run's paused
    /// `prompt` step instead, and then describes the run's step after it.
    pub fn workflow_next(
        &self,
        workflow: &str,
        completed: &[String],
        context: &Map<String, Value>,
        run_answer: Option<(&str, String)>,
        actor: &Actor,
    ) -> Result<Next, EngineError> {
        let mut answered = false;
        let mut run_id = None;
        let wf = self.runnable(workflow)?;
        if let Some((id, answer)) = run_answer {
            // An answer meant for one workflow's question must not answer another's.
            if let Some(status) = self.runs().status(id)
                && status.workflow_name != workflow
            {
                return Err(EngineError::InvalidParams(format!(
                    "run {id} is a run of {}, not of {}; give the workflow the run belongs to",
                    display_safe(&status.workflow_name),
                    display_safe(workflow)
                )));
            }
            self.answer_prompt(id, answer, actor)?;
            answered = true;
            run_id = Some(id.to_string());
        }
        let order = plan(&wf);
        let next = order.steps.iter().filter(|s| s.reachable).find(|step| {
            if completed.contains(&step.state) {
                return false;
            }
            match wf.states.get(&step.state).and_then(|s| s.when.as_ref()) {
                // A step whose condition does not hold for this context is skipped; one that
                // cannot be evaluated (a variable of the wrong type) is shown.
                Some(guard) => guard.evaluate(context).unwrap_or(true),
                None => true,
            }
        });
        let Some(step) = next else {
            return Ok(Next {
                step: None,
                guidance: None,
                is_complete: true,
                run_id,
                answered,
            });
        };
        let state = wf.states.get(&step.state);
        let (prompt, confirm, criteria) = match state.map(|s| &s.action) {
            Some(Action::Prompt(p)) => (
                p.prompt.clone(),
                p.require_confirmation,
                p.validation
                    .iter()
                    .flat_map(|r| r.messages())
                    .map(str::to_string)
                    .collect(),
            ),
            _ => (step.action.clone(), false, Vec::new()),
        };
        Ok(Next {
            step: Some(NextStep {
                id: step.state.clone(),
                title: step
                    .description
                    .clone()
                    .unwrap_or_else(|| step.state.clone()),
                prompt: prompt.clone(),
                require_confirmation: confirm,
                run_condition: state
                    .and_then(|s| s.when.as_ref())
                    .and_then(|g| serde_json::to_value(g).ok()),
            }),
            guidance: Some(Guidance {
                prompt,
                requires_confirmation: confirm,
                validation_criteria: criteria,
            }),
            is_complete: false,
            run_id,
            answered,
        })
    }
}
