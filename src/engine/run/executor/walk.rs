//! The state loop's decisions, without a terminal: which state runs next, whether its `when`
//! guard skips it, when a run has looped too long, and which transition it takes. The
//! executor feeds it what each action did; its tests feed it made-up outcomes.

use super::Stop;
use crate::engine::result::FinalState;
use crate::engine::transition::{self, StepOutcome, Taken};
use crate::workflow::guard::Variables;
use crate::workflow::model::{State, Workflow};

/// A run's way through its workflow's states.
pub(super) struct Walk<'w> {
    wf: &'w Workflow,
    current: String,
    steps: u32,
}

/// The state about to run, as the step it is.
pub(super) struct Entered<'w> {
    pub step: u32,
    pub name: String,
    pub state: &'w State,
}

impl<'w> Walk<'w> {
    /// At the workflow's initial state, no step taken.
    pub fn new(wf: &'w Workflow) -> Self {
        Walk {
            wf,
            current: wf.initial_state.clone(),
            steps: 0,
        }
    }

    /// Enters the current state as the next step; stops a run that has taken `max_steps`
    /// steps without ending, and one whose transition names no state.
    pub fn enter(&mut self) -> Result<Entered<'w>, Stop> {
        let current = &self.current;
        if self.steps >= self.wf.max_steps() {
            return Err(Stop::new(
                FinalState::Error,
                format!(
                    "the run executed max_steps ({}) states without ending; the workflow loops (last state: {current})",
                    self.wf.max_steps()
                ),
            ));
        }
        let Some(state) = self.wf.states.get(current) else {
            return Err(Stop::new(
                FinalState::Error,
                format!("state `{current}` does not exist"),
            ));
        };
        self.steps += 1;
        Ok(Entered {
            step: self.steps,
            name: current.clone(),
            state,
        })
    }

    /// Whether the entered state's `when` guard skips its action (a state without one runs).
    pub fn skips(entered: &Entered<'_>, vars: &dyn Variables) -> Result<bool, Stop> {
        match &entered.state.when {
            Some(guard) => Ok(!guard.evaluate(vars).map_err(|e| {
                Stop::new(
                    FinalState::Error,
                    format!("state `{}`: `when`: {e}", entered.name),
                )
            })?),
            None => Ok(false),
        }
    }

    /// Leaves the entered state by the first transition that holds for what its action did;
    /// `None`: none holds, and the run ends after this state.
    pub fn leave(
        &mut self,
        entered: &Entered<'_>,
        outcome: &StepOutcome,
        vars: &dyn Variables,
    ) -> Result<Option<Taken>, Stop> {
        let taken = transition::next_state(entered.state, outcome, vars)
            .map_err(|e| Stop::new(FinalState::Error, format!("state `{}`: {e}", entered.name)))?;
        if let Some(taken) = &taken {
            self.current = taken.next_state.clone();
        }
        Ok(taken)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::transition::StepStatus;
    use indexmap::IndexMap;

    fn workflow(yaml: &str) -> Workflow {
        crate::workflow::test_manifest(yaml)
    }

    fn outcome(status: StepStatus, observed: &str) -> StepOutcome {
        StepOutcome {
            status,
            observed: observed.into(),
            validation: None,
        }
    }

    /// The states a run walks (a skipped one marked `-`) when each action ends as `act` says,
    /// and how it stops when it does not end by running out of transitions.
    fn walk(
        wf: &Workflow,
        vars: &IndexMap<String, String>,
        mut act: impl FnMut(&str) -> StepOutcome,
    ) -> (Vec<String>, Option<(FinalState, String)>) {
        let mut walk = Walk::new(wf);
        let mut path = Vec::new();
        loop {
            let entered = match walk.enter() {
                Ok(entered) => entered,
                Err(stop) => return (path, Some((stop.final_state, stop.error))),
            };
            let outcome = match Walk::skips(&entered, vars) {
                Ok(true) => {
                    path.push(format!("-{}", entered.name));
                    outcome(StepStatus::Success, "")
                }
                Ok(false) => {
                    path.push(entered.name.clone());
                    act(&entered.name)
                }
                Err(stop) => return (path, Some((stop.final_state, stop.error))),
            };
            match walk.leave(&entered, &outcome, vars) {
                Ok(Some(_)) => {}
                Ok(None) => return (path, None),
                Err(stop) => return (path, Some((stop.final_state, stop.error))),
            }
        }
    }

    const BUILD: &str = r#"
name: build
description: Builds, retrying a failure twice.
initial_state: build
max_steps: 6
states:
  build:
    action: { tool: run_command, params: { command: make } }
    transitions:
      - { condition: success, next_state: test }
      - { condition: timeout, next_state: slow }
      - { condition: failure, when: { var: RETRY, equals: "yes" }, next_state: build }
      - { condition: failure, next_state: broken }
  test:
    action: { tool: run_command, params: { command: make test } }
    when: { var: SKIP_TESTS, not_equals: "yes" }
    transitions:
      - { condition: pattern_match, pattern: "^ok$", next_state: done }
      - { condition: pattern_no_match, pattern: "^ok$", next_state: broken }
  slow: { action: { tool: list_terminal_sessions } }
  broken: { action: { tool: list_terminal_sessions } }
  done: { action: { tool: list_terminal_sessions } }
"#;

    fn vars(pairs: &[(&str, &str)]) -> IndexMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn each_condition_leads_where_its_transition_says() {
        let wf = workflow(BUILD);
        let none = vars(&[]);
        let by = |status: StepStatus, test_says: &'static str| {
            move |state: &str| match state {
                "build" => outcome(status, ""),
                _ => outcome(StepStatus::Success, test_says),
            }
        };
        let cases = [
            (StepStatus::Success, "ok", vec!["build", "test", "done"]),
            (
                StepStatus::Success,
                "2 failed",
                vec!["build", "test", "broken"],
            ),
            (StepStatus::Timeout, "", vec!["build", "slow"]),
            (StepStatus::Failure, "", vec!["build", "broken"]),
        ];
        for (status, said, path) in cases {
            let (walked, stop) = walk(&wf, &none, by(status, said));
            assert_eq!(walked, path, "{status:?} then {said:?}");
            assert_eq!(stop, None, "{status:?} then {said:?}");
        }
    }

    #[test]
    fn a_guard_on_a_state_skips_it_and_its_transitions_still_decide() {
        let wf = workflow(BUILD);
        // Skipped: recorded as a success that observed nothing, so `^ok$` does not match.
        let (walked, stop) = walk(&wf, &vars(&[("SKIP_TESTS", "yes")]), |_| {
            outcome(StepStatus::Success, "ok")
        });
        assert_eq!(walked, ["build", "-test", "broken"]);
        assert_eq!(stop, None);
    }

    #[test]
    fn a_guard_on_a_transition_loops_until_max_steps_stops_the_run() {
        let wf = workflow(BUILD);
        let (walked, stop) = walk(&wf, &vars(&[("RETRY", "yes")]), |_| {
            outcome(StepStatus::Failure, "")
        });
        assert_eq!(walked, ["build"; 6]);
        let (state, error) = stop.expect("max_steps stops it");
        assert_eq!(state, FinalState::Error);
        assert!(
            error.contains("max_steps (6)") && error.contains("last state: build"),
            "{error}"
        );
    }

    #[test]
    fn a_state_that_does_not_exist_or_a_guard_that_cannot_be_read_stops_the_run() {
        // Validation refuses such a manifest; the walk does not rely on it.
        let mut wf = workflow(
            r#"
name: odd
description: Goes nowhere.
initial_state: first
states:
  first:
    action: { tool: list_terminal_sessions }
    transitions: [{ condition: always, next_state: nowhere }]
  nowhere: { action: { tool: list_terminal_sessions } }
"#,
        );
        wf.states.shift_remove("nowhere");
        let (walked, stop) = walk(&wf, &vars(&[]), |_| outcome(StepStatus::Success, ""));
        assert_eq!(walked, ["first"]);
        assert_eq!(
            stop,
            Some((FinalState::Error, "state `nowhere` does not exist".into()))
        );

        let wf = workflow(
            r#"
name: odd
description: Compares a word with a number.
initial_state: first
states:
  first:
    action: { tool: list_terminal_sessions }
    when: { var: COUNT, gt: 2 }
"#,
        );
        let (walked, stop) = walk(&wf, &vars(&[("COUNT", "many")]), |_| {
            outcome(StepStatus::Success, "")
        });
        assert!(walked.is_empty(), "{walked:?}");
        let (state, error) = stop.expect("the guard cannot be evaluated");
        assert_eq!(state, FinalState::Error);
        assert!(error.starts_with("state `first`: `when`: "), "{error}");
    }

    #[test]
    fn a_prompts_validation_decides_its_transition() {
        let wf = workflow(
            r#"
name: ask
description: Asks until the answer passes.
initial_state: ask
states:
  ask:
    action: { tool: prompt, params: { prompt: "Which port?" } }
    transitions:
      - { condition: validation_failed, next_state: ask }
      - { condition: validation_passed, next_state: go }
  go: { action: { tool: list_terminal_sessions } }
"#,
        );
        let mut answers = [Some(false), Some(false), Some(true)].into_iter();
        let (walked, stop) = walk(&wf, &vars(&[]), |state| match state {
            "ask" => StepOutcome {
                validation: answers.next().flatten(),
                ..outcome(StepStatus::Success, "")
            },
            _ => outcome(StepStatus::Success, ""),
        });
        assert_eq!(walked, ["ask", "ask", "ask", "go"]);
        assert_eq!(stop, None);
    }
}
