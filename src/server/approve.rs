//! `flowdeck approve` with the folder's server up: the server approves, once it has checked
//! that the process asking is a person's at a terminal that is not one of its own sessions
//! (peer.rs), so that an agent cannot run `flowdeck approve` in a terminal flowdeck gave it.

use super::connect::{IfNone, connect};
use super::hello::{self, Client, Hello};
use super::protocol::{self, Approved};
use crate::engine::{Actor, Engine};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// How long `flowdeck approve` may take none of its answers before the server gives it up: it
/// reads them as they come, so only a stopped one takes longer.
const STALL: Duration = Duration::from_secs(60);

/// The server's side: each workflow's current content approved, one answer line each.
pub async fn serve<W: AsyncWrite + Unpin>(
    engine: &Arc<Engine>,
    workflows: &[String],
    write: &mut W,
) {
    for workflow in workflows {
        let (engine, name) = (engine.clone(), workflow.clone());
        // The store's write (fsync, lock) runs off the runtime.
        let approved = tokio::task::spawn_blocking(move || {
            engine
                .approve_workflow(&name, &Actor::Cli)
                .map(|a| a.version)
                .map_err(|e| e.to_string())
        })
        .await
        .unwrap_or_else(|e| Err(format!("the approval failed: {e}")));
        let answer = Approved {
            workflow: workflow.clone(),
            approved,
        };
        let Ok(line) = protocol::line(&answer) else {
            return;
        };
        if crate::conn::outbox::write_line(write, &line, Some(STALL))
            .await
            .is_err()
        {
            return;
        }
    }
    let _ = write.shutdown().await;
}

/// The command's side: asks the folder's server, if one answers, to approve `workflows`; an
/// answer for each, in order, or why the server refused (another version, or a process that
/// may not approve). `None` when no server answers.
pub async fn ask(folder: &Path, workflows: &[String]) -> anyhow::Result<Option<Vec<Approved>>> {
    let hello = Hello::new(Client::Approve {
        workflows: workflows.to_vec(),
    });
    let Some(connection) = connect(folder, &hello, IfNone::Leave).await? else {
        return Ok(None);
    };
    let (mut read, _write, _) = connection.into_parts();
    let mut answers = Vec::with_capacity(workflows.len());
    let mut line = Vec::new();
    // Each approval is one write to the store: a server that takes longer is not answering.
    while answers.len() < workflows.len() {
        let next = protocol::read_line(&mut read, &mut line);
        let Ok(more) = tokio::time::timeout(hello::WELCOME_WAIT, next).await else {
            anyhow::bail!(
                "the flowdeck server of {} did not answer within {} s",
                folder.display(),
                hello::WELCOME_WAIT.as_secs()
            );
        };
        if !more? {
            break;
        }
        answers.push(serde_json::from_slice::<Approved>(&line)?);
    }
    if answers.len() < workflows.len() {
        anyhow::bail!(
            "the flowdeck server of {} ended before answering for every workflow",
            folder.display()
        );
    }
    Ok(Some(answers))
}
