//! A session's life as the engine's tools see it: opening one (and waiting for a shell's
//! first prompt), listing, resizing and closing them, each told to front ends as an event.

use super::{ClosedSession, READY_WAIT, Resized, SessionList};
use crate::engine::events::{Actor, Change};
use crate::engine::{Engine, EngineError};
use crate::term::{OpenOptions, Program, SessionInfo, Size};
use crate::workflow::action::OpenTerminalParams;

impl Engine {
    /// Opens a session and, for a shell, waits (briefly) for its first prompt, so that input
    /// sent next is not typed before the line editor is ready.
    pub async fn open_terminal(
        &self,
        p: &OpenTerminalParams,
        actor: &Actor,
    ) -> Result<SessionInfo, EngineError> {
        let session = self.open_session(p, actor)?;
        Self::wait_until_ready(&session).await;
        Ok(session.info())
    }

    /// Opens a session without waiting for it (callers that must record the session before
    /// anything can cancel them wait with [`Engine::wait_until_ready`] afterwards).
    pub(in crate::engine) fn open_session(
        &self,
        p: &OpenTerminalParams,
        actor: &Actor,
    ) -> Result<std::sync::Arc<crate::term::Session>, EngineError> {
        let program = match (&p.shell, &p.command) {
            (Some(_), Some(_)) => {
                return Err(EngineError::InvalidParams(
                    "give `shell` or `command`, not both".into(),
                ));
            }
            (_, Some(argv)) => Program::Command(argv.clone()),
            (shell, None) => Program::Shell(shell.clone()),
        };
        let options = OpenOptions {
            program,
            cwd: p.cwd.as_ref().map(Into::into),
            env: p.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            size: Size {
                cols: p.cols.unwrap_or(120),
                rows: p.rows.unwrap_or(30),
            },
            name: p.name.clone(),
            opened_by: Some(actor.clone()),
        };
        let session = self.terminals.open(options)?;
        self.publish(
            actor.clone(),
            Change::SessionOpened {
                session: session.info(),
            },
        );
        self.follow_activity(&session);
        Ok(session)
    }

    /// Waits (at most 2 s) for a shell's first prompt.
    pub async fn wait_until_ready(session: &crate::term::Session) {
        if session.is_shell() {
            session.wait_for_output(READY_WAIT).await;
        }
    }

    pub fn list_terminal_sessions(&self) -> SessionList {
        SessionList {
            sessions: self.terminals.list(),
        }
    }

    /// Closes a session and everything running in it.
    pub async fn exit_terminal(
        &self,
        session: &str,
        actor: &Actor,
    ) -> Result<ClosedSession, EngineError> {
        let id = self.terminals.get(session)?.id().to_string();
        let teardown = self.terminals.close(&id).await?;
        self.publish(
            actor.clone(),
            Change::SessionClosed {
                session_id: id.clone(),
            },
        );
        Ok(ClosedSession {
            session_id: id,
            teardown,
        })
    }

    pub fn resize_terminal(
        &self,
        session: &str,
        cols: u16,
        rows: u16,
        actor: &Actor,
    ) -> Result<Resized, EngineError> {
        let s = self.terminals.get(session)?;
        let size = s.resize(cols, rows)?;
        self.publish(
            actor.clone(),
            Change::SessionResized {
                session_id: s.id().to_string(),
                cols: size.cols,
                rows: size.rows,
            },
        );
        Ok(Resized {
            session_id: s.id().to_string(),
            cols: size.cols,
            rows: size.rows,
            clamped: size.cols != cols || size.rows != rows,
        })
    }
}
