//! Boxes drawn over the views: help (from the keymap), the command palette, the inputs form,
//! a prompt's question, and the question before quitting during a run.

use super::Ctx;
use super::boxes::{boxed, centered};
use crate::engine::audit_log::AuditEntry;
use crate::tui::mode::Mode;
use crate::tui::overlay::{Naming, Overlay, Palette, ProblemsView};
use crate::tui::text::{self, clean, shorten};
use ratatui::Frame;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

/// The keys of the mode help was opened from, grouped, a page at a time, and where the rest
/// are.
pub fn help(frame: &mut Frame, cx: &Ctx, of: Mode, top: usize) {
    use crate::tui::help::{self, Piece};
    let t = cx.theme;
    let app = cx.app;
    let rows = help::layout(of, app.view, frame.area().width);
    let columns = help::columns(frame.area().width);
    let column = usize::from(help::COLUMN);
    let gap = " ".repeat(usize::from(help::GAP));
    let n = u16::try_from(columns).unwrap_or(1);
    let width = help::COLUMN * n + help::GAP * (n - 1) + 2;
    let page = help::page(frame.area().height);
    let top = top.min(rows.len().saturating_sub(page));
    let mut lines: Vec<Line> = Vec::new();
    for row in rows.iter().skip(top).take(page) {
        let mut spans = Vec::new();
        for (i, piece) in row.iter().enumerate() {
            if i > 0 {
                spans.push(Span::raw(gap.clone()));
            }
            let (text, style) = match piece {
                Piece::Group(title) => (
                    title.to_string(),
                    Style::default().fg(t.accent).add_modifier(Modifier::BOLD),
                ),
                Piece::Keys(k) => {
                    let keys = format!("  {:<12}", k.keys);
                    let room = column.saturating_sub(text::cells(&keys));
                    spans.push(Span::styled(keys, Style::default().fg(t.warning)));
                    (
                        text::shorten(k.what, room),
                        Style::default().fg(t.foreground),
                    )
                }
                Piece::Blank => (String::new(), Style::default()),
            };
            let used: usize = spans.iter().map(|s| text::cells(&s.content)).sum();
            let end = (column + usize::from(help::GAP)) * i + column;
            let pad = (end.saturating_sub(used)).saturating_sub(text::cells(&text));
            spans.push(Span::styled(text, style));
            spans.push(Span::raw(" ".repeat(pad)));
        }
        lines.push(Line::from(spans));
    }
    // Every page as tall as the first, so that paging does not move the box.
    lines.resize(page.min(rows.len()), Line::raw(""));
    lines.push(Line::raw(""));
    lines.push(Line::styled(help::ALL_KEYS, Style::default().fg(t.muted)));
    let height = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
    let area = centered(frame.area(), width, height);
    let pages = rows.len().div_ceil(page).max(1);
    let place = help::place(of, app.view);
    let title = if pages > 1 {
        format!(
            " Keys · {} · page {}/{pages} · PgDn more · Esc closes ",
            place,
            if top + page >= rows.len() {
                pages
            } else {
                top / page + 1
            },
        )
    } else {
        format!(" Keys · {place} · Esc closes ")
    };
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(boxed(title, cx)), area);
}

pub fn prompt(frame: &mut Frame, cx: &Ctx, run_id: &str, answer: &str) {
    let t = cx.theme;
    let Some(run) = cx.app.runs.get(run_id) else {
        return;
    };
    let lines = vec![
        Line::styled(
            clean(run.prompt.as_deref().unwrap_or("")),
            Style::default().fg(t.foreground),
        ),
        Line::raw(""),
        Line::from(vec![
            Span::styled("> ", Style::default().fg(t.accent)),
            Span::styled(
                format!("{}▏", clean(answer)),
                Style::default().fg(t.foreground),
            ),
        ]),
        Line::raw(""),
        Line::styled(
            "Enter answers · Esc later (a answers)",
            Style::default().fg(t.muted),
        ),
    ];
    let area = centered(frame.area(), 70, 8);
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(boxed(format!(" {} asks ", clean(&run.workflow)), cx)),
        area,
    );
}

pub fn confirm_quit(frame: &mut Frame, cx: &Ctx) {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut lines = Vec::new();
    if cx.app.attached {
        let staying = crate::tui::persons_work::staying(cx.app);
        // Room for the box, the two lines around the list and the answer.
        let room = usize::from(frame.area().height.saturating_sub(6)).max(1);
        lines.push(Line::raw("Still running, started by you:"));
        let shown = if staying.len() > room {
            room - 1
        } else {
            staying.len()
        };
        // The box is 72 wide: 2 for its sides, 4 for the bullet.
        let width = usize::from(frame.area().width.min(72)).saturating_sub(6);
        for item in &staying[..shown] {
            lines.push(Line::raw(format!("  • {}", shorten(&clean(item), width))));
        }
        if shown < staying.len() {
            lines.push(Line::raw(format!("  … and {} more", staying.len() - shown)));
        }
        lines.push(Line::raw(
            "They keep the folder's server running after you go.",
        ));
        lines.push(Line::styled(
            "y end them and quit · d leave them running · n stay",
            bold,
        ));
    } else {
        lines.push(Line::raw(
            "This studio hosts the folder: quitting ends its terminals and runs.",
        ));
        lines.push(Line::styled("Quit? y / n", bold));
    }
    let height = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
    let area = centered(frame.area(), 72, height);
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(boxed(" Quit ".into(), cx)),
        area,
    );
}

/// `x` on a pane whose program still runs: closing it kills that program (an agent's
/// terminal, a build), so it is asked first.
pub fn confirm_close(frame: &mut Frame, cx: &Ctx, session_id: &str) {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let whose = cx
        .app
        .panes
        .iter()
        .find(|p| p.session_id == session_id)
        .and_then(|p| p.opened_by.as_ref())
        .map(|a| format!(" (opened by {})", clean(&cx.app.who(a))))
        .unwrap_or_default();
    let lines = vec![
        Line::raw(format!(
            "{}{whose} still runs its program: closing kills it.",
            clean(session_id)
        )),
        Line::styled("Close it? y / n", bold),
    ];
    let area = centered(frame.area(), 72, 4);
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(boxed(" Close ".into(), cx)),
        area,
    );
}

/// The selected workflow's violations, one a line: where, how bad, which rule, what.
pub fn problems(frame: &mut Frame, cx: &Ctx, view: &ProblemsView) {
    let t = cx.theme;
    let file = clean(&view.file);
    let mut lines = Vec::new();
    for (i, v) in view.violations.iter().enumerate().skip(view.top) {
        let place = match (v.line, v.column) {
            (Some(line), Some(col)) => format!("{file}:{line}:{col}"),
            (Some(line), None) => format!("{file}:{line}"),
            _ => file.clone(),
        };
        let colour = match v.severity {
            crate::workflow::violation::Severity::Error => t.error,
            crate::workflow::violation::Severity::Warning => t.warning,
        };
        // The problem on top is the one Enter opens.
        let (marker, place_style) = if i == view.top {
            ("▶ ", Style::default().fg(t.accent).patch(t.selection()))
        } else {
            ("  ", Style::default().fg(t.accent))
        };
        lines.push(Line::from(vec![
            Span::styled(marker, Style::default().fg(t.accent)),
            Span::styled(place, place_style),
            Span::raw(" "),
            Span::styled(
                v.severity.to_string(),
                Style::default().fg(colour).add_modifier(Modifier::BOLD),
            ),
            Span::raw(" "),
            Span::styled(clean(&v.rule), Style::default().fg(t.muted)),
        ]));
        let message = text::violation_message(&v.message, v.expected.as_deref());
        lines.push(Line::styled(
            format!("    {message}"),
            Style::default().fg(t.foreground),
        ));
        if !v.path.is_empty() {
            lines.push(Line::styled(
                format!("    at {}", clean(&v.path)),
                Style::default().fg(t.muted),
            ));
        }
    }
    let area = centered(frame.area(), 90, frame.area().height.saturating_sub(2));
    frame.render_widget(Clear, area);
    let n = view.violations.len();
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(boxed(
                format!(
                    " Problems · {} · {n} · j/k choose · Enter edits there · Esc ",
                    clean(&view.workflow)
                ),
                cx,
            )),
        area,
    );
}

/// The overlay open, if any.
pub fn draw(frame: &mut Frame, cx: &Ctx) {
    if let Some(overlay) = &cx.app.overlay {
        match overlay {
            Overlay::Help { of, top } => help(frame, cx, *of, *top),
            Overlay::ConfirmClose(session_id) => confirm_close(frame, cx, session_id),
            Overlay::Problems(view) => problems(frame, cx, view),
            Overlay::Palette(palette_open) => palette(frame, cx, palette_open),
            Overlay::Naming(name) => naming(frame, cx, name),
            Overlay::Audit { entries, top } => audit(frame, cx, entries, *top),
            Overlay::Form(form) => super::form::draw(frame, cx, form),
            Overlay::Prompt { run_id, answer } => prompt(frame, cx, run_id, answer),
            Overlay::ConfirmQuit => confirm_quit(frame, cx),
            Overlay::Runs(view) => super::runs::draw(frame, cx, view),
            Overlay::Approve => super::approval::draw(frame, cx),
            Overlay::Inbox { selected } => super::inbox::draw(frame, cx, *selected),
            // The search is typed on the status line.
            Overlay::Search(_) => {}
        }
    }
}

/// The command palette: what is typed, then the matching commands with their keys, the
/// chosen one highlighted.
pub fn palette(frame: &mut Frame, cx: &Ctx, palette: &Palette) {
    let t = cx.theme;
    let matches = cx.app.palette_matches();
    let height = (matches.len() as u16 + 4).min(frame.area().height.saturating_sub(2));
    let area = centered(frame.area(), 72, height);
    let shown = usize::from(area.height.saturating_sub(4));
    // The chosen line stays in view.
    let top = palette.selected.saturating_sub(shown.saturating_sub(1));
    let mut lines = vec![
        Line::from(vec![
            Span::styled("> ", Style::default().fg(t.accent)),
            Span::styled(
                format!("{}▏", clean(&palette.query)),
                Style::default()
                    .fg(t.foreground)
                    .add_modifier(Modifier::BOLD),
            ),
        ]),
        Line::raw(""),
    ];
    if matches.is_empty() {
        lines.push(Line::styled(
            "no command matches",
            Style::default().fg(t.muted),
        ));
    }
    let width = usize::from(area.width.saturating_sub(4));
    for (i, entry) in matches.iter().enumerate().skip(top).take(shown) {
        let keys_width = entry.keys.chars().count();
        let text: String = entry
            .text
            .chars()
            .take(width.saturating_sub(keys_width + 2))
            .collect();
        let pad = width.saturating_sub(text.chars().count() + keys_width);
        let style = if i == palette.selected {
            t.selection()
        } else {
            Style::default().fg(t.foreground)
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{text}{}", " ".repeat(pad)), style),
            Span::styled(entry.keys.clone(), style.fg(t.warning)),
        ]));
    }
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(boxed(
            format!(
                " Commands {} · ↑/↓ choose · Enter runs · Esc closes ",
                matches.len()
            ),
            cx,
        )),
        area,
    );
}

/// The name box: a new workflow (with its template), a duplicate, a rename, a delete.
pub fn naming(frame: &mut Frame, cx: &Ctx, naming: &Naming) {
    use crate::tui::overlay::NameFor;
    let t = cx.theme;
    let (title, what) = match &naming.purpose {
        NameFor::New(at) => {
            let templates = crate::engine::editing::TEMPLATES;
            let template = templates.get(*at);
            // The template on a row of its own: its title with the arrows fits 80 columns.
            (
                " New workflow ".to_string(),
                format!(
                    "from a template ({} of {}, ←/→ choose):\n◂ {} ▸",
                    at + 1,
                    templates.len(),
                    template.map_or("", |t| t.title)
                ),
            )
        }
        NameFor::Duplicate(from) => (
            " Duplicate ".to_string(),
            format!("a copy of {}", clean(from)),
        ),
        NameFor::Rename(from) => (
            " Rename ".to_string(),
            format!("{} (its file is renamed too)", clean(from)),
        ),
        NameFor::Delete(from) => (
            " Delete ".to_string(),
            format!("type {} to delete its file", clean(from)),
        ),
        NameFor::Draft(session_id) => (
            " Draft a workflow ".to_string(),
            format!("from what was typed in {}", clean(session_id)),
        ),
    };
    let width = 72.min(frame.area().width);
    let mut lines: Vec<Line> = what
        .lines()
        .flat_map(|line| text::wrap(line, usize::from(width.saturating_sub(2))))
        .map(|row| Line::styled(row, Style::default().fg(t.foreground)))
        .collect();
    lines.extend([
        Line::raw(""),
        Line::from(vec![
            Span::styled("name: ", Style::default().fg(t.muted)),
            Span::styled(
                format!("{}▏", clean(&naming.name)),
                Style::default().fg(t.accent).add_modifier(Modifier::BOLD),
            ),
        ]),
        Line::raw(""),
        Line::styled(
            "lowercase letters, digits and _ · Enter · Esc cancels",
            Style::default().fg(t.muted),
        ),
    ]);
    let height = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
    let area = centered(frame.area(), width, height);
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(boxed(title, cx)), area);
}

/// The audit log: each tool call with its time, who made it, the tool, its outcome and time.
pub fn audit(frame: &mut Frame, cx: &Ctx, entries: &[AuditEntry], top: usize) {
    let t = cx.theme;
    let area = centered(frame.area(), 100, frame.area().height.saturating_sub(2));
    let shown = usize::from(area.height.saturating_sub(2));
    let top = top.min(entries.len().saturating_sub(shown));
    let lines: Vec<Line> = entries
        .iter()
        .skip(top)
        .take(shown)
        .map(|e| {
            let who = e
                .actor
                .as_ref()
                .map_or_else(|| "?".to_string(), crate::engine::Actor::label);
            let when = e.at.get(11..19).unwrap_or(&e.at);
            let colour = if e.outcome.is_failure() {
                t.error
            } else {
                t.valid
            };
            Line::from(vec![
                Span::styled(format!("{when} "), Style::default().fg(t.muted)),
                Span::styled(
                    format!("{:<24} ", clean(&who)),
                    Style::default().fg(t.accent),
                ),
                Span::styled(
                    format!("{:<26} ", clean(&e.tool)),
                    Style::default().fg(t.foreground),
                ),
                Span::styled(
                    format!("{:<18} ", clean(e.outcome.as_str())),
                    Style::default().fg(colour),
                ),
                Span::styled(
                    e.duration_ms
                        .map(crate::tui::text::duration)
                        .unwrap_or_default(),
                    Style::default().fg(t.muted),
                ),
            ])
        })
        .collect();
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(boxed(
            format!(
                " Audit · {} tool calls, newest last · j/k scroll · Esc closes ",
                entries.len()
            ),
            cx,
        )),
        area,
    );
}
