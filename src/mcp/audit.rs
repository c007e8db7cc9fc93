//! The audit log, `DIR/.flowdeck/audit.jsonl`: every tool call (time, tool, arguments with
//! secrets redacted, outcome, duration, correlation id), one JSON line each.

use crate::engine::Engine;
use crate::engine::WorkflowSource;
use crate::engine::audit_log::AuditEntry;
use crate::engine::contract::MASK;
use crate::workflow::credentials::is_secret_name;
use serde_json::{Value, json};
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};

/// Appends tool calls to the audit log, through the log's one writer thread: a call hands its
/// line over and is answered at once, whatever the disk is doing, and a disk that stops
/// answering costs at most [`QUEUE`] lines of memory (a blocking task per call, as before, grew
/// without bound behind a stuck disk).
#[derive(Debug)]
pub struct Audit {
    lines: Option<SyncSender<AuditEntry>>,
    /// Lines not written because the writer was this far behind.
    dropped: AtomicU64,
}

/// Lines waiting for the writer at most. A disk that keeps the writer this far behind is stuck:
/// past it a line is counted and dropped, never waited for.
const QUEUE: usize = 4096;

/// The writer of each audit log in this process, shared by every connection: one file, one
/// writer, so that its size and its rotation are known to the one thread that writes it.
static WRITERS: Mutex<Vec<(PathBuf, SyncSender<AuditEntry>)>> = Mutex::new(Vec::new());

/// The queue of the writer of the log at `path`, started on first need.
fn writer_for(path: PathBuf) -> Option<SyncSender<AuditEntry>> {
    let mut writers = WRITERS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, lines)) = writers.iter().find(|(p, _)| *p == path) {
        return Some(lines.clone());
    }
    let (lines, queue) = sync_channel(QUEUE);
    let at = path.clone();
    match std::thread::Builder::new()
        .name("flowdeck-audit".into())
        .spawn(move || write_lines(&at, &queue))
    {
        Ok(_) => {
            writers.push((path, lines.clone()));
            Some(lines)
        }
        Err(e) => {
            tracing::warn!("the audit log's writer cannot start: {e}");
            None
        }
    }
}

/// The size past which the audit log rotates (one older file is kept).
pub const MAX_LOG: u64 = 8 << 20;

/// Texts longer than this are written as a summary: an audit line says what was done, not
/// the 1 MB manifest it was done with.
const LONG_TEXT: usize = 1024;

/// A long text as the audit keeps it: its start, its size and its SHA-256 (to tell two
/// versions apart).
fn summary(text: &str) -> String {
    use sha2::Digest;
    let start: String = text.chars().take(160).collect();
    let digest = hex::encode(sha2::Sha256::digest(text.as_bytes()));
    format!("{start}… ({} bytes, sha256 {digest})", text.len())
}

/// Argument names whose values are never written down: the names that say they hold a
/// credential, as drafts know them (workflow/credentials.rs), and `credential` itself.
fn is_sensitive(key: &str) -> bool {
    is_secret_name(key) || key.to_ascii_lowercase().contains("credential")
}

impl Audit {
    pub fn new(engine: &Engine) -> Self {
        let path = engine.state_dir().ok().map(|d| d.join("audit.jsonl"));
        if path.is_none() {
            tracing::warn!(
                "the audit log cannot be written (the workflows folder is not writable)"
            );
        }
        let lines = path.and_then(writer_for);
        Audit {
            lines,
            dropped: AtomicU64::new(0),
        }
    }

    /// The arguments as logged: values under sensitive keys and under the secret inputs of the
    /// workflow the call names (however it names it: `workflow_name`, `name`, `workflowId`, a
    /// `wf_` tool, or an inline manifest) masked; the secret values of every run in progress
    /// masked wherever they appear; long texts summarized.
    pub fn redact(engine: &Engine, tool: &str, args: &Value) -> Value {
        let mut sources: Vec<WorkflowSource> = ["workflow_name", "name", "workflowId"]
            .iter()
            .filter_map(|key| args.get(*key).and_then(Value::as_str))
            .map(|name| WorkflowSource::Name(name.to_string()))
            .collect();
        if let Some(name) = tool.strip_prefix(super::dynamic::PREFIX) {
            sources.push(WorkflowSource::Name(name.to_string()));
        }
        if tool == "run_workflow"
            && let Some(content) = args.get("content").and_then(Value::as_str)
        {
            sources.push(WorkflowSource::Inline(content.to_string()));
        }
        let secrets: Vec<String> = sources
            .iter()
            .flat_map(|source| engine.secret_names(source))
            .collect();
        fn walk(v: &mut Value, secrets: &[String]) {
            match v {
                Value::Object(map) => {
                    for (k, value) in map.iter_mut() {
                        if is_sensitive(k) || secrets.contains(k) {
                            *value = json!(MASK);
                        } else {
                            walk(value, secrets);
                        }
                    }
                }
                Value::Array(items) => items.iter_mut().for_each(|i| walk(i, secrets)),
                Value::String(text) if text.len() > LONG_TEXT => *text = summary(text),
                _ => {}
            }
        }
        let mut redacted = args.clone();
        engine.redact_run_secrets(&mut redacted);
        walk(&mut redacted, &secrets);
        redacted
    }

    /// Hands one entry to the writer; never waits (a full queue drops it, counted and said).
    pub fn record_later(&self, entry: AuditEntry) {
        let Some(lines) = &self.lines else { return };
        match lines.try_send(entry) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                if dropped.is_power_of_two() {
                    tracing::warn!(
                        "the audit log's disk is {QUEUE} lines behind: {dropped} lines dropped so far"
                    );
                }
            }
            Err(TrySendError::Disconnected(_)) => {}
        }
    }
}

/// The writer: appends each line as it comes, for as long as the process lives. The file stays
/// open between lines (no open, stat and close per call on a busy disk) and its size is
/// followed as it is written.
fn write_lines(path: &Path, queue: &Receiver<AuditEntry>) {
    // A failing disk fails every line, and agents make a line a call: said once a minute,
    // with the count of the failures held back.
    let failing = crate::conn::throttle::Throttle::new(std::time::Duration::from_secs(60));
    let said = |e: &std::io::Error| {
        if let Some(held) = failing.allow() {
            tracing::warn!("audit log {}: {e}{held}", path.display());
        }
    };
    let mut open: Option<(std::fs::File, u64)> = None;
    while let Ok(entry) = queue.recv() {
        let Ok(line) = serde_json::to_string(&entry) else {
            continue;
        };
        let line = line + "\n";
        let (file, size) = match open.take() {
            Some(opened) => opened,
            None => match open_log(path) {
                Ok(opened) => opened,
                Err(e) => {
                    said(&e);
                    continue;
                }
            },
        };
        let (mut file, size) = if size + line.len() as u64 > MAX_LOG {
            drop(file);
            let _ = std::fs::rename(path, path.with_extension("1.jsonl"));
            match open_log(path) {
                Ok(opened) => opened,
                Err(e) => {
                    said(&e);
                    continue;
                }
            }
        } else {
            (file, size)
        };
        match file.write_all(line.as_bytes()) {
            Ok(()) => open = Some((file, size + line.len() as u64)),
            Err(e) => said(&e),
        }
    }
}

/// The log opened for appending (owner-only when created), with its size.
fn open_log(path: &Path) -> std::io::Result<(std::fs::File, u64)> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    let size = file.metadata()?.len();
    Ok((file, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_writer_appends_owner_only_and_rotates_past_the_limit() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("audit.jsonl");
        let (lines, queue) = sync_channel(QUEUE);
        let writer = {
            let path = path.clone();
            std::thread::spawn(move || write_lines(&path, &queue))
        };
        // Nine lines of a little over 1 MiB: seven fit under the 8 MiB limit, the eighth
        // starts a new file.
        let big = "x".repeat(1 << 20);
        for n in 0..9 {
            lines
                .try_send(AuditEntry {
                    at: String::new(),
                    tool: format!("t{n}"),
                    actor: None,
                    arguments: json!({ "text": big }),
                    outcome: crate::engine::audit_log::AuditOutcome::Ok,
                    task_id: None,
                    duration_ms: None,
                    correlation_id: None,
                })
                .expect("queued");
        }
        drop(lines);
        writer.join().expect("the writer ends with its senders");
        let read = |p: &Path| -> Vec<u64> {
            std::fs::read_to_string(p)
                .expect("readable")
                .lines()
                .map(|l| {
                    let entry: AuditEntry = serde_json::from_str(l).expect("a JSON line");
                    entry.tool[1..].parse::<u64>().expect("n")
                })
                .collect()
        };
        assert_eq!(
            read(&path.with_extension("1.jsonl")),
            (0..7).collect::<Vec<_>>()
        );
        assert_eq!(read(&path), vec![7, 8]);
        let mode = std::fs::metadata(&path)
            .expect("exists")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
