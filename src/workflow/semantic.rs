//! Checks the schema cannot express: that the state machine is connected, that every regex
//! compiles within bounds, that the contract is coherent.
//!
//! They read the raw value leniently and each state and variable on its own, so that one
//! broken state does not hide the problems of the others: all violations at once.

use super::action::{Action, AwaitOutputParams, CaptureGroup, MAX_WAIT_SECONDS, ToolName};
use super::guard::Guard;
use super::model::{ConditionKind, Transition, Variable};
use super::names::{display_safe, pointer_join, pointer_segment};
use super::pattern::{Groups, check, compile};
use super::rules::check_definitions;
use super::source::SpanMap;
use super::suggest::hint;
use super::violation::Violation;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet, VecDeque};

/// Every semantic violation of a manifest value.
pub fn semantic_violations(value: &Value, spans: &SpanMap) -> Vec<Violation> {
    let mut check = Checker {
        spans,
        out: Vec::new(),
    };
    let Some(root) = value.as_object() else {
        return check.out;
    };
    check.version(root);
    check.contract(root);
    check.host(root);
    let graph = check.states(root);
    check.graph(root, &graph);
    for (path, var) in super::variables::unknown_var_keys(root) {
        let message = format!(
            "{var} is not a variable of this workflow: declare it under arguments, or capture it in an earlier wait"
        );
        check.push(Violation::error("unknown_variable", path, message).actual(var));
    }
    check.out
}

struct Checker<'a> {
    spans: &'a SpanMap,
    out: Vec<Violation>,
}

/// A transition as far as the graph is concerned.
struct Edge {
    to: String,
    /// Holds whatever happens (`always` or a judged condition, with no `when`).
    unconditional: bool,
}

/// State name → its edges, in document order.
type Graph = Vec<(String, Vec<Edge>)>;

impl Checker<'_> {
    fn push(&mut self, v: Violation) {
        let at = self.spans.value_position(&v.path);
        self.out.push(v.at(at));
    }

    fn push_at_key(&mut self, v: Violation) {
        let at = self.spans.key_position(&v.path);
        self.out.push(v.at(at));
    }

    fn version(&mut self, root: &Map<String, Value>) {
        if let Some(Value::String(version)) = root.get("version")
            && let Err(e) = semver::Version::parse(version)
        {
            self.push(
                Violation::error(
                    "invalid_version",
                    "/version",
                    format!("version {} is not semver: {e}", display_safe(version)),
                )
                .expected("semver, e.g. 1.2.0")
                .actual(version.clone()),
            );
        }
    }

    /// `host:` names only arguments the workflow declares, and expands at all.
    fn host(&mut self, root: &Map<String, Value>) {
        let Some(Value::String(host)) = root.get("host") else {
            return;
        };
        let arguments = root.get("arguments").and_then(Value::as_object);
        let declared = |name: &str| arguments.is_some_and(|a| a.contains_key(name));
        match super::host::expand(host, |name| declared(name).then(String::new)) {
            Ok(_) => {}
            Err(why) => {
                let names = super::host::referenced(host);
                let unknown = names.iter().find(|n| !declared(n));
                let message = match unknown {
                    Some(name) => format!(
                        "host names argument {} that the workflow does not declare (declare it under arguments)",
                        display_safe(name)
                    ),
                    None => format!("host {}: {why}", display_safe(host)),
                };
                self.push(Violation::error("invalid_host", "/host", message).actual(host.clone()));
            }
        }
    }

    fn contract(&mut self, root: &Map<String, Value>) {
        let arguments = root.get("arguments").and_then(Value::as_object);
        let returns = root.get("return_values").and_then(Value::as_object);
        for (section, vars) in [("arguments", arguments), ("return_values", returns)] {
            for (key, raw) in vars.into_iter().flatten() {
                let path = format!("/{section}/{}", pointer_segment(key));
                if let Ok(var) = Variable::deserialize(raw) {
                    self.variable(key, &var, &path);
                }
            }
        }
        if let (Some(args), Some(rets)) = (arguments, returns) {
            for key in rets.keys().filter(|k| args.contains_key(*k)) {
                self.push_at_key(
                    Violation::error(
                        "argument_is_return_value",
                        format!("/return_values/{}", pointer_segment(key)),
                        format!(
                            "variable '{key}' is both an argument and a return value; use two names"
                        ),
                    )
                    .actual(key.clone()),
                );
            }
        }
    }

    fn variable(&mut self, key: &str, var: &Variable, path: &str) {
        if let Some(name) = &var.name
            && name != key
        {
            self.push(
                Violation::error(
                    "variable_name_mismatch",
                    format!("{path}/name"),
                    format!("name {} differs from its key '{key}'", display_safe(name)),
                )
                .expected(key)
                .actual(name.clone()),
            );
        }
        let anchored = var.pattern.as_deref().map(|p| (p, format!("^(?:{p})$")));
        let pattern_ok = match &anchored {
            Some((p, anchored)) => match check(anchored) {
                Ok(_) => true,
                Err(e) => {
                    self.push(
                        Violation::error(e.rule(), format!("{path}/pattern"), e.to_string())
                            .actual(*p),
                    );
                    false
                }
            },
            None => false,
        };
        // The regex itself only to test a default against it, which few variables have.
        let pattern = anchored
            .filter(|_| pattern_ok && var.default.is_some())
            .and_then(|(_, anchored)| compile(&anchored).ok());
        let kind = var.kind();
        for (i, choice) in var.choices.iter().flatten().enumerate() {
            let text = choice.to_string();
            if !kind.accepts(&text) {
                self.push(
                    Violation::error(
                        "invalid_enum",
                        format!("{path}/enum/{i}"),
                        format!(
                            "choice {} is not a valid {}",
                            display_safe(&text),
                            kind.as_str()
                        ),
                    )
                    .expected(kind.as_str())
                    .actual(text),
                );
            }
        }
        if let Some(default) = &var.default {
            let text = default.to_string();
            let at = format!("{path}/default");
            let problem = if !kind.accepts(&text) {
                Some(format!(
                    "default {} is not a valid {}",
                    display_safe(&text),
                    kind.as_str()
                ))
            } else if let Some(choices) = &var.choices
                && !choices.iter().any(|c| c.to_string() == text)
            {
                Some(format!(
                    "default {} is not one of the enum choices",
                    display_safe(&text)
                ))
            } else if pattern.as_ref().is_some_and(|r| !r.is_match(&text)) {
                Some(format!(
                    "default {} does not match the variable's pattern",
                    display_safe(&text)
                ))
            } else {
                None
            };
            if let Some(message) = problem {
                self.push(Violation::error("invalid_default", at, message).actual(text));
            }
        }
    }

    /// Checks each state on its own and returns the graph for the whole-machine checks.
    fn states(&mut self, root: &Map<String, Value>) -> Graph {
        let mut graph = Vec::new();
        let Some(states) = root.get("states").and_then(Value::as_object) else {
            return graph;
        };
        let names: Vec<&str> = states.keys().map(String::as_str).collect();
        for (name, raw) in states {
            let path = format!("/states/{}", pointer_segment(name));
            let edges = self.edges(raw, &path, &names);
            self.state(raw, &path);
            graph.push((name.clone(), edges));
        }
        graph
    }

    fn edges(&mut self, raw: &Value, path: &str, names: &[&str]) -> Vec<Edge> {
        let mut edges = Vec::new();
        let transitions = raw
            .get("transitions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for (i, t) in transitions.enumerate() {
            let Some(to) = t.get("next_state").and_then(Value::as_str) else {
                continue;
            };
            if !names.contains(&to) {
                self.push(
                    Violation::error(
                        "unknown_next_state",
                        format!("{path}/transitions/{i}/next_state"),
                        format!(
                            "transition goes to {}, which is not a state{}",
                            display_safe(to),
                            hint(to, names.iter().copied())
                        ),
                    )
                    .expected(format!("one of: {}", names.join(", ")))
                    .actual(to),
                );
                continue;
            }
            let condition = t.get("condition");
            let unconditional_condition = match condition {
                None | Some(Value::Object(_)) => true,
                Some(Value::String(s)) => s == "always",
                Some(_) => false,
            };
            let unconditional = unconditional_condition && t.get("when").is_none();
            edges.push(Edge {
                to: to.to_string(),
                unconditional,
            });
        }
        edges
    }

    /// Checks one state: each transition, guard and the action on its own, so that one broken
    /// part does not hide the problems of the others.
    fn state(&mut self, raw: &Value, path: &str) {
        // Read from the value in place: cloning each part first would double the work.
        let action = raw.get("action").and_then(|a| Action::deserialize(a).ok());
        let tool = raw
            .pointer("/action/tool")
            .and_then(Value::as_str)
            .and_then(ToolName::parse);
        let mut shadowed_by: Option<usize> = None;
        let transitions = raw
            .get("transitions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for (i, raw_t) in transitions.enumerate() {
            let Ok(t) = Transition::deserialize(raw_t) else {
                continue;
            };
            self.transition(&t, &format!("{path}/transitions/{i}"), tool, shadowed_by);
            if shadowed_by.is_none()
                && t.condition.kind() == ConditionKind::Always
                && t.when.is_none()
            {
                shadowed_by = Some(i);
            }
        }
        if let Some(guard) = raw.get("when").and_then(|w| Guard::deserialize(w).ok()) {
            self.guard(&guard, &format!("{path}/when"));
        }
        if let Some(action) = action {
            self.action(&action, &format!("{path}/action/params"));
        }
    }

    /// Checks one transition of a state whose action calls `tool`: its pattern, whether its
    /// condition can hold after that tool, its guard; and whether an earlier transition
    /// (`shadowed_by`) always holds, so that it is never taken.
    fn transition(
        &mut self,
        t: &Transition,
        tpath: &str,
        tool: Option<ToolName>,
        shadowed_by: Option<usize>,
    ) {
        if let Some(first) = shadowed_by {
            self.push(Violation::warning(
                "unreachable_transition",
                tpath.to_string(),
                format!("transition {first} always holds, so this one is never taken"),
            ));
        }
        let kind = t.condition.kind();
        match (&t.pattern, kind.needs_pattern()) {
            (None, true) => self.push(Violation::error(
                "missing_pattern",
                format!("{tpath}/condition"),
                format!("condition '{kind}' needs a 'pattern' to test"),
            )),
            (Some(_), false) => self.push(Violation::warning(
                "pattern_ignored",
                format!("{tpath}/pattern"),
                format!(
                    "'pattern' is only used by pattern_match and pattern_no_match, not '{kind}'"
                ),
            )),
            (Some(p), true) => {
                self.regex(p, &format!("{tpath}/pattern"));
            }
            (None, false) => {}
        }
        if let Some(why) = tool.and_then(|tool| never_holds(kind, tool)) {
            self.push(Violation::warning(
                "condition_never_holds",
                format!("{tpath}/condition"),
                format!(
                    "'{kind}' never holds after {}: {why}",
                    tool.map(ToolName::as_str).unwrap_or_default()
                ),
            ));
        }
        if let Some(guard) = &t.when {
            self.guard(guard, &format!("{tpath}/when"));
        }
    }

    /// Checks a state's action: what its parameters' types cannot say (parameters that need
    /// or exclude each other, patterns, waits, rules). `action_path` is its `params`.
    fn action(&mut self, action: &Action, action_path: &str) {
        match action {
            Action::AwaitOutput(p) => self.await_output(p, action_path),
            Action::RunCommand(p) => self.wait(p.timeout, &format!("{action_path}/timeout")),
            Action::SendInput(p) if p.input_text.is_some() == p.keys.is_some() => {
                self.push(Violation::error(
                    "send_input_needs_input",
                    action_path.to_string(),
                    "send_input needs exactly one of 'input_text' and 'keys'",
                ));
            }
            Action::OpenTerminal(p) if p.shell.is_some() && p.command.is_some() => {
                self.push(Violation::error(
                    "conflicting_params",
                    format!("{action_path}/command"),
                    "open_terminal takes 'shell' or 'command', not both",
                ));
            }
            Action::Prompt(p) => {
                for e in check_definitions(&p.validation) {
                    let at = format!("{action_path}/validation{}", e.at());
                    self.push(Violation::error(e.rule(), at, e.to_string()));
                }
            }
            _ => {}
        }
    }

    /// Checks an `await_output` action's parameters (at `action_path`).
    fn await_output(&mut self, p: &AwaitOutputParams, action_path: &str) {
        if p.shell_prompt && (p.pattern.is_some() || p.quiet_ms.is_some()) {
            self.push(Violation::error(
                "shell_prompt_with_pattern",
                format!("{action_path}/shell_prompt"),
                "'shell_prompt' waits for the shell alone: drop 'pattern' and 'quiet_ms', or make it a state of its own",
            ));
        }
        if p.pattern.is_none() && p.quiet_ms.is_none() && !p.shell_prompt {
            self.push(Violation::error(
                "await_needs_pattern_or_quiet",
                action_path.to_string(),
                "await_output needs 'pattern', 'quiet_ms', or both (the pattern, then quiet), or 'shell_prompt: true'",
            ));
        }
        if p.quiet_on.is_some() && p.quiet_ms.is_none() {
            self.push(Violation::error(
                "quiet_on_without_quiet_ms",
                format!("{action_path}/quiet_on"),
                "'quiet_on' says what 'quiet_ms' watches; give 'quiet_ms' too",
            ));
        }
        if p.pattern.is_none() && !p.captures.is_empty() {
            self.push(Violation::error(
                "captures_without_pattern",
                format!("{action_path}/captures"),
                "captures take groups of 'pattern'; this wait has none",
            ));
        }
        let regex = p
            .pattern
            .as_ref()
            .and_then(|pattern| self.regex(pattern, &format!("{action_path}/pattern")));
        for (i, stop) in p.stop_patterns.iter().enumerate() {
            self.regex(stop, &format!("{action_path}/stop_patterns/{i}"));
        }
        self.wait(p.timeout, &format!("{action_path}/timeout"));
        if let Some(regex) = regex {
            self.captures(&regex, &p.captures, &format!("{action_path}/captures"));
        }
    }

    fn regex(&mut self, pattern: &str, path: &str) -> Option<std::sync::Arc<Groups>> {
        match check(pattern) {
            Ok(groups) => Some(groups),
            Err(e) => {
                self.push(
                    Violation::error(e.rule(), path, e.to_string()).actual(truncate(pattern)),
                );
                None
            }
        }
    }

    fn guard(&mut self, guard: &Guard, path: &str) {
        for (at, pattern) in guard.patterns() {
            self.regex(pattern, &format!("{path}{at}"));
        }
    }

    fn wait(&mut self, timeout: Option<f64>, path: &str) {
        if let Some(t) = timeout
            && t > MAX_WAIT_SECONDS
        {
            self.push(
                Violation::warning(
                    "timeout_clamped",
                    path,
                    format!("timeout {t} s is longer than the maximum; it will be clamped to {MAX_WAIT_SECONDS} s"),
                )
                .expected(format!("<= {MAX_WAIT_SECONDS}"))
                .actual(t.to_string()),
            );
        }
    }

    fn captures(
        &mut self,
        groups: &Groups,
        captures: &indexmap::IndexMap<String, CaptureGroup>,
        path: &str,
    ) {
        for (var, group) in captures {
            let exists = match group {
                CaptureGroup::Index(i) => (*i as usize) < groups.len,
                CaptureGroup::Name(n) => groups.names.iter().any(|name| name == n),
            };
            if !exists {
                self.push(
                    Violation::error(
                        "unknown_capture_group",
                        pointer_join(path, var),
                        format!("the pattern has no group {group} to capture into {var}"),
                    )
                    .actual(group.to_string()),
                );
            }
        }
    }

    fn graph(&mut self, root: &Map<String, Value>, graph: &Graph) {
        let names: Vec<&str> = graph.iter().map(|(n, _)| n.as_str()).collect();
        let Some(initial) = root.get("initial_state").and_then(Value::as_str) else {
            return;
        };
        if !names.is_empty() && !names.contains(&initial) {
            self.push(
                Violation::error(
                    "unknown_initial_state",
                    "/initial_state",
                    format!(
                        "initial state {} is not a state{}",
                        display_safe(initial),
                        hint(initial, names.iter().copied())
                    ),
                )
                .expected(format!("one of: {}", names.join(", ")))
                .actual(initial),
            );
            return;
        }
        let index: HashMap<&str, &Vec<Edge>> = graph.iter().map(|(n, e)| (n.as_str(), e)).collect();
        let reachable = reachable_from(initial, &index);
        for name in names.iter().filter(|n| !reachable.contains(*n)) {
            self.push_at_key(Violation::warning(
                "unreachable_state",
                format!("/states/{}", pointer_segment(name)),
                format!("state '{name}' cannot be reached from '{initial}'"),
            ));
        }
        // A state can end the run when it is possible that none of its transitions holds.
        let mut can_end: HashSet<&str> = graph
            .iter()
            .filter(|(_, edges)| !edges.iter().any(|e| e.unconditional))
            .map(|(n, _)| n.as_str())
            .collect();
        loop {
            let before = can_end.len();
            for (name, edges) in graph {
                if edges.iter().any(|e| can_end.contains(e.to.as_str())) {
                    can_end.insert(name.as_str());
                }
            }
            if can_end.len() == before {
                break;
            }
        }
        for name in names
            .iter()
            .filter(|n| reachable.contains(*n) && !can_end.contains(*n))
        {
            self.push_at_key(Violation::warning(
                "no_end_reachable",
                format!("/states/{}", pointer_segment(name)),
                format!(
                    "from state '{name}' the run can never end except by max_steps or a timeout"
                ),
            ));
        }
    }
}

/// Names of the states reachable from `start` (itself included).
fn reachable_from<'a>(start: &'a str, index: &HashMap<&'a str, &'a Vec<Edge>>) -> HashSet<&'a str> {
    let mut seen = HashSet::from([start]);
    let mut queue = VecDeque::from([start]);
    while let Some(name) = queue.pop_front() {
        for edge in index.get(name).into_iter().flat_map(|e| e.iter()) {
            if seen.insert(edge.to.as_str()) {
                queue.push_back(edge.to.as_str());
            }
        }
    }
    seen
}

/// Why `kind` can never hold after `tool`, if it cannot.
fn never_holds(kind: ConditionKind, tool: ToolName) -> Option<&'static str> {
    match kind {
        ConditionKind::Timeout
            if !matches!(
                tool,
                ToolName::AwaitOutput | ToolName::RunCommand | ToolName::Prompt
            ) =>
        {
            Some("only await_output, run_command and prompt can time out")
        }
        ConditionKind::ValidationPassed | ConditionKind::ValidationFailed
            if tool != ToolName::Prompt =>
        {
            Some("only prompt steps are validated")
        }
        _ => None,
    }
}

fn truncate(s: &str) -> String {
    if s.chars().count() > 80 {
        format!("{}…", s.chars().take(80).collect::<String>())
    } else {
        s.to_string()
    }
}
