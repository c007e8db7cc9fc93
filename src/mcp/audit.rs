//! The audit log, `DIR/.flowdeck/audit.jsonl`: every tool call (time, tool, arguments with
//! secrets redacted, outcome, duration, correlation id), one JSON line each.

use crate::engine::Engine;
use crate::engine::WorkflowSource;
use crate::engine::contract::MASK;
use serde_json::{Value, json};
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::Mutex;

/// Appends tool calls to the audit log.
#[derive(Debug)]
pub struct Audit {
    path: Option<PathBuf>,
    lock: Mutex<()>,
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

/// Argument names whose values are never written down.
fn is_sensitive(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    [
        "password",
        "passwd",
        "secret",
        "token",
        "apikey",
        "api_key",
        "credential",
        "private_key",
    ]
    .iter()
    .any(|s| key.contains(s))
}

impl Audit {
    pub fn new(engine: &Engine) -> Self {
        let path = engine.state_dir().ok().map(|d| d.join("audit.jsonl"));
        if path.is_none() {
            tracing::warn!(
                "the audit log cannot be written (the workflows folder is not writable)"
            );
        }
        Audit {
            path,
            lock: Mutex::new(()),
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

    /// Appends one entry off the async runtime (a full disk or a slow file system never holds
    /// up a tool call).
    pub fn record_later(self: &std::sync::Arc<Self>, entry: Value) {
        let audit = self.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn_blocking(move || audit.record(entry));
            }
            Err(_) => audit.record(entry),
        }
    }

    /// Appends one entry; past [`MAX_LOG`] bytes the log moves to `audit.1.jsonl` (replacing
    /// the one before), so the audit keeps the latest calls in bounded space.
    pub fn record(&self, entry: Value) {
        let Some(path) = &self.path else { return };
        let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let line = match serde_json::to_string(&entry) {
            Ok(line) => line + "\n",
            Err(_) => return,
        };
        if std::fs::metadata(path).is_ok_and(|m| m.len() + line.len() as u64 > MAX_LOG) {
            let _ = std::fs::rename(path, path.with_extension("1.jsonl"));
        }
        let written = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            tracing::warn!("audit log {}: {e}", path.display());
        }
    }
}
