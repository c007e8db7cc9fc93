//! A workflow drafted from what was done by hand in a shell session: the session's deeds
//! (term/deeds.rs) written as a manifest (workflow/draft.rs). Returned as text for an agent;
//! saved as a new workflow for the studio and `flowdeck record`.

use super::super::events::Actor;
use super::super::{Engine, EngineError};
use crate::store::Saved;
use crate::term::deeds::Deed;
use crate::workflow::draft::{self, Answer, Done};
use crate::workflow::names::{display_safe, is_valid_name};
use crate::workflow::source::Format;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The answer to `workflow_draft_from_session`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionDraft {
    pub name: String,
    /// The manifest, YAML, valid: save it with `workflow_save` (after tidying it).
    pub content: String,
    /// The secret arguments it declares: each was typed where the terminal did not echo, or
    /// was a credential on a command line (`lifted`), and a run must be given it.
    pub secrets: Vec<String>,
    /// The credentials typed on command lines that became secret arguments: `NAME: what,
    /// in state S`. The draft never holds their values.
    pub lifted: Vec<String>,
    /// The literals that became arguments, the recorded value their default: `NAME =
    /// value: why` (a path under the home or working directory, or used in several
    /// commands).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<String>,
    /// How many command lines it was drafted from.
    pub commands: usize,
}

impl Engine {
    /// Drafts workflow `name` from what was typed in shell session `session_id` since it
    /// opened or since its mark.
    pub fn workflow_draft_from_session(
        &self,
        session_id: &str,
        name: &str,
        description: &str,
    ) -> Result<SessionDraft, EngineError> {
        if !is_valid_name(name) {
            return Err(EngineError::InvalidParams(format!(
                "{} is not a workflow name: lowercase letters, digits and _ only",
                display_safe(name)
            )));
        }
        let session = self.terminals().get(session_id)?;
        let Some(deeds) = session.deeds() else {
            return Err(EngineError::InvalidParams(format!(
                "session {} runs {}, not a shell: a draft is made of the command lines typed at a shell's prompt",
                session.id(),
                display_safe(&session.info().command.join(" "))
            )));
        };
        // A far shell's paths are its host's: neither home nor working directory is known.
        let place = if session.info().host.is_some() {
            draft::Place::default()
        } else {
            draft::Place {
                home: std::env::var("HOME").ok(),
                cwd: session
                    .live_leader()
                    .and_then(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).ok())
                    .map(|dir| dir.display().to_string()),
            }
        };
        draft_of(name, description, deeds, &place).map_err(|why| {
            EngineError::InvalidParams(match why {
                Nothing => format!(
                    "nothing was typed at the shell's prompt in session {} since it opened or since its mark: do the procedure there first",
                    session.id()
                ),
                Invalid(why) => why,
            })
        })
    }

    /// Drafts workflow `name` from a session and saves it as a new workflow (refused when the
    /// name is taken).
    pub fn save_draft_from_session(
        &self,
        session_id: &str,
        name: &str,
        actor: &Actor,
    ) -> Result<Saved, EngineError> {
        let drafted = self.workflow_draft_from_session(session_id, name, "")?;
        self.save_new(&drafted.content, Format::Yaml, name, actor)
    }

    /// Sets the session's mark: a draft holds what is typed after it.
    pub fn mark_session(&self, session_id: &str) -> Result<(), EngineError> {
        let session = self.terminals().get(session_id)?;
        if session.mark_deeds() {
            Ok(())
        } else {
            Err(EngineError::InvalidParams(format!(
                "session {} runs no shell: there is nothing to mark",
                session.id()
            )))
        }
    }
}

/// Why no draft was made.
#[derive(Debug, Clone, PartialEq)]
pub enum NoDraft {
    /// No command line was typed at the shell's prompt.
    Nothing,
    /// The draft would not be a valid workflow (the reasons).
    Invalid(String),
}
use NoDraft::{Invalid, Nothing};

/// The draft of workflow `name` from a shell session's deeds (`flowdeck record` has them
/// from a session of its own). A last `exit` or `logout` is left out: a run's shell must stay
/// (an earlier one left a shell started inside, and is kept).
pub fn draft_of(
    name: &str,
    description: &str,
    deeds: Vec<Deed>,
    place: &draft::Place,
) -> Result<SessionDraft, NoDraft> {
    let mut deeds = deeds;
    if deeds.last().is_some_and(|d| ends_the_shell(&d.line)) {
        deeds.pop();
    }
    let done: Vec<Done> = deeds.into_iter().map(done).collect();
    if done.is_empty() {
        return Err(Nothing);
    }
    let drafted = draft::draft(name, description, &done, place).map_err(Invalid)?;
    Ok(SessionDraft {
        name: name.to_string(),
        content: drafted.yaml,
        secrets: drafted.secrets,
        lifted: drafted.lifted,
        arguments: drafted
            .arguments
            .iter()
            .map(|l| format!("{} = {}: {}", l.name, l.value, l.why))
            .collect(),
        commands: done.len(),
    })
}

fn ends_the_shell(line: &str) -> bool {
    matches!(line.split_whitespace().next(), Some("exit" | "logout"))
        && !line.contains(';')
        && !line.contains("&&")
        && !line.contains('|')
}

fn done(deed: Deed) -> Done {
    Done {
        line: deed.line,
        exit: deed.exit,
        seconds: deed.seconds,
        answers: deed
            .replies
            .into_iter()
            .map(|r| Answer {
                prompt: r.prompt,
                text: r.text,
                hidden: r.hidden,
            })
            .collect(),
        prompt_after: deed.prompt_after,
    }
}
