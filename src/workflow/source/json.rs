//! JSON → value + spans, from jsonc-parser's AST in strict mode (no comments, no trailing
//! commas, no JSON5 extensions): a `.json` manifest is plain JSON.

use super::spans::{LineIndex, NodeSpan, SpanMap};
use super::{Document, Format, Limits};
use crate::workflow::names::{display_safe, pointer_join};
use crate::workflow::violation::{Position, Violation};
use jsonc_parser::ast;
use jsonc_parser::errors::ParseErrorKind;
use jsonc_parser::{CollectOptions, CommentCollectionStrategy, ParseOptions, parse_to_ast};
use serde_json::{Map, Number, Value};

pub(super) fn parse(text: &str, limits: &Limits) -> Result<Document, Violation> {
    let strict = ParseOptions {
        allow_comments: false,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    };
    let collect = CollectOptions {
        comments: CommentCollectionStrategy::Off,
        tokens: false,
    };
    let parsed = parse_to_ast(text, &collect, &strict).map_err(|e| {
        let rule = match e.kind() {
            ParseErrorKind::NestingDepthExceeded => "too_deep",
            _ => "parse_error",
        };
        Violation::error(rule, "", format!("JSON syntax error: {}", e.kind())).at(Some(Position {
            line: e.line_display(),
            column: e.column_display(),
        }))
    })?;
    let Some(root) = parsed.value else {
        return Err(
            Violation::error("empty_file", "", "file holds no JSON value")
                .at(Some(Position { line: 1, column: 1 })),
        );
    };
    let mut builder = Builder {
        lines: LineIndex::new(text),
        limits,
        spans: SpanMap::default(),
        problems: Vec::new(),
        nodes: 0,
    };
    let value = builder.build(&root, String::new(), None, 0)?;
    Ok(Document {
        format: Format::Json,
        value,
        spans: builder.spans,
        problems: builder.problems,
    })
}

struct Builder<'t, 'l> {
    lines: LineIndex<'t>,
    limits: &'l Limits,
    spans: SpanMap,
    problems: Vec<Violation>,
    nodes: usize,
}

impl Builder<'_, '_> {
    fn build(
        &mut self,
        node: &ast::Value<'_>,
        pointer: String,
        key: Option<Position>,
        depth: usize,
    ) -> Result<Value, Violation> {
        let range = node_range(node);
        let position = self.lines.position(range.start);
        self.nodes += 1;
        if self.nodes > self.limits.max_nodes {
            return Err(Violation::error(
                "alias_limit",
                pointer,
                format!("document has more than {} nodes", self.limits.max_nodes),
            )
            .at(Some(position)));
        }
        let scalar_bytes = match node {
            ast::Value::Object(_) | ast::Value::Array(_) => None,
            _ => Some((range.start, range.end)),
        };
        self.spans.insert(
            pointer.clone(),
            NodeSpan {
                key,
                value: position,
                value_bytes: scalar_bytes,
            },
        );
        let container = matches!(node, ast::Value::Object(_) | ast::Value::Array(_));
        if container && depth >= self.limits.max_depth {
            return Err(Violation::error(
                "too_deep",
                pointer,
                format!("nesting is deeper than {} levels", self.limits.max_depth),
            )
            .at(Some(position)));
        }
        Ok(match node {
            ast::Value::StringLit(s) => Value::String(s.value.to_string()),
            ast::Value::BooleanLit(b) => Value::Bool(b.value),
            ast::Value::NullKeyword(_) => Value::Null,
            ast::Value::NumberLit(n) => Value::Number(parse_number(n.value).ok_or_else(|| {
                Violation::error(
                    "invalid_scalar",
                    pointer.clone(),
                    format!("number {} is out of range", n.value),
                )
                .at(Some(position))
            })?),
            ast::Value::Array(array) => {
                let mut items = Vec::with_capacity(array.elements.len());
                for (i, element) in array.elements.iter().enumerate() {
                    items.push(self.build(element, format!("{pointer}/{i}"), None, depth + 1)?);
                }
                Value::Array(items)
            }
            ast::Value::Object(object) => {
                let mut map = Map::new();
                for prop in &object.properties {
                    let name = prop.name.as_str().to_string();
                    let child = pointer_join(&pointer, &name);
                    let key_position = self.lines.position(prop.range.start);
                    let value =
                        self.build(&prop.value, child.clone(), Some(key_position), depth + 1)?;
                    if map.contains_key(&name) {
                        self.problems.push(
                            Violation::error(
                                "duplicate_key",
                                child,
                                format!(
                                    "key {} appears more than once in this object",
                                    display_safe(&name)
                                ),
                            )
                            .at(Some(key_position)),
                        );
                    } else {
                        map.insert(name, value);
                    }
                }
                Value::Object(map)
            }
        })
    }
}

fn node_range(node: &ast::Value<'_>) -> jsonc_parser::common::Range {
    match node {
        ast::Value::StringLit(n) => n.range,
        ast::Value::NumberLit(n) => n.range,
        ast::Value::BooleanLit(n) => n.range,
        ast::Value::Object(n) => n.range,
        ast::Value::Array(n) => n.range,
        ast::Value::NullKeyword(n) => n.range,
    }
}

fn parse_number(text: &str) -> Option<Number> {
    if let Ok(i) = text.parse::<i64>() {
        return Some(i.into());
    }
    if let Ok(u) = text.parse::<u64>() {
        return Some(u.into());
    }
    text.parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .and_then(Number::from_f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(text: &str) -> Result<Document, Violation> {
        parse(text, &Limits::default())
    }

    #[test]
    fn values_and_positions() -> Result<(), Violation> {
        let d = doc("{\n  \"name\": \"x\",\n  \"n\": [1, 2.5, true, null]\n}")?;
        assert_eq!(d.value, json!({"name": "x", "n": [1, 2.5, true, null]}));
        assert_eq!(
            d.spans.key_position("/name"),
            Some(Position { line: 2, column: 3 })
        );
        assert_eq!(
            d.spans.value_position("/name"),
            Some(Position {
                line: 2,
                column: 11
            })
        );
        assert_eq!(
            d.spans.value_position("/n/2"),
            Some(Position {
                line: 3,
                column: 17
            })
        );
        Ok(())
    }

    #[test]
    fn strict_json() {
        for bad in [
            "{\"a\": 1,}",
            "{a: 1}",
            "{\"a\": 'x'}",
            "// c\n{}",
            "{\"a\": 0x10}",
            "{\"a\": 1e999}",
        ] {
            let err = doc(bad).err();
            assert!(err.is_some(), "{bad} should be refused");
        }
    }

    #[test]
    fn syntax_error_position() {
        // The missing comma is reported where it should have been: after `1` on line 2.
        let err = doc("{\n  \"a\": 1\n  \"b\": 2\n}").err();
        assert_eq!(err.as_ref().map(|v| v.rule.as_str()), Some("parse_error"));
        assert_eq!(err.and_then(|v| v.line), Some(2));
    }

    #[test]
    fn duplicates_and_depth() -> Result<(), Violation> {
        let d = doc("{\"a\": 1, \"a\": 2}")?;
        assert_eq!(d.value, json!({"a": 1}));
        assert_eq!(d.problems[0].rule, "duplicate_key");
        let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert_eq!(doc(&deep).err().map(|v| v.rule), Some("too_deep".into()));
        let deeper = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        assert_eq!(doc(&deeper).err().map(|v| v.rule), Some("too_deep".into()));
        Ok(())
    }
}
