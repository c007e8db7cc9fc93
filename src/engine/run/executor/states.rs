//! The state loop: each state entered as a step, its action run (bounded by the state's
//! `timeout_seconds`) unless its guard skips it, recorded, and left by the transition
//! [`Walk`] decides on.

use super::actions::Acted;
use super::record::{RanStep, masked_params};
use super::walk::Walk;
use super::{Exec, Stop};
use crate::engine::transition::{StepOutcome, StepStatus};
use crate::workflow::model::State;
use serde_json::json;
use std::time::{Duration, Instant};

impl Exec<'_> {
    /// Runs the states from the initial one until no transition holds (`Ok`) or the run
    /// stops.
    pub(super) async fn states(&mut self) -> Result<(), Stop> {
        let mut walk = Walk::new(self.wf);
        loop {
            let entered = walk.enter()?;
            self.mark_recordings(&entered.name);
            // The unit tests' way into the one path nothing else reaches: a bug.
            #[cfg(test)]
            if entered.name == "panic_for_the_test" {
                panic!("a bug, injected by a test");
            }
            let tool = entered.state.action.tool().as_str();
            let params = masked_params(self.wf, entered.state.action.params());
            self.record_step_started(entered.step, &entered.name, tool, &params)
                .await;
            let clock = Instant::now();
            let acted = if Walk::skips(&entered, &self.vars)? {
                Acted::ok(
                    json!({"skipped": true, "reason": "its `when` guard does not hold"}),
                    String::new(),
                )
            } else {
                self.act(&entered.name, entered.state).await
            };
            self.record_step_finished(RanStep {
                step: entered.step,
                state: &entered.name,
                tool,
                params: &params,
                acted: &acted,
                elapsed_ms: clock.elapsed().as_secs_f64() * 1000.0,
            })
            .await;
            self.connection_held()?;
            let taken = walk.leave(&entered, &acted.outcome, &self.vars)?;
            self.record_transition(&entered.name, taken.as_ref()).await;
            if taken.is_none() {
                return Ok(());
            }
        }
    }

    /// Fails the run when the connection to its session's host ended under it: no later step
    /// could work there, whatever the transitions say.
    fn connection_held(&self) -> Result<(), Stop> {
        let lost = self
            .session
            .as_deref()
            .and_then(|id| self.engine.terminals().get(id).ok())
            .and_then(|session| crate::term::shell::lost_connection(&session));
        match lost {
            Some(why) => Err(Stop::new(crate::engine::FinalState::Error, why)),
            None => Ok(()),
        }
    }

    /// Runs one action, bounded by the state's `timeout_seconds`.
    async fn act(&mut self, state_name: &str, state: &State) -> Acted {
        let timeout = state.timeout_seconds;
        let action = self.action(state_name, &state.action, timeout);
        let Some(limit) = timeout.map(Duration::from_secs_f64) else {
            return action.await;
        };
        // A little slack so that a wait bounded by the same timeout reports its own outcome.
        if let Ok(acted) = tokio::time::timeout(limit + Duration::from_millis(250), action).await {
            return acted;
        }
        self.withdraw_question("the state's timeout_seconds ran out")
            .await;
        Acted {
            outcome: StepOutcome {
                status: StepStatus::Timeout,
                observed: String::new(),
                validation: None,
            },
            result: json!({"timeout": true, "timeout_seconds": limit.as_secs_f64()}),
            error: Some(format!(
                "the state did not finish within {} s",
                limit.as_secs_f64()
            )),
        }
    }
}
