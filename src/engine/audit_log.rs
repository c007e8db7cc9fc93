//! Reading the audit log back (the MCP server writes it: `src/mcp/audit.rs`): who called which
//! tool, when, with what outcome, for the studio's view of what agents did.

use super::{Actor, Engine};
use serde::Deserialize;

/// One tool call as the audit log recorded it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
pub struct AuditEntry {
    pub at: String,
    pub tool: String,
    #[serde(default)]
    pub actor: Option<Actor>,
    /// `ok`, `task`, or the error's code.
    pub outcome: String,
    #[serde(default)]
    pub duration_ms: f64,
}

impl Engine {
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
}
