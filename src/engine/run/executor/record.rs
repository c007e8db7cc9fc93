//! What a run records, recorded in one call each: a step's beginning, its end and the
//! transition it takes, and each contract check. One call writes every place the fact goes
//! (the run's status, the seed's execution log, the journal, the published event), from the
//! same values, so that a field cannot reach one of them and miss another.

use super::super::ActiveRun;
use super::Exec;
use super::actions::Acted;
use super::bounded::shorten;
use crate::engine::Engine;
use crate::engine::contract::{ContractPhase, MASK};
use crate::engine::events::Actor;
use crate::engine::journal::{JournalEvent, RunEvent, now};
use crate::engine::transition::{StepStatus, Taken};
use crate::workflow::model::Workflow;
use serde_json::{Value, json};

/// Output kept in a journal step line.
const JOURNAL_OUTPUT: usize = 500;

/// A step that has run, as it is recorded.
pub(super) struct RanStep<'a> {
    pub step: u32,
    pub state: &'a str,
    pub tool: &'a str,
    /// As recorded: secret values masked ([`masked_params`]).
    pub params: &'a Value,
    pub acted: &'a Acted,
    pub elapsed_ms: f64,
}

impl Exec<'_> {
    /// A step begins: the run's status names its state, and its line is journaled and
    /// published.
    pub(super) async fn record_step_started(
        &mut self,
        step: u32,
        state: &str,
        tool: &str,
        params: &Value,
    ) {
        self.steps = step;
        self.last_state = Some(state.to_string());
        self.run.update(|s| {
            s.current_state = Some(state.to_string());
            s.states_executed = step;
        });
        self.record(RunEvent::StepStarted {
            step,
            state: state.to_string(),
            tool: tool.into(),
            params: params.clone(),
        })
        .await;
    }

    /// A step has run: its whole result goes to the execution log, its shortened output to
    /// the journal.
    pub(super) async fn record_step_finished(&mut self, ran: RanStep<'_>) {
        let status = ran.acted.outcome.status;
        self.log.push(json!({
            "phase": "execution",
            "state": ran.state,
            "tool": ran.tool,
            "params": ran.params,
            "result": ran.acted.result,
            "tool_success": status == StepStatus::Success,
            "status": status,
            "elapsed_ms": ran.elapsed_ms,
            "timestamp": now(),
        }));
        self.record(RunEvent::StepFinished {
            step: ran.step,
            state: ran.state.to_string(),
            tool: ran.tool.into(),
            status,
            elapsed_ms: ran.elapsed_ms,
            output: shorten(&ran.acted.outcome.observed, JOURNAL_OUTPUT),
            error: ran.acted.error.clone(),
        })
        .await;
    }

    /// The transition a state took, or none (the run ends after it).
    pub(super) async fn record_transition(&mut self, from: &str, taken: Option<&Taken>) {
        let to = taken.map(|t| t.next_state.clone());
        let condition = taken.map(|t| t.condition.clone());
        self.log.push(json!({
            "phase": "transition",
            "from_state": from,
            "to_state": to,
            "condition_met": taken.is_some(),
            "condition": condition,
            "timestamp": now(),
        }));
        self.record(RunEvent::Transition {
            from: from.to_string(),
            to,
            condition,
        })
        .await;
    }

    /// A contract check: the inputs before the first state, the return values after the last.
    pub(super) async fn record_contract(
        &mut self,
        phase: ContractPhase,
        valid: bool,
        detail: Value,
    ) {
        let log_phase = match phase {
            ContractPhase::Arguments => "pre_execution_validation",
            ContractPhase::ReturnValues => "post_execution_validation",
        };
        self.log
            .push(json!({"phase": log_phase, "validation_result": detail, "timestamp": now()}));
        self.record(RunEvent::ContractChecked {
            phase,
            valid,
            detail,
        })
        .await;
    }

    /// Journals an event of the run and publishes the line as written (secrets masked), once
    /// it is on disk and the run's status shows it.
    pub(super) async fn record(&mut self, body: RunEvent) -> u64 {
        let line = self.journal.append(body);
        let seq = line.seq;
        // Announced however this ends: a step cancelled while its line is being written
        // (its state's timeout) still leaves one event for the one line.
        let announce = Announce {
            engine: self.engine,
            run: self.run,
            actor: self.actor(),
            line: Some(line),
        };
        self.journal.written().await;
        drop(announce);
        seq
    }
}

/// Publishes a run's journal line when dropped: once it is written, or when the step that
/// wrote it is cancelled (the writing thread writes it all the same).
struct Announce<'a> {
    engine: &'a Engine,
    run: &'a ActiveRun,
    actor: Actor,
    line: Option<JournalEvent>,
}

impl Drop for Announce<'_> {
    fn drop(&mut self) {
        if let Some(line) = self.line.take() {
            self.run.update(|s| s.last_event = line.seq);
            self.engine
                .publish_run_line(&self.actor, &self.run.run_id, line);
        }
    }
}

/// A step's params for the log and journal: `set_env` values of secret variables masked.
pub(super) fn masked_params(wf: &Workflow, mut params: Value) -> Value {
    if let Some(vars) = params.get_mut("vars").and_then(Value::as_object_mut) {
        for (name, value) in vars.iter_mut() {
            let secret = wf.arguments.get(name).is_some_and(|a| a.secret)
                || wf.return_values.get(name).is_some_and(|r| r.secret);
            if secret {
                *value = Value::String(MASK.into());
            }
        }
    }
    params
}
