//! What `run_command` shows after the prompt in place of the framed line that really runs:
//! the command as a person would have typed it, made harmless to the terminal and bounded
//! so that a pasted script does not push its own output off the screen.

/// Lines of a command's text shown at most, and characters of one line.
const MAX_SHOWN_LINES: usize = 20;
const MAX_SHOWN_CHARS: usize = 500;

/// How `run_command` shows its command after the prompt, in place of the framed line that
/// really runs it: as a person would have typed it. Each line of the command on a line of
/// its own, those after the first behind bash's default continuation prompt `> `. Nothing in
/// it can act on the terminal: C0 controls and DEL are written in caret notation (`^[`), C1
/// controls as `?`, and a Tab as spaces to the next multiple of 8 columns. A line longer
/// than `MAX_SHOWN_CHARS` characters is cut, saying how many were left out, and beyond
/// `MAX_SHOWN_LINES` lines one line says how many more there were (a pasted script should
/// not push its own output off the screen). The command runs whole either way.
pub fn shown_command(command: &str) -> Vec<String> {
    let lines: Vec<&str> = command.lines().collect();
    let mut shown: Vec<String> = lines
        .iter()
        .take(MAX_SHOWN_LINES)
        .enumerate()
        .map(|(i, line)| shown_line(i, line))
        .collect();
    if lines.len() > MAX_SHOWN_LINES {
        shown.push(format!(
            "> [... {} more lines]",
            lines.len() - MAX_SHOWN_LINES
        ));
    }
    if shown.is_empty() {
        shown.push(String::new());
    }
    shown
}

/// The `i`th line of a command as shown: see [`shown_command`].
fn shown_line(i: usize, line: &str) -> String {
    let mut out = String::from(if i == 0 { "" } else { "> " });
    let mut col = 0usize;
    let mut left_out = 0usize;
    for c in line.chars() {
        if col >= MAX_SHOWN_CHARS {
            left_out += 1;
            continue;
        }
        match c {
            '\t' => {
                let next = (col / 8 + 1) * 8;
                out.extend(std::iter::repeat_n(' ', next - col));
                col = next;
            }
            '\u{0}'..='\u{1f}' => {
                out.push('^');
                out.push(char::from(c as u8 ^ 0x40));
                col += 2;
            }
            '\u{7f}' => {
                out.push_str("^?");
                col += 2;
            }
            c if c.is_control() => {
                out.push('?');
                col += 1;
            }
            c => {
                out.push(c);
                col += 1;
            }
        }
    }
    if left_out > 0 {
        out.push_str(&format!(" [... {left_out} more characters]"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_shown_as_typed_and_harmless() {
        assert_eq!(shown_command("echo hi"), ["echo hi"]);
        assert_eq!(shown_command(""), [""]);
        assert_eq!(shown_command("a\nb\r\n"), ["a", "> b"]);
        assert_eq!(
            shown_command("x\u{1b}[2J\u{7f}\u{9b}y\tz"),
            ["x^[[2J^??y      z"]
        );
        let long = shown_command(&"y".repeat(MAX_SHOWN_CHARS + 7));
        assert_eq!(
            long,
            [format!(
                "{} [... 7 more characters]",
                "y".repeat(MAX_SHOWN_CHARS)
            )]
        );
        let script = "true\n".repeat(MAX_SHOWN_LINES + 3);
        let shown = shown_command(&script);
        assert_eq!(shown.len(), MAX_SHOWN_LINES + 1);
        assert_eq!(
            shown.last().map(String::as_str),
            Some("> [... 3 more lines]")
        );
    }
}
