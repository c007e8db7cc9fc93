//! The tools that talk to a session's shell (term/shell/): `run_command`, `set_env`,
//! reading variables, and waiting for the prompt. A command whose caller stops waiting is
//! interrupted rather than left running.

use super::vocabulary::wait_duration;
use super::{CommandOutput, EnvValues, READY_WAIT, SetEnvResult};
use crate::engine::events::Actor;
use crate::engine::{Engine, EngineError};
use crate::term;
use crate::workflow::action::{RunCommandParams, SetEnvParams};
use std::time::Duration;

/// Interrupts a session's foreground job when dropped while armed, as its typist.
struct InterruptOnDrop(Option<std::sync::Arc<crate::term::Session>>, String);

impl Drop for InterruptOnDrop {
    fn drop(&mut self) {
        if let Some(session) = self.0.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let by = std::mem::take(&mut self.1);
            runtime.spawn_blocking(move || {
                session.interrupt_foreground(Duration::from_millis(500), &by)
            });
        }
    }
}

impl Engine {
    pub async fn run_command(
        &self,
        session: &str,
        p: &RunCommandParams,
        state_timeout: Option<f64>,
        actor: &Actor,
    ) -> Result<CommandOutput, EngineError> {
        let s = self.terminals.get(session)?;
        self.claim_input(&s, actor)?;
        let (timeout, timeout_seconds, _) = wait_duration(p.timeout, state_timeout);
        // Whoever stops waiting (an agent cancelling its call, a cancelled run, a person
        // leaving) interrupts the command it typed, rather than leave it running. Armed only
        // once the shell is ready, so it never hits a program the command did not start.
        term::shell::ready_shell(&s, READY_WAIT).await?;
        let typist = actor.typist();
        let mut armed = InterruptOnDrop(Some(s.clone()), typist.clone());
        let result = term::shell::run_command(&s, &p.command, timeout, &typist).await;
        armed.0 = None;
        let result = result?;
        Ok(CommandOutput {
            session_id: s.id().to_string(),
            result,
            timeout_seconds,
        })
    }

    /// Waits (at most 2 s) for the session's shell to be at its prompt; `not_a_shell` when a
    /// REPL or another program keeps the terminal.
    pub async fn shell_ready(&self, session: &str) -> Result<(), EngineError> {
        let s = self.terminals.get(session)?;
        term::shell::ready_shell(&s, Duration::from_secs(2)).await?;
        Ok(())
    }

    /// Exports variables into the session's shell, stored literally.
    pub async fn set_env(
        &self,
        session: &str,
        p: &SetEnvParams,
        state_timeout: Option<f64>,
        actor: &Actor,
    ) -> Result<SetEnvResult, EngineError> {
        let s = self.terminals.get(session)?;
        self.claim_input(&s, actor)?;
        let (timeout, _, _) = wait_duration(None, state_timeout);
        let vars: Vec<(String, String)> = p
            .vars
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect();
        term::shell::export_env(&s, &vars, timeout, &actor.typist()).await?;
        Ok(SetEnvResult {
            session_id: s.id().to_string(),
            exported: p.vars.keys().cloned().collect(),
        })
    }

    /// Reads variables from the session's shell.
    pub async fn read_env(
        &self,
        session: &str,
        names: &[&str],
        timeout: Option<f64>,
        actor: &Actor,
    ) -> Result<EnvValues, EngineError> {
        let s = self.terminals.get(session)?;
        // Reading types a command, so it is input like any other.
        self.claim_input(&s, actor)?;
        let (timeout, _, _) = wait_duration(timeout, None);
        let values = term::shell::read_env(&s, names, timeout, &actor.typist()).await?;
        Ok(EnvValues {
            session_id: s.id().to_string(),
            values,
        })
    }
}
