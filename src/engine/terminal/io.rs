//! Typing into a session and reading from it: `send_input`, `get_screen_content` and
//! `await_output`, each on behalf of its typist (whose last input `since_input` and
//! `last_input` mean).

use super::vocabulary::{compile, key_press, since, wait_duration};
use super::{AwaitOutput, DEFAULT_TAIL_LINES, ScreenContent, SentInput};
use crate::engine::events::Actor;
use crate::engine::{Engine, EngineError};
use crate::term::{self, AwaitSpec, Content};
use crate::workflow::action::{
    self, AwaitOutputParams, ContentMode, GetScreenContentParams, SendInputParams,
};
use std::time::Duration;

impl Engine {
    pub fn send_input(
        &self,
        session: &str,
        p: &SendInputParams,
        actor: &Actor,
    ) -> Result<SentInput, EngineError> {
        let s = self.terminals.get(session)?;
        self.claim_input(&s, actor)?;
        let bytes = match (&p.input_text, &p.keys) {
            (Some(text), None) => s.send_text(text, &actor.typist())?,
            (None, Some(keys)) => {
                let keys = keys.iter().map(key_press).collect::<Result<Vec<_>, _>>()?;
                s.send_keys(&keys, &actor.typist())?
            }
            _ => {
                return Err(EngineError::InvalidParams(
                    "send_input needs exactly one of `input_text` and `keys`".into(),
                ));
            }
        };
        Ok(SentInput {
            session_id: s.id().to_string(),
            bytes,
        })
    }

    /// Reads a session; `since_input` is the last input of `actor`.
    pub fn get_screen_content(
        &self,
        session: &str,
        p: &GetScreenContentParams,
        actor: &Actor,
    ) -> Result<ScreenContent, EngineError> {
        let s = self.terminals.get(session)?;
        let mode = p.content_mode.unwrap_or_default();
        let what = match mode {
            ContentMode::Screen => Content::Screen,
            ContentMode::History => Content::History,
            ContentMode::Tail => Content::Tail(p.lines.unwrap_or(DEFAULT_TAIL_LINES) as usize),
            ContentMode::SinceInput => Content::SinceInput(Some(actor.typist())),
        };
        let content = s.content(what);
        let info = s.info();
        let (cursor_row, cursor_col) = s.with_screen(|screen| screen.cursor_position());
        Ok(ScreenContent {
            session_id: info.session_id,
            content_mode: mode,
            content,
            cols: info.cols,
            rows: info.rows,
            cursor_row,
            cursor_col,
            running: info.running,
            exit: info.exit,
        })
    }

    /// Waits for output. `state_timeout` is the running state's `timeout_seconds`, used when
    /// the step gives none; `since: last_input` is the last input of `actor`, so that one
    /// typist's input never moves another's wait.
    pub async fn await_output(
        &self,
        session: &str,
        p: &AwaitOutputParams,
        state_timeout: Option<f64>,
        actor: &Actor,
    ) -> Result<AwaitOutput, EngineError> {
        let s = self.terminals.get(session)?;
        let (timeout, timeout_seconds, timeout_clamped) = wait_duration(p.timeout, state_timeout);
        if p.shell_prompt {
            if p.pattern.is_some() || p.quiet_ms.is_some() {
                return Err(EngineError::InvalidParams(
                    "await_output waits for `shell_prompt` alone: not with `pattern` or `quiet_ms`"
                        .into(),
                ));
            }
            return Ok(AwaitOutput {
                session_id: s.id().to_string(),
                result: s.await_shell_prompt(timeout).await?,
                timeout_seconds,
                timeout_clamped,
            });
        }
        if p.pattern.is_none() && p.quiet_ms.is_none() {
            return Err(EngineError::InvalidParams(
                "await_output needs `pattern`, `quiet_ms`, or both (the pattern, then quiet), or `shell_prompt`"
                    .into(),
            ));
        }
        let quiet = match p.quiet_ms {
            Some(ms) if ms == 0 || ms > action::MAX_QUIET_MS => {
                return Err(EngineError::InvalidParams(format!(
                    "quiet_ms must be 1 to {} (milliseconds), not {ms}",
                    action::MAX_QUIET_MS
                )));
            }
            Some(ms) => Some(term::Quiet {
                quiet: Duration::from_millis(ms),
                on: match p.quiet_on.unwrap_or_default() {
                    action::QuietOn::Output => term::QuietOn::Output,
                    action::QuietOn::Screen => term::QuietOn::Screen,
                },
            }),
            None => None,
        };
        let spec = AwaitSpec {
            pattern: p.pattern.as_deref().map(compile).transpose()?,
            stop_patterns: p
                .stop_patterns
                .iter()
                .map(|sp| compile(sp))
                .collect::<Result<_, _>>()?,
            since: since(p.since.unwrap_or_default()),
            timeout,
            typist: Some(actor.typist()),
            quiet,
        };
        let result = s.await_output(spec).await?;
        Ok(AwaitOutput {
            session_id: s.id().to_string(),
            result,
            timeout_seconds,
            timeout_clamped,
        })
    }
}
