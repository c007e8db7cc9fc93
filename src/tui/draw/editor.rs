//! The editor drawn: line numbers, a mark beside each line with a problem (✗ error, !
//! warning), the text coloured by `syntax`, the cursor; the conflict banner above, the
//! problem on the cursor's line below, and the problems or the buffer's plan beside it. Only
//! the lines on screen are looked at.

use super::{Ctx, block};
use crate::tui::editor::{Ask, Editor, Panel, cell_width, gutter_width, mark, shown_char};
use crate::tui::layout::{self, EditorAreas};
use crate::tui::mode::Mode;
use crate::tui::syntax::{Kind, runs};
use crate::tui::text::clean;
use crate::tui::theme::Theme;
use crate::workflow::violation::Severity;
use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

pub fn draw(frame: &mut Frame, cx: &Ctx) {
    let Some(editor) = &cx.app.editor else {
        return;
    };
    let t = cx.theme;
    let areas = layout::editor_areas(cx.app);
    let mut title = format!(" Edit · {} ", clean(&editor.file));
    if editor.dirty() {
        title.push_str("· ● modified ");
    }
    if editor.recovered {
        title.push_str("· recovered ");
    }
    match &editor.check {
        Some(c) if editor.checked_edits != editor.edits => title.push_str("· checking… "),
        Some(c) if c.errors + c.warnings == 0 => title.push_str("· ✓ valid "),
        Some(c) => title.push_str(&format!("· {} ", problem_count(c.errors, c.warnings))),
        None => title.push_str("· checking… "),
    }
    frame.render_widget(block(title, true, t), areas.frame);
    if let (Some(banner), Some(conflict)) = (areas.banner, &editor.conflict) {
        let text = if conflict.version.is_some() {
            format!(
                " ⚠ {} changed on disk · your text is kept · Ctrl-s: reload theirs, overwrite, or diff ",
                clean(&editor.file)
            )
        } else {
            format!(
                " ⚠ {} was deleted on disk · Ctrl-s saves your text again ",
                clean(&editor.file)
            )
        };
        frame.render_widget(
            Paragraph::new(text).style(
                Style::default()
                    .fg(t.warning)
                    .add_modifier(Modifier::BOLD | Modifier::REVERSED),
            ),
            banner,
        );
    }
    text(frame, areas.text, editor, cx);
    note(frame, areas.note, editor, t);
    if let Some(panel) = areas.panel {
        side(frame, panel, editor, t);
    }
    if cx.app.mode() == Mode::EditAsk {
        ask(frame, &areas, editor, cx);
    }
    if cx.app.mode() == Mode::Complete {
        completion(frame, areas.text, editor, t);
    }
}

/// `✗ 2 errors`, `! 1 warning`, `✗ 1 error ! 3 warnings`: what the marks count, in words.
fn problem_count(errors: usize, warnings: usize) -> String {
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    match (errors, warnings) {
        (0, w) => format!("! {}", plural(w, "warning")),
        (e, 0) => format!("✗ {}", plural(e, "error")),
        (e, w) => format!("✗ {} ! {}", plural(e, "error"), plural(w, "warning")),
    }
}

/// The completion list under the cursor's line (above it near the bottom).
fn completion(frame: &mut Frame, text: Rect, editor: &Editor, t: &Theme) {
    let Some((found, at)) = &editor.completion else {
        return;
    };
    let (row, _) = editor.text.cursor();
    let gutter = gutter_width(editor.text.lines().len()) as u16;
    let shown = found.items.len().min(8) as u16;
    let width = found
        .items
        .iter()
        .map(|i| i.text.chars().count() + 2 + i.detail.chars().count().min(50))
        .max()
        .unwrap_or(10)
        .min(usize::from(text.width.saturating_sub(gutter))) as u16
        + 2;
    let cursor_y = text.y + (row.saturating_sub(editor.top)) as u16;
    let y = if cursor_y + 1 + shown + 2 <= text.bottom() {
        cursor_y + 1
    } else {
        cursor_y.saturating_sub(shown + 2)
    };
    let area = Rect::new(text.x + gutter, y, width, shown + 2).intersection(frame.area());
    let first = at.saturating_sub(usize::from(shown).saturating_sub(1));
    let lines: Vec<Line> = found
        .items
        .iter()
        .enumerate()
        .skip(first)
        .take(usize::from(shown))
        .map(|(i, item)| {
            let style = if i == *at {
                t.selection()
            } else {
                Style::default().fg(t.foreground)
            };
            Line::from(vec![
                Span::styled(clean(&item.text), style.fg(t.accent)),
                Span::styled(format!("  {}", clean(&item.detail)), style.fg(t.muted)),
            ])
        })
        .collect();
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(block(
            format!(" {} · Enter/Tab writes · Esc ", found.items.len()),
            true,
            t,
        )),
        area,
    );
}

fn colour(kind: Kind, t: &Theme) -> Style {
    let s = Style::default();
    match kind {
        Kind::Plain => s.fg(t.foreground),
        Kind::Key => s.fg(t.accent),
        Kind::Str => s.fg(t.valid),
        Kind::Number | Kind::Word => s.fg(t.warning),
        Kind::Comment => s.fg(t.muted).add_modifier(Modifier::ITALIC),
        Kind::Punct => s.fg(t.muted),
    }
}

/// The lines in view with their gutter, and the cursor.
fn text(frame: &mut Frame, area: Rect, editor: &Editor, cx: &Ctx) {
    let t = cx.theme;
    let lines = editor.text.lines();
    let gutter = gutter_width(lines.len());
    let number_width = gutter - 3;
    let (cursor_row, cursor_col) = editor.text.cursor();
    let width = usize::from(area.width).saturating_sub(gutter);
    let mut rows = Vec::with_capacity(usize::from(area.height));
    for (at, line) in lines
        .iter()
        .enumerate()
        .skip(editor.top)
        .take(usize::from(area.height))
    {
        let worst = editor
            .violations_on(at + 1)
            .map(|v| v.severity)
            .min_by_key(|s| match s {
                Severity::Error => 0,
                Severity::Warning => 1,
            });
        let (sign, sign_style) = match worst {
            Some(s @ Severity::Error) => (mark(s), Style::default().fg(t.error)),
            Some(s @ Severity::Warning) => (mark(s), Style::default().fg(t.warning)),
            None => (" ", Style::default()),
        };
        let number_style = if at == cursor_row {
            Style::default()
                .fg(t.foreground)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().fg(t.muted)
        };
        let mut spans = vec![
            Span::styled(format!("{:>number_width$} ", at + 1), number_style),
            Span::styled(format!("{sign} "), sign_style),
        ];
        spans.extend(visible_spans(line, editor.left, width, t));
        rows.push(Line::from(spans));
    }
    frame.render_widget(Paragraph::new(rows), area);
    if matches!(cx.app.mode(), Mode::Edit) && cursor_row >= editor.top {
        let line = lines.get(cursor_row).map_or("", String::as_str);
        let cells: usize = line
            .chars()
            .take(cursor_col)
            .skip(editor.left)
            .map(cell_width)
            .sum();
        let y = area.y as usize + cursor_row - editor.top;
        let x = area.x as usize + gutter + cells;
        if y < usize::from(area.bottom()) && x < usize::from(area.right()) {
            frame.set_cursor_position(Position::new(x as u16, y as u16));
        }
    }
}

/// The part of `line` from character `left` on, at most `width` cells, coloured; controls
/// (a tab, an escape typed into the file) are shown as safe characters (`shown_char`).
fn visible_spans(line: &str, left: usize, width: usize, t: &Theme) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut used = 0;
    let mut index = 0;
    for (start, end, kind) in runs(line) {
        let mut text = String::new();
        for c in line[start..end].chars() {
            let at = index;
            index += 1;
            if at < left {
                continue;
            }
            let w = cell_width(c);
            let c = shown_char(c);
            if used + w > width {
                break;
            }
            used += w;
            text.push(c);
        }
        if !text.is_empty() {
            out.push(Span::styled(text, colour(kind, t)));
        }
        if used >= width {
            break;
        }
    }
    out
}

/// Under the text: what is wrong on the cursor's line, or the keys.
fn note(frame: &mut Frame, area: Rect, editor: &Editor, t: &Theme) {
    let line = editor.text.cursor().0 + 1;
    let text = match editor.violations_on(line).next() {
        Some(v) => Line::styled(
            format!(
                "line {line}: {}: {}",
                clean(&v.rule),
                crate::tui::text::violation_message(&v.message, v.expected.as_deref()),
            ),
            Style::default().fg(match v.severity {
                Severity::Error => t.error,
                Severity::Warning => t.warning,
            }),
        ),
        None => Line::styled(
            format!(
                "line {line}, column {} · Ctrl-n next problem · Ctrl-t panel · Ctrl-f find · Ctrl-z/Ctrl-y undo/redo",
                editor.text.cursor().1 + 1
            ),
            Style::default().fg(t.muted),
        ),
    };
    frame.render_widget(Paragraph::new(text), area);
}

/// Beside the text: every problem with its line, or the step plan of the text as it stands.
fn side(frame: &mut Frame, area: Rect, editor: &Editor, t: &Theme) {
    let (title, lines) = match editor.panel {
        Panel::Problems => {
            let lines: Vec<Line> = match &editor.check {
                None => vec![Line::styled("checking…", Style::default().fg(t.muted))],
                Some(c) if c.violations.is_empty() => {
                    vec![Line::styled("no problems", Style::default().fg(t.valid))]
                }
                Some(c) => c
                    .violations
                    .iter()
                    .map(|v| {
                        let colour = match v.severity {
                            Severity::Error => t.error,
                            Severity::Warning => t.warning,
                        };
                        Line::from(vec![
                            Span::styled(
                                format!(
                                    "{} {:>4} ",
                                    mark(v.severity),
                                    v.line.map(|l| l.to_string()).unwrap_or_default()
                                ),
                                Style::default().fg(colour),
                            ),
                            Span::styled(clean(&v.message), Style::default().fg(t.foreground)),
                        ])
                    })
                    .collect(),
            };
            (" Problems · Ctrl-n jumps ", lines)
        }
        Panel::Plan => {
            let lines: Vec<Line> = match editor.check.as_ref().and_then(|c| c.plan.as_ref()) {
                None => vec![Line::styled(
                    "no plan while the text has errors",
                    Style::default().fg(t.muted),
                )],
                Some(plan) => plan
                    .steps
                    .iter()
                    .flat_map(|step| {
                        let mut lines = vec![Line::from(vec![
                            Span::styled(
                                format!("{:>2} ", step.number),
                                Style::default().fg(t.muted),
                            ),
                            Span::styled(
                                format!("{} ", clean(&step.state)),
                                Style::default().fg(t.accent),
                            ),
                            Span::styled(clean(&step.action), Style::default().fg(t.foreground)),
                        ])];
                        for tr in &step.transitions {
                            lines.push(Line::styled(
                                format!(
                                    "     {} → {}",
                                    clean(&tr.condition),
                                    clean(&tr.next_state)
                                ),
                                Style::default().fg(t.muted),
                            ));
                        }
                        lines
                    })
                    .collect(),
            };
            (" Plan of this text ", lines)
        }
        Panel::None => return,
    };
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block(format!("{title}· Ctrl-t "), false, t)),
        area,
    );
}

/// The editor's question, over the text; for a conflict, the diff when asked for.
fn ask(frame: &mut Frame, areas: &EditorAreas, editor: &Editor, cx: &Ctx) {
    let t = cx.theme;
    let Some(ask) = editor.ask else {
        return;
    };
    if let (Ask::Conflict, Some(top)) = (ask, editor.diff) {
        diff(frame, areas.frame, editor, top, t);
        return;
    }
    let (title, text) = match ask {
        Ask::Conflict => (
            conflict_title(editor),
            format!(
                "{} {}; your text is not saved.\n\n\
                 r  reload: the file as it is on disk, your changes dropped\n\
                 o  overwrite the file with your text\n\
                 d  show the diff first\n\
                 Esc  keep editing",
                clean(&editor.file),
                conflict_why(editor)
            ),
        ),
        Ask::SaveInvalid => (
            " Save with errors? ",
            format!(
                "The text has {} error{}. Saved, it is listed as broken and its last good \
                 version keeps running until the errors are fixed.\n\n\
                 y  save anyway\n\
                 Esc  keep editing",
                editor.check.as_ref().map_or(0, |c| c.errors),
                if editor.check.as_ref().is_some_and(|c| c.errors == 1) {
                    ""
                } else {
                    "s"
                }
            ),
        ),
        Ask::Leave | Ask::Quit => (
            " Unsaved changes ",
            format!(
                "{} has changes that are not saved.\n\n\
                 s  save, then {}\n\
                 d  drop the changes and {}\n\
                 Esc  keep editing",
                clean(&editor.file),
                if ask == Ask::Quit { "quit" } else { "close" },
                if ask == Ask::Quit { "quit" } else { "close" },
            ),
        ),
    };
    let area = super::boxes::centered(frame.area(), 70, 11);
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(text)
            .wrap(Wrap { trim: false })
            .style(Style::default().fg(t.foreground))
            .block(super::boxes::boxed(title.to_string(), cx)),
        area,
    );
}

/// The conflict question's title: plain, or saying the file changed again while it was open
/// (and, for a moment after, that `r` and `o` wait: tui/settling.rs).
fn conflict_title(editor: &Editor) -> &'static str {
    match (&editor.conflict, editor.settling) {
        (_, Some(_)) => " ⚠ Changed on disk again · r and o wait a moment ",
        (Some(c), None) if c.again => " Changed on disk again ",
        _ => " Changed on disk ",
    }
}

/// What the conflict question says happened to the file.
fn conflict_why(editor: &Editor) -> &'static str {
    match (&editor.conflict, editor.recovered, editor.known_base()) {
        (Some(c), _, _) if c.again => {
            "changed on disk again while you were asked: this is the file now"
        }
        (_, true, Some(_)) => "changed on disk after your recovered text was typed",
        (_, true, None) => {
            "may have changed on disk after your recovered text was typed (the copy, from an earlier flowdeck, does not say)"
        }
        _ => "changed on disk after you opened it",
    }
}

/// The conflict's diff: the file on disk (theirs) against the buffer (mine), unified.
fn diff(frame: &mut Frame, area: Rect, editor: &Editor, top: usize, t: &Theme) {
    let theirs = editor
        .conflict
        .as_ref()
        .map(|c| c.text.clone())
        .unwrap_or_default();
    let rows = super::diff_rows(
        &theirs,
        &editor.contents(),
        usize::from(area.width.saturating_sub(2)),
        t,
    );
    let shown = rows.last().map_or(0, |(at, _)| at + 1);
    let top = top.min(shown.saturating_sub(1));
    let lines: Vec<_> = rows
        .into_iter()
        .filter(|(at, _)| *at >= top)
        .map(|(_, row)| row)
        .collect();
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).block(block(
            format!(
                " Diff{} · - on disk · + yours · j/k scroll · r reload · o overwrite · Esc back · {}/{shown} ",
                match (&editor.conflict, editor.settling) {
                    (_, Some(_)) => " · ⚠ changed again: r/o wait",
                    (Some(c), None) if c.again => " · changed again",
                    _ => "",
                },
                top + 1
            ),
            true,
            t,
        )),
        area,
    );
}
