//! A `prompt` step: the run waits for an answer through [`Engine::answer_prompt`], checks it
//! against the step's rules, asks for a confirmation when the step wants one, and withdraws
//! the question however the wait ends.

use super::super::{ActiveRun, PendingPrompt, Phase};
use super::Exec;
use super::actions::Acted;
use super::bounded::shorten;
#[cfg(doc)]
use crate::engine::Engine;
use crate::engine::events::Actor;
use crate::engine::journal::RunEvent;
use crate::workflow::action::PromptParams;
use crate::workflow::rules;
use serde_json::json;
use tokio::sync::oneshot;

impl Exec<'_> {
    /// Pauses the run until an answer arrives through [`Engine::answer_prompt`].
    async fn ask(&mut self, state_name: &str, question: &str) -> Option<(String, Actor)> {
        let (tx, rx) = oneshot::channel();
        *self.run.pending_prompt() = Some(PendingPrompt {
            state: state_name.to_string(),
            prompt: question.to_string(),
            answer: tx,
        });
        self.asking = Some(state_name.to_string());
        // The status first: whoever hears of the question can answer it at once.
        self.run.update(|s| {
            s.status = Phase::WaitingForInput;
            s.prompt = Some(question.to_string());
        });
        self.record(RunEvent::WaitingForInput {
            state: state_name.to_string(),
            prompt: question.to_string(),
        })
        .await;
        // Whether the answer comes or the wait is dropped (the state's timeout, a cancel), the
        // run stops waiting: the guard withdraws the question either way.
        let _withdraw = Withdraw(self.run);
        let answer = rx.await.ok();
        if answer.is_none() {
            self.withdraw_question("the run stopped waiting").await;
        } else {
            self.asking = None;
        }
        answer
    }

    /// Records that a question which was waiting is not any more (its state timed out, the
    /// run was cancelled), so that whoever shows it takes it down.
    pub(super) async fn withdraw_question(&mut self, reason: &str) {
        if let Some(state) = self.asking.take() {
            self.record(RunEvent::PromptWithdrawn {
                state,
                reason: reason.to_string(),
            })
            .await;
        }
    }

    pub(super) async fn prompt(&mut self, state_name: &str, p: &PromptParams) -> Acted {
        let Some((answer, mut answered_by)) = self.ask(state_name, &p.prompt).await else {
            return Acted::failed("the prompt was withdrawn before an answer came");
        };
        let mut outcome = match rules::validate_output(&p.validation, &answer, &self.vars) {
            Ok(outcome) => outcome,
            Err(e) => return Acted::failed(format!("the prompt's rules cannot be evaluated: {e}")),
        };
        // A confirmation is a second question, asked only about an answer that passed.
        let mut confirmed = None;
        if outcome.valid && p.require_confirmation {
            let question = format!("Confirm this answer (yes or no): {}", shorten(&answer, 500));
            let reply = self.ask(state_name, &question).await;
            let yes = reply
                .as_ref()
                .is_some_and(|(text, _)| is_confirmation(text));
            if let Some((_, by)) = reply {
                answered_by = by;
            }
            confirmed = Some(yes);
            if !yes {
                outcome.valid = false;
                outcome.issues.push("the answer was not confirmed".into());
                outcome
                    .suggestions
                    .push("Answer again, then confirm with yes.".into());
            }
        }
        self.record(RunEvent::Answered {
            state: state_name.to_string(),
            valid: outcome.valid,
            issues: outcome.issues.clone(),
            actor: Some(answered_by),
        })
        .await;
        if outcome.valid
            && let Some(name) = &p.store_as
        {
            let sid = self.session.clone().unwrap_or_default();
            self.store_vars(&sid, vec![(name.clone(), answer.clone())])
                .await;
        }
        let valid = outcome.valid;
        let mut acted = Acted::ok(
            json!({"answer": answer, "validation": outcome, "confirmed": confirmed}),
            answer,
        );
        acted.outcome.validation = Some(valid);
        acted
    }
}

/// Withdraws a run's pending question when dropped.
struct Withdraw<'a>(&'a ActiveRun);

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        self.0.pending_prompt().take();
        self.0.update(|s| {
            if s.status == Phase::WaitingForInput {
                s.status = Phase::Running;
            }
            s.prompt = None;
        });
    }
}

fn is_confirmation(answer: &str) -> bool {
    matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "yes" | "y" | "confirm" | "confirmed"
    )
}
