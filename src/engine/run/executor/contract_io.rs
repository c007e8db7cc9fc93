//! The contract's values crossing into the run's session and back: the inputs resolved and
//! exported before the first state, the return values read and checked after the last, and
//! the values a step stores (captures, answers) exported while the shell is at its prompt.

use super::{Exec, Stop};
use crate::engine::contract;
use crate::engine::contract::ContractPhase;
use crate::engine::result::FinalState;
use crate::engine::secrets::Secrets;
use crate::workflow::action::{Action, SetEnvParams};
use crate::workflow::model::Scalar;
use indexmap::IndexMap;
use serde_json::json;
use std::time::Duration;

/// Timeout for the contract's own shell commands (reading and exporting variables).
const CONTRACT_TIMEOUT: f64 = 30.0;

impl Exec<'_> {
    pub(super) async fn check_inputs(
        &mut self,
        given: &IndexMap<String, String>,
    ) -> Result<(), Stop> {
        if self.wf.arguments.is_empty() && given.is_empty() {
            return Ok(());
        }
        let unknown_given: Vec<&str> = self
            .wf
            .arguments
            .keys()
            .filter(|k| !given.contains_key(*k))
            .map(String::as_str)
            .collect();
        // Arguments not given are looked up in the session.
        let session_values = if unknown_given.is_empty() {
            IndexMap::new()
        } else {
            self.session_env(&unknown_given, "arguments").await
        };
        // Known before anything about them is written down, even when they turn out invalid.
        let seen: IndexMap<String, String> = given
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .chain(
                session_values
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.clone()?))),
            )
            .collect();
        self.learn_secrets(&seen);
        let resolved = contract::resolve_inputs(self.wf, given, &session_values);
        let (valid, detail) = match &resolved {
            Ok(inputs) => (
                true,
                json!({"valid": true, "sources": inputs.sources, "missing_vars": [], "validation_type": "arguments"}),
            ),
            Err(problems) => (
                false,
                json!({"valid": false, "missing_vars": problems.missing, "invalid": problems.invalid, "unknown": problems.unknown, "validation_type": "arguments"}),
            ),
        };
        self.record_contract(ContractPhase::Arguments, valid, detail)
            .await;
        let inputs = resolved.map_err(|problems| {
            Stop::new(FinalState::ValidationFailed, problems.message(self.wf))
        })?;
        // Before anything types them into the session or writes them down.
        self.learn_secrets(&inputs.values);
        let exports = inputs.to_export();
        if !exports.is_empty() {
            let id = self
                .session_id(None)
                .map_err(|e| Stop::new(FinalState::Error, e.to_string()))?;
            let params = SetEnvParams {
                session_id: None,
                vars: exports
                    .into_iter()
                    .map(|(k, v)| (k, Scalar::String(v)))
                    .collect(),
            };
            self.engine
                .set_env(&id, &params, Some(CONTRACT_TIMEOUT), &self.actor())
                .await
                .map_err(|e| {
                    Stop::new(
                        FinalState::Error,
                        format!("cannot export the inputs into session {id}: {e}"),
                    )
                })?;
        }
        self.vars.extend(inputs.values);
        Ok(())
    }

    /// Learns the secret values among `values` (by the workflow's `secret: true` variables):
    /// from here on they are masked in everything the run writes or returns.
    fn learn_secrets(&mut self, values: &IndexMap<String, String>) {
        let secret = |name: &str| {
            self.wf.arguments.get(name).is_some_and(|a| a.secret)
                || self.wf.return_values.get(name).is_some_and(|r| r.secret)
        };
        let found = Secrets::new(
            values
                .iter()
                .filter(|(name, _)| secret(name))
                .map(|(_, value)| value.as_str()),
        );
        if found.is_empty() {
            return;
        }
        self.secrets.extend(&found);
        self.journal.set_secrets(self.secrets.clone());
        self.run.set_secrets(self.secrets.clone());
        self.mask_recordings();
    }

    /// Variables read from the run's session; none when it has none or is not a shell at its
    /// prompt (then the contract falls back to defaults and run variables).
    async fn session_env(&self, names: &[&str], what: &str) -> IndexMap<String, Option<String>> {
        let Some(id) = &self.session else {
            return IndexMap::new();
        };
        match self
            .engine
            .read_env(id, names, Some(CONTRACT_TIMEOUT), &self.actor())
            .await
        {
            Ok(values) => values.values,
            Err(e) => {
                tracing::debug!("{what} not read from session {id}: {e}");
                IndexMap::new()
            }
        }
    }

    pub(super) async fn check_returns(&mut self) -> Result<IndexMap<String, String>, Stop> {
        if self.wf.return_values.is_empty() {
            return Ok(IndexMap::new());
        }
        let names: Vec<&str> = self.wf.return_values.keys().map(String::as_str).collect();
        if let Some(id) = &self.session
            && let Ok(session) = self.engine.terminals().get(id)
        {
            // The last step may have typed a command that is still running (the seed's
            // build_project does): the values exist once the shell is back at its prompt.
            if session.is_shell() && session.exit().is_none() {
                session
                    .wait_for_prompt(Duration::from_secs_f64(CONTRACT_TIMEOUT))
                    .await;
            }
        }
        // A value stored last and still held would otherwise lose to an older one the
        // session had.
        if let Some(id) = self.session.clone() {
            self.export_held(&id, Patience::AtPromptNow).await;
        }
        let session_values = self.session_env(&names, "return values").await;
        let read: IndexMap<String, String> = session_values
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.clone()?)))
            .chain(self.vars.iter().map(|(k, v)| (k.clone(), v.clone())))
            .collect();
        self.learn_secrets(&read);
        let checked = contract::check_returns(self.wf, &session_values, &self.vars);
        let detail = match &checked {
            Ok(values) => {
                json!({"valid": true, "missing_vars": [], "values": values, "validation_type": "return_values"})
            }
            Err((missing, values)) => {
                json!({"valid": false, "missing_vars": missing, "values": values, "validation_type": "return_values"})
            }
        };
        self.record_contract(ContractPhase::ReturnValues, checked.is_ok(), detail)
            .await;
        checked.map_err(|(missing, values)| {
            let expected: Vec<&str> = self.wf.return_values.keys().map(String::as_str).collect();
            let mut stop = Stop::new(
                FinalState::ReturnValidationFailed,
                format!(
                    "Workflow failed to set required return values: {}. Expected variables: {}",
                    missing.join(", "),
                    expected.join(", ")
                ),
            );
            stop.return_values = values;
            stop
        })
    }

    /// Stores values as run variables and exports them into the session's shell as soon as it
    /// is at its prompt. The program whose output matched usually still has the terminal
    /// (an installer printing its last line, a REPL): the values are held until the shell is
    /// back, and exported before the next step that types there ([`Exec::export_held`]).
    /// Exporting only at the moment of the match lost them whenever the program was a moment
    /// from its end, and the next command read an empty variable.
    pub(super) async fn store_vars(&mut self, session: &str, values: Vec<(String, String)>) {
        if values.is_empty() {
            return;
        }
        // A capture into a secret's name is a secret from this moment: before it is exported
        // (the echo of the export), journaled or shown again in the terminal's recording.
        self.learn_secrets(&values.iter().cloned().collect());
        self.vars.extend(values.iter().cloned());
        self.held
            .entry(session.to_string())
            .or_default()
            .extend(values);
        self.export_held(session, Patience::AtPromptNow).await;
    }

    /// Before a step's action: the values held for its session exported when the step types
    /// there, so that what it types can use them.
    pub(super) async fn export_held_before(&mut self, session: &str, action: &Action) {
        let patience = match action {
            Action::RunCommand(_) | Action::SetEnv(_) => Patience::ShellNeeded,
            Action::SendInput(_) => Patience::AtPromptNow,
            _ => return,
        };
        self.export_held(session, patience).await;
    }

    /// Exports the values held for `session` if its shell is at its prompt. A step that needs
    /// the shell anyway (a command, `set_env`) gives a program that is ending the moment the
    /// command itself would; one that only types waits for nothing, so that an export is
    /// never typed into a program in the foreground (the values stay held for a later step).
    async fn export_held(&mut self, session: &str, patience: Patience) {
        if self.held.get(session).is_none_or(IndexMap::is_empty) {
            return;
        }
        let Ok(terminal) = self.engine.terminals().get(session) else {
            return;
        };
        let at_prompt = match patience {
            Patience::AtPromptNow => terminal.require_shell_prompt().is_ok(),
            Patience::ShellNeeded => crate::term::shell::ready_shell(
                &terminal,
                Duration::from_secs_f64(CONTRACT_TIMEOUT),
            )
            .await
            .is_ok(),
        };
        if !at_prompt {
            return;
        }
        let values = self.held.swap_remove(session).unwrap_or_default();
        let params = SetEnvParams {
            session_id: None,
            vars: values
                .into_iter()
                .map(|(k, v)| (k, Scalar::String(v)))
                .collect(),
        };
        if let Err(e) = self
            .engine
            .set_env(session, &params, Some(CONTRACT_TIMEOUT), &self.actor())
            .await
        {
            tracing::debug!("stored values not exported into session {session}: {e}");
        }
    }
}

/// How long exporting held values may wait for the shell's prompt.
#[derive(Debug, Clone, Copy)]
enum Patience {
    /// Only if the shell is at its prompt now: the step types, maybe into a program.
    AtPromptNow,
    /// As long as a command gives a program that is ending: the step needs the shell.
    ShellNeeded,
}
