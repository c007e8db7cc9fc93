//! The inputs form: one block of rows a field (its line, its error, its description), the
//! footer below them. A form taller than the screen scrolls: the focused field's block is
//! kept in view, as near the middle as the ends allow, and the footer never scrolls away.

use super::Ctx;
use super::boxes::{boxed, centered};
use crate::tui::form::{Field, InputsForm};
use crate::tui::text::{cells, clean, shorten, wrap};
use ratatui::Frame;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

const FOOTER: &str = "Enter runs · Tab/↑/↓ move · ←/→/Space choose · Esc cancels · * required";

/// The form's box is this wide at most.
const WIDTH: u16 = 76;

pub fn draw(frame: &mut Frame, cx: &Ctx, form: &InputsForm) {
    let width = WIDTH.min(frame.area().width);
    let inner = usize::from(width.saturating_sub(2));
    // Each field's rows, and where its block starts.
    let mut body: Vec<Line> = Vec::new();
    let mut blocks = Vec::new();
    for (i, field) in form.fields.iter().enumerate() {
        let start = body.len();
        body.extend(field_rows(field, i == form.selected, inner, cx));
        blocks.push(start..body.len());
    }
    let mut footer = vec![Line::raw("")];
    footer.extend(
        wrap(FOOTER, inner)
            .into_iter()
            .map(|row| Line::styled(row, Style::default().fg(cx.theme.muted))),
    );
    // The status line stays visible under the box.
    let most = frame.area().height.saturating_sub(2);
    let wanted = u16::try_from(body.len() + footer.len() + 2).unwrap_or(u16::MAX);
    let area = centered(frame.area(), width, wanted.min(most));
    let rows = usize::from(area.height.saturating_sub(2)).saturating_sub(footer.len());
    let selected = blocks.get(form.selected).cloned().unwrap_or(0..0);
    let mut top = top_row(selected.clone(), body.len(), rows);
    // Whole fields at the top where the focused one stays in view: half a description
    // reads as if it were the next field's.
    if let Some(start) = blocks
        .iter()
        .map(|b| b.start)
        .find(|&s| s >= top && s <= selected.start && selected.end <= s + rows)
    {
        top = start;
    }
    let mut title = format!(" Run {} ", clean(&form.workflow));
    if body.len() > rows {
        title.push_str(&format!(
            "· field {} of {} ",
            form.selected + 1,
            form.fields.len()
        ));
    }
    let mut lines: Vec<Line> = body.into_iter().skip(top).take(rows).collect();
    let hidden_below = blocks
        .iter()
        .filter(|b| b.start >= top + lines.len())
        .count();
    let hidden_above = blocks.iter().filter(|b| b.end <= top).count();
    lines.resize(rows, Line::raw(""));
    lines.extend(footer);
    let mut block = boxed(title, cx);
    if hidden_above > 0 {
        block = block.title(
            Line::styled(
                format!(" ↑ {hidden_above} more "),
                Style::default().fg(cx.theme.muted),
            )
            .right_aligned(),
        );
    }
    if hidden_below > 0 {
        block = block.title_bottom(
            Line::styled(
                format!(" ↓ {hidden_below} more "),
                Style::default().fg(cx.theme.muted),
            )
            .right_aligned(),
        );
    }
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// The first body row shown: the whole form when it fits; else the focused field's block
/// as near the middle of the `rows` shown as the form's ends allow, its first row in view
/// whatever its height.
pub fn top_row(selected: std::ops::Range<usize>, total: usize, rows: usize) -> usize {
    if total <= rows {
        return 0;
    }
    let middle = (selected.start + selected.end) / 2;
    let centred = middle.saturating_sub(rows / 2).min(total - rows);
    // A block taller than the view shows from its start.
    if selected.end.saturating_sub(selected.start) > rows || centred > selected.start {
        return selected.start.min(total - rows);
    }
    centred.max(selected.end.saturating_sub(rows))
}

/// A field's rows: its name, kind and value; its error; its description, wrapped.
fn field_rows(field: &Field, selected: bool, inner: usize, cx: &Ctx) -> Vec<Line<'static>> {
    let t = cx.theme;
    let marker = if selected { "▶ " } else { "  " };
    let required = if field.spec.required { "*" } else { "" };
    let label = format!("{}{required} ", clean(&field.spec.name));
    let kind = format!("({}) ", field.spec.kind);
    let room = inner.saturating_sub(cells(marker) + cells(&label) + cells(&kind));
    let mut value_style = Style::default().fg(t.foreground);
    if selected {
        value_style = value_style.patch(t.selection());
    }
    let mut rows = vec![Line::from(vec![
        Span::styled(marker, Style::default().fg(t.accent)),
        Span::styled(label, Style::default().fg(t.accent)),
        Span::styled(kind, Style::default().fg(t.muted)),
        Span::styled(value(field, selected, room), value_style),
    ])];
    if let Some(e) = &field.error {
        for row in wrap(&format!("✗ {}", clean(e)), inner.saturating_sub(4)) {
            rows.push(Line::styled(
                format!("    {row}"),
                Style::default().fg(t.error),
            ));
        }
    }
    if !field.spec.description.is_empty() {
        for row in wrap(&clean(&field.spec.description), inner.saturating_sub(4)) {
            rows.push(Line::styled(
                format!("    {row}"),
                Style::default().fg(t.muted),
            ));
        }
    }
    rows
}

/// The value as shown in `room` cells: a choice between its arrows; typed text with the
/// cursor after it when the field has the focus (its end kept in view, where typing goes);
/// a secret as dots.
fn value(field: &Field, selected: bool, room: usize) -> String {
    let shown = if field.spec.secret {
        "•".repeat(field.value.chars().count())
    } else {
        clean(&field.value)
    };
    if field.options().is_some() {
        return format!("◂ {} ▸", shorten(&shown, room.saturating_sub(4)));
    }
    if !selected {
        return shorten(&shown, room);
    }
    let room = room.saturating_sub(1);
    if cells(&shown) <= room {
        return format!("{shown}▏");
    }
    // The end of a long value: `…` and as much of its tail as fits.
    let mut tail: Vec<char> = Vec::new();
    let mut used = 1;
    for c in shown.chars().rev() {
        let w = cells(&c.to_string());
        if used + w > room {
            break;
        }
        used += w;
        tail.push(c);
    }
    tail.reverse();
    format!("…{}▏", tail.into_iter().collect::<String>())
}

#[cfg(test)]
mod tests {
    use super::top_row;

    #[test]
    fn a_form_that_fits_never_scrolls() {
        assert_eq!(top_row(8..10, 12, 12), 0);
    }

    #[test]
    fn the_focused_block_stays_in_view_near_the_middle() {
        // 30 rows in 10: the first field at the top, a middle one centred, the last at the end.
        assert_eq!(top_row(0..2, 30, 10), 0);
        assert_eq!(top_row(14..16, 30, 10), 10);
        assert_eq!(top_row(28..30, 30, 10), 20);
        for start in 0..28 {
            let top = top_row(start..start + 3, 31, 7);
            assert!(top <= start && start + 3 <= top + 7, "{start}: {top}");
        }
        // Taller than the view: from its first row.
        assert_eq!(top_row(5..20, 30, 10), 5);
    }
}
