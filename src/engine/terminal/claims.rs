//! Who may type into a session: a run in progress owns its session's input, and a person in
//! focus mode holds it; anyone else is refused with a retryable error and an event.

use crate::engine::events::{Actor, Change};
use crate::engine::{Engine, EngineError};

impl Engine {
    /// A session used by a run in progress belongs to that run: input from anyone else would
    /// change what the run's step waits for. Refused with a clear, retryable error, and an
    /// event so that front ends can show the attempt.
    pub(super) fn claim_input(
        &self,
        session: &crate::term::Session,
        actor: &Actor,
    ) -> Result<(), EngineError> {
        let run = self.runs().running_in_session(session.id());
        // The run's own steps first: a person focused on its pane does not take it over.
        if let Some(run) = &run
            && *actor
                == (Actor::Run {
                    run_id: run.run_id.clone(),
                })
        {
            return Ok(());
        }
        let holder = self
            .input_holders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(session.id())
            .filter(|holder| *holder != actor)
            .cloned();
        if let Some(holder) = holder {
            let error = EngineError::InputHeld {
                session_id: session.id().to_string(),
                holder: holder.label(),
            };
            self.publish(
                actor.clone(),
                Change::SessionInputRejected {
                    session_id: session.id().to_string(),
                    reason: format!("{} tried to type: {error}", actor.label()),
                },
            );
            return Err(error);
        }
        let Some(run) = run else {
            return Ok(());
        };
        // Before a run's host is reached, what is typed answers ssh (a password or a
        // passphrase), not the run's steps: the person may.
        if actor.is_person() && session.far_side_reached() == Some(false) {
            return Ok(());
        }
        let error = EngineError::InputOwned {
            session_id: session.id().to_string(),
            run_id: run.run_id,
            workflow: run.workflow_name,
        };
        self.publish(
            actor.clone(),
            Change::SessionInputRejected {
                session_id: session.id().to_string(),
                reason: error.to_string(),
            },
        );
        Err(error)
    }

    /// `actor` holds the session's input (a person in focus mode on its pane): anyone else's
    /// input is refused with a retryable error until it is released.
    /// Refused while someone else holds it (another person in focus mode on it, at another
    /// studio): the error names who.
    pub fn hold_input(&self, session: &str, actor: &Actor) -> Result<(), EngineError> {
        let id = self.terminals.get(session)?.id().to_string();
        let mut holders = self
            .input_holders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(holder) = holders.get(&id).filter(|holder| *holder != actor) {
            return Err(EngineError::InputHeld {
                session_id: id,
                holder: holder.label(),
            });
        }
        holders.insert(id, actor.clone());
        Ok(())
    }

    /// Gives up holding the session's input, if `actor` holds it.
    pub fn release_input(&self, session: &str, actor: &Actor) {
        let mut holders = self
            .input_holders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if holders.get(session) == Some(actor) {
            holders.remove(session);
        }
    }
}
