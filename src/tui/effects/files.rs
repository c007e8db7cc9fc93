//! Effects on workflow files: checking the editor's text, its recovery copy, saving, the
//! person's own editor, and naming (new, duplicate, rename, delete). Each is asked of the
//! engine off the loop and answers as an event.

use super::{Outlet, failed, later};
use crate::engine::request::{Answer, Reply, Request};
use crate::tui::editor::{CHECK_AFTER_MS, SaveFailure};
use crate::tui::effect::Effect;
use crate::tui::link::{Ask, Link, message};
use crate::tui::overlay::NameFor;
use crate::tui::update::Event;
use std::time::Duration;
use tokio::sync::mpsc;

/// Carries out an effect on a workflow's file; any other is given back.
pub(super) fn file_work(out: &mut Outlet<'_>, effect: Effect) -> Option<Effect> {
    let link = out.link.clone();
    let done = out.done.clone();
    match effect {
        Effect::CheckLater(edits) => {
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(CHECK_AFTER_MS)).await;
                let _ = done.send(Event::CheckDue(edits));
            });
        }
        Effect::Check { edits, text } => later(link, done, Request::Draft { text }, move |a| {
            Some(match a {
                Ok(Reply::Draft(draft)) => Event::Checked { edits, draft },
                other => failed(other, "cannot check the text"),
            })
        }),
        Effect::Recover {
            file,
            text,
            base_version,
        } => {
            let request = Request::RecoverySave {
                file: file.clone(),
                text,
                base_version,
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
            save(link, done, edits, file, text, expected_version);
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
        other => return naming(link, done, other),
    }
    None
}

/// Saves the editor's text and, once saved, counts the problems of what was saved.
fn save(
    link: Link,
    done: mpsc::UnboundedSender<Event>,
    edits: u64,
    file: String,
    text: String,
    expected_version: Option<String>,
) {
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
            Err(e) if e.code == "version_conflict" => Err(SaveFailure::Conflict),
            other => Err(SaveFailure::Other(message(other))),
        };
        let _ = done.send(Event::Saved { edits, result });
    });
}

/// Carries out an effect that names a workflow (new, duplicate, rename, delete); any other
/// is given back.
fn naming(link: Link, done: mpsc::UnboundedSender<Event>, effect: Effect) -> Option<Effect> {
    match effect {
        Effect::CreateWorkflow { template, name } => {
            let id = crate::engine::editing::TEMPLATES
                .get(template)
                .map_or("", |t| t.id)
                .to_string();
            let purpose = NameFor::New(template);
            let request = Request::FromTemplate { template: id, name };
            later(link, done, request, move |a| Some(named(purpose, a)));
        }
        Effect::DraftWorkflow { session_id, name } => {
            let purpose = NameFor::Draft(session_id.clone());
            let request = Request::DraftFromSession { session_id, name };
            later(link, done, request, move |a| Some(named(purpose, a)));
        }
        Effect::DuplicateWorkflow { from, name } => {
            let purpose = NameFor::Duplicate(from.clone());
            let request = Request::Duplicate { from, name };
            later(link, done, request, move |a| Some(named(purpose, a)));
        }
        Effect::RenameWorkflow { from, to } => {
            let purpose = NameFor::Rename(from.clone());
            let request = Request::Rename { from, to };
            later(link, done, request, move |a| Some(named(purpose, a)));
        }
        Effect::DeleteWorkflow(workflow) => {
            let purpose = NameFor::Delete(workflow.clone());
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
        other => return Some(other),
    }
    None
}

/// The answer to a request that names a workflow (new, duplicate, rename).
fn named(purpose: NameFor, answer: Answer) -> Event {
    Event::Named {
        purpose,
        result: match answer {
            Ok(Reply::Saved(saved)) => Ok(saved.name),
            other => Err(message(other)),
        },
    }
}
