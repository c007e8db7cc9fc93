//! The effects that only read from the engine: the lists and documents of workflows, the
//! views' small files, a session's history, search and cursor, a run's journal. With the
//! engine here they are answered at once (`read`), before the next key; tests drive the
//! studio's reads through these too.

use super::{AUDIT_SHOWN, RUNS_SHOWN, failed};
use crate::engine::Engine;
use crate::engine::request::{Reply, Request};
use crate::tui::effect::Effect;
use crate::tui::link::{Ask, message};
use crate::tui::selection::Point;
use crate::tui::update::Event;
use crate::workflow::action::{
    ContentMode, GetScreenContentParams, SearchOrder, SearchOutputParams,
};

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
pub(super) async fn reply(engine: &impl Ask, effect: Effect) -> Result<Event, Effect> {
    let effect = match workflow_read(engine, effect).await {
        Ok(event) => return Ok(event),
        Err(effect) => effect,
    };
    let effect = match view_read(engine, effect).await {
        Ok(event) => return Ok(event),
        Err(effect) => effect,
    };
    session_read(engine, effect).await
}

/// The event that answers a read of workflows (the list, the engine's state, a workflow's
/// plan, inputs, problems, document and file on disk); any other effect is given back.
async fn workflow_read(engine: &impl Ask, effect: Effect) -> Result<Event, Effect> {
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
        Effect::LoadInputs { workflow, on_host } => {
            let inputs = match ask(Request::PreviewInputs {
                workflow: workflow.clone(),
            })
            .await
            {
                Ok(Reply::Inputs(preview)) => Ok(preview.inputs),
                other => Err(message(other)),
            };
            Event::Inputs {
                workflow,
                inputs,
                on_host,
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
        other => return Err(other),
    })
}

/// The event that answers a view's read (approvals, runs, recovery copies, the audit log);
/// any other effect is given back.
async fn view_read(engine: &impl Ask, effect: Effect) -> Result<Event, Effect> {
    let ask = |request: Request| engine.ask(request);
    Ok(match effect {
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
        other => return Err(other),
    })
}

/// The event that answers a read of a session (its history, a search in it, where its
/// cursor is); any other effect is given back.
async fn session_read(engine: &impl Ask, effect: Effect) -> Result<Event, Effect> {
    Ok(match effect {
        Effect::ReadHistory { session_id, lines } => {
            let lines = read_history(engine, &session_id, lines).await;
            Event::History { session_id, lines }
        }
        Effect::Search {
            session_id,
            pattern,
            cursor,
        } => search(engine, session_id, pattern, cursor).await,
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

/// One page of a search of a session's output, newest first.
async fn search(
    engine: &impl Ask,
    session_id: String,
    pattern: String,
    cursor: Option<String>,
) -> Event {
    let more = cursor.is_some();
    let params = SearchOutputParams {
        session_id: None,
        pattern: pattern.clone(),
        ignore_case: false,
        context: None,
        order: Some(SearchOrder::NewestFirst),
        limit: Some(crate::tui::history::SEARCH_PAGE),
        cursor,
    };
    let found = match engine
        .ask(Request::SearchOutput {
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

/// A workflow's file for the editor: its text and version, and where it is.
async fn document(
    engine: &impl Ask,
    workflow: &str,
) -> Result<crate::tui::editor::Document, String> {
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
    Ok(crate::tui::editor::Document {
        path,
        file: got.file,
        version: got.version,
        text: got.content,
    })
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
