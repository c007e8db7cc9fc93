//! Which transition a state takes: a pure function of the state, what its action did, and the
//! run's variables, so every case is tested without a terminal.

use crate::workflow::guard::{GuardError, Variables};
use crate::workflow::model::{ConditionKind, State};
use crate::workflow::pattern::{self, PatternError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a state's action ended: what its step's `status` says in the journal, the execution
/// log and the run's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Success,
    Failure,
    Timeout,
}

impl StepStatus {
    /// The word the journal and the execution log write.
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Success => "success",
            StepStatus::Failure => "failure",
            StepStatus::Timeout => "timeout",
        }
    }
}

impl std::fmt::Display for StepStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a state's action produced, as far as transitions care.
#[derive(Debug, Clone, PartialEq)]
pub struct StepOutcome {
    pub status: StepStatus,
    /// The output the state observed (matched or read text, a command's output, the screen).
    pub observed: String,
    /// For a `prompt` step: whether the answer passed its rules.
    pub validation: Option<bool>,
}

/// Why no decision could be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TransitionError {
    #[error("transition {index}: `when`: {source}")]
    Guard { index: usize, source: GuardError },
    #[error("transition {index}: pattern: {source}")]
    Pattern { index: usize, source: PatternError },
}

/// The transition taken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Taken {
    /// Its index in the state's list.
    pub index: usize,
    pub condition: String,
    pub next_state: String,
}

/// Whether a condition holds for an outcome (patterns are tested by the caller).
fn condition_holds(
    kind: ConditionKind,
    outcome: &StepOutcome,
    pattern_matches: Option<bool>,
) -> bool {
    match kind {
        ConditionKind::Always => true,
        ConditionKind::Success => outcome.status == StepStatus::Success,
        ConditionKind::Failure => outcome.status == StepStatus::Failure,
        ConditionKind::Timeout => outcome.status == StepStatus::Timeout,
        ConditionKind::PatternMatch => pattern_matches == Some(true),
        ConditionKind::PatternNoMatch => pattern_matches == Some(false),
        ConditionKind::ValidationPassed => outcome.validation == Some(true),
        ConditionKind::ValidationFailed => outcome.validation == Some(false),
    }
}

/// The first transition of `state` that holds, or `None` (the run ends after this state).
/// A transition holds when its condition holds and its `when` guard, if any, holds too.
pub fn next_state(
    state: &State,
    outcome: &StepOutcome,
    vars: &dyn Variables,
) -> Result<Option<Taken>, TransitionError> {
    for (index, t) in state.transitions.iter().enumerate() {
        let kind = t.condition.kind();
        let pattern_matches = match (&t.pattern, kind.needs_pattern()) {
            (Some(p), true) => Some(
                pattern::compile(p)
                    .map_err(|source| TransitionError::Pattern { index, source })?
                    .is_match(&outcome.observed),
            ),
            _ => None,
        };
        if !condition_holds(kind, outcome, pattern_matches) {
            continue;
        }
        if let Some(guard) = &t.when
            && !guard
                .evaluate(vars)
                .map_err(|source| TransitionError::Guard { index, source })?
        {
            continue;
        }
        return Ok(Some(Taken {
            index,
            condition: match &t.condition {
                crate::workflow::model::Condition::Named(k) => k.as_str().to_string(),
                crate::workflow::model::Condition::Judged(j) => j.description.clone(),
            },
            next_state: t.next_state.clone(),
        }));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use indexmap::IndexMap;
    use serde_json::json;

    fn state(transitions: serde_json::Value) -> State {
        serde_json::from_value(json!({
            "action": {"tool": "list_terminal_sessions"},
            "transitions": transitions,
        }))
        .unwrap()
    }

    fn outcome(status: StepStatus, observed: &str, validation: Option<bool>) -> StepOutcome {
        StepOutcome {
            status,
            observed: observed.into(),
            validation,
        }
    }

    fn next(s: &State, o: &StepOutcome, vars: &[(&str, &str)]) -> Option<String> {
        let vars: IndexMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        next_state(s, o, &vars).unwrap().map(|t| t.next_state)
    }

    /// Every condition against every status, with and without a validation verdict.
    #[test]
    fn each_condition_holds_exactly_when_it_should() {
        let statuses = [
            StepStatus::Success,
            StepStatus::Failure,
            StepStatus::Timeout,
        ];
        let verdicts = [None, Some(true), Some(false)];
        for kind in ConditionKind::ALL {
            let mut t = json!({"condition": kind.as_str(), "next_state": "x"});
            if kind.needs_pattern() {
                t["pattern"] = json!("^ok$");
            }
            let s = state(json!([t]));
            for status in statuses {
                for verdict in verdicts {
                    for observed in ["ok", "not ok"] {
                        let o = outcome(status, observed, verdict);
                        let expected = match kind {
                            ConditionKind::Always => true,
                            ConditionKind::Success => status == StepStatus::Success,
                            ConditionKind::Failure => status == StepStatus::Failure,
                            ConditionKind::Timeout => status == StepStatus::Timeout,
                            ConditionKind::PatternMatch => observed == "ok",
                            ConditionKind::PatternNoMatch => observed != "ok",
                            ConditionKind::ValidationPassed => verdict == Some(true),
                            ConditionKind::ValidationFailed => verdict == Some(false),
                        };
                        assert_eq!(
                            next(&s, &o, &[]).is_some(),
                            expected,
                            "{kind} with {status:?}, {verdict:?}, {observed:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_first_that_holds_wins_and_none_ends_the_run() {
        let s = state(json!([
            {"condition": "timeout", "next_state": "slow"},
            {"condition": "failure", "next_state": "broken"},
            {"condition": "success", "next_state": "good"},
            {"next_state": "fallback"},
        ]));
        assert_eq!(
            next(&s, &outcome(StepStatus::Timeout, "", None), &[]).as_deref(),
            Some("slow")
        );
        assert_eq!(
            next(&s, &outcome(StepStatus::Failure, "", None), &[]).as_deref(),
            Some("broken")
        );
        assert_eq!(
            next(&s, &outcome(StepStatus::Success, "", None), &[]).as_deref(),
            Some("good")
        );
        let s = state(json!([{"condition": "success", "next_state": "good"}]));
        assert_eq!(next(&s, &outcome(StepStatus::Failure, "", None), &[]), None);
        let s = state(json!([]));
        assert_eq!(next(&s, &outcome(StepStatus::Success, "", None), &[]), None);
    }

    #[test]
    fn guards_over_run_variables() {
        let s = state(json!([
            {"condition": "success", "when": {"var": "COUNT", "gt": 0}, "next_state": "dirty"},
            {"condition": "success", "next_state": "clean"},
        ]));
        let ok = outcome(StepStatus::Success, "", None);
        assert_eq!(next(&s, &ok, &[("COUNT", "3")]).as_deref(), Some("dirty"));
        assert_eq!(next(&s, &ok, &[("COUNT", "0")]).as_deref(), Some("clean"));
        // Not set: the comparison is false, the next transition is taken.
        assert_eq!(next(&s, &ok, &[]).as_deref(), Some("clean"));
        // A type error is an error, not `false`.
        let vars: IndexMap<String, String> = [("COUNT".to_string(), "many".to_string())].into();
        let err = next_state(&s, &ok, &vars).unwrap_err();
        assert!(
            matches!(err, TransitionError::Guard { index: 0, .. }),
            "{err}"
        );
    }

    #[test]
    fn judged_conditions_hold_like_always_and_report_their_words() {
        let s = state(json!([{"condition": {"description": "looks done"}, "next_state": "end"}]));
        let t = next_state(
            &s,
            &outcome(StepStatus::Failure, "", None),
            &IndexMap::<String, String>::new(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (t.index, t.condition.as_str(), t.next_state.as_str()),
            (0, "looks done", "end")
        );
    }

    #[test]
    fn patterns_are_multi_line_over_the_observed_output() {
        let s = state(
            json!([{"condition": "pattern_match", "pattern": "^BUILD (OK|DONE)$", "next_state": "ok"}]),
        );
        let o = outcome(StepStatus::Success, "compiling\r\nBUILD OK\r\n$ ", None);
        assert_eq!(next(&s, &o, &[]).as_deref(), Some("ok"));
    }
}
