//! A run's ending as its journal tells it, for a run this process did not follow: its own
//! ending written by an earlier flowdeck, or none because that flowdeck died (`interrupted`).
//! The result is built by the same [`Ending::into_result`] as a run ending now.

use super::{JournalEvent, RunEvent};
use crate::engine::result::{Ending, FinalState, INTERRUPTED, RunResult, WrittenFinalState};

/// A run's result as its journal tells it: its last line's final state, error, states
/// executed, return values and duration, with its first line's workflow, version and session.
/// A journal with no last line is a run still going (`None`), unless `cut_off` says nobody
/// is writing it: then its flowdeck died and it ended `interrupted`, as the next start will
/// record. The execution log of such a result is empty: `run_events` reads the steps.
pub fn result_from_journal(events: &[JournalEvent], cut_off: bool) -> Option<RunResult> {
    let (first, started) = events.iter().find_map(|event| match &event.body {
        RunEvent::RunStarted {
            run_id,
            workflow,
            version,
            session_id,
            ..
        } => Some((event, (run_id, workflow, version, session_id))),
        _ => None,
    })?;
    let (run_id, workflow, version, session_id) = started;
    let mut ending = Ending::unstarted(
        run_id,
        workflow,
        version.clone(),
        session_id.clone(),
        FinalState::Interrupted,
        INTERRUPTED.into(),
        first.at.clone(),
    );
    let mut finished_at = None;
    for event in events {
        match &event.body {
            RunEvent::StepStarted { state, .. } => {
                ending.states_executed += 1;
                ending.last_state = Some(state.clone());
            }
            RunEvent::RunFinished {
                final_state,
                states_executed,
                error,
                return_values,
                duration_ms,
                ..
            } => {
                (ending.final_state, ending.error) = read_final_state(final_state, error);
                ending.states_executed = *states_executed;
                ending.return_values = return_values.clone();
                ending.duration_ms = *duration_ms;
                finished_at = Some(event.at.clone());
            }
            _ => {}
        }
    }
    let finished_at = match finished_at {
        Some(at) => at,
        None if !cut_off => return None,
        // Cut off: as far as its last line.
        None => {
            let last = events.last().map_or(&first.at, |e| &e.at);
            ending.duration_ms = span_ms(&first.at, last);
            last.clone()
        }
    };
    Some(ending.into_result(finished_at, None))
}

/// A journal's final state and error as this flowdeck reads them: a state it does not know
/// (a newer one wrote it) is still an ending, an error that names it.
fn read_final_state(
    final_state: &WrittenFinalState,
    error: &Option<String>,
) -> (FinalState, Option<String>) {
    match final_state {
        WrittenFinalState::Known(state) => (*state, error.clone()),
        WrittenFinalState::Unknown(final_state) => (
            FinalState::Error,
            Some(format!(
                "ended as {final_state:?}{}",
                error
                    .as_deref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            )),
        ),
    }
}

/// Milliseconds from one journal time to another (0 when either cannot be read).
pub fn span_ms(from: &str, to: &str) -> f64 {
    chrono::DateTime::parse_from_rfc3339(to)
        .ok()
        .zip(chrono::DateTime::parse_from_rfc3339(from).ok())
        .map_or(0.0, |(to, from)| (to - from).num_milliseconds() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use indexmap::IndexMap;
    use serde_json::Value;

    #[test]
    fn a_journal_cut_off_reads_as_interrupted_and_a_live_one_as_going() {
        let line = |seq, at: &str, body| JournalEvent {
            seq,
            at: at.into(),
            body,
        };
        let events = vec![
            line(
                1,
                "2026-11-24T10:00:00.000Z",
                RunEvent::RunStarted {
                    run_id: "r1".into(),
                    workflow: "w".into(),
                    version: Some("v".into()),
                    session_id: Some("s1".into()),
                    inputs: IndexMap::new(),
                    actor: None,
                },
            ),
            line(
                2,
                "2026-11-24T10:00:01.500Z",
                RunEvent::StepStarted {
                    step: 1,
                    state: "first".into(),
                    tool: "send_input".into(),
                    params: Value::Null,
                },
            ),
        ];
        assert!(result_from_journal(&events, false).is_none());
        let cut = result_from_journal(&events, true).expect("an ending");
        assert_eq!(cut.final_state, FinalState::Interrupted);
        assert_eq!(cut.error.as_deref(), Some(INTERRUPTED));
        assert_eq!(cut.states_executed, 1);
        assert_eq!(cut.duration_ms, 1500.0);
        assert_eq!(cut.last_state.as_deref(), Some("first"));
        assert_eq!(cut.workflow_version.as_deref(), Some("v"));
    }
}
