//! The audit log, `DIR/.flowdeck/audit.jsonl`: every tool call (time, tool, arguments with
//! secrets redacted, outcome, duration, correlation id), one JSON line each.

use crate::engine::Engine;
use crate::engine::contract::MASK;
use serde_json::{Value, json};
use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

/// Appends tool calls to the audit log.
#[derive(Debug)]
pub struct Audit {
    path: Option<PathBuf>,
    lock: Mutex<()>,
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
        let path = engine
            .store()
            .meta_dir()
            .ok()
            .map(|d| d.join("audit.jsonl"));
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

    /// The arguments as logged: sensitive keys and the secret inputs of the workflow run masked.
    pub fn redact(engine: &Engine, tool: &str, args: &Value) -> Value {
        let workflow = args
            .get("workflow_name")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| {
                tool.strip_prefix(super::dynamic::PREFIX)
                    .map(str::to_string)
            });
        let secrets: Vec<String> = workflow
            .and_then(|w| engine.store().runnable(&w).ok())
            .map(|(w, _)| {
                w.arguments
                    .iter()
                    .filter(|(_, v)| v.secret)
                    .map(|(k, _)| k.clone())
                    .collect()
            })
            .unwrap_or_default();
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
                _ => {}
            }
        }
        let mut redacted = args.clone();
        walk(&mut redacted, &secrets);
        redacted
    }

    pub fn record(&self, entry: Value) {
        let Some(path) = &self.path else { return };
        let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let line = match serde_json::to_string(&entry) {
            Ok(line) => line + "\n",
            Err(_) => return,
        };
        let written = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            tracing::warn!("audit log {}: {e}", path.display());
        }
    }
}
