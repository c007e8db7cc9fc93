//! The help overlay's content: the keys of the mode (and view) help was opened from, grouped
//! by what they are for, a command's keys on one row (`j/↓`), laid out in one column or, on a
//! wide terminal, two. Generated from the keymap, so it never says what the keys do not do.

use super::command::Command;
use super::keymap::{self};
use super::mode::{Mode, View};

/// The groups, in the order help shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Group {
    Move,
    Run,
    Workflows,
    Edit,
    Panes,
    History,
    Studio,
}

impl Group {
    pub fn title(self) -> &'static str {
        match self {
            Group::Move => "Move",
            Group::Run => "Run",
            Group::Workflows => "Workflows",
            Group::Edit => "Edit",
            Group::Panes => "Panes",
            Group::History => "History, search and copy",
            Group::Studio => "Studio",
        }
    }

    fn of(command: Command) -> Group {
        use Command as C;
        match command {
            C::Run
            | C::RunOn
            | C::Cancel
            | C::Answer
            | C::Replay
            | C::Approve
            | C::Deny
            | C::Later
            | C::JournalUp
            | C::JournalDown
            | C::JournalFollow
            | C::Inbox
            | C::NextNeedsYou
            | C::Clear => Group::Run,
            C::Filter
            | C::Problems
            | C::Runs
            | C::Edit
            | C::ExternalEdit
            | C::NewWorkflow
            | C::Duplicate
            | C::Rename
            | C::Delete
            | C::Audit => Group::Workflows,
            C::Save
            | C::Undo
            | C::Redo
            | C::Find
            | C::NextProblem
            | C::TogglePanel
            | C::Complete
            | C::Choose(_) => Group::Edit,
            C::NewShell
            | C::Focus
            | C::LeaveFocus
            | C::NextPane
            | C::PrevPane
            | C::ClosePane
            | C::ToggleGrid
            | C::Zoom
            | C::DraftWorkflow
            | C::MarkPane => Group::Panes,
            C::ScrollUp
            | C::ScrollDown
            | C::ScrollTop
            | C::ScrollLive
            | C::Search
            | C::NextHit
            | C::PrevHit
            | C::CopyMode
            | C::Mark
            | C::MarkLines
            | C::Copy
            | C::ToggleMouse => Group::History,
            C::Palette | C::Help | C::Quit | C::Detach => Group::Studio,
            C::Up
            | C::Down
            | C::NextView
            | C::PrevView
            | C::Confirm
            | C::Close
            | C::Left
            | C::Right
            | C::ChoicePrev
            | C::ChoiceNext
            | C::Toggle
            | C::DeleteChar
            | C::Yes
            | C::No => Group::Move,
        }
    }

    /// Whether the studio's own keys (normal mode) of this group are worth reading in `view`:
    /// the workflows' in the list and plan, a pane's history in the panes view.
    fn shown_in(self, view: View) -> bool {
        match self {
            Group::Workflows => view != View::Panes,
            Group::History => view == View::Panes,
            _ => true,
        }
    }
}

/// One row of help: a command's keys and what it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keys {
    pub keys: String,
    pub what: &'static str,
}

/// The keys of `mode` in `view`, grouped, groups in order, keys in the keymap's order.
pub fn groups(mode: Mode, view: View) -> Vec<(Group, Vec<Keys>)> {
    let mut rows: Vec<(Group, Command, Keys)> = Vec::new();
    for (label, command) in keymap::keys_in(mode, view) {
        let group = Group::of(command);
        if mode == Mode::Normal && !group.shown_in(view) {
            continue;
        }
        match rows.iter_mut().find(|(_, c, _)| *c == command) {
            Some((_, _, keys)) => {
                keys.keys.push('/');
                keys.keys.push_str(label);
            }
            None => rows.push((
                group,
                command,
                Keys {
                    keys: label.to_string(),
                    what: command.describe(),
                },
            )),
        }
    }
    let mut groups: Vec<(Group, Vec<Keys>)> = Vec::new();
    rows.sort_by_key(|(group, _, _)| *group);
    for (group, _, keys) in rows {
        match groups.last_mut() {
            Some((g, list)) if *g == group => list.push(keys),
            _ => groups.push((group, vec![keys])),
        }
    }
    groups
}

/// One cell of the laid-out help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Group(&'static str),
    Keys(Keys),
    Blank,
}

/// How wide one column of help is, in cells.
pub const COLUMN: u16 = 62;
/// Between two columns.
pub const GAP: u16 = 3;

/// How many columns help takes on a terminal `cols` wide.
pub fn columns(cols: u16) -> usize {
    if cols >= 2 * COLUMN + GAP + 4 { 2 } else { 1 }
}

/// Help's rows for `mode` in `view` on a terminal `cols` wide: each row one piece a column.
/// Groups are kept whole in a column, the columns as even as whole groups allow.
pub fn layout(mode: Mode, view: View, cols: u16) -> Vec<Vec<Piece>> {
    let blocks: Vec<Vec<Piece>> = groups(mode, view)
        .into_iter()
        .map(|(group, keys)| {
            let mut block = vec![Piece::Group(group.title())];
            block.extend(keys.into_iter().map(Piece::Keys));
            block
        })
        .collect();
    let n = columns(cols);
    let total: usize = blocks.iter().map(|b| b.len() + 1).sum();
    let mut cols_of: Vec<Vec<Piece>> = vec![Vec::new(); n];
    let mut at = 0;
    for block in blocks {
        // On to the next column once this one holds its share.
        if at + 1 < n && cols_of[at].len() >= total.div_ceil(n) {
            at += 1;
        }
        if !cols_of[at].is_empty() {
            cols_of[at].push(Piece::Blank);
        }
        cols_of[at].extend(block);
    }
    let height = cols_of.iter().map(Vec::len).max().unwrap_or(0);
    (0..height)
        .map(|row| {
            cols_of
                .iter()
                .map(|col| col.get(row).cloned().unwrap_or(Piece::Blank))
                .collect()
        })
        .collect()
}

/// Where help was opened, in its title: the view for the studio's own keys, else the mode.
pub fn place(mode: Mode, view: View) -> &'static str {
    match (mode, view) {
        (Mode::Normal, View::List) => "workflow list",
        (Mode::Normal, View::Plan) => "plan",
        (Mode::Normal, View::Panes) => "panes",
        (mode, _) => mode.title(),
    }
}

/// The last line of help: where every other key is.
pub const ALL_KEYS: &str = "all keys: Ctrl-p (the command palette finds any command)";

/// How many rows help shows at once on a terminal `rows` high: its box leaves the status
/// line, and inside its border the last row says where the other keys are.
pub fn page(rows: u16) -> usize {
    usize::from(rows.saturating_sub(2 + 2 + 2)).max(1)
}

/// The first row of the last page.
pub fn last_top(mode: Mode, view: View, size: (u16, u16)) -> usize {
    layout(mode, view, size.0)
        .len()
        .saturating_sub(page(size.1))
}
