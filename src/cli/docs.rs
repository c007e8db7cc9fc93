//! `flowdeck docs [TOPIC]`: the user documentation, built into the binary, so that a person
//! who installed only the binary can read what the studio and the messages point to (the
//! manifest reference, the MCP tools, the studio's keys) with no checkout at hand.

use crate::workflow::names::sanitize;
use crate::workflow::suggest::closest;
use anyhow::Result;
use std::io::{IsTerminal, Write};
use std::process::{Command, ExitCode, Stdio};

/// A page of the documentation: the name a person types, what it holds, its text.
struct Topic {
    name: &'static str,
    about: &'static str,
    text: &'static str,
}

const TOPICS: &[Topic] = &[
    Topic {
        name: "readme",
        about: "what flowdeck is, install, first steps, MCP client setup",
        text: include_str!("../../README.md"),
    },
    Topic {
        name: "workflows",
        about: "the manifest reference: every field, with examples",
        text: include_str!("../../docs/WORKFLOWS.md"),
    },
    Topic {
        name: "studio",
        about: "the studio: views, keys, panes, themes, attach and detach",
        text: include_str!("../../docs/TUI.md"),
    },
    Topic {
        name: "mcp",
        about: "every MCP tool, resource and prompt agents get",
        text: include_str!("../../docs/MCP.md"),
    },
    Topic {
        name: "glossary",
        about: "the words flowdeck uses, each in a line or two",
        text: include_str!("../../docs/GLOSSARY.md"),
    },
    Topic {
        name: "architecture",
        about: "where everything lives in the code, and why",
        text: include_str!("../../docs/ARCHITECTURE.md"),
    },
];

/// Other names people type for a topic: the file names the docs go by in a checkout.
const ALIASES: &[(&str, &str)] = &[
    ("tui", "studio"),
    ("workflow", "workflows"),
    ("manifest", "workflows"),
    ("manifests", "workflows"),
    ("agents", "mcp"),
    ("readme.md", "readme"),
    ("workflows.md", "workflows"),
    ("tui.md", "studio"),
    ("mcp.md", "mcp"),
    ("glossary.md", "glossary"),
    ("architecture.md", "architecture"),
];

/// Prints `topic` (through the person's pager at a terminal), or the list of topics.
pub(super) fn docs(topic: Option<&str>, out: &mut impl Write) -> Result<ExitCode> {
    let Some(asked) = topic else {
        writeln!(out, "flowdeck docs TOPIC prints one of:")?;
        for t in TOPICS {
            writeln!(out, "  {:<13} {}", t.name, t.about)?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    let wanted = asked.to_lowercase();
    let name = ALIASES
        .iter()
        .find(|(alias, _)| *alias == wanted)
        .map_or(wanted.as_str(), |(_, name)| name);
    let Some(found) = TOPICS.iter().find(|t| t.name == name) else {
        let hint = closest(&wanted, TOPICS.iter().map(|t| t.name))
            .map(|n| format!(" (did you mean {n}?)"))
            .unwrap_or_default();
        let names: Vec<&str> = TOPICS.iter().map(|t| t.name).collect();
        eprintln!(
            "flowdeck: no docs topic {}{hint}; the topics are {}",
            sanitize(asked),
            names.join(", ")
        );
        return Ok(ExitCode::from(2));
    };
    if std::io::stdout().is_terminal() && paged(found.text) {
        return Ok(ExitCode::SUCCESS);
    }
    out.write_all(found.text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// Shows `text` through `$PAGER` (`less` when unset), as git does: `false` when no pager
/// could be started, and the text is then printed as it is.
fn paged(text: &str) -> bool {
    let pager = std::env::var("PAGER")
        .ok()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| "less".into());
    // `sh -c`: a PAGER holds arguments (`less -S`) as people set it.
    let mut command = Command::new("sh");
    command.arg("-c").arg(&pager).stdin(Stdio::piped());
    if std::env::var_os("LESS").is_none() {
        // Quit at once when it fits on one screen, keep the text on screen after.
        command.env("LESS", "FRX");
    }
    let Ok(mut child) = command.spawn() else {
        return false;
    };
    if let Some(mut stdin) = child.stdin.take() {
        // A pager quit early (`q` on the first page) closes its end: that is no error.
        let _ = stdin.write_all(text.as_bytes());
    }
    child.wait().is_ok_and(|status| status.code() != Some(127))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn printed(topic: Option<&str>) -> (String, ExitCode) {
        let mut out = Vec::new();
        let code = docs(topic, &mut out).expect("docs prints");
        (String::from_utf8(out).expect("utf-8"), code)
    }

    #[test]
    fn each_topic_prints_its_document_and_no_topic_lists_them() {
        let (list, code) = printed(None);
        assert_eq!(code, ExitCode::SUCCESS);
        for t in TOPICS {
            assert!(list.contains(t.name), "{list}");
            let (text, _) = printed(Some(t.name));
            assert_eq!(text, t.text);
        }
        assert!(printed(Some("workflows")).0.starts_with("# "));
        assert_eq!(printed(Some("TUI.md")).0, printed(Some("studio")).0);
    }

    #[test]
    fn an_unknown_topic_is_refused_with_status_2() {
        let (text, code) = printed(Some("workflws"));
        assert_eq!(code, ExitCode::from(2));
        assert!(text.is_empty());
    }
}
