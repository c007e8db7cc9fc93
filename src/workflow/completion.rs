//! What may be written at a place in a manifest's text, read from the manifest JSON Schema:
//! the keys of the mapping the cursor is in (a workflow's, a state's, an action's, the chosen
//! tool's parameters, a transition's, an input's), the values a key takes from a fixed set
//! (tools, conditions, `since`, types), and the state names the text declares for
//! `next_state` and `initial_state`. Works on text that does not parse yet (that is when it
//! is wanted): the structure is read from indentation, as YAML writes it.

use super::schema::workflow_schema;
use serde_json::Value;

/// What completing at the cursor offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The column (in characters, as the cursor's) where the word being completed starts.
    pub start: usize,
    /// What the word may become, in schema order, those that start as the word does.
    pub items: Vec<Item>,
    /// The word is a key (accepting one writes `key: `), not a value.
    pub key: bool,
}

/// One thing that may be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// The text that replaces the word.
    pub text: String,
    /// What it is, from the schema's description (its first sentence).
    pub detail: String,
}

/// Completions at character `col` of line `row` of `lines` (YAML as people write it).
pub fn complete(lines: &[String], row: usize, col: usize) -> Completion {
    let line = lines.get(row).map_or("", String::as_str);
    let cut = byte_at(line, col);
    let before = &line[..cut];
    let start = word_start(before);
    let word = &before[start..];
    let value = value_key(&before[..start]);
    let items = match value {
        Some(key) => values_of(lines, key),
        None if is_key_position(&before[..start]) => keys_at(lines, row, indent_of(before)),
        None => Vec::new(),
    };
    Completion {
        start: before[..start].chars().count(),
        key: value.is_none(),
        items: items
            .into_iter()
            .filter(|i| i.text.starts_with(word) && i.text != word)
            .collect(),
    }
}

/// The byte offset of character `col` of `line` (its end when the line is shorter).
fn byte_at(line: &str, col: usize) -> usize {
    line.char_indices()
        .nth(col)
        .map_or(line.len(), |(byte, _)| byte)
}

/// Where the identifier that ends `text` starts, as a byte offset: after the last character
/// that cannot be in one, however many bytes that character takes (`“word`, `«word`).
fn word_start(text: &str) -> usize {
    text.char_indices()
        .rev()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
        .map_or(0, |(i, c)| i + c.len_utf8())
}

/// The key whose value the cursor is in: `tool: ` or `{ condition: ` before the word.
fn value_key(before: &str) -> Option<&str> {
    let trimmed = before.trim_end();
    let key_part = trimmed.strip_suffix(':')?;
    let key = &key_part[word_start(key_part)..];
    (!key.is_empty()).then_some(key)
}

/// Whether what precedes the word leaves room for a key: indentation, a list dash, or the
/// start of a flow mapping entry.
fn is_key_position(before: &str) -> bool {
    let t = before.trim();
    t.is_empty() || t == "-" || t.ends_with('{') || t.ends_with(',')
}

/// A line's indentation, a list item's dash counted: `- key` lines up with the keys under it.
fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '-']).len()
}

/// The keys the mapping at `indent` around line `row` takes.
fn keys_at(lines: &[String], row: usize, indent: usize) -> Vec<Item> {
    let path = parents(lines, row, indent);
    let schema = workflow_schema();
    let Some(node) = node_for(schema, &path, lines, row) else {
        return Vec::new();
    };
    properties(schema, node)
}

/// The keys above line `row`, outermost first: each the nearest line less indented than the
/// one below it that ends with `key:`.
fn parents(lines: &[String], row: usize, indent: usize) -> Vec<String> {
    let mut path = Vec::new();
    let mut limit = indent;
    for line in lines[..row.min(lines.len())].iter().rev() {
        let text = line.trim_end();
        if text.trim().is_empty() || text.trim_start().starts_with('#') {
            continue;
        }
        let own = indent_of(text);
        if own >= limit {
            continue;
        }
        let Some(key) = text
            .trim_start_matches([' ', '-'])
            .split(':')
            .next()
            .filter(|_| text.contains(':'))
        else {
            continue;
        };
        path.push(key.trim().trim_matches(['"', '\'']).to_string());
        limit = own;
        if own == 0 {
            break;
        }
    }
    path.reverse();
    path
}

/// The schema node of the mapping a path of keys leads to.
fn node_for<'a>(
    schema: &'a Value,
    path: &[String],
    lines: &[String],
    row: usize,
) -> Option<&'a Value> {
    let mut node = schema;
    for key in path {
        let here = resolve(schema, node);
        node = match here.get("properties").and_then(|p| p.get(key)) {
            Some(child) => child,
            // A mapping of free names (states, arguments): the named thing's schema.
            None => here.get("additionalProperties").filter(|a| a.is_object())?,
        };
        node = resolve(schema, node);
        // A list (transitions): its items.
        if let Some(items) = node.get("items") {
            node = resolve(schema, items);
        }
        // An action's parameters: those of the tool it names.
        if key == "params" {
            let tool = sibling_value(lines, row, "tool")?;
            node = params_of(schema, &tool)?;
        }
    }
    Some(resolve(schema, node))
}

/// `$ref` and `anyOf [X, null]` followed to the definition they name.
fn resolve<'a>(schema: &'a Value, node: &'a Value) -> &'a Value {
    let mut node = node;
    for _ in 0..8 {
        if let Some(r) = node.get("$ref").and_then(Value::as_str) {
            match r
                .strip_prefix("#/$defs/")
                .and_then(|name| schema.get("$defs")?.get(name))
            {
                Some(def) => node = def,
                None => return node,
            }
        } else if let Some(first) = node
            .get("anyOf")
            .and_then(Value::as_array)
            .and_then(|a| a.iter().find(|v| v.get("$ref").is_some()))
        {
            node = first;
        } else {
            return node;
        }
    }
    node
}

/// The parameters' schema of a tool, from the action's `if tool == … then params: …`.
fn params_of<'a>(schema: &'a Value, tool: &str) -> Option<&'a Value> {
    let action = schema.get("$defs")?.get("Action")?;
    action
        .get("allOf")?
        .as_array()?
        .iter()
        .find(|branch| {
            branch
                .pointer("/if/properties/tool/const")
                .and_then(Value::as_str)
                == Some(tool)
        })
        .and_then(|branch| branch.pointer("/then/properties/params"))
        .map(|p| resolve(schema, p))
}

/// The value of `key` written in the same mapping as line `row` (at the same indentation,
/// above or below it).
fn sibling_value(lines: &[String], row: usize, key: &str) -> Option<String> {
    let line = lines.get(row)?;
    let indent = indent_of(line);
    // The action block: the nearest less indented line above, and what it holds.
    let top = (0..row)
        .rev()
        .find(|&r| !lines[r].trim().is_empty() && indent_of(&lines[r]) < indent)?;
    let parent_indent = indent_of(&lines[top]);
    let block_start = (0..top)
        .rev()
        .find(|&r| !lines[r].trim().is_empty() && indent_of(&lines[r]) < parent_indent)
        .map_or(0, |r| r + 1);
    lines[block_start..]
        .iter()
        .take_while(|l| l.trim().is_empty() || indent_of(l) >= parent_indent)
        .find_map(|l| {
            let rest = l.trim_start_matches([' ', '-', '{']).trim_start();
            let value = rest.strip_prefix(key)?.trim_start().strip_prefix(':')?;
            let value = value.trim().trim_end_matches(['}', ',']).trim();
            Some(value.trim_matches(['"', '\'']).to_string())
        })
        .or_else(|| {
            // `action: { tool: run_command, params: ... }` on one line.
            let flow = &lines[top];
            let at = flow.find(&format!("{key}:"))?;
            let value = flow[at + key.len() + 1..]
                .trim_start()
                .split([',', '}', ' '])
                .next()?;
            Some(value.trim_matches(['"', '\'']).to_string())
        })
}

/// The keys of a schema node, with their descriptions.
fn properties(schema: &Value, node: &Value) -> Vec<Item> {
    let node = resolve(schema, node);
    node.get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| Item {
                    text: k.clone(),
                    detail: first_sentence(v),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The values `key` takes: an enum of the schema, or the text's state names.
fn values_of(lines: &[String], key: &str) -> Vec<Item> {
    if key == "next_state" || key == "initial_state" {
        return state_names(lines)
            .into_iter()
            .map(|name| Item {
                text: name,
                detail: "a state of this workflow".into(),
            })
            .collect();
    }
    let schema = workflow_schema();
    let Some(defs) = schema.get("$defs").and_then(Value::as_object) else {
        return Vec::new();
    };
    // The first property of that name anywhere with a fixed set of values.
    let candidates = std::iter::once(schema).chain(defs.values());
    for def in candidates {
        let Some(prop) = def.get("properties").and_then(|p| p.get(key)) else {
            continue;
        };
        let values = enum_values(schema, prop);
        if !values.is_empty() {
            return values
                .into_iter()
                .map(|v| Item {
                    text: v,
                    detail: first_sentence(prop),
                })
                .collect();
        }
    }
    Vec::new()
}

fn enum_values(schema: &Value, node: &Value) -> Vec<String> {
    let node = resolve(schema, node);
    if let Some(values) = node.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
    }
    // A condition: a name, or a judged form; the names are what is typed.
    node.get("anyOf")
        .or_else(|| node.get("oneOf"))
        .and_then(Value::as_array)
        .map(|options| {
            options
                .iter()
                .flat_map(|o| enum_values(schema, o))
                .collect()
        })
        .unwrap_or_default()
}

/// The states the text declares: the keys one level under `states:`.
fn state_names(lines: &[String]) -> Vec<String> {
    let Some(at) = lines.iter().position(|l| l.trim_end() == "states:") else {
        return Vec::new();
    };
    let mut level = None;
    let mut names = Vec::new();
    for line in &lines[at + 1..] {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let indent = indent_of(line);
        if indent == 0 {
            break;
        }
        let level = *level.get_or_insert(indent);
        if indent == level
            && let Some(name) = line.trim().strip_suffix(':').or_else(|| {
                line.trim()
                    .split_once(':')
                    .map(|(k, _)| k)
                    .filter(|_| line.contains('{'))
            })
        {
            names.push(name.trim().to_string());
        }
    }
    names
}

fn first_sentence(node: &Value) -> String {
    let text = node
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let end = text.find(". ").map_or(text.len(), |i| i + 1);
    text[..end].replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "name: x
initial_state: first
states:
  first:
    action:
      tool: run_command
      params:
        command: ls
        ti
    transitions:
      - { condition: succ, next_state: se }
  second:
    action: { tool: set_env, params: { vars: { A: b } } }
    tra
";

    fn lines() -> Vec<String> {
        TEXT.lines().map(str::to_string).collect()
    }

    fn texts(c: &Completion) -> Vec<&str> {
        c.items.iter().map(|i| i.text.as_str()).collect()
    }

    /// The cursor at the end of the line holding `marker`.
    fn at_end_of(marker: &str) -> Completion {
        let lines = lines();
        let row = lines.iter().position(|l| l == marker).unwrap_or(0);
        let col = lines[row].chars().count();
        complete(&lines, row, col)
    }

    #[test]
    fn a_tools_parameters_are_offered_inside_its_params() {
        let c = at_end_of("        ti");
        assert_eq!(texts(&c), vec!["timeout"]);
        assert_eq!(c.start, 8);
    }

    #[test]
    fn a_states_keys_and_the_top_levels_keys() {
        assert_eq!(texts(&at_end_of("    tra")), vec!["transitions"]);
        let lines = vec!["name: x".to_string(), "ini".to_string()];
        assert_eq!(texts(&complete(&lines, 1, 3)), vec!["initial_state"]);
    }

    #[test]
    fn tools_conditions_and_state_names_as_values() {
        let lines = lines();
        let row = lines.iter().position(|l| l.contains("succ")).unwrap_or(0);
        let col = lines[row].find("succ").unwrap_or(0) + 4;
        assert_eq!(texts(&complete(&lines, row, col)), vec!["success"]);
        let col = lines[row].find("se }").unwrap_or(0) + 2;
        assert_eq!(texts(&complete(&lines, row, col)), vec!["second"]);
        let mut lines = lines;
        lines[5] = "      tool: ru".into();
        assert_eq!(texts(&complete(&lines, 5, 14)), vec!["run_command"]);
    }

    #[test]
    fn nothing_is_offered_in_free_text() {
        let lines = vec!["description: some wor".to_string()];
        assert!(complete(&lines, 0, 21).items.is_empty());
    }
}
