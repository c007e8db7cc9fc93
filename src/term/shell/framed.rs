//! Running a script in the shell between a begin and an end marker, and telling from those
//! markers when it began, when it ended, with what status and what it printed.
//!
//! The framing is held back from the screen and the history while it runs (hush.rs) when it
//! can be; when hiding gives up, the markers are looked for in the history instead. Both
//! ways live here because the second picks up where the first left off.

use super::quoting::quote_long;
use super::shown::shown_command;
use super::{CommandOutcome, CommandResult, MAX_TYPED_LINE};
use crate::term::error::TermError;
use crate::term::hush::{HushState, OUTPUT_CUT};
use crate::term::matcher::{AwaitSpec, Since, WaitOutcome};
use crate::term::nonce::nonce;
use crate::term::session::{AwaitResult, Session};
use regex::Regex;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// A shell at its prompt starts a typed line within milliseconds; one that has not printed
/// the start marker after this long did not take the line as a command. (The line itself
/// may wait up to `typing::HOLD_MAX` for a busy shell to read it.)
const START_WAIT: Duration = Duration::from_secs(10);

/// How a framed command appears on the session's screen and in its history.
#[derive(Clone, Copy)]
pub(super) enum Framing<'a> {
    /// flowdeck's own plumbing (reading and exporting variables): nothing of it is shown.
    Hidden,
    /// A command someone asked for: shown as if a person had typed this text at the
    /// prompt, with its output as it comes; only the framing is hidden.
    Shown(&'a str),
}

/// When a framed command's waits end: it must begin within `start_wait` and end within
/// `timeout`, both counted from `started`.
#[derive(Clone, Copy)]
struct Deadlines {
    started: Instant,
    start_wait: Duration,
    timeout: Duration,
}

impl Deadlines {
    fn elapsed_ms(self) -> f64 {
        self.started.elapsed().as_secs_f64() * 1000.0
    }
}

/// Types `script` framed by begin and end markers and waits for the end marker. The
/// framing (and, for `Framing::Hidden`, everything) is kept off the screen and out of the
/// history while it runs (hush.rs), when it can be; when it cannot, it is shown as it came.
pub(super) async fn run_framed(
    session: &Session,
    script: &str,
    timeout: Duration,
    by: &str,
    framing: Framing<'_>,
) -> Result<CommandResult, TermError> {
    let nonce = nonce();
    let typed = typed_line(script, &nonce);
    let from = session.output_end();
    let deadlines = Deadlines {
        started: Instant::now(),
        start_wait: timeout.min(START_WAIT),
        timeout,
    };
    // Where a shown command's output began, when it began but hiding its framing gave up:
    // its begin marker is not in the history to be found.
    let mut body_from = None;
    // Whatever ends this call, a line not yet typed is never typed after it.
    let _line;
    match start_hush(session, &nonce, framing) {
        Some(hush) => match run_hushed(session, &nonce, &typed, by, hush, deadlines).await? {
            ControlFlow::Break(result) => return Ok(result),
            // Hiding gave up (or time ran out): the markers, if they came, are in the
            // history now, where the waits below find them in what time is left.
            ControlFlow::Continue(body_start) => body_from = body_start,
        },
        None => {
            _line = Line {
                session,
                seq: session.send_framed(&typed, by)?,
            };
        }
    }
    // Compiled only here: a hidden command that finished never needs them.
    let end = marker(session, &format!("\n__FD{nonce}:E:(\\d+)\n"))?;
    if body_from.is_none() {
        await_begin(session, &nonce, from, deadlines).await?;
    }
    let waited = session
        .await_output(AwaitSpec {
            pattern: Some(end),
            stop_patterns: Vec::new(),
            since: Since::After(body_from.unwrap_or(from)),
            timeout: timeout.saturating_sub(deadlines.started.elapsed()),
            typist: None,
            quiet: None,
        })
        .await?;
    let outcome = match waited.outcome {
        WaitOutcome::Matched => CommandOutcome::Completed,
        WaitOutcome::Exited => CommandOutcome::Exited,
        WaitOutcome::Timeout | WaitOutcome::Stopped => CommandOutcome::Timeout,
    };
    let output = match body_from {
        // A shown command whose shell ended (`exit 7`) while it ran: what it showed.
        Some(at) => {
            let output = session.command_output(at);
            match output.find(&format!("\n__FD{nonce}:E:")) {
                Some(end) => output[..end].to_string(),
                None => output,
            }
        }
        None => output_in_history(&session.output_since(from), &nonce, outcome),
    };
    Ok(CommandResult {
        outcome,
        exit_code: exit_code(outcome, &waited),
        output,
        elapsed_ms: deadlines.elapsed_ms(),
    })
}

/// The line typed to run `script` framed by the markers of `nonce`.
fn typed_line(script: &str, nonce: &str) -> String {
    let script = script.trim_end_matches([' ', ';']);
    let script = if script.len() <= MAX_TYPED_LINE && !script.contains(|c: char| c.is_control()) {
        script.to_string()
    } else {
        format!("eval {}", quote_long(script))
    };
    // A leading space keeps the line out of history where HISTCONTROL asks for that; the
    // `case` removes it where history took it anyway (bash), and only if it is ours.
    // It goes first, so that a command interrupted with Ctrl-C leaves no trace either.
    let line = format!(
        " case \"$(history 1 2>/dev/null)\" in *{nonce}*) history -d -1 2>/dev/null;; esac; printf '%s%s:B\\n' __FD {nonce}; {script}; printf '\\n%s%s:E:%s\\n' __FD {nonce} \"$?\"\n"
    );
    // Ctrl-U first: text left on the command line (answers to terminal queries that binary
    // output asked for, read by the line editor once the program ended) would otherwise
    // become the start of this line. It deletes the line in readline, zle and the kernel's
    // own line editing alike.
    format!("\u{15}{line}")
}

/// Starts holding back the framed command of `nonce` (all of it when hidden, its framing
/// when shown): the hush's state and the text the run's typist skips like an echo. `None`
/// when the session cannot hide it.
fn start_hush(
    session: &Session,
    nonce: &str,
    framing: Framing<'_>,
) -> Option<(watch::Receiver<HushState>, String)> {
    match framing {
        Framing::Hidden => session
            .hush(nonce, None)
            .map(|state| (state, String::new())),
        Framing::Shown(command) => {
            let lines = shown_command(command);
            // Shown after the prompt in place of the framing; the run's typist skips it
            // like an echo, so that its "since the last input" starts at the output.
            let head = format!("{}\r\n", lines.join("\r\n"));
            let echo = format!("{}\n", lines.join("\n"));
            session
                .hush(nonce, Some(head.into_bytes()))
                .map(|state| (state, echo))
        }
    }
}

/// Types the framed line with the hush started and follows it. `Break` with the result when
/// it ended, or when a shown command ran out of time; `Continue` when hiding gave up or a
/// command did not start, with where a shown command's output began if it had.
async fn run_hushed(
    session: &Session,
    nonce: &str,
    typed: &str,
    by: &str,
    (state, echo): (watch::Receiver<HushState>, String),
    deadlines: Deadlines,
) -> Result<ControlFlow<CommandResult, Option<u64>>, TermError> {
    // Released on every way out, a dropped future included: nothing stays held. The line
    // is withdrawn first (dropped in the reverse order), so it is never typed unhidden.
    let _hushed = Hushed { session, nonce };
    let _line = Line {
        session,
        seq: session.send_hidden(typed, nonce, &echo, by)?,
    };
    Ok(match hidden_result(state, deadlines).await {
        Hidden::Done(status, output) => ControlFlow::Break(CommandResult {
            outcome: CommandOutcome::Completed,
            exit_code: status,
            output,
            elapsed_ms: deadlines.elapsed_ms(),
        }),
        // A shown command out of time: its output so far. (Hiding ends with this
        // call: the rest, end marker included, is shown as it comes.)
        Hidden::TimedOut {
            body_start: Some(at),
        } => ControlFlow::Break(CommandResult {
            outcome: CommandOutcome::Timeout,
            exit_code: None,
            output: session.command_output(at),
            elapsed_ms: deadlines.elapsed_ms(),
        }),
        Hidden::Gone { body_start } => ControlFlow::Continue(body_start),
        Hidden::TimedOut { body_start: None } => ControlFlow::Continue(None),
    })
}

/// A marker's pattern, compiled. (The nonce is hex, so it compiles; should it not, that is
/// the shell protocol failing, not a panic.)
fn marker(session: &Session, pattern: &str) -> Result<Regex, TermError> {
    Regex::new(pattern).map_err(|e| TermError::ShellProtocol {
        session: session.id().to_string(),
        detail: e.to_string(),
    })
}

/// Waits in the history for the begin marker of `nonce`, in what is left of the start wait:
/// a shell that has not printed it by then did not take the line as a command.
async fn await_begin(
    session: &Session,
    nonce: &str,
    from: u64,
    deadlines: Deadlines,
) -> Result<(), TermError> {
    let begun = marker(session, &format!("__FD{nonce}:B\n"))?;
    // What is left of the wait: a hidden attempt that gave up may have used some.
    let start_left = deadlines
        .start_wait
        .saturating_sub(deadlines.started.elapsed());
    let start = session
        .await_output(AwaitSpec {
            pattern: Some(begun),
            stop_patterns: Vec::new(),
            since: Since::After(from),
            timeout: start_left,
            typist: None,
            quiet: None,
        })
        .await?;
    if matches!(start.outcome, WaitOutcome::Timeout | WaitOutcome::Stopped) {
        return Err(TermError::NotStarted {
            session: session.id().to_string(),
            seconds: deadlines.start_wait.as_secs_f64(),
            line: command_line(session),
        });
    }
    Ok(())
}

/// A framed command's output as the history holds it (`text`, from where the line was
/// typed): between its markers, rendered.
fn output_in_history(text: &str, nonce: &str, outcome: CommandOutcome) -> String {
    let begin = format!("__FD{nonce}:B\n");
    let marker = format!("\n__FD{nonce}:E:");
    let body_start = text.find(&begin).map(|i| i + begin.len());
    let body = match body_start {
        Some(start) => {
            let rest = &text[start..];
            match rest.find(&marker) {
                // The end marker's own leading newline is not output.
                Some(end) => rest[..end].to_string(),
                None => rest.to_string(),
            }
        }
        // A flood pushed the begin marker out of the history: what is left is the
        // output's end, marked as cut.
        None if outcome == CommandOutcome::Completed => {
            let end = text.find(&marker).unwrap_or(text.len());
            format!("{OUTPUT_CUT}\n{}", &text[..end])
        }
        None => String::new(),
    };
    // Output that ended with a newline and output that did not look the same here,
    // as in `$(...)`: one trailing newline is dropped.
    crate::term::transcript::render_text(body.strip_suffix('\n').unwrap_or(&body))
}

/// The exit status a framed command reports when it ended so.
fn exit_code(outcome: CommandOutcome, waited: &AwaitResult) -> Option<i32> {
    match outcome {
        CommandOutcome::Completed => waited
            .groups
            .first()
            .cloned()
            .flatten()
            .and_then(|c| c.parse().ok()),
        // The command ended the shell (`exit 7`): its status is the shell's.
        CommandOutcome::Exited => waited
            .exit
            .as_ref()
            .and_then(|e| e.code)
            .and_then(|c| i32::try_from(c).ok()),
        CommandOutcome::Timeout => None,
    }
}

/// Stops hiding a framed command when its caller is done with it, however that happens.
struct Hushed<'a> {
    session: &'a Session,
    nonce: &'a str,
}

impl Drop for Hushed<'_> {
    fn drop(&mut self) {
        self.session.release_hush(self.nonce);
    }
}

/// The framed line typed for a command, withdrawn when its caller is done with it however
/// that happens: a line still waiting for the shell to read it (a slow prompt) when its
/// step is cancelled or runs out of time would otherwise be typed later and run with
/// nobody following it, its output shown (a read of variables prints their values).
struct Line<'a> {
    session: &'a Session,
    seq: u64,
}

impl Drop for Line<'_> {
    fn drop(&mut self) {
        self.session.withdraw(self.seq);
    }
}

/// How following a hidden framed command ended.
enum Hidden {
    /// The end marker: the exit status and the output.
    Done(Option<i32>, String),
    /// It did not start within its wait, or did not end within its timeout; a shown
    /// command that had begun says where its output began.
    TimedOut { body_start: Option<u64> },
    /// Hiding gave up (the shell ended, too much was held, ...).
    Gone { body_start: Option<u64> },
}

/// Follows a hidden framed command until its end marker, or until it did not start within
/// its start wait, did not end within its timeout, or hiding gave up.
async fn hidden_result(mut state: watch::Receiver<HushState>, deadlines: Deadlines) -> Hidden {
    loop {
        let current = state.borrow_and_update().clone();
        let (limit, begun) = match current {
            HushState::Done { status, output } => return Hidden::Done(status, output),
            HushState::Released { body_start } => return Hidden::Gone { body_start },
            HushState::Waiting => (deadlines.start_wait, None),
            HushState::Begun { body_start } => (deadlines.timeout, body_start),
        };
        let left = limit.saturating_sub(deadlines.started.elapsed());
        match tokio::time::timeout(left, state.changed()).await {
            Ok(Ok(())) => {}
            // Time ran out, or the session dropped the command.
            Ok(Err(_)) | Err(_) => {
                // A change in the same instant still counts.
                return match state.borrow().clone() {
                    HushState::Done { status, output } => Hidden::Done(status, output),
                    HushState::Released { body_start } => Hidden::Gone { body_start },
                    HushState::Begun { body_start } => Hidden::TimedOut { body_start },
                    HushState::Waiting => Hidden::TimedOut { body_start: begun },
                };
            }
        }
    }
}

/// The screen's line with the cursor, for telling what the shell's command line holds.
fn command_line(session: &Session) -> String {
    const SHOWN: usize = 200;
    let line = session.with_screen(|screen| {
        let (row, _) = screen.cursor_position();
        let (_, cols) = screen.size();
        screen
            .rows(0, cols.get())
            .nth(usize::from(row))
            .unwrap_or_default()
    });
    let line = line.trim_end();
    let count = line.chars().count();
    let shown: String = line.chars().skip(count.saturating_sub(SHOWN)).collect();
    let shown: String = shown.chars().flat_map(char::escape_debug).collect();
    if count > SHOWN {
        format!("...{shown}")
    } else {
        shown
    }
}
