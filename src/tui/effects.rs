//! Effects carried out: each engine call an update asks for goes to the engine as a
//! [`Request`] (engine/request.rs), through the studio's [`Link`] (the engine here, or the
//! folder's server), and its answer comes back as an [`Event`]. With the engine here, quick
//! reads are answered before the next key; what may wait (files, processes, runs, and every
//! call to a server) runs as a task that reports back through `done`. The rest are the
//! studio's own (the clipboard, the mouse, the terminal's title, the person's editor).

use super::effect::Effect;
use super::link::{Ask, Link, message};
use super::state::{Point, Selection};
use super::terminal;
use super::update::Event;
use crate::engine::Engine;
use crate::engine::request::{Answer, Reply, Request};
use crate::workflow::action::{
    ContentMode, GetScreenContentParams, SearchOrder, SearchOutputParams, SendInputParams,
};
use std::collections::VecDeque;
use std::time::Duration;
use tokio::sync::mpsc;

/// How many of the latest tool calls the audit view reads.
pub const AUDIT_SHOWN: usize = 500;

/// How many past runs the run view lists.
pub const RUNS_SHOWN: usize = 50;

/// Where the effects of one update go, and where their answers come back.
#[allow(missing_debug_implementations)]
pub struct Outlet<'a> {
    pub link: &'a Link,
    /// Answers of tasks, fed back to the loop.
    pub done: &'a mpsc::UnboundedSender<Event>,
    /// Answers given at once, handled before the next key.
    pub now: &'a mut VecDeque<Event>,
    /// The studio runs inside tmux (the clipboard goes through it too).
    pub tmux: bool,
    /// A file to open in the person's editor once the update is done.
    pub external: &'a mut Option<String>,
}

/// Carries out one effect.
#[expect(clippy::too_many_lines, reason = "issue 23 splits it by its jobs")]
pub fn execute(out: &mut Outlet<'_>, effect: Effect) {
    let effect = match out.link.local() {
        Some(engine) => match read(engine, effect) {
            Ok(event) => return out.now.push_back(event),
            Err(effect) => effect,
        },
        None => effect,
    };
    let effect = match studio_own(out, effect) {
        None => return,
        Some(effect) => effect,
    };
    let link = out.link.clone();
    let done = out.done.clone();
    // Answered at once when the engine is here, so that the next key sees it.
    let at_once =
        |out: &mut Outlet<'_>, request: Request, then: fn(Answer) -> Option<Event>| match out
            .link
            .ask_now(&request)
        {
            Some(answer) => out.now.extend(then(answer)),
            None => later(out.link.clone(), out.done.clone(), request, then),
        };
    match effect {
        Effect::CheckLater(edits) => {
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(super::editor::CHECK_AFTER_MS)).await;
                let _ = done.send(Event::CheckDue(edits));
            });
        }
        Effect::Check { edits, text } => later(link, done, Request::Draft { text }, move |a| {
            Some(match a {
                Ok(Reply::Draft(draft)) => Event::Checked { edits, draft },
                other => failed(other, "cannot check the text"),
            })
        }),
        Effect::Recover { file, text } => {
            let request = Request::RecoverySave {
                file: file.clone(),
                text,
            };
            later(link, done, request, move |a| {
                a.err()
                    .map(|e| Event::Failed(format!("cannot keep a recovery copy of {file}: {e}")))
            });
        }
        Effect::DiscardRecovery(file) => {
            let request = Request::RecoveryDiscard { file: file.clone() };
            later(link, done, request, move |a| {
                a.err()
                    .map(|e| Event::Failed(format!("cannot drop the recovery copy of {file}: {e}")))
            });
        }
        Effect::Save {
            edits,
            file,
            text,
            expected_version,
        } => {
            tokio::spawn(async move {
                let saved = link
                    .ask(Request::SaveFile {
                        file,
                        text: text.clone(),
                        expected_version,
                    })
                    .await;
                let result = match saved {
                    Ok(Reply::Saved(saved)) => {
                        let errors = match link.ask(Request::ValidateManifest { text }).await {
                            Ok(Reply::Validation(v)) => v.errors,
                            _ => 0,
                        };
                        Ok((saved.version.unwrap_or_default(), errors))
                    }
                    Err(e) if e.code == "version_conflict" => {
                        Err(super::editor::SaveFailure::Conflict)
                    }
                    other => Err(super::editor::SaveFailure::Other(message(other))),
                };
                let _ = done.send(Event::Saved { edits, result });
            });
        }
        Effect::ExternalEditWorkflow(workflow) => {
            let request = Request::WorkflowFilePath { workflow };
            match out.link.ask_now(&request) {
                Some(Ok(Reply::Path(path))) => *out.external = Some(path),
                Some(other) => out.now.push_back(Event::Failed(message(other))),
                // A server's folder is this machine's too (its socket is local).
                None => later(link, done, request, |a| {
                    Some(match a {
                        Ok(Reply::Path(path)) => Event::EditFile(path),
                        other => Event::Failed(message(other)),
                    })
                }),
            }
        }
        Effect::CreateWorkflow { template, name } => {
            let id = crate::engine::editing::TEMPLATES
                .get(template)
                .map_or("", |t| t.id)
                .to_string();
            let purpose = super::state::NameFor::New(template);
            let request = Request::FromTemplate { template: id, name };
            later(link, done, request, move |a| Some(named(purpose, a)));
        }
        Effect::DuplicateWorkflow { from, name } => {
            let purpose = super::state::NameFor::Duplicate(from.clone());
            let request = Request::Duplicate { from, name };
            later(link, done, request, move |a| Some(named(purpose, a)));
        }
        Effect::RenameWorkflow { from, to } => {
            let purpose = super::state::NameFor::Rename(from.clone());
            let request = Request::Rename { from, to };
            later(link, done, request, move |a| Some(named(purpose, a)));
        }
        Effect::DeleteWorkflow(workflow) => {
            let purpose = super::state::NameFor::Delete(workflow.clone());
            let request = Request::Delete {
                workflow: workflow.clone(),
            };
            later(link, done, request, move |a| {
                Some(Event::Named {
                    purpose,
                    result: a.map(|_| workflow).map_err(|e| e.message),
                })
            });
        }
        Effect::HoldInput(session_id) => {
            at_once(out, Request::HoldInput { session_id }, |answer| {
                answer.err().map(|e| Event::HoldRefused(e.message))
            });
        }
        Effect::ReleaseInput(session_id) => {
            at_once(out, Request::ReleaseInput { session_id }, failure);
        }
        // A journal read of a run in progress may wait for the run's status: off the loop.
        Effect::LoadRunEvents(run_id) => {
            tokio::spawn(async move {
                let _ = done.send(read_run_events(&link, run_id).await);
            });
        }
        Effect::StartRun { workflow, inputs } => {
            let request = Request::StartRun {
                workflow,
                inputs,
                // Its screen stays to be read after the end; x closes it.
                keep_session: true,
            };
            later(link, done, request, |a| {
                Some(Event::RunStarted(match a {
                    Ok(Reply::Started(run_id)) => Ok(run_id),
                    other => Err(message(other)),
                }))
            });
        }
        Effect::CancelRun(run_id) => later(link, done, Request::CancelRun { run_id }, failure),
        Effect::AnswerPrompt { run_id, answer } => {
            at_once(out, Request::AnswerPrompt { run_id, answer }, failure);
        }
        Effect::OpenShell { cols, rows } => {
            let params = crate::workflow::action::OpenTerminalParams {
                cols: Some(cols),
                rows: Some(rows),
                ..Default::default()
            };
            later(link, done, Request::OpenTerminal { params }, |a| {
                Some(Event::ShellOpened(match a {
                    Ok(Reply::Session(session)) => Ok(*session),
                    other => Err(message(other)),
                }))
            });
        }
        Effect::EndAndQuit { sessions, runs } => {
            // Runs first: a run's cancel ends its own terminal too.
            let asked: Vec<_> = runs
                .into_iter()
                .map(|run_id| link.call(Request::CancelRun { run_id }))
                .chain(
                    sessions
                        .into_iter()
                        .map(|session_id| link.call(Request::ExitTerminal { session_id })),
                )
                .collect();
            tokio::spawn(async move {
                let mut failures = Vec::new();
                for answer in asked {
                    match answer.await {
                        // Ended meanwhile by itself: what was asked holds.
                        Err(e) if !GONE.contains(&e.code.as_str()) => failures.push(e.message),
                        _ => {}
                    }
                }
                let _ = done.send(Event::Ended(failures));
            });
        }
        Effect::CloseSession(session_id) => {
            later(link, done, Request::ExitTerminal { session_id }, failure);
        }
        Effect::SendKeys { session_id, keys } => {
            let params = SendInputParams {
                keys: Some(keys),
                ..SendInputParams::default()
            };
            at_once(out, Request::SendInput { session_id, params }, failure);
        }
        Effect::Paste { session_id, text } => {
            let bracketed = out
                .link
                .mirror(&session_id)
                .is_ok_and(|s| s.bracketed_paste);
            let text = if bracketed {
                format!("\u{1b}[200~{text}\u{1b}[201~")
            } else {
                text
            };
            let params = SendInputParams {
                input_text: Some(text),
                ..SendInputParams::default()
            };
            at_once(out, Request::SendInput { session_id, params }, failure);
        }
        Effect::Resize {
            session_id,
            cols,
            rows,
        } => {
            let request = Request::ResizeTerminal {
                session_id,
                cols,
                rows,
            };
            at_once(out, request, failure);
        }
        // Reads: answered above with the engine here, else asked of the server.
        read => {
            tokio::spawn(async move {
                match reply(&link, read).await {
                    Ok(event) => {
                        let _ = done.send(event);
                    }
                    Err(other) => tracing::warn!("an effect nobody carries out: {other:?}"),
                }
            });
        }
    }
}

/// The effects that are the studio's own, carried out here; any other is given back.
fn studio_own(out: &mut Outlet<'_>, effect: Effect) -> Option<Effect> {
    match effect {
        // Quick (a small file written when approving), and answered before the next key.
        Effect::DecideApproval { run_id, approve } => {
            let (link, done) = (out.link.clone(), out.done.clone());
            tokio::spawn(async move {
                let error = link
                    .decide(&run_id, approve)
                    .await
                    .err()
                    .map(|e| format!("cannot answer the approval request: {e}"));
                let pending = match link.ask(Request::ApprovalsPending).await {
                    Ok(Reply::Approvals(pending)) => pending,
                    _ => Vec::new(),
                };
                let _ = done.send(Event::Approvals { pending, error });
            });
        }
        Effect::ExternalEditor(path) => *out.external = Some(path),
        Effect::CopyScreen(selection) => {
            let text = out
                .link
                .mirror(&selection.session_id)
                .map(|screen| screen_text(&screen, &selection));
            out.now.push_back(match text {
                Ok(text) => copied(&text, out.tmux),
                Err(e) => Event::Failed(e),
            });
        }
        Effect::Clipboard(text) => out.now.push_back(copied(&text, out.tmux)),
        Effect::MouseCapture(on) => {
            if let Err(e) = terminal::capture_mouse(on) {
                out.now
                    .push_back(Event::Failed(format!("cannot change the mouse: {e}")));
            }
        }
        // A bell or title the terminal cannot take is nothing to tell the person about.
        Effect::Alert(text) => {
            let _ = terminal::alert(&text);
        }
        Effect::ClearAlert => {
            let _ = terminal::clear_alert();
        }
        other => return Some(other),
    }
    None
}

/// Sends `request` to the engine off the loop and reports `then` of its answer, if any.
/// The codes of a run or terminal that had already ended when it was asked to end.
const GONE: [&str; 3] = ["run_not_found", "run_finished", "session_not_found"];

fn later(
    link: Link,
    done: mpsc::UnboundedSender<Event>,
    request: Request,
    then: impl FnOnce(Answer) -> Option<Event> + Send + 'static,
) {
    // Asked now, answered later: calls leave in the order they were made.
    let answer = link.call(request);
    tokio::spawn(async move {
        if let Some(event) = then(answer.await) {
            let _ = done.send(event);
        }
    });
}

/// What to tell the person when an answer is an error (nothing when it is not).
fn failure(answer: Answer) -> Option<Event> {
    answer.err().map(|e| Event::Failed(e.message))
}

fn failed(answer: Answer, what: &str) -> Event {
    Event::Failed(format!("{what}: {}", message(answer)))
}

/// The answer to a request that names a workflow (new, duplicate, rename).
fn named(purpose: super::state::NameFor, answer: Answer) -> Event {
    Event::Named {
        purpose,
        result: match answer {
            Ok(Reply::Saved(saved)) => Ok(saved.name),
            other => Err(message(other)),
        },
    }
}

/// Answers an effect that only reads from the engine here, at once, as the event it asks
/// for; any other effect is given back. Tests drive the studio's reads through this too.
pub fn read(engine: &Engine, effect: Effect) -> Result<Event, Effect> {
    // The engine here answers every read on this thread: the future is ready at once.
    let mut reading = std::pin::pin!(reply(engine, effect));
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match reading.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(answered) => answered,
        std::task::Poll::Pending => unreachable!("the engine here answers reads at once"),
    }
}

/// The event that answers a read, asked of the engine wherever it is; any other effect is
/// given back.
#[expect(clippy::too_many_lines, reason = "issue 23 splits it by its jobs")]
async fn reply(engine: &impl Ask, effect: Effect) -> Result<Event, Effect> {
    let ask = |request: Request| engine.ask(request);
    Ok(match effect {
        Effect::ReloadList => match ask(Request::WorkflowList).await {
            Ok(Reply::Workflows(list)) => Event::List(list.workflows),
            other => failed(other, "cannot list the workflows"),
        },
        Effect::Resnapshot => match ask(Request::Snapshot).await {
            Ok(Reply::Snapshot(snapshot)) => Event::Snapshot(snapshot),
            other => failed(other, "cannot read the engine's state"),
        },
        Effect::LoadPlan(workflow) => {
            let plan = match ask(Request::StepPlan {
                workflow: workflow.clone(),
            })
            .await
            {
                Ok(Reply::Plan(plan)) => Ok(plan),
                other => Err(message(other)),
            };
            Event::Plan { workflow, plan }
        }
        Effect::LoadInputs(workflow) => {
            let inputs = match ask(Request::PreviewInputs {
                workflow: workflow.clone(),
            })
            .await
            {
                Ok(Reply::Inputs(preview)) => Ok(preview.inputs),
                other => Err(message(other)),
            };
            Event::Inputs { workflow, inputs }
        }
        Effect::ReadHistory { session_id, lines } => {
            let lines = read_history(engine, &session_id, lines).await;
            Event::History { session_id, lines }
        }
        Effect::Search {
            session_id,
            pattern,
            cursor,
        } => {
            let more = cursor.is_some();
            let params = SearchOutputParams {
                session_id: None,
                pattern: pattern.clone(),
                ignore_case: false,
                context: None,
                order: Some(SearchOrder::NewestFirst),
                limit: Some(super::history::SEARCH_PAGE),
                cursor,
            };
            let found = match ask(Request::SearchOutput {
                session_id: session_id.clone(),
                params,
            })
            .await
            {
                Ok(Reply::Found(result)) => Ok(result.found),
                other => Err(message(other)),
            };
            Event::Found {
                session_id,
                pattern,
                more,
                found,
            }
        }
        Effect::LoadProblems(workflow) => {
            let problems = match ask(Request::WorkflowGet {
                workflow: workflow.clone(),
            })
            .await
            {
                Ok(Reply::Document(d)) => Ok((d.file, d.violations)),
                other => Err(message(other)),
            };
            Event::Problems { workflow, problems }
        }
        Effect::LoadDocument(workflow) => {
            let document = document(engine, &workflow).await;
            Event::Document { workflow, document }
        }
        Effect::LoadDisk(workflow) => {
            let now = match ask(Request::WorkflowGet {
                workflow: workflow.clone(),
            })
            .await
            {
                Ok(Reply::Document(d)) => Some((d.version, d.content)),
                _ => None,
            };
            Event::Disk { workflow, now }
        }
        Effect::LoadApprovals => match ask(Request::ApprovalsPending).await {
            Ok(Reply::Approvals(pending)) => Event::Approvals {
                pending,
                error: None,
            },
            other => failed(other, "cannot read the approval requests"),
        },
        // Small files, read when a view opens (the run view, the recovery copies, the audit
        // view), as before the next key.
        Effect::LoadRuns(workflow) => {
            let request = Request::RunList {
                workflow: Some(workflow.clone()),
                limit: RUNS_SHOWN,
            };
            match ask(request).await {
                Ok(Reply::Runs(list)) => Event::Runs {
                    workflow,
                    runs: list.runs,
                },
                other => failed(other, "cannot read the runs"),
            }
        }
        Effect::ListRecovery => match ask(Request::RecoveryList).await {
            Ok(Reply::Recovered(copies)) => Event::Recovered(copies),
            other => failed(other, "cannot read the recovery copies"),
        },
        Effect::LoadAudit => {
            let request = Request::AuditTail { limit: AUDIT_SHOWN };
            match ask(request).await {
                Ok(Reply::Audit(entries)) => Event::Audit(entries),
                other => failed(other, "cannot read the audit log"),
            }
        }
        Effect::LocateCursor(session_id) => {
            match engine
                .mirror(&session_id)
                .map(|s| (s.alternate, s.cursor_row, s.cursor_col))
            {
                Ok((alternate, row, col)) => Event::CursorLocated {
                    session_id,
                    alternate,
                    cursor: Point {
                        line: u64::from(row),
                        col,
                    },
                },
                Err(e) => Event::Failed(e),
            }
        }
        other => return Err(other),
    })
}

/// A workflow's file for the editor: its text and version, and where it is.
async fn document(engine: &impl Ask, workflow: &str) -> Result<super::editor::Document, String> {
    let got = match engine
        .ask(Request::WorkflowGet {
            workflow: workflow.to_string(),
        })
        .await
    {
        Ok(Reply::Document(d)) => d,
        other => return Err(message(other)),
    };
    let path = match engine
        .ask(Request::WorkflowFilePath {
            workflow: workflow.to_string(),
        })
        .await
    {
        Ok(Reply::Path(path)) => path,
        other => return Err(message(other)),
    };
    Ok(super::editor::Document {
        path,
        file: got.file,
        version: got.version,
        text: got.content,
    })
}

/// The text of a selection on a session's screen (rows the terminal wrapped are joined).
pub fn screen_text(screen: &crate::engine::panes::Mirror, selection: &Selection) -> String {
    let mut line = |n: u64| screen.row_text(n);
    let bounds = super::selection::bounds(selection, &mut line);
    let wrapped = |n: u64| screen.row_wrapped(n);
    super::selection::text(bounds, &mut line, &wrapped)
}

/// Puts text on the clipboard through the terminal; what to tell the person.
fn copied(text: &str, tmux: bool) -> Event {
    match super::clipboard::copy(text, &mut std::io::stdout(), tmux) {
        Ok(chars) => Event::Copied(chars),
        Err(e) => Event::Failed(e),
    }
}

/// A run's journal from its first line (`Effect::LoadRunEvents`), without waiting for more:
/// lines written later arrive as engine events. Tests drive the studio's journal reads
/// through this too.
pub async fn read_run_events(engine: &impl Ask, run_id: String) -> Event {
    const PAGE: usize = 1000;
    let mut events = Vec::new();
    let result = loop {
        let after = events
            .last()
            .map_or(0, |e: &crate::engine::journal::JournalEvent| e.seq);
        let request = Request::RunEvents {
            run_id: run_id.clone(),
            after,
            limit: PAGE,
        };
        match engine.ask(request).await {
            Ok(Reply::RunEvents(page)) => {
                let full = page.events.len() >= PAGE;
                events.extend(page.events);
                if !full {
                    break Ok(events);
                }
            }
            other => break Err(message(other)),
        }
    };
    Event::RunEvents {
        run_id,
        events: result,
    }
}

/// The last `lines` lines of a session's history and the number of the last one (the
/// session's line count, read before and after so that output arriving between does not
/// shift the numbers; a few tries, then the count after).
async fn read_history(
    engine: &impl Ask,
    session_id: &str,
    lines: usize,
) -> Result<(Vec<String>, u64), String> {
    let count = || async {
        match engine.ask(Request::ListTerminalSessions).await {
            Ok(Reply::Sessions(list)) => list
                .sessions
                .into_iter()
                .find(|s| s.session_id == session_id)
                .map_or(0, |s| s.history_lines),
            _ => 0,
        }
    };
    let params = GetScreenContentParams {
        session_id: None,
        content_mode: Some(ContentMode::Tail),
        lines: Some(u32::try_from(lines).unwrap_or(u32::MAX)),
    };
    let mut tries = 0;
    loop {
        let before = count().await;
        let content = match engine
            .ask(Request::GetScreenContent {
                session_id: session_id.to_string(),
                params: params.clone(),
            })
            .await
        {
            Ok(Reply::Content(content)) => content,
            other => return Err(message(other)),
        };
        let after = count().await;
        tries += 1;
        if before == after || tries == 3 {
            let text: Vec<String> = if content.content.is_empty() {
                Vec::new()
            } else {
                content.content.split('\n').map(str::to_string).collect()
            };
            return Ok((text, after));
        }
    }
}
