//! The audit log, `DIR/.flowdeck/audit.jsonl`: its one line format ([`AuditEntry`]), which the
//! MCP server writes (`src/mcp/audit.rs`: who called which tool, when, with what arguments and
//! outcome) and the studio reads back here for its view of what agents did.

use super::{Actor, Engine};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One tool call as the audit log records it. Its fields are written in this order, the
/// optional ones only when they apply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    pub at: String,
    pub tool: String,
    #[serde(default)]
    pub actor: Option<Actor>,
    /// The arguments as logged: secrets masked, long texts summarized (`mcp/audit.rs`).
    #[serde(default)]
    pub arguments: Value,
    pub outcome: AuditOutcome,
    /// The task a call made a task of (`outcome` is then `task`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// How long the call took (a call made a task is logged as it starts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// The id that the call's error, if any, and the server's log carry too.
    #[serde(default)]
    pub correlation_id: Option<String>,
}

impl AuditEntry {
    /// A call made a task, logged as it starts.
    pub fn task(call: AuditedCall, task_id: String) -> Self {
        call.entry(AuditOutcome::Task, Some(task_id), None)
    }

    /// A call that ended, with how and how long it took.
    pub fn ended(call: AuditedCall, outcome: AuditOutcome, duration_ms: f64) -> Self {
        call.entry(outcome, None, Some(duration_ms))
    }
}

/// What every audit line of a call says: which tool, who called, with what (already
/// redacted), under which correlation id.
#[derive(Debug, Clone)]
pub struct AuditedCall {
    pub tool: String,
    pub actor: Actor,
    pub arguments: Value,
    pub correlation_id: String,
}

impl AuditedCall {
    fn entry(
        self,
        outcome: AuditOutcome,
        task_id: Option<String>,
        duration_ms: Option<f64>,
    ) -> AuditEntry {
        AuditEntry {
            at: super::journal::now(),
            tool: self.tool,
            actor: Some(self.actor),
            arguments: self.arguments,
            outcome,
            task_id,
            duration_ms,
            correlation_id: Some(self.correlation_id),
        }
    }
}

/// How a tool call ended, written as `ok`, `task` or the error's code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum AuditOutcome {
    Ok,
    /// The call was made a task: it goes on after its answer.
    Task,
    /// The call failed with this error code.
    Failed(String),
}

impl AuditOutcome {
    pub fn is_failure(&self) -> bool {
        matches!(self, AuditOutcome::Failed(_))
    }

    pub fn as_str(&self) -> &str {
        match self {
            AuditOutcome::Ok => "ok",
            AuditOutcome::Task => "task",
            AuditOutcome::Failed(code) => code,
        }
    }
}

impl From<String> for AuditOutcome {
    fn from(text: String) -> Self {
        match text.as_str() {
            "ok" => AuditOutcome::Ok,
            "task" => AuditOutcome::Task,
            _ => AuditOutcome::Failed(text),
        }
    }
}

impl From<AuditOutcome> for String {
    fn from(outcome: AuditOutcome) -> Self {
        match outcome {
            AuditOutcome::Failed(code) => code,
            other => other.as_str().to_string(),
        }
    }
}

impl Engine {
    /// Appends a line the engine itself writes (the closing of an abandoned terminal): rare,
    /// so opened for each line, beside the MCP server's writer of tool calls, whose lines
    /// are appended whole as these are.
    pub(super) fn append_audit(&self, entry: &AuditEntry) -> std::io::Result<()> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let path = self
            .state_dir()
            .map_err(std::io::Error::other)?
            .join("audit.jsonl");
        let line = serde_json::to_string(entry).map_err(std::io::Error::other)? + "\n";
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)?
            .write_all(line.as_bytes())
    }

    /// The last `limit` tool calls of the audit log, oldest first (the rotated file is read
    /// too when the current one holds fewer). Torn or foreign lines are skipped.
    pub fn audit_tail(&self, limit: usize) -> Vec<AuditEntry> {
        let Ok(dir) = self.state_dir() else {
            return Vec::new();
        };
        let mut entries = Vec::new();
        for file in ["audit.jsonl", "audit.1.jsonl"] {
            let Ok(text) = std::fs::read_to_string(dir.join(file)) else {
                continue;
            };
            let mut older: Vec<AuditEntry> = text
                .lines()
                .filter_map(|line| serde_json::from_str(line).ok())
                .collect();
            older.append(&mut entries);
            entries = older;
            if entries.len() >= limit {
                break;
            }
        }
        let skip = entries.len().saturating_sub(limit);
        entries.split_off(skip)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_calls_oldest_first_from_both_files_torn_lines_skipped() {
        let dir = tempfile::tempdir().expect("a temp folder");
        let engine =
            Engine::open(dir.path(), super::super::EngineConfig::default()).expect("an engine");
        let state = engine.state_dir().expect("the state folder");
        let line = |n: u32| {
            format!(
                "{{\"at\":\"2026-11-23T10:00:0{n}.000Z\",\"tool\":\"t{n}\",\"actor\":{{\"kind\":\"cli\"}},\"outcome\":\"ok\",\"duration_ms\":1.0}}\n"
            )
        };
        std::fs::write(state.join("audit.1.jsonl"), line(1) + &line(2)).expect("older");
        std::fs::write(state.join("audit.jsonl"), line(3) + "{torn\n" + &line(4)).expect("newer");
        let tools: Vec<String> = engine.audit_tail(3).into_iter().map(|e| e.tool).collect();
        assert_eq!(tools, ["t2", "t3", "t4"]);
        assert_eq!(engine.audit_tail(10).len(), 4);
        assert_eq!(engine.audit_tail(1)[0].actor, Some(Actor::Cli));
    }

    #[test]
    fn lines_written_before_the_format_had_a_type_read_and_write_back_byte_for_byte() {
        // As `json!` wrote them in src/mcp until 2026-11-25: a call made a task, one that
        // ended, one that failed.
        let lines = [
            r#"{"at":"2026-11-24T09:00:00.000Z","tool":"run_workflow","actor":{"kind":"agent","client":"wire","connection":"c1"},"arguments":{"workflow_name":"tiny","inputs":{"TOKEN":"***"}},"outcome":"task","task_id":"t-1","correlation_id":"run_workflow-3"}"#,
            r#"{"at":"2026-11-24T09:00:01.000Z","tool":"list_workflows","actor":{"kind":"agent","client":"wire","connection":"c1"},"arguments":{},"outcome":"ok","duration_ms":1.25,"correlation_id":"list_workflows-4"}"#,
            r#"{"at":"2026-11-24T09:00:02.000Z","tool":"send_input","actor":{"kind":"agent","client":"wire","connection":"c1"},"arguments":{"session_id":"s9"},"outcome":"session_not_found","duration_ms":0.5,"correlation_id":"send_input-5"}"#,
        ];
        for line in lines {
            let entry: AuditEntry = serde_json::from_str(line).expect("read");
            assert_eq!(serde_json::to_string(&entry).expect("written"), line);
        }
        let failed: AuditEntry = serde_json::from_str(lines[2]).expect("read");
        assert!(failed.outcome.is_failure());
        assert_eq!(failed.outcome.as_str(), "session_not_found");
    }
}
