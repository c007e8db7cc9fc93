//! The step plan: a workflow's states in the order a run meets them, each with a one-line
//! summary of its action and its transitions. The CLI prints it, the TUI draws it and MCP
//! returns it, so it is computed once, here.

use super::action::{Action, ContentMode, Key, NamedKey, QuietOn};
use super::guard::{Comparison, Guard};
use super::model::{Condition, ConditionKind, Workflow};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::{HashSet, VecDeque};
use std::fmt::Write;

/// A workflow's states in run order.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, JsonSchema)]
pub struct Plan {
    pub workflow: String,
    pub initial_state: String,
    pub steps: Vec<PlanStep>,
}

/// One state in the plan.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, JsonSchema)]
pub struct PlanStep {
    /// 1-based position in the plan.
    pub number: usize,
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub tool: String,
    /// What the action does, in a few words (`wait for /BUILD OK/ (120 s)`).
    pub action: String,
    /// The guard under which the action runs, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    pub transitions: Vec<PlanTransition>,
    /// Whether a run can reach this state from `initial_state`.
    pub reachable: bool,
    /// Whether the run can end here (it is possible that no transition holds).
    pub can_end: bool,
}

/// One transition in the plan.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, JsonSchema)]
pub struct PlanTransition {
    /// The condition in words (`success`, `pattern_match /OK/`, `judged: "..."`).
    pub condition: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    pub next_state: String,
}

/// Orders the states breadth-first from `initial_state`, following transitions in the order
/// they are written; states no run can reach come last, in file order.
pub fn plan(workflow: &Workflow) -> Plan {
    let mut order: Vec<&str> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut queue = VecDeque::new();
    if workflow.states.contains_key(&workflow.initial_state) {
        queue.push_back(workflow.initial_state.as_str());
        seen.insert(workflow.initial_state.as_str());
    }
    while let Some(name) = queue.pop_front() {
        order.push(name);
        for t in workflow
            .states
            .get(name)
            .map(|s| s.transitions.as_slice())
            .unwrap_or_default()
        {
            if workflow.states.contains_key(&t.next_state) && seen.insert(t.next_state.as_str()) {
                queue.push_back(t.next_state.as_str());
            }
        }
    }
    let reachable = order.len();
    order.extend(
        workflow
            .states
            .keys()
            .map(String::as_str)
            .filter(|n| !seen.contains(n)),
    );
    let steps = order
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            let state = workflow.states.get(*name)?;
            Some(PlanStep {
                number: i + 1,
                state: name.to_string(),
                description: state.description.clone(),
                tool: state.action.tool().as_str().to_string(),
                action: summarize(&state.action),
                when: state.when.as_ref().map(describe_guard),
                transitions: state
                    .transitions
                    .iter()
                    .map(|t| PlanTransition {
                        condition: describe_condition(&t.condition, t.pattern.as_deref()),
                        when: t.when.as_ref().map(describe_guard),
                        next_state: t.next_state.clone(),
                    })
                    .collect(),
                reachable: i < reachable,
                can_end: !state
                    .transitions
                    .iter()
                    .any(|t| t.condition.kind() == ConditionKind::Always && t.when.is_none()),
            })
        })
        .collect();
    Plan {
        workflow: workflow.name.clone(),
        initial_state: workflow.initial_state.clone(),
        steps,
    }
}

/// A transition condition in words.
pub fn describe_condition(condition: &Condition, pattern: Option<&str>) -> String {
    match (condition, pattern) {
        (Condition::Judged(j), _) => format!("judged: {:?}", j.description),
        (Condition::Named(kind), Some(p)) if kind.needs_pattern() => format!("{kind} /{p}/"),
        (Condition::Named(kind), _) => kind.to_string(),
    }
}

/// A guard in words: `BUILD_TYPE == "release" and not RETRIES > 3`.
pub fn describe_guard(guard: &Guard) -> String {
    match guard {
        Guard::And { and } => join(and, " and "),
        Guard::Or { or } => join(or, " or "),
        Guard::Not { not } => format!("not {}", wrap(not)),
        Guard::Compare(c) => describe_comparison(c),
    }
}

fn join(list: &[Guard], sep: &str) -> String {
    list.iter().map(wrap).collect::<Vec<_>>().join(sep)
}

fn wrap(g: &Guard) -> String {
    match g {
        Guard::And { .. } | Guard::Or { .. } => format!("({})", describe_guard(g)),
        _ => describe_guard(g),
    }
}

fn describe_comparison(c: &Comparison) -> String {
    let v = &c.var;
    if let Some(x) = &c.equals {
        format!("{v} == {x}")
    } else if let Some(x) = &c.not_equals {
        format!("{v} != {x}")
    } else if let Some(x) = c.gt {
        format!("{v} > {x}")
    } else if let Some(x) = c.gte {
        format!("{v} >= {x}")
    } else if let Some(x) = c.lt {
        format!("{v} < {x}")
    } else if let Some(x) = c.lte {
        format!("{v} <= {x}")
    } else if let Some(list) = &c.one_of {
        let items: Vec<String> = list.iter().map(ToString::to_string).collect();
        format!("{v} in [{}]", items.join(", "))
    } else if let Some(p) = &c.matches {
        format!("{v} =~ /{p}/")
    } else if let Some(e) = c.exists {
        if e {
            format!("{v} is set")
        } else {
            format!("{v} is not set")
        }
    } else {
        format!("{v} ?")
    }
}

/// What an action does, in a few words.
pub fn summarize(action: &Action) -> String {
    match action {
        Action::OpenTerminal(p) => {
            let mut s = match &p.command {
                Some(argv) => format!("open terminal running `{}`", argv.join(" ")),
                None => format!(
                    "open terminal ({})",
                    p.shell.as_deref().unwrap_or("default shell")
                ),
            };
            if let Some(cwd) = &p.cwd {
                let _ = write!(s, " in {cwd}");
            }
            s
        }
        Action::SendInput(p) => match (&p.input_text, &p.keys) {
            (Some(text), _) => format!("type \"{}\"", visible(text)),
            (None, Some(keys)) => format!(
                "press {}",
                keys.iter().map(describe_key).collect::<Vec<_>>().join(", ")
            ),
            (None, None) => "send nothing".to_string(),
        },
        Action::AwaitOutput(p) => {
            let quiet = p.quiet_ms.map(|ms| match p.quiet_on.unwrap_or_default() {
                QuietOn::Output => format!("{ms} ms without output"),
                QuietOn::Screen => format!("the screen to stay unchanged {ms} ms"),
            });
            let mut s = match (&p.pattern, quiet) {
                _ if p.shell_prompt => "wait for the shell's prompt".to_string(),
                (Some(pattern), Some(quiet)) => format!("wait for /{pattern}/, then {quiet}"),
                (Some(pattern), None) => format!("wait for /{pattern}/"),
                (None, Some(quiet)) => format!("wait for {quiet}"),
                (None, None) => "wait".to_string(),
            };
            if let Some(t) = p.timeout {
                let _ = write!(s, " ({t} s)");
            }
            if !p.stop_patterns.is_empty() {
                let stops: Vec<String> = p.stop_patterns.iter().map(|x| format!("/{x}/")).collect();
                let _ = write!(s, ", stop on {}", stops.join(" "));
            }
            if !p.captures.is_empty() {
                let _ = write!(
                    s,
                    ", capture {}",
                    p.captures.keys().cloned().collect::<Vec<_>>().join(", ")
                );
            }
            s
        }
        Action::GetScreenContent(p) => match p.content_mode.unwrap_or_default() {
            ContentMode::Screen => "read the screen".to_string(),
            ContentMode::History => "read the history".to_string(),
            ContentMode::Tail => format!("read the last {} lines", p.lines.unwrap_or(50)),
            ContentMode::SinceInput => "read the output since the last input".to_string(),
        },
        Action::RunCommand(p) => format!("run `{}`", visible(&p.command)),
        Action::SetEnv(p) => {
            let vars: Vec<String> = p
                .vars
                .iter()
                .map(|(k, v)| format!("{k}={}", visible(&v.to_string())))
                .collect();
            format!("set {}", vars.join(" "))
        }
        Action::ListTerminalSessions(_) => "list terminal sessions".to_string(),
        Action::ExitTerminal(_) => "close the terminal".to_string(),
        Action::Prompt(p) => {
            let mut s = format!("ask \"{}\"", visible(&p.prompt));
            if let Some(var) = &p.store_as {
                let _ = write!(s, " → {var}");
            }
            s
        }
    }
}

fn describe_key(key: &Key) -> String {
    match key {
        Key::Text { text } => format!("\"{}\"", visible(text)),
        Key::Named { key } => named_key(*key).to_string(),
        Key::Ctrl { ctrl } => format!("ctrl-{ctrl}"),
        Key::Alt { alt } => format!("alt-{alt}"),
        Key::Var { var } => format!("${var}"),
    }
}

fn named_key(key: NamedKey) -> &'static str {
    use NamedKey::*;
    match key {
        Enter => "enter",
        Tab => "tab",
        Escape => "escape",
        Backspace => "backspace",
        Up => "up",
        Down => "down",
        Left => "left",
        Right => "right",
        Home => "home",
        End => "end",
        PageUp => "pageup",
        PageDown => "pagedown",
        Insert => "insert",
        Delete => "delete",
        F1 => "f1",
        F2 => "f2",
        F3 => "f3",
        F4 => "f4",
        F5 => "f5",
        F6 => "f6",
        F7 => "f7",
        F8 => "f8",
        F9 => "f9",
        F10 => "f10",
        F11 => "f11",
        F12 => "f12",
    }
}

/// Text with control characters made visible (`⏎` for a newline, `^C` for Ctrl-C), cut to
/// a line's length, so that a summary is always one safe line.
pub fn visible(text: &str) -> String {
    const MAX: usize = 60;
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == MAX {
            out.push('…');
            break;
        }
        match c {
            '\n' | '\r' => out.push('⏎'),
            '\t' => out.push('⇥'),
            c if (c as u32) < 0x20 => {
                out.push('^');
                out.push(char::from(b'@' + c as u8));
            }
            c if super::names::is_dangerous_char(c) => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workflow(yaml: &str) -> Workflow {
        crate::workflow::test_manifest(yaml)
    }

    #[test]
    fn breadth_first_then_unreachable() {
        let w = workflow(
            r#"
name: t
description: t
initial_state: start
states:
  orphan:
    action: {tool: list_terminal_sessions}
  failed:
    action: {tool: set_env, params: {vars: {STATUS: FAILED}}}
  start:
    action: {tool: send_input, params: {input_text: "make\n"}}
    transitions:
      - {condition: success, next_state: wait}
  wait:
    action: {tool: await_output, params: {pattern: "BUILD (OK|FAILED)", timeout: 120}}
    transitions:
      - {condition: pattern_match, pattern: "BUILD OK", next_state: ok}
      - {condition: timeout, next_state: failed}
      - {condition: {description: "Looks wrong"}, next_state: failed, when: {var: RETRY, equals: "no"}}
  ok:
    action: {tool: set_env, params: {vars: {STATUS: OK}}}
"#,
        );
        let p = plan(&w);
        let names: Vec<&str> = p.steps.iter().map(|s| s.state.as_str()).collect();
        assert_eq!(names, vec!["start", "wait", "ok", "failed", "orphan"]);
        assert!(p.steps[..4].iter().all(|s| s.reachable));
        assert!(!p.steps[4].reachable);
        assert_eq!(p.steps[0].action, "type \"make⏎\"");
        assert_eq!(p.steps[1].action, "wait for /BUILD (OK|FAILED)/ (120 s)");
        assert_eq!(
            p.steps[1].transitions[0].condition,
            "pattern_match /BUILD OK/"
        );
        assert_eq!(
            p.steps[1].transitions[2].condition,
            "judged: \"Looks wrong\""
        );
        assert_eq!(
            p.steps[1].transitions[2].when.as_deref(),
            Some("RETRY == \"no\"")
        );
        assert!(p.steps[2].can_end);
    }

    #[test]
    fn guards_read_naturally() {
        let g: Guard = serde_json::from_value(serde_json::json!({
            "and": [{"var": "A", "gt": 3}, {"not": {"or": [{"var": "B", "exists": true}, {"var": "C", "matches": "x"}]}}]
        }))
        .unwrap();
        assert_eq!(describe_guard(&g), "A > 3 and not (B is set or C =~ /x/)");
    }

    #[test]
    fn control_characters_are_visible() {
        assert_eq!(visible("a\x03b\n\x1b[31m"), "a^Cb⏎^[[31m");
        assert_eq!(visible("\u{202e}x"), "\\u{202e}x");
    }
}
