//! The variables a manifest's steps may name: its arguments, its return values, and what its
//! waits capture. A `{var: NAME}` key (send_input) types one of them, so it must name one.

use super::names::pointer_join;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// Every variable the manifest declares or captures.
fn known(root: &Map<String, Value>) -> HashSet<&str> {
    let declared = ["arguments", "return_values"]
        .into_iter()
        .filter_map(|k| root.get(k).and_then(Value::as_object))
        .flat_map(|m| m.keys().map(String::as_str));
    let captured = states(root)
        .filter_map(|(_, s)| s.pointer("/action/params/captures")?.as_object())
        .flat_map(|m| m.keys().map(String::as_str));
    declared.chain(captured).collect()
}

fn states(root: &Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    root.get("states")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
}

/// Each `{var: NAME}` key whose NAME is no variable of the manifest: where it is (a JSON
/// pointer) and the name.
pub(super) fn unknown_var_keys(root: &Map<String, Value>) -> Vec<(String, String)> {
    let known = known(root);
    let mut unknown = Vec::new();
    for (name, state) in states(root) {
        let keys = state
            .pointer("/action/params/keys")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for (i, key) in keys.enumerate() {
            if let Some(var) = key.get("var").and_then(Value::as_str)
                && !known.contains(var)
            {
                let path = format!(
                    "{}/action/params/keys/{i}/var",
                    pointer_join("/states", name)
                );
                unknown.push((path, var.to_string()));
            }
        }
    }
    unknown
}

#[cfg(test)]
mod tests {
    use crate::workflow::Format;
    use crate::workflow::validate::check_bytes;

    const TYPES: &str = r#"name: types
description: Types a password, then a captured value, then a word.
arguments:
  PASSWORD: { description: the password, secret: true }
initial_state: ask
states:
  ask:
    action: { tool: send_input, params: { keys: [{ var: PASSWORD }, { key: enter }] } }
    transitions: [ { condition: always, next_state: look } ]
  look:
    action: { tool: await_output, params: { pattern: 'code (\d+)', captures: { CODE: 1 } } }
    transitions: [ { condition: always, next_state: answer } ]
  answer:
    action: { tool: send_input, params: { keys: [{ var: CODE }, { var: NOPE }] } }
"#;

    #[test]
    fn a_var_key_names_an_argument_or_a_capture_and_nothing_else() {
        let checked = check_bytes(TYPES.as_bytes(), Format::Yaml);
        let unknown: Vec<_> = checked
            .violations
            .iter()
            .filter(|v| v.rule == "unknown_variable")
            .collect();
        assert_eq!(unknown.len(), 1, "{:?}", checked.violations);
        assert_eq!(unknown[0].path, "/states/answer/action/params/keys/1/var");
        assert!(unknown[0].message.contains("NOPE is not a variable"));
        // Where it is written, for the editor and `flowdeck validate`.
        assert_eq!(unknown[0].line, Some(14), "{:?}", unknown[0]);
        let fixed = TYPES.replace("{ var: NOPE }", "{ key: enter }");
        assert!(
            check_bytes(fixed.as_bytes(), Format::Yaml)
                .violations
                .is_empty()
        );
    }
}
