//! The top-level `"id"` of an oversized request found on the way past, without keeping it.

// The 2025-era subscribe requests are still served, so their types are still checked.
use serde_json::Value;

/// Finds the top-level `"id"` of a JSON object fed in pieces, without keeping the object: how
/// an oversized request still gets an answer with its id.
#[derive(Debug, Default)]
pub(super) struct IdScanner {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// At depth 1: after a `:` (a value), else a key.
    in_value: bool,
    key: Vec<u8>,
    capturing_key: bool,
    /// The raw text of the current value when its key is `id`.
    id_text: Option<Vec<u8>>,
    id: Option<Value>,
    saw_method: bool,
    saw_id_key: bool,
    not_an_object: bool,
}

impl IdScanner {
    const MAX_ID: usize = 256;

    pub(super) fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        if self.not_an_object {
            return;
        }
        if self.in_string {
            if self.capturing_key && self.key.len() < 16 {
                self.key.push(b);
            }
            if self.depth == 1
                && let Some(text) = self.id_text.as_mut()
                && text.len() < Self::MAX_ID
            {
                text.push(b);
            }
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if self.capturing_key {
                    self.capturing_key = false;
                    self.key.pop();
                }
            }
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && !self.in_value {
                    self.capturing_key = true;
                    self.key.clear();
                } else if self.depth == 1
                    && let Some(text) = self.id_text.as_mut()
                {
                    text.push(b);
                }
            }
            b'{' | b'[' => {
                if self.depth == 0 && b == b'[' {
                    self.not_an_object = true;
                }
                if self.depth == 1 && self.id_text.is_some() {
                    // An object or array is no id.
                    self.id_text = None;
                }
                self.depth += 1;
            }
            b'}' | b']' => {
                if self.depth == 1 {
                    self.end_value();
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if self.depth == 1 => {
                self.in_value = true;
                match self.key.as_slice() {
                    b"id" => {
                        self.saw_id_key = true;
                        self.id_text = Some(Vec::new());
                    }
                    b"method" => self.saw_method = true,
                    _ => {}
                }
            }
            b',' if self.depth == 1 => {
                self.end_value();
                self.in_value = false;
            }
            _ if self.depth == 0 && !b.is_ascii_whitespace() => self.not_an_object = true,
            _ if self.depth == 1 && !b.is_ascii_whitespace() => {
                if let Some(text) = self.id_text.as_mut()
                    && text.len() < Self::MAX_ID
                {
                    text.push(b);
                }
            }
            _ => {}
        }
    }

    fn end_value(&mut self) {
        if let Some(text) = self.id_text.take() {
            self.id = serde_json::from_slice::<Value>(&text)
                .ok()
                .filter(|v| v.is_string() || v.is_number());
        }
    }

    pub(super) fn id(&self) -> Option<Value> {
        self.id.clone()
    }

    /// A message with a method and no id: a notification, which gets no answer.
    pub(super) fn is_notification(&self) -> bool {
        self.saw_method && !self.saw_id_key
    }
}
