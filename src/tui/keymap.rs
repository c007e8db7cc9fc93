//! The keys of each mode, as one table: key handling looks commands up here and the help
//! overlay and status line are generated from it, so a key is never documented twice.

use super::command::Command;
use super::mode::{Mode, View};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// One key of one mode.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub mode: Mode,
    pub code: KeyCode,
    pub modifiers: KeyModifiers,
    /// How the help overlay writes the key.
    pub label: &'static str,
    pub command: Command,
    /// Shown on the status line of its mode.
    pub hint: bool,
    /// Only in this view (before the mode's binding of the same key in the table).
    pub view: Option<View>,
}

const fn bind(mode: Mode, code: KeyCode, label: &'static str, command: Command) -> Binding {
    Binding {
        mode,
        code,
        modifiers: KeyModifiers::NONE,
        label,
        command,
        hint: false,
        view: None,
    }
}

/// A binding that holds only while `view` is the active view.
const fn in_view(view: View, binding: Binding) -> Binding {
    Binding {
        view: Some(view),
        ..binding
    }
}

const fn hint(mode: Mode, code: KeyCode, label: &'static str, command: Command) -> Binding {
    Binding {
        hint: true,
        ..bind(mode, code, label, command)
    }
}

const fn ctrl(mode: Mode, c: char, label: &'static str, command: Command) -> Binding {
    Binding {
        modifiers: KeyModifiers::CONTROL,
        hint: true,
        ..bind(mode, KeyCode::Char(c), label, command)
    }
}

use KeyCode::{
    BackTab, Backspace, Char, Down, End, Enter, Esc, Home, Left, PageDown, PageUp, Right, Tab, Up,
};
// `Mode::Copy` is written out: a bare `Copy` would shadow the derive.
use KeyCode::{Delete as Del, F};
use Mode::{
    ConfirmClose, ConfirmQuit, Edit, EditAsk, EditFind, Filter, Focus, Form, Help, Name, Normal,
    Palette, Problems, Prompt, Runs, Search,
};

/// Every key the studio knows, mode by mode, in the order help lists them.
pub const BINDINGS: &[Binding] = &[
    hint(Normal, Char('r'), "r", Command::Run),
    hint(Normal, Char('t'), "t", Command::NewShell),
    hint(Normal, Char('i'), "i", Command::Focus),
    in_view(View::Panes, hint(Normal, Char('/'), "/", Command::Search)),
    hint(Normal, Char('/'), "/", Command::Filter),
    in_view(View::Panes, hint(Normal, PageUp, "PgUp", Command::ScrollUp)),
    in_view(View::List, hint(Normal, Char('e'), "e", Command::Problems)),
    in_view(View::List, hint(Normal, Char('h'), "h", Command::Runs)),
    in_view(View::List, hint(Normal, Char('E'), "E", Command::Edit)),
    in_view(View::Panes, hint(Normal, Char('v'), "v", Command::CopyMode)),
    in_view(
        View::Panes,
        hint(Normal, Char('g'), "g", Command::ToggleGrid),
    ),
    ctrl(Normal, 'p', "Ctrl-p", Command::Palette),
    hint(Normal, Char('?'), "?", Command::Help),
    hint(Normal, Char('q'), "q", Command::Quit),
    bind(Normal, Char('d'), "d", Command::Detach),
    Binding {
        hint: false,
        ..ctrl(Normal, 'c', "Ctrl-c", Command::Quit)
    },
    bind(Normal, Char('j'), "j", Command::Down),
    bind(Normal, Down, "↓", Command::Down),
    bind(Normal, Char('k'), "k", Command::Up),
    bind(Normal, Up, "↑", Command::Up),
    bind(Normal, Tab, "Tab", Command::NextView),
    bind(Normal, BackTab, "Shift-Tab", Command::PrevView),
    bind(Normal, Enter, "Enter", Command::Confirm),
    bind(Normal, Char('c'), "c", Command::Cancel),
    bind(Normal, Char('a'), "a", Command::Answer),
    bind(Normal, Char('!'), "!", Command::Inbox),
    bind(Normal, Char('u'), "u", Command::NextNeedsYou),
    bind(Normal, Char(']'), "]", Command::NextPane),
    bind(Normal, Char('['), "[", Command::PrevPane),
    bind(Normal, Char('x'), "x", Command::ClosePane),
    bind(Normal, Esc, "Esc", Command::Close),
    bind(Normal, PageUp, "PgUp", Command::ScrollUp),
    bind(Normal, PageDown, "PgDn", Command::ScrollDown),
    bind(Normal, Home, "Home", Command::ScrollTop),
    bind(Normal, End, "End", Command::ScrollLive),
    in_view(View::Panes, bind(Normal, Char('n'), "n", Command::NextHit)),
    in_view(View::Panes, bind(Normal, Char('N'), "N", Command::PrevHit)),
    bind(Normal, Char('e'), "e", Command::Problems),
    bind(Normal, Char('h'), "h", Command::Runs),
    bind(Normal, Char(':'), ":", Command::Palette),
    bind(Normal, Char('g'), "g", Command::ToggleGrid),
    bind(Normal, Char('z'), "z", Command::Zoom),
    bind(Normal, Char('v'), "v", Command::CopyMode),
    bind(Normal, Char('m'), "m", Command::ToggleMouse),
    bind(Normal, Char('E'), "E", Command::Edit),
    bind(Normal, Char('O'), "O", Command::ExternalEdit),
    bind(Normal, Char('A'), "A", Command::NewWorkflow),
    bind(Normal, Char('Y'), "Y", Command::Duplicate),
    bind(Normal, Char('R'), "R", Command::Rename),
    bind(Normal, Char('D'), "D", Command::Delete),
    bind(Normal, Char('L'), "L", Command::Audit),
    bind(Normal, Char('@'), "@", Command::RunOn),
    bind(Normal, Char('W'), "W", Command::DraftWorkflow),
    bind(Normal, Char('M'), "M", Command::MarkPane),
    ctrl(Focus, 'g', "Ctrl-g", Command::LeaveFocus),
    hint(Filter, Enter, "Enter", Command::Confirm),
    hint(Filter, Esc, "Esc", Command::Close),
    bind(Filter, Backspace, "Backspace", Command::DeleteChar),
    bind(Filter, Down, "↓", Command::Down),
    bind(Filter, Up, "↑", Command::Up),
    hint(Form, Enter, "Enter", Command::Confirm),
    hint(Form, Esc, "Esc", Command::Close),
    hint(Form, Tab, "Tab", Command::Down),
    bind(Form, Down, "↓", Command::Down),
    bind(Form, BackTab, "Shift-Tab", Command::Up),
    bind(Form, Up, "↑", Command::Up),
    bind(Form, Left, "←", Command::ChoicePrev),
    bind(Form, Right, "→", Command::ChoiceNext),
    hint(Form, Char(' '), "Space", Command::Toggle),
    bind(Form, Backspace, "Backspace", Command::DeleteChar),
    hint(Prompt, Enter, "Enter", Command::Confirm),
    hint(Prompt, Esc, "Esc", Command::Close),
    bind(Prompt, Backspace, "Backspace", Command::DeleteChar),
    hint(Help, Esc, "Esc", Command::Close),
    bind(Help, Char('?'), "?", Command::Close),
    bind(Help, Char('q'), "q", Command::Close),
    bind(Help, Char('j'), "j", Command::Down),
    bind(Help, Down, "↓", Command::Down),
    bind(Help, Char('k'), "k", Command::Up),
    bind(Help, Up, "↑", Command::Up),
    bind(Help, PageDown, "PgDn", Command::ScrollDown),
    bind(Help, Char(' '), "Space", Command::ScrollDown),
    bind(Help, PageUp, "PgUp", Command::ScrollUp),
    bind(Help, Home, "Home", Command::ScrollTop),
    bind(Help, End, "End", Command::ScrollLive),
    hint(ConfirmQuit, Char('y'), "y", Command::Yes),
    hint(ConfirmQuit, Char('d'), "d", Command::Detach),
    hint(ConfirmQuit, Char('n'), "n", Command::No),
    bind(ConfirmQuit, Esc, "Esc", Command::No),
    hint(ConfirmClose, Char('y'), "y", Command::Yes),
    hint(ConfirmClose, Char('n'), "n", Command::No),
    bind(ConfirmClose, Esc, "Esc", Command::No),
    hint(Search, Enter, "Enter", Command::Confirm),
    hint(Search, Esc, "Esc", Command::Close),
    bind(Search, Backspace, "Backspace", Command::DeleteChar),
    hint(Problems, Enter, "Enter", Command::Confirm),
    hint(Problems, Esc, "Esc", Command::Close),
    bind(Problems, Char('e'), "e", Command::Close),
    bind(Problems, Char('q'), "q", Command::Close),
    bind(Problems, Char('j'), "j", Command::Down),
    bind(Problems, Down, "↓", Command::Down),
    bind(Problems, Char('k'), "k", Command::Up),
    bind(Problems, Up, "↑", Command::Up),
    hint(Runs, Esc, "Esc", Command::Close),
    bind(Runs, Char('h'), "h", Command::Close),
    bind(Runs, Char('q'), "q", Command::Close),
    bind(Runs, Char('j'), "j", Command::Down),
    bind(Runs, Down, "↓", Command::Down),
    bind(Runs, Char('k'), "k", Command::Up),
    bind(Runs, Up, "↑", Command::Up),
    bind(Runs, PageUp, "PgUp", Command::JournalUp),
    bind(Runs, PageDown, "PgDn", Command::JournalDown),
    bind(Runs, End, "End", Command::JournalFollow),
    hint(Runs, Char('p'), "p", Command::Replay),
    hint(Palette, Enter, "Enter", Command::Confirm),
    hint(Palette, Esc, "Esc", Command::Close),
    bind(Palette, Down, "↓", Command::Down),
    bind(Palette, Tab, "Tab", Command::Down),
    bind(Palette, Up, "↑", Command::Up),
    bind(Palette, BackTab, "Shift-Tab", Command::Up),
    bind(Palette, Backspace, "Backspace", Command::DeleteChar),
    hint(Mode::Copy, Char('v'), "v", Command::Mark),
    bind(Mode::Copy, Char('V'), "V", Command::MarkLines),
    hint(Mode::Copy, Char('y'), "y", Command::Copy),
    bind(Mode::Copy, Enter, "Enter", Command::Copy),
    hint(Mode::Copy, Esc, "Esc", Command::Close),
    bind(Mode::Copy, Char('q'), "q", Command::Close),
    bind(Mode::Copy, Char('h'), "h", Command::Left),
    bind(Mode::Copy, Left, "←", Command::Left),
    bind(Mode::Copy, Char('l'), "l", Command::Right),
    bind(Mode::Copy, Right, "→", Command::Right),
    bind(Mode::Copy, Char('j'), "j", Command::Down),
    bind(Mode::Copy, Down, "↓", Command::Down),
    bind(Mode::Copy, Char('k'), "k", Command::Up),
    bind(Mode::Copy, Up, "↑", Command::Up),
    bind(Mode::Copy, PageUp, "PgUp", Command::ScrollUp),
    bind(Mode::Copy, PageDown, "PgDn", Command::ScrollDown),
    ctrl(Edit, 's', "Ctrl-s", Command::Save),
    hint(Edit, Esc, "Esc", Command::Close),
    Binding {
        hint: false,
        ..ctrl(Edit, 'z', "Ctrl-z", Command::Undo)
    },
    Binding {
        hint: false,
        ..ctrl(Edit, 'y', "Ctrl-y", Command::Redo)
    },
    ctrl(Edit, 'f', "Ctrl-f", Command::Find),
    ctrl(Edit, 'n', "Ctrl-n", Command::NextProblem),
    ctrl(Edit, 't', "Ctrl-t", Command::TogglePanel),
    ctrl(Edit, 'o', "Ctrl-o", Command::ExternalEdit),
    Binding {
        hint: false,
        ..ctrl(Edit, 'p', "Ctrl-p", Command::Palette)
    },
    Binding {
        hint: true,
        ..ctrl(Edit, ' ', "Ctrl-Space", Command::Complete)
    },
    bind(Edit, F(3), "F3", Command::NextProblem),
    bind(Edit, PageUp, "PgUp", Command::ScrollUp),
    bind(Edit, PageDown, "PgDn", Command::ScrollDown),
    hint(EditAsk, Char('r'), "r", Command::Choose('r')),
    hint(EditAsk, Char('o'), "o", Command::Choose('o')),
    hint(EditAsk, Char('d'), "d", Command::Choose('d')),
    hint(EditAsk, Char('s'), "s", Command::Choose('s')),
    hint(EditAsk, Char('y'), "y", Command::Choose('y')),
    hint(EditAsk, Esc, "Esc", Command::Close),
    bind(EditAsk, Char('n'), "n", Command::Close),
    bind(EditAsk, Char('j'), "j", Command::Down),
    bind(EditAsk, Down, "↓", Command::Down),
    bind(EditAsk, Char('k'), "k", Command::Up),
    bind(EditAsk, Up, "↑", Command::Up),
    hint(EditFind, Enter, "Enter", Command::Confirm),
    hint(EditFind, Esc, "Esc", Command::Close),
    bind(EditFind, Backspace, "Backspace", Command::DeleteChar),
    hint(Name, Enter, "Enter", Command::Confirm),
    hint(Name, Esc, "Esc", Command::Close),
    hint(Name, Left, "←", Command::ChoicePrev),
    hint(Name, Right, "→", Command::ChoiceNext),
    bind(Name, Backspace, "Backspace", Command::DeleteChar),
    bind(Name, Del, "Delete", Command::DeleteChar),
    hint(Mode::Approve, Char('y'), "y", Command::Approve),
    hint(Mode::Approve, Char('n'), "n", Command::Deny),
    hint(Mode::Approve, Esc, "Esc", Command::Later),
    bind(Mode::Approve, Char('j'), "j", Command::Down),
    bind(Mode::Approve, Down, "↓", Command::Down),
    bind(Mode::Approve, Char('k'), "k", Command::Up),
    bind(Mode::Approve, Up, "↑", Command::Up),
    bind(Mode::Approve, PageUp, "PgUp", Command::ScrollUp),
    bind(Mode::Approve, PageDown, "PgDn", Command::ScrollDown),
    hint(Mode::Audit, Esc, "Esc", Command::Close),
    bind(Mode::Audit, Char('L'), "L", Command::Close),
    bind(Mode::Audit, Char('q'), "q", Command::Close),
    bind(Mode::Audit, Char('j'), "j", Command::Down),
    bind(Mode::Audit, Down, "↓", Command::Down),
    bind(Mode::Audit, Char('k'), "k", Command::Up),
    bind(Mode::Audit, Up, "↑", Command::Up),
    hint(Mode::Inbox, Enter, "Enter", Command::Confirm),
    hint(Mode::Inbox, Char('x'), "x", Command::Clear),
    hint(Mode::Inbox, Esc, "Esc", Command::Close),
    bind(Mode::Inbox, Char('!'), "!", Command::Close),
    bind(Mode::Inbox, Char('q'), "q", Command::Close),
    bind(Mode::Inbox, Char('u'), "u", Command::NextNeedsYou),
    bind(Mode::Inbox, Char('j'), "j", Command::Down),
    bind(Mode::Inbox, Down, "↓", Command::Down),
    bind(Mode::Inbox, Char('k'), "k", Command::Up),
    bind(Mode::Inbox, Up, "↑", Command::Up),
    hint(Mode::Complete, Enter, "Enter", Command::Confirm),
    bind(Mode::Complete, Tab, "Tab", Command::Confirm),
    hint(Mode::Complete, Esc, "Esc", Command::Close),
    bind(Mode::Complete, Down, "↓", Command::Down),
    bind(Mode::Complete, Up, "↑", Command::Up),
];

/// The bindings that hold in `mode` with `view` active, first ones first.
fn active(mode: Mode, view: View) -> impl Iterator<Item = &'static Binding> {
    BINDINGS
        .iter()
        .filter(move |b| b.mode == mode && b.view.is_none_or(|v| v == view))
}

/// The command `key` means in `mode` with `view` active, if any.
pub fn lookup(mode: Mode, view: View, key: &KeyEvent) -> Option<Command> {
    // Shift is part of the character typed ('?' is Shift-/), not a chord of its own.
    let modifiers = key.modifiers - KeyModifiers::SHIFT;
    active(mode, view)
        .find(|b| b.code == key.code && b.modifiers == modifiers)
        .map(|b| b.command)
}

/// Every key that holds in `mode` with `view` active, with its command, in the table's order
/// (a key the view binds hides the mode's binding of it): what help lists.
pub fn keys_in(mode: Mode, view: View) -> Vec<(&'static str, Command)> {
    let mut taken = Vec::new();
    let mut keys = Vec::new();
    for b in active(mode, view) {
        if !taken.contains(&(b.code, b.modifiers)) {
            taken.push((b.code, b.modifiers));
            keys.push((b.label, b.command));
        }
    }
    keys
}

/// The status line's keys for `mode` in `view`: `r run · t shell · ...`.
pub fn hints(mode: Mode, view: View) -> Vec<(&'static str, &'static str)> {
    hints_with_commands(mode, view)
        .into_iter()
        .map(|(key, what, _)| (key, what))
        .collect()
}

/// [`hints`] with the command each key runs.
pub fn hints_with_commands(mode: Mode, view: View) -> Vec<(&'static str, &'static str, Command)> {
    let mut taken = Vec::new();
    let mut hints = Vec::new();
    for b in active(mode, view) {
        // A key the view binds hides the mode's binding of it.
        if taken.contains(&(b.code, b.modifiers)) {
            continue;
        }
        taken.push((b.code, b.modifiers));
        if b.hint {
            hints.push((b.label, short(b.command), b.command));
        }
    }
    hints
}

fn short(command: Command) -> &'static str {
    match command {
        Command::Run => "run",
        Command::NewShell => "shell",
        Command::Focus => "focus",
        Command::Filter => "filter",
        Command::Help => "help",
        Command::Quit => "quit",
        Command::Detach => "detach",
        Command::LeaveFocus => "leave focus",
        Command::Confirm => "confirm",
        Command::Close => "close",
        Command::Down => "next field",
        Command::ChoicePrev | Command::ChoiceNext => "choice",
        Command::Toggle => "toggle",
        Command::Yes => "yes",
        Command::No => "no",
        Command::Approve => "approve",
        Command::Deny => "deny",
        Command::Later => "later",
        Command::Inbox => "inbox",
        Command::NextNeedsYou => "needs you",
        Command::Clear => "clear",
        Command::ScrollUp => "history",
        Command::Search => "search",
        Command::NextHit => "next hit",
        Command::Problems => "problems",
        Command::Runs => "runs",
        Command::Replay => "replay",
        Command::Palette => "commands",
        Command::CopyMode => "copy",
        Command::ToggleGrid => "grid",
        Command::Mark => "select",
        Command::Copy => "copy",
        Command::Edit => "edit",
        Command::Save => "save",
        Command::Find => "find",
        Command::NextProblem => "next problem",
        Command::TogglePanel => "panel",
        Command::ExternalEdit => "$EDITOR",
        Command::Complete => "complete",
        Command::Choose('r') => "reload",
        Command::Choose('o') => "overwrite",
        Command::Choose('d') => "diff or drop",
        Command::Choose('s') => "save",
        other => other.describe(),
    }
}

/// The keys that run `command` outside any overlay (`Ctrl-p, :`), for the palette.
pub fn keys_of(command: Command) -> String {
    let mut labels: Vec<&str> = Vec::new();
    for b in BINDINGS.iter().filter(|b| b.mode == Mode::Normal) {
        if b.command == command && !labels.contains(&b.label) {
            labels.push(b.label);
        }
    }
    labels.join(", ")
}
