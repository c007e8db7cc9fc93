//! Where each value of a document was written.

use crate::workflow::violation::Position;
use std::collections::HashMap;

/// Where one node was written: its key (for mapping entries) and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeSpan {
    pub key: Option<Position>,
    pub value: Position,
    /// Byte range of a scalar value in the text, so that tools can rewrite just that value.
    pub value_bytes: Option<(usize, usize)>,
}

/// JSON pointer → position, for every node of a document.
#[derive(Debug, Clone, Default)]
pub struct SpanMap {
    nodes: HashMap<String, NodeSpan>,
}

impl SpanMap {
    pub fn with_capacity(nodes: usize) -> SpanMap {
        SpanMap {
            nodes: HashMap::with_capacity(nodes),
        }
    }

    pub fn insert(&mut self, pointer: String, span: NodeSpan) {
        self.nodes.insert(pointer, span);
    }

    pub fn get(&self, pointer: &str) -> Option<&NodeSpan> {
        self.nodes.get(pointer)
    }

    /// The position of the value at `pointer`, or of its nearest ancestor that has one (a
    /// value produced by a YAML alias is reported where the alias was written).
    pub fn value_position(&self, pointer: &str) -> Option<Position> {
        self.nearest(pointer).map(|span| span.value)
    }

    /// The position of the key at `pointer` (for unknown or misspelt keys), else its value's.
    pub fn key_position(&self, pointer: &str) -> Option<Position> {
        self.nearest(pointer)
            .map(|span| span.key.unwrap_or(span.value))
    }

    fn nearest(&self, pointer: &str) -> Option<&NodeSpan> {
        let mut current = pointer;
        loop {
            if let Some(span) = self.nodes.get(current) {
                return Some(span);
            }
            match current.rfind('/') {
                Some(cut) => current = &current[..cut],
                None => return None,
            }
        }
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

/// Turns byte offsets into 1-based line and column (columns count characters).
#[derive(Debug, Clone)]
pub struct LineIndex<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, line_starts }
    }

    pub fn position(&self, offset: usize) -> Position {
        let offset = offset.min(self.text.len());
        let line = self
            .line_starts
            .partition_point(|start| *start <= offset)
            .max(1);
        let start = self.line_starts[line - 1];
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count())
            + 1;
        Position { line, column }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index() {
        let idx = LineIndex::new("ab\ncé\n\nx");
        assert_eq!(idx.position(0), Position { line: 1, column: 1 });
        assert_eq!(idx.position(3), Position { line: 2, column: 1 });
        assert_eq!(idx.position(6), Position { line: 2, column: 3 });
        assert_eq!(idx.position(7), Position { line: 3, column: 1 });
        assert_eq!(idx.position(8), Position { line: 4, column: 1 });
        assert_eq!(idx.position(99), Position { line: 4, column: 2 });
    }

    #[test]
    fn nearest_ancestor() {
        let mut map = SpanMap::default();
        let at = |line| Position { line, column: 1 };
        map.insert(
            "/a".into(),
            NodeSpan {
                key: Some(at(1)),
                value: at(2),
                value_bytes: None,
            },
        );
        assert_eq!(map.value_position("/a/b/c"), Some(at(2)));
        assert_eq!(map.key_position("/a"), Some(at(1)));
        assert_eq!(map.value_position("/z"), None);
    }
}
