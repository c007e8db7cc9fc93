//! Schemas as small as their readers need. Every byte of an input schema is read by the model
//! on every turn; every subschema of an output schema is checked by the client on every call
//! (the Python SDK 1.x checks the schema itself against the 2020-12 metaschema first, about
//! 0.45 ms a subschema, docs/PERFORMANCE.md). So an input schema keeps what tells the model
//! how to call (types, enums, patterns, the words of each field) and drops what the type
//! system added (titles, the struct's own doc, `null` beside an optional field, integer
//! width bounds); an output schema names the result's fields and their JSON types, one level
//! deep, and leaves the shape of what is inside them to docs/MCP.md.

use serde_json::{Map, Value, json};

/// Integer bounds that only say how wide the Rust type is.
const WIDTH_BOUNDS: [u64; 5] = [0, 255, 65_535, 4_294_967_295, u64::MAX];

/// Trims a generated argument schema for the model: see the module's comment.
pub fn input(schema: &mut Map<String, Value>) {
    schema.remove("title");
    schema.remove("description");
    trim_properties(schema);
    // A definition is reached through a property, whose own words say what it holds.
    if let Some(defs) = schema.get_mut("$defs") {
        unsay(defs);
    }
}

/// Drops every `title` and `description` below a schema (not the names of properties called
/// so).
fn unsay(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object.iter_mut() {
                if key == "properties" || key == "$defs" {
                    if let Value::Object(named) = value {
                        named.values_mut().for_each(unsay);
                    }
                } else {
                    unsay(value);
                }
            }
            object.retain(|key, value| {
                !(matches!(key.as_str(), "title" | "description") && value.is_string())
            });
            trim_properties(object);
        }
        Value::Array(items) => items.iter_mut().for_each(unsay),
        _ => {}
    }
}

/// The names a schema's `required` lists.
fn required_of(schema: &Map<String, Value>) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

fn trim_properties(schema: &mut Map<String, Value>) {
    let required = required_of(schema);
    let Some(Value::Object(properties)) = schema.get_mut("properties") else {
        return;
    };
    for (name, property) in properties.iter_mut() {
        let Value::Object(property) = property else {
            continue;
        };
        if !required.contains(name) {
            drop_null(property);
        }
        for bound in ["minimum", "maximum"] {
            if property
                .get(bound)
                .and_then(Value::as_u64)
                .is_some_and(|b| WIDTH_BOUNDS.contains(&b))
            {
                property.remove(bound);
            }
        }
        // `double`, `float`: no format of JSON Schema's, and nothing a caller needs.
        property.remove("format");
        if matches!(property.get("default"), Some(Value::Null))
            || property.get("default") == Some(&json!({}))
            || property.get("default") == Some(&json!([]))
        {
            property.remove("default");
        }
    }
}

/// An optional field may simply be left out: `["string", "null"]` says no more than
/// `"string"` to a caller, and the server reads a null as absent all the same.
fn drop_null(property: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = property.get("type") {
        let kept: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        let single = (kept.len() == 1).then(|| kept[0].clone());
        property.insert("type".into(), single.unwrap_or(Value::Array(kept)));
    }
    let null = json!({"type": "null"});
    if let Some(Value::Array(branches)) = property.get("anyOf")
        && branches.len() == 2
        && branches.contains(&null)
        && let Some(Value::Object(other)) = branches.iter().find(|b| **b != null).cloned()
    {
        property.remove("anyOf");
        for (key, value) in other {
            property.entry(key).or_insert(value);
        }
    }
}

/// The one-level form of a generated result schema: an object whose properties are the
/// result's fields with their JSON types, and the fields every shape of the result has as
/// `required`. A result with several shapes (`run_workflow`'s result, or the run as it
/// started) is one object holding the fields of all.
pub fn output(schema: &Value) -> Map<String, Value> {
    let defs = schema.get("$defs").and_then(Value::as_object);
    let shapes = shapes(schema, defs);
    let mut properties = Map::new();
    let mut required: Option<Vec<String>> = None;
    for shape in &shapes {
        let names = shape.as_object().map(required_of).unwrap_or_default();
        required = Some(match required {
            None => names,
            Some(mut kept) => {
                kept.retain(|n| names.contains(n));
                kept
            }
        });
        for (name, property) in shape
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let mut types = json_types(property, defs, 0);
            if let Some(Value::Object(seen)) = properties.get(name)
                && let Some(before) = seen.get("type")
            {
                types.extend(type_names(before));
            }
            properties.insert(name.clone(), typed(types));
        }
    }
    let mut out = Map::new();
    out.insert("type".into(), json!("object"));
    if !properties.is_empty() {
        out.insert("properties".into(), Value::Object(properties));
    }
    if let Some(required) = required.filter(|r| !r.is_empty()) {
        out.insert("required".into(), json!(required));
    }
    out
}

/// The object shapes a result may take: its root, or each branch of a root union.
fn shapes<'a>(schema: &'a Value, defs: Option<&'a Map<String, Value>>) -> Vec<&'a Value> {
    let schema = resolve(schema, defs);
    for union in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(union) {
            return branches
                .iter()
                .flat_map(|branch| shapes(branch, defs))
                .collect();
        }
    }
    vec![schema]
}

fn resolve<'a>(schema: &'a Value, defs: Option<&'a Map<String, Value>>) -> &'a Value {
    let mut at = schema;
    // A `$ref` chain longer than the definitions cannot end: stop rather than loop.
    for _ in 0..=defs.map_or(0, Map::len) {
        match at
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
            .and_then(|name| defs?.get(name))
        {
            Some(next) => at = next,
            None => break,
        }
    }
    at
}

/// The JSON types a subschema admits; empty when it admits anything.
fn json_types(schema: &Value, defs: Option<&Map<String, Value>>, depth: usize) -> Vec<String> {
    let schema = resolve(schema, defs);
    if let Some(kind) = schema.get("type") {
        return type_names(kind);
    }
    if let Some(value) = schema.get("const") {
        return vec![type_of(value)];
    }
    if let Some(Value::Array(values)) = schema.get("enum") {
        return values.iter().map(type_of).collect();
    }
    let mut types = Vec::new();
    for union in ["anyOf", "oneOf", "allOf"] {
        for branch in schema
            .get(union)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let branch_types = json_types(branch, defs, depth + 1);
            // A branch that admits anything makes the whole admit anything.
            if branch_types.is_empty() || depth > 16 {
                return Vec::new();
            }
            types.extend(branch_types);
        }
    }
    types
}

fn type_names(kind: &Value) -> Vec<String> {
    match kind {
        Value::String(name) => vec![name.clone()],
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        _ => Vec::new(),
    }
}

fn type_of(value: &Value) -> String {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
    .to_string()
}

/// A property's schema from its types, in a stable order; `{}` when it may be anything.
fn typed(mut types: Vec<String>) -> Value {
    const ORDER: [&str; 7] = [
        "string", "integer", "number", "boolean", "array", "object", "null",
    ];
    if types.iter().any(|t| t == "number") {
        types.retain(|t| t != "integer");
    }
    types.sort_by_key(|t| ORDER.iter().position(|o| o == t).unwrap_or(ORDER.len()));
    types.dedup();
    match types.as_slice() {
        [] => json!({}),
        [one] => json!({"type": one}),
        _ => json!({"type": types}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_with_two_shapes_is_one_object_of_both_fields() {
        let schema = json!({
            "anyOf": [{"$ref": "#/$defs/Done"}, {"$ref": "#/$defs/Started"}],
            "$defs": {
                "Done": {"type": "object", "properties": {
                    "run_id": {"type": "string"},
                    "final_state": {"$ref": "#/$defs/Final"},
                    "log": {"type": "array", "items": {"$ref": "#/$defs/Step"}},
                    "exit": {"anyOf": [{"$ref": "#/$defs/Step"}, {"type": "null"}]},
                    "took": {"type": "integer"}
                }, "required": ["run_id", "final_state", "log", "exit"]},
                "Started": {"type": "object", "properties": {
                    "run_id": {"type": "string"},
                    "took": {"type": "number", "format": "double"},
                    "status": {"oneOf": [{"const": "running"}, {"const": 3}]}
                }, "required": ["run_id", "status"]},
                "Final": {"type": "string", "enum": ["completed", "failed"]},
                "Step": {"type": "object", "properties": {"state": {"type": "string"}}}
            }
        });
        assert_eq!(
            Value::Object(output(&schema)),
            json!({
                "type": "object",
                "properties": {
                    "run_id": {"type": "string"},
                    "final_state": {"type": "string"},
                    "log": {"type": "array"},
                    "exit": {"type": ["object", "null"]},
                    "took": {"type": "number"},
                    "status": {"type": ["string", "integer"]}
                },
                "required": ["run_id"]
            })
        );
    }

    #[test]
    fn a_field_that_admits_anything_is_left_open() {
        let schema = json!({"type": "object", "properties": {
            "value": {},
            "either": {"anyOf": [{"type": "string"}, {}]}
        }});
        assert_eq!(
            Value::Object(output(&schema)),
            json!({"type": "object", "properties": {"value": {}, "either": {}}})
        );
    }

    #[test]
    fn an_input_keeps_what_tells_the_model_how_to_call() {
        let mut schema = json!({
            "title": "Args", "description": "`tool`.", "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The session."},
                "cols": {"type": ["integer", "null"], "minimum": 0, "maximum": 65535},
                "limit": {"type": "integer", "minimum": 1, "maximum": 256},
                "env": {"type": "object", "default": {}},
                "key": {"anyOf": [{"$ref": "#/$defs/Key"}, {"type": "null"}], "description": "A key."},
                "ratio": {"type": ["number", "null"], "format": "double"}
            },
            "required": ["id"],
            "$defs": {"Key": {"title": "Key", "description": "Keys.", "type": "string", "enum": ["a", "b"],
                "properties": {"description": {"type": "string", "description": "Said."}}}}
        });
        let Value::Object(object) = &mut schema else {
            unreachable!()
        };
        input(object);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "The session."},
                    "cols": {"type": "integer"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 256},
                    "env": {"type": "object"},
                    "key": {"$ref": "#/$defs/Key", "description": "A key."},
                    "ratio": {"type": "number"}
                },
                "required": ["id"],
                "$defs": {"Key": {"type": "string", "enum": ["a", "b"],
                    "properties": {"description": {"type": "string"}}}}
            })
        );
    }
}
