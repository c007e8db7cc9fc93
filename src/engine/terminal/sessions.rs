//! A session's life as the engine's tools see it: opening one (and waiting for a shell's
//! first prompt), listing, resizing and closing them, each told to front ends as an event.

use super::{ClosedSession, READY_WAIT, Resized, SessionList};
use crate::engine::events::{Actor, Change};
use crate::engine::{Engine, EngineError};
use crate::term::{OpenOptions, Program, SessionInfo, Size};
use crate::workflow::action::OpenTerminalParams;

impl Engine {
    /// Opens a session and waits until it takes input: a local shell's first prompt (at
    /// most 2 s), so that input sent next is not typed before the line editor is ready; a
    /// shell on a host reached and set up, or an error that says why not (the session is
    /// then closed).
    pub async fn open_terminal(
        &self,
        p: &OpenTerminalParams,
        actor: &Actor,
    ) -> Result<SessionInfo, EngineError> {
        let session = self.open_session(p, actor)?;
        if let Err(e) = Self::wait_until_ready(&session, Some(p), &actor.typist()).await {
            let _ = self.exit_terminal(session.id(), actor).await;
            return Err(e);
        }
        Ok(session.info())
    }

    /// Opens a session without waiting for it (callers that must record the session before
    /// anything can cancel them wait with [`Engine::wait_until_ready`] afterwards). On a
    /// host, ssh may ask its questions in the pane only when `actor` is a person.
    pub(in crate::engine) fn open_session(
        &self,
        p: &OpenTerminalParams,
        actor: &Actor,
    ) -> Result<std::sync::Arc<crate::term::Session>, EngineError> {
        self.open_session_with(p, actor, actor.is_person())
    }

    /// [`Engine::open_session`], saying whether a person can answer ssh's questions (a run
    /// a person started, in the studio).
    pub(in crate::engine) fn open_session_with(
        &self,
        p: &OpenTerminalParams,
        actor: &Actor,
        person: bool,
    ) -> Result<std::sync::Arc<crate::term::Session>, EngineError> {
        let program = match (&p.shell, &p.command, &p.host) {
            (Some(_), Some(_), _) => {
                return Err(EngineError::InvalidParams(
                    "give `shell` or `command`, not both".into(),
                ));
            }
            (Some(_), _, Some(_)) | (_, Some(_), Some(_)) => {
                return Err(EngineError::InvalidParams(
                    "a session on a host runs the host's login shell: give `host` without `shell` or `command`".into(),
                ));
            }
            (_, _, Some(host)) => Program::Remote {
                connect: self.connect_command(host, person)?,
                place: host.clone(),
                patience: if person {
                    super::hosts::REACH_WITH_A_PERSON
                } else {
                    super::hosts::REACH_ALONE
                },
                person,
            },
            (_, Some(argv), None) => Program::Command(argv.clone()),
            (shell, None, None) => Program::Shell(shell.clone()),
        };
        let remote = p.host.is_some();
        let options = OpenOptions {
            program,
            // On a host, the folder and the variables are the far shell's (see
            // `wait_until_ready`).
            cwd: p.cwd.as_ref().filter(|_| !remote).map(Into::into),
            env: match remote {
                true => Vec::new(),
                false => p.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            },
            size: Size {
                cols: p.cols.unwrap_or(120),
                rows: p.rows.unwrap_or(30),
            },
            name: p.name.clone(),
            opened_by: Some(actor.clone()),
            relayed: false,
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

    /// The command that opens a shell on `host`: the one the folder's hosts.conf gives it
    /// (`docker exec -it app sh -c`), else ssh's.
    fn connect_command(&self, host: &str, person: bool) -> Result<Vec<String>, EngineError> {
        super::hosts::check_host(host)?;
        let file = crate::engine::hosts_file::HostsFile::read(self.store().root())?;
        match file.connect(host) {
            Some(argv) => Ok(argv.to_vec()),
            None => {
                super::hosts::connect_command(self.config().ssh_command.as_deref(), host, person)
            }
        }
    }

    /// Waits until a session takes input: a local shell's first prompt (at most 2 s; a shell
    /// that is slow to draw it is not an error); a shell on a host reached, its prompt set up
    /// and, from `p`, its working directory and variables set, or the error that says why
    /// not, naming the host and quoting ssh.
    pub async fn wait_until_ready(
        session: &crate::term::Session,
        p: Option<&OpenTerminalParams>,
        by: &str,
    ) -> Result<(), EngineError> {
        if session.host().is_some() {
            let env: Vec<(String, String)> = p
                .map(|p| p.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default();
            let cwd = p.and_then(|p| p.cwd.as_deref());
            crate::term::shell::connect(session, cwd, &env, by).await?;
        } else if session.is_shell() {
            session.wait_for_output(READY_WAIT).await;
        }
        Ok(())
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
