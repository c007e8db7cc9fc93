//! YAML → value + spans, from saphyr-parser's event stream.
//!
//! Scalars are resolved by the YAML 1.2 core schema (so `yes` and `on` stay strings, as YAML
//! 1.2 says). Aliases are expanded with a budget so that a billion-laughs file is refused in
//! microseconds; keys must be strings; one document per file.

use super::spans::{NodeSpan, SpanMap};
use super::{Document, Format, Limits, Positions};
use crate::workflow::names::{display_safe, pointer_join};
use crate::workflow::violation::{Position, Violation};
use saphyr_parser::{Event, Parser, ScalarStyle, Span, Tag};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;

pub(super) fn parse(
    text: &str,
    limits: &Limits,
    positions: Positions,
) -> Result<Document, Violation> {
    let mut builder = Builder::new(text, limits, positions);
    let mut parser = Parser::new_from_str(text).keep_tags(true);
    let mut documents = 0;
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(|e| {
            let marker = e.marker();
            // saphyr's own nesting guard trips before ours on very deep flow collections.
            let rule = if e.info().contains("recursion limit") {
                "too_deep"
            } else {
                "parse_error"
            };
            Violation::error(rule, "", format!("YAML syntax error: {}", e.info())).at(Some(
                Position {
                    line: marker.line(),
                    column: marker.col() + 1,
                },
            ))
        })?;
        match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(Violation::error(
                        "multiple_documents",
                        "",
                        "file holds more than one YAML document; a manifest is one document",
                    )
                    .at(Some(builder.position(&span))));
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                let value = resolve_scalar(text, style, tag.as_deref())
                    .map_err(|message| builder.error_at("invalid_scalar", &span, message))?;
                builder.leaf(value, anchor, &span, 1)?;
            }
            Event::Alias(anchor) => {
                let (value, nodes) = builder.anchors.get(&anchor).cloned().ok_or_else(|| {
                    builder.error_at("parse_error", &span, "alias to an unknown anchor".into())
                })?;
                builder.leaf(value, 0, &span, nodes)?;
            }
            Event::SequenceStart(anchor, tag) => {
                check_collection_tag(tag.as_deref(), "seq")
                    .map_err(|m| builder.error_at("unsupported_tag", &span, m))?;
                builder.open(Container::Seq(Vec::new()), anchor, &span)?
            }
            Event::MappingStart(anchor, tag) => {
                check_collection_tag(tag.as_deref(), "map")
                    .map_err(|m| builder.error_at("unsupported_tag", &span, m))?;
                builder.open(Container::Map(Map::new(), None), anchor, &span)?
            }
            Event::SequenceEnd | Event::MappingEnd => builder.close()?,
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => {}
        }
    }
    match builder.root.take() {
        // `---` alone, or a document of only comments, holds nothing to read.
        Some(Value::Null) => Err(
            Violation::error("empty_file", "", "file holds no YAML document")
                .at(Some(Position { line: 1, column: 1 })),
        ),
        Some(value) => Ok(Document {
            format: Format::Yaml,
            value,
            spans: builder.spans,
            problems: builder.problems,
        }),
        None => Err(
            Violation::error("empty_file", "", "file holds no YAML document")
                .at(Some(Position { line: 1, column: 1 })),
        ),
    }
}

enum Container {
    Seq(Vec<Value>),
    /// A mapping and the key waiting for its value (with where the key was written).
    Map(Map<String, Value>, Option<(String, Position)>),
}

struct Frame {
    container: Container,
    /// Empty unless every position is recorded: only positions and the paths of problems
    /// use it, and problems found without positions are found again with them.
    pointer: String,
    anchor: usize,
    nodes: usize,
}

struct Builder<'a> {
    limits: &'a Limits,
    all_positions: bool,
    /// Byte offset of each character, when the text is not ASCII (saphyr counts characters).
    char_offsets: Option<Vec<usize>>,
    stack: Vec<Frame>,
    root: Option<Value>,
    anchors: HashMap<usize, (Value, usize)>,
    spans: SpanMap,
    problems: Vec<Violation>,
    total_nodes: usize,
}

impl<'a> Builder<'a> {
    fn new(text: &str, limits: &'a Limits, positions: Positions) -> Self {
        let all_positions = positions == Positions::All;
        let char_offsets = (!text.is_ascii()).then(|| {
            text.char_indices()
                .map(|(i, _)| i)
                .chain([text.len()])
                .collect()
        });
        Builder {
            limits,
            all_positions,
            char_offsets,
            stack: Vec::new(),
            root: None,
            anchors: HashMap::new(),
            // Manifests run to about one node per 14 bytes; sized a little above that up
            // front, the map is not grown and rehashed several times per file.
            spans: SpanMap::with_capacity(if all_positions { text.len() / 12 } else { 2 }),
            problems: Vec::new(),
            total_nodes: 0,
        }
    }

    fn position(&self, span: &Span) -> Position {
        Position {
            line: span.start.line(),
            column: span.start.col() + 1,
        }
    }

    fn byte_offset(&self, char_index: usize) -> usize {
        match &self.char_offsets {
            Some(offsets) => offsets.get(char_index).copied().unwrap_or(char_index),
            None => char_index,
        }
    }

    fn error_at(&self, rule: &str, span: &Span, message: String) -> Violation {
        Violation::error(rule, "", message).at(Some(self.position(span)))
    }

    /// The pointer a new child node gets, or `None` when the node is a mapping key.
    fn child_pointer(&self) -> Option<String> {
        match self.stack.last() {
            None => Some(String::new()),
            Some(frame) => match &frame.container {
                Container::Seq(items) => {
                    let mut pointer = frame.pointer.clone();
                    // Writing to a String cannot fail.
                    let _ = write!(pointer, "/{}", items.len());
                    Some(pointer)
                }
                Container::Map(_, Some((key, _))) => Some(pointer_join(&frame.pointer, key)),
                Container::Map(_, None) => None,
            },
        }
    }

    fn count(&mut self, nodes: usize, span: &Span) -> Result<(), Violation> {
        self.total_nodes = self.total_nodes.saturating_add(nodes);
        if self.total_nodes > self.limits.max_nodes {
            return Err(self.error_at(
                "alias_limit",
                span,
                format!(
                    "document expands to more than {} nodes (an alias bomb?); refusing to build it",
                    self.limits.max_nodes
                ),
            ));
        }
        Ok(())
    }

    /// Whether the next node is a mapping key.
    fn key_next(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Frame {
                container: Container::Map(_, None),
                ..
            })
        )
    }

    /// Whether the next node is the value of the root mapping's `name`, whose position is
    /// always recorded: the store points folder-level problems at it, renames rewrite it.
    fn names_the_workflow(&self) -> bool {
        matches!(
            self.stack.as_slice(),
            [Frame {
                container: Container::Map(_, Some((key, _))),
                ..
            }] if key == "name"
        )
    }

    fn leaf(
        &mut self,
        value: Value,
        anchor: usize,
        span: &Span,
        nodes: usize,
    ) -> Result<(), Violation> {
        self.count(nodes, span)?;
        let position = self.position(span);
        if self.key_next() {
            return self.key(value, position, span);
        }
        if (self.all_positions || self.names_the_workflow())
            && let Some(pointer) = self.child_pointer()
        {
            let bytes = Some((
                self.byte_offset(span.start.index()),
                self.byte_offset(span.end.index()),
            ));
            self.record(pointer, position, bytes);
        }
        if anchor != 0 {
            self.anchors.insert(anchor, (value.clone(), nodes));
        }
        self.attach(value, nodes);
        Ok(())
    }

    fn key(&mut self, value: Value, position: Position, span: &Span) -> Result<(), Violation> {
        let key = match value {
            Value::String(s) => s,
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Null => "null".to_string(),
            _ => {
                return Err(self.error_at(
                    "invalid_key",
                    span,
                    "mapping keys must be plain strings, not mappings or sequences".into(),
                ));
            }
        };
        if let Some(Frame {
            container: Container::Map(map, pending),
            pointer,
            ..
        }) = self.stack.last_mut()
        {
            if map.contains_key(&key) {
                self.problems.push(
                    Violation::error(
                        "duplicate_key",
                        pointer_join(pointer, &key),
                        format!(
                            "key {} appears more than once in this mapping",
                            display_safe(&key)
                        ),
                    )
                    .at(Some(position)),
                );
            }
            *pending = Some((key, position));
        }
        Ok(())
    }

    fn record(&mut self, pointer: String, position: Position, bytes: Option<(usize, usize)>) {
        let key = match self.stack.last() {
            Some(Frame {
                container: Container::Map(_, Some((_, key_pos))),
                ..
            }) => Some(*key_pos),
            _ => None,
        };
        self.spans.insert(
            pointer,
            NodeSpan {
                key,
                value: position,
                value_bytes: bytes,
            },
        );
    }

    fn open(&mut self, container: Container, anchor: usize, span: &Span) -> Result<(), Violation> {
        self.count(1, span)?;
        if self.stack.len() >= self.limits.max_depth {
            return Err(self.error_at(
                "too_deep",
                span,
                format!("nesting is deeper than {} levels", self.limits.max_depth),
            ));
        }
        if self.key_next() {
            return Err(self.error_at(
                "invalid_key",
                span,
                "mapping keys must be plain strings, not mappings or sequences".into(),
            ));
        }
        let mut pointer = String::new();
        if self.all_positions || self.names_the_workflow() {
            pointer = self.child_pointer().unwrap_or_default();
            self.record(pointer.clone(), self.position(span), None);
        }
        self.stack.push(Frame {
            container,
            pointer,
            anchor,
            nodes: 1,
        });
        Ok(())
    }

    fn close(&mut self) -> Result<(), Violation> {
        if let Some(frame) = self.stack.pop() {
            let value = match frame.container {
                Container::Seq(items) => Value::Array(items),
                Container::Map(map, _) => Value::Object(map),
            };
            if frame.anchor != 0 {
                self.anchors
                    .insert(frame.anchor, (value.clone(), frame.nodes));
            }
            self.attach(value, frame.nodes);
        }
        Ok(())
    }

    fn attach(&mut self, value: Value, nodes: usize) {
        match self.stack.last_mut() {
            None => self.root = Some(value),
            Some(frame) => {
                frame.nodes = frame.nodes.saturating_add(nodes);
                match &mut frame.container {
                    Container::Seq(items) => items.push(value),
                    Container::Map(map, pending) => {
                        if let Some((key, _)) = pending.take() {
                            // A duplicate keeps its first value; the duplicate is reported.
                            map.entry(key).or_insert(value);
                        }
                    }
                }
            }
        }
    }
}

/// Collections may carry only their own core tag (`!!map`, `!!seq`); anything else would mean
/// something flowdeck cannot honour.
fn check_collection_tag(tag: Option<&Tag>, own: &str) -> Result<(), String> {
    match tag {
        None => Ok(()),
        Some(t) if t.is_yaml_core_schema() && t.suffix == own => Ok(()),
        Some(t) => Err(format!(
            "tag {}{} is not supported in manifests",
            t.handle, t.suffix
        )),
    }
}

/// Resolves a scalar to a JSON value by the YAML 1.2 core schema and the standard tags.
/// Takes the scalar's text by value, so that a string that stays a string is not copied.
fn resolve_scalar(
    text: Cow<'_, str>,
    style: ScalarStyle,
    tag: Option<&Tag>,
) -> Result<Value, String> {
    if let Some(tag) = tag {
        if !tag.is_yaml_core_schema() {
            return Err(format!(
                "tag {}{} is not supported in manifests",
                tag.handle, tag.suffix
            ));
        }
        return match tag.suffix.as_str() {
            "str" => Ok(Value::String(text.into_owned())),
            "null" => Ok(Value::Null),
            "bool" => parse_bool(&text)
                .map(Value::Bool)
                .ok_or_else(|| format!("'{text}' is not a boolean")),
            "int" => parse_int(&text).ok_or_else(|| format!("'{text}' is not an integer")),
            "float" => parse_float(&text)?.ok_or_else(|| format!("'{text}' is not a number")),
            other => Err(format!("tag !!{other} is not supported for a scalar")),
        };
    }
    if style != ScalarStyle::Plain {
        return Ok(Value::String(text.into_owned()));
    }
    if matches!(&*text, "" | "~" | "null" | "Null" | "NULL") {
        return Ok(Value::Null);
    }
    if let Some(b) = parse_bool(&text) {
        return Ok(Value::Bool(b));
    }
    if let Some(n) = parse_int(&text) {
        return Ok(n);
    }
    if let Some(f) = parse_float(&text)? {
        return Ok(f);
    }
    Ok(Value::String(text.into_owned()))
}

fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

fn parse_int(text: &str) -> Option<Value> {
    let (digits, radix) = if let Some(octal) = text.strip_prefix("0o") {
        (Cow::Borrowed(octal), 8)
    } else if let Some(hex) = text.strip_prefix("0x") {
        (Cow::Borrowed(hex), 16)
    } else {
        let body = text.strip_prefix(['-', '+']).unwrap_or(text);
        if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        (Cow::Borrowed(text.strip_prefix('+').unwrap_or(text)), 10)
    };
    if digits.is_empty() {
        return None;
    }
    if let Ok(i) = i64::from_str_radix(&digits, radix) {
        return Some(Value::Number(i.into()));
    }
    u64::from_str_radix(&digits, radix)
        .ok()
        .map(|u| Value::Number(u.into()))
}

/// `Ok(None)` when the text is not a float at all; an error for `.inf` and `.nan`, which a
/// manifest (being JSON underneath) cannot hold.
fn parse_float(text: &str) -> Result<Option<Value>, String> {
    // Checked without a lowercase copy: every plain scalar of every manifest comes here.
    let unsigned = text.trim_start_matches(['-', '+']);
    if unsigned.eq_ignore_ascii_case(".inf") || unsigned.eq_ignore_ascii_case(".nan") {
        return Err(format!(
            "'{text}' (infinity or NaN) cannot be used in a manifest"
        ));
    }
    let body = text.strip_prefix(['-', '+']).unwrap_or(text);
    let looks_numeric = !body.is_empty()
        && body
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_digit() || b == b'.')
        && body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
        && body.bytes().any(|b| b.is_ascii_digit());
    if !looks_numeric {
        return Ok(None);
    }
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() => Ok(Number::from_f64(f).map(Value::Number)),
        Ok(_) => Err(format!("'{text}' is too large a number")),
        Err(_) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(text: &str) -> Result<Document, Violation> {
        parse(text, &Limits::default(), Positions::All)
    }

    #[test]
    fn name_only_records_the_name_and_builds_the_same_value() {
        let text =
            "name: x\ndescription: d\nstates:\n  a: {action: {tool: t}}\nlist: [1, {name: y}]\n";
        let all = doc(text).map(|d| (d.value, d.spans.len()));
        let lean = parse(text, &Limits::default(), Positions::NameOnly);
        let lean_name = lean
            .as_ref()
            .ok()
            .and_then(|d| d.spans.get("/name").copied());
        let lean = lean.map(|d| (d.value, d.spans.len()));
        assert_eq!(lean.as_ref().map(|(v, _)| v), all.as_ref().map(|(v, _)| v));
        assert_eq!(lean.map(|(_, n)| n), Ok(1), "the name's position only");
        assert_eq!(
            lean_name,
            doc(text).ok().and_then(|d| d.spans.get("/name").copied())
        );
        // A failure is the same failure either way.
        for broken in [
            "a: [\n",
            "a: 1\na: 2\n",
            "? [a]\n: b\n",
            "x: !!binary abc\n",
        ] {
            let lean = parse(broken, &Limits::default(), Positions::NameOnly);
            assert_eq!(
                lean.as_ref().err(),
                doc(broken).as_ref().err(),
                "{broken:?}"
            );
        }
    }

    #[test]
    fn core_schema_scalars() {
        let d = doc("a: yes\nb: true\nc: 12\nd: 1.5\ne: ~\nf: '12'\ng: 1.0.0\nh: 0x1F\ni: on\nj: -3\nk: 1e3\n")
            .map(|d| d.value);
        assert_eq!(
            d.ok(),
            Some(
                json!({"a":"yes","b":true,"c":12,"d":1.5,"e":null,"f":"12","g":"1.0.0","h":31,"i":"on","j":-3,"k":1000.0})
            )
        );
    }

    #[test]
    fn tags() {
        let d = doc("a: !!str 12\nb: !!int '7'\n").map(|d| d.value);
        assert_eq!(d.ok(), Some(json!({"a": "12", "b": 7})));
        assert_eq!(
            doc("a: !custom x\n").err().map(|v| v.rule),
            Some("invalid_scalar".into())
        );
        assert_eq!(
            doc("a: .inf\n").err().map(|v| v.rule),
            Some("invalid_scalar".into())
        );
    }

    #[test]
    fn spans_point_at_keys_and_values() -> Result<(), Violation> {
        let d = doc(
            "name: x\nstates:\n  start:\n    action: {tool: send_input}\n  list:\n    - 1\n    - 2\n",
        )?;
        let at = |line, column| Some(Position { line, column });
        assert_eq!(d.spans.value_position("/name"), at(1, 7));
        assert_eq!(d.spans.key_position("/states/start"), at(3, 3));
        assert_eq!(
            d.spans.value_position("/states/start/action/tool"),
            at(4, 20)
        );
        assert_eq!(d.spans.value_position("/states/list/1"), at(7, 7));
        Ok(())
    }

    #[test]
    fn scalar_byte_ranges_cover_the_token() -> Result<(), Violation> {
        let text = "é: 1\nname: \"quoted\"\nother: plain\n";
        let d = doc(text)?;
        let quoted = d.spans.get("/name").and_then(|s| s.value_bytes);
        let plain = d.spans.get("/other").and_then(|s| s.value_bytes);
        let slice = |r: Option<(usize, usize)>| r.map(|(a, b)| text[a..b].to_string());
        assert_eq!(slice(plain), Some("plain".into()));
        assert!(slice(quoted).is_some_and(|s| s.contains("quoted")));
        Ok(())
    }

    #[test]
    fn duplicate_keys_are_reported_not_fatal() -> Result<(), Violation> {
        let d = doc("a: 1\nb: 2\na: 3\n")?;
        assert_eq!(d.value, json!({"a": 1, "b": 2}));
        assert_eq!(d.problems.len(), 1);
        assert_eq!(d.problems[0].rule, "duplicate_key");
        assert_eq!(d.problems[0].path, "/a");
        assert_eq!(d.problems[0].line, Some(3));
        Ok(())
    }

    #[test]
    fn alias_bomb_is_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let err = doc(&text).err();
        assert_eq!(err.as_ref().map(|v| v.rule.as_str()), Some("alias_limit"));
    }

    #[test]
    fn small_aliases_work() {
        let d = doc("base: &b {x: 1}\nother: *b\n").map(|d| d.value);
        assert_eq!(d.ok(), Some(json!({"base": {"x": 1}, "other": {"x": 1}})));
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(doc(&text).err().map(|v| v.rule), Some("too_deep".into()));
    }

    #[test]
    fn syntax_error_has_position() {
        let err = doc("a: 1\nb: [1, 2\nc: 3\n").err();
        assert_eq!(err.as_ref().map(|v| v.rule.as_str()), Some("parse_error"));
        assert!(err.and_then(|v| v.line).is_some());
    }

    #[test]
    fn one_document_only() {
        assert_eq!(
            doc("a: 1\n---\nb: 2\n").err().map(|v| v.rule),
            Some("multiple_documents".into())
        );
    }

    #[test]
    fn complex_keys_are_refused() {
        assert_eq!(
            doc("? [a, b]\n: 1\n").err().map(|v| v.rule),
            Some("invalid_key".into())
        );
    }
}
