//! Dynamic tools: one `wf_<name>` tool per runnable workflow, whose input schema is the
//! workflow's arguments. The set follows the folder; the server announces changes with
//! `notifications/tools/list_changed`.

use crate::engine::Engine;
use crate::workflow::model::{VarType, Workflow};
use rmcp::model::JsonObject;
use serde_json::{Value, json};

/// Tool names are at most 64 characters (a common client limit).
const MAX_TOOL_NAME: usize = 64;
pub const PREFIX: &str = "wf_";

/// A workflow offered as a tool.
#[derive(Debug, Clone)]
pub struct DynamicTool {
    pub tool_name: String,
    pub workflow: String,
    pub description: String,
    pub schema: JsonObject,
}

/// Which workflows get a `wf_` tool: name patterns (`--dynamic-filter`, where `*` matches any
/// run of characters), in lists that must all agree. A name passes a list when it matches one
/// of its patterns (an empty list passes every name), and passes the filter when it passes
/// every list: a relayed agent's list is added to its host's, so that it can only narrow what
/// the host offers (options.rs).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct DynamicFilter(Vec<Vec<String>>);

impl DynamicFilter {
    /// One command line's patterns: a name matching any of them passes.
    pub fn any_of(patterns: Vec<String>) -> Self {
        if patterns.is_empty() {
            return DynamicFilter::default();
        }
        DynamicFilter(vec![patterns])
    }

    /// What passes both filters.
    pub fn and(&self, other: &DynamicFilter) -> Self {
        let mut lists = self.0.clone();
        lists.extend(
            other
                .0
                .iter()
                .filter(|l| !lists.contains(l))
                .cloned()
                .collect::<Vec<_>>(),
        );
        DynamicFilter(lists)
    }

    pub fn matches(&self, name: &str) -> bool {
        self.0
            .iter()
            .all(|list| list.is_empty() || list.iter().any(|f| glob(f, name)))
    }
}

fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, rest)) => {
            let Some(after) = text.strip_prefix(head) else {
                return false;
            };
            (0..=after.len())
                .filter(|&i| after.is_char_boundary(i))
                .any(|i| glob(rest, &after[i..]))
        }
    }
}

/// The dynamic tools for the folder's runnable workflows, sorted by name.
pub fn tools(engine: &Engine, filter: &DynamicFilter) -> Vec<DynamicTool> {
    let names: Vec<String> = engine
        .workflow_list()
        .workflows
        .into_iter()
        .map(|w| w.name)
        .collect();
    let mut tools: Vec<DynamicTool> = names
        .into_iter()
        .filter(|name| filter.matches(name))
        .filter_map(|name| {
            let tool_name = format!("{PREFIX}{name}");
            if tool_name.len() > MAX_TOOL_NAME {
                tracing::info!("workflow {name}: no dynamic tool, the name is over {MAX_TOOL_NAME} characters with its prefix");
                return None;
            }
            // Only workflows that can run (valid now, or with a last good version).
            let workflow = engine.runnable(&name).ok()?;
            Some(DynamicTool {
                tool_name,
                description: describe(&workflow),
                schema: schema(&workflow),
                workflow: name,
            })
        })
        .collect();
    tools.sort_by(|a, b| a.tool_name.cmp(&b.tool_name));
    tools.dedup_by(|a, b| a.tool_name == b.tool_name);
    tools
}

fn describe(w: &Workflow) -> String {
    let mut text = format!("Run the workflow `{}`: {}", w.name, w.description.trim());
    if !w.return_values.is_empty() {
        let names: Vec<&str> = w.return_values.keys().map(String::as_str).collect();
        text.push_str(&format!(" Returns: {}.", names.join(", ")));
    }
    text
}

/// The input schema: one property per argument (typed, with enum, anchored pattern, default),
/// the required ones required, plus where to run.
fn schema(w: &Workflow) -> JsonObject {
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    for (name, var) in &w.arguments {
        let mut p = serde_json::Map::new();
        let kind = match var.kind() {
            VarType::Integer => "integer",
            VarType::Number => "number",
            VarType::Boolean => "boolean",
            VarType::String | VarType::Path => "string",
        };
        p.insert("type".into(), json!(kind));
        let mut description = var.description.clone();
        if var.secret {
            description.push_str(" (secret: masked in results and logs)");
        }
        p.insert("description".into(), json!(description));
        if let Some(choices) = &var.choices {
            p.insert(
                "enum".into(),
                serde_json::to_value(choices).unwrap_or(Value::Null),
            );
        }
        if let Some(pattern) = &var.pattern {
            p.insert("pattern".into(), json!(format!("^(?:{pattern})$")));
        }
        if let Some(default) = &var.default {
            p.insert(
                "default".into(),
                serde_json::to_value(default).unwrap_or(Value::Null),
            );
        }
        if var.required && var.default.is_none() {
            required.push(name.clone());
        }
        properties.insert(name.clone(), Value::Object(p));
    }
    properties.insert(
        "session_id".into(),
        json!({"type": "string", "description": "Default: a new session."}),
    );
    properties.insert(
        "wait".into(),
        json!({"type": "boolean", "description": "false: return the run_id at once."}),
    );
    let mut schema = serde_json::Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    schema.insert("required".into(), json!(required));
    schema.insert("additionalProperties".into(), json!(false));
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_globs() {
        assert!(DynamicFilter::default().matches("anything"));
        assert!(DynamicFilter::any_of(Vec::new()).matches("anything"));
        let f = DynamicFilter::any_of(vec!["build_*".to_string(), "git_health".to_string()]);
        assert!(f.matches("build_project"));
        assert!(f.matches("git_health"));
        assert!(!f.matches("git_health_2"));
        assert!(!f.matches("make_build"));
        assert!(glob("*_build", "make_build"));
        assert!(glob("a*b*c", "axxbyyc"));
    }

    #[test]
    fn filters_together_pass_only_what_both_pass() {
        let host = DynamicFilter::any_of(vec!["keep_*".to_string()]);
        let everything = DynamicFilter::any_of(vec!["*".to_string()]);
        let both = host.and(&everything);
        assert!(both.matches("keep_a"));
        assert!(
            !both.matches("hidden"),
            "an agent's `*` does not widen `keep_*`"
        );
        let narrower = host.and(&DynamicFilter::any_of(vec!["*_a".to_string()]));
        assert!(narrower.matches("keep_a") && !narrower.matches("keep_b"));
        assert_eq!(host.and(&DynamicFilter::default()), host);
    }
}
