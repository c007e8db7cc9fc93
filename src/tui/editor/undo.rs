//! Undo by the steps a person takes, not by the buffer's edits: the characters typed in a
//! row on one line are one step, an Enter (its new line and the indentation that comes with
//! it) another, a paste or a completion one more. `ratatui-textarea` keeps an edit per
//! character and two for an indented Enter, so one Ctrl-z left half a line break behind.
//! Each step keeps the text as it was before it; manifests are small, and so are copies.

use ratatui_textarea::{CursorMove, TextArea};

/// How many steps can be undone.
const KEPT: usize = 500;

/// The text and the cursor at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Snapshot {
    lines: Vec<String>,
    cursor: (usize, usize),
}

impl Snapshot {
    fn of(text: &TextArea<'_>) -> Snapshot {
        Snapshot {
            lines: text.lines().to_vec(),
            cursor: text.cursor(),
        }
    }
}

/// What an edit is, for grouping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// A character typed: it joins the characters typed just before it on the same line.
    Typing,
    /// Anything else (Enter, Backspace, a paste, a completion): a step of its own.
    Other,
}

/// The steps that can be undone and redone.
#[derive(Debug, Clone, Default)]
pub struct Steps {
    done: Vec<Snapshot>,
    undone: Vec<Snapshot>,
    /// The line characters are being typed on, while the typing goes on uninterrupted.
    typing_on: Option<usize>,
    /// Whether the edit under way opened a step (taken back if it changed nothing).
    opened: bool,
}

impl Steps {
    /// Before an edit of `text`.
    pub fn before(&mut self, text: &TextArea<'_>, edit: Edit) {
        let row = text.cursor().0;
        self.opened = !(edit == Edit::Typing && self.typing_on == Some(row));
        if self.opened {
            self.done.push(Snapshot::of(text));
            if self.done.len() > KEPT {
                self.done.remove(0);
            }
        }
        self.typing_on = (edit == Edit::Typing).then_some(row);
    }

    /// After the edit: whether it changed the text. One that did not (a key that only moved
    /// the cursor) is no step, and ends a run of typing.
    pub fn after(&mut self, changed: bool) {
        if changed {
            self.undone.clear();
        } else {
            if self.opened {
                self.done.pop();
            }
            self.typing_on = None;
        }
        self.opened = false;
    }

    /// Anything that is not typing happened (the cursor moved by a click, a search): the
    /// next character starts a step of its own.
    pub fn interrupt(&mut self) {
        self.typing_on = None;
    }

    /// Takes the text back one step (`redo`: forward); false when there is none.
    pub fn undo(&mut self, text: &mut TextArea<'static>, redo: bool) -> bool {
        let (from, to) = if redo {
            (&mut self.undone, &mut self.done)
        } else {
            (&mut self.done, &mut self.undone)
        };
        let Some(snapshot) = from.pop() else {
            return false;
        };
        to.push(Snapshot::of(text));
        *text = area(snapshot.lines, snapshot.cursor);
        self.typing_on = None;
        true
    }
}

/// A buffer holding `lines` with the cursor at `cursor`. Its own history is off: [`Steps`]
/// is the one undo (a key the textarea would take for undo does nothing, rather than undo
/// something else).
pub fn area(lines: Vec<String>, cursor: (usize, usize)) -> TextArea<'static> {
    let mut area = TextArea::new(lines);
    area.set_max_histories(0);
    area.move_cursor(CursorMove::Jump(
        u16::try_from(cursor.0).unwrap_or(u16::MAX),
        u16::try_from(cursor.1).unwrap_or(u16::MAX),
    ));
    area
}
