//! The schemas of the tools: argument and output schemas generated from the types, made
//! portable across clients' validators, and the manifest's step tools with their parameters.

use crate::workflow::action::ToolName;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Serialize;
use serde_json::{Value, json};

/// The JSON Schema of an argument type, as an object schema.
pub fn schema_of<T: JsonSchema>() -> JsonObject {
    let schema = schemars::schema_for!(T);
    let mut value = serde_json::to_value(&schema).unwrap_or_else(|_| json!({"type": "object"}));
    portable(&mut value);
    if let Some(object) = value.as_object_mut() {
        object.remove("$schema");
        object.entry("type").or_insert_with(|| json!("object"));
        if !object.contains_key("properties") {
            object.insert("properties".into(), json!({}));
        }
        super::compact::input(object);
    }
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

/// The JSON Schema of a result type, for the serialize contract: it describes the JSON the
/// type writes (an `Option` without `skip_serializing_if` is always there, as a value or
/// null), which is what a client checks `structuredContent` against, one level deep
/// (compact.rs says why).
pub fn output_schema_of<T: JsonSchema>() -> JsonObject {
    let generator = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    super::compact::output(&generator.into_root_schema_for::<T>().to_value())
}

/// Makes a generated schema read the same by every client's validator: schemars' integer
/// formats (`uint32`, ...) are no JSON Schema formats, and Ajv (the TypeScript SDK's
/// validator) logs a warning for each on every call; a bare `true` subschema is refused by
/// strict checkers such as the Inspector's `--strict`, where `{}` means the same.
pub fn portable(schema: &mut Value) {
    const SUBSCHEMA: [&str; 8] = [
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "unevaluatedProperties",
    ];
    const SUBSCHEMA_LISTS: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];
    const SUBSCHEMA_MAPS: [&str; 4] = ["properties", "$defs", "definitions", "patternProperties"];
    let Value::Object(object) = schema else {
        return;
    };
    if object
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| {
            matches!(
                f,
                "uint"
                    | "uint8"
                    | "uint16"
                    | "uint32"
                    | "uint64"
                    | "uint128"
                    | "int8"
                    | "int16"
                    | "int128"
            )
        })
    {
        object.remove("format");
    }
    let mut fix = |sub: &mut Value| {
        if *sub == Value::Bool(true) {
            *sub = json!({});
        }
        portable(sub);
    };
    for key in SUBSCHEMA {
        if let Some(sub) = object.get_mut(key) {
            fix(sub);
        }
    }
    for key in SUBSCHEMA_LISTS {
        if let Some(Value::Array(list)) = object.get_mut(key) {
            list.iter_mut().for_each(&mut fix);
        }
    }
    for key in SUBSCHEMA_MAPS {
        if let Some(Value::Object(map)) = object.get_mut(key) {
            map.values_mut().for_each(&mut fix);
        }
    }
}

/// The answer to `get_workflow_schema`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WorkflowSchema {
    /// The manifest JSON Schema (draft 2020-12).
    pub schema: Value,
    /// The step tools a manifest's states can call.
    pub tools: Vec<StepTool>,
    /// Where the full manifest reference is.
    pub reference: &'static str,
}

/// A step tool a manifest can use, with the schema of its `params`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StepTool {
    pub tool: ToolName,
    pub summary: &'static str,
    pub params_schema: Value,
}

/// The step tools a manifest can use, with their parameter schemas.
pub fn step_tools() -> Vec<StepTool> {
    let schema = crate::workflow::schema::workflow_schema();
    ToolName::ALL
        .iter()
        .map(|t| StepTool {
            tool: *t,
            summary: t.summary(),
            params_schema: params_schema(schema, *t),
        })
        .collect()
}

/// The parameter schema of one step tool, taken from the published manifest schema.
fn params_schema(schema: &Value, tool: ToolName) -> Value {
    schema
        .pointer("/$defs/Action/allOf")
        .and_then(Value::as_array)
        .and_then(|branches| {
            branches
                .iter()
                .find(|b| b.pointer("/if/properties/tool/const") == Some(&json!(tool.as_str())))
        })
        .and_then(|b| b.pointer("/then/properties/params"))
        .cloned()
        .unwrap_or(Value::Null)
}
