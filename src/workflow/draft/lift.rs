//! Literals a draft lifts into arguments, so that it runs elsewhere and for other values: an
//! absolute path under the recorded home or working directory (a run of someone else, or in
//! another folder, has its own), and a value the procedure typed in more than one command (a
//! directory, a branch, a version: what the next run most likely changes). Each becomes an
//! argument with the recorded value as its default, and every command refers to it as the
//! shell variable the run exports.
//!
//! What counts as a value: a path (`/…`); an option's value (`--env staging`,
//! `--tag=v1.2`); any other word with more than letters in it (`feature-x`, `v1.2.3`,
//! `app:latest`, `10.0.0.5`). Bare words (`compose`, `status`) are a program's subcommands
//! more often than values, and a word inside single quotes cannot take a variable: neither
//! is lifted.

use std::collections::BTreeMap;

/// Where the procedure ran, as far as it is known: what makes a path this person's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Place {
    pub home: Option<String>,
    pub cwd: Option<String>,
}

/// A literal lifted: its argument's name, the recorded value, why it was lifted.
#[derive(Debug, Clone, PartialEq)]
pub struct Lifted {
    pub name: String,
    pub value: String,
    pub path: bool,
    /// How many commands use it.
    pub uses: usize,
    pub why: String,
}

/// The shortest value lifted for being used more than once.
const SHORTEST: usize = 3;
/// At most this many arguments are lifted (the manifest's limit leaves room for the rest).
const MOST: usize = 12;

/// One word of a command line: where it is, its text, and how it is quoted.
#[derive(Debug, Clone)]
struct Word {
    start: usize,
    end: usize,
    /// Inside double quotes (the whole word is one quoted string).
    double: bool,
    /// Has single quotes, a backslash or a `$`: left as it is.
    fixed: bool,
}

/// The words of a line, shell-wise: runs of characters outside quotes split by blanks and
/// the shell's operators.
fn words(line: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut current: Option<Word> = None;
    let mut quote: Option<char> = None;
    for (at, c) in line.char_indices() {
        let boundary = quote.is_none()
            && (c.is_whitespace() || matches!(c, ';' | '|' | '&' | '(' | ')' | '<' | '>'));
        if boundary {
            if let Some(word) = current.take() {
                out.push(word);
            }
            continue;
        }
        let word = current.get_or_insert(Word {
            start: at,
            end: at,
            double: c == '"',
            fixed: false,
        });
        word.end = at + c.len_utf8();
        match (quote, c) {
            (None, '\'' | '\\' | '$' | '`') => word.fixed = true,
            (Some('"'), '$' | '\\' | '`') => word.fixed = true,
            (None, '"') => {
                quote = Some('"');
                if word.start != at {
                    word.fixed = true;
                }
            }
            (Some('"'), '"') => quote = None,
            _ => {}
        }
    }
    if let Some(word) = current {
        out.push(word);
    }
    out
}

/// The value a word holds, without its quotes, and where it starts in the line: the value
/// of `--opt=value` and `NAME=value` is what follows the `=`.
fn value_of<'a>(line: &'a str, word: &Word) -> Option<(usize, &'a str)> {
    if word.fixed {
        return None;
    }
    let mut start = word.start;
    let mut end = word.end;
    if word.double {
        if !line[start..end].ends_with('"') || end - start < 2 {
            return None;
        }
        start += 1;
        end -= 1;
    }
    let text = &line[start..end];
    if let Some(eq) = text.find('=')
        && (text.starts_with("--")
            || text[..eq]
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
    {
        return Some((start + eq + 1, &text[eq + 1..]));
    }
    Some((start, text))
}

/// An occurrence of a candidate in a line.
#[derive(Debug, Clone)]
struct Seen {
    line: usize,
    start: usize,
    end: usize,
    double: bool,
}

/// What a line's values are, for lifting: paths (every ancestor directory too), and option
/// values and words with more than letters.
fn candidates(lines: &[String]) -> Candidates {
    let mut found = Candidates::new();
    for (n, line) in lines.iter().enumerate() {
        let words = words(line);
        for (i, word) in words.iter().enumerate() {
            let Some((start, value)) = value_of(line, word) else {
                continue;
            };
            // The program itself, an option's name, nothing.
            if i == 0 || value.is_empty() || value.starts_with('-') {
                continue;
            }
            let option = words
                .get(i.wrapping_sub(1))
                .filter(|_| i > 0)
                .map(|w| &line[w.start..w.end])
                .filter(|w| w.starts_with("--") && !w.contains('='))
                .map(|w| w.trim_start_matches('-').to_string())
                .or_else(|| {
                    let text = &line[word.start..word.end];
                    text.starts_with("--").then(|| {
                        text.trim_start_matches('-')
                            .split('=')
                            .next()
                            .unwrap_or("")
                            .to_string()
                    })
                });
            let seen = |from: usize, len: usize| Seen {
                line: n,
                start: from,
                end: from + len,
                double: word.double,
            };
            if value.starts_with('/') {
                // The path and each directory above it, at a component's end.
                let trimmed = value.trim_end_matches('/');
                for (at, _) in trimmed
                    .match_indices('/')
                    .skip(1)
                    .chain([(trimmed.len(), "")])
                {
                    let prefix = &trimmed[..at];
                    let entry = found.entry(prefix.to_string()).or_default();
                    entry.0.push(seen(start, at));
                }
            } else if option.is_some() || value.chars().any(|c| !c.is_alphabetic()) {
                let entry = found.entry(value.to_string()).or_default();
                entry.0.push(seen(start, value.len()));
                if entry.1.is_none() {
                    entry.1 = option;
                }
            }
        }
    }
    found
}

/// Whether a path is this person's: under the recorded home or working directory (neither
/// itself: a run has its own home and starts where it starts).
fn personal(path: &str, place: &Place) -> Option<&'static str> {
    let under = |dir: &Option<String>| {
        dir.as_deref()
            .map(|d| d.trim_end_matches('/'))
            .is_some_and(|d| !d.is_empty() && path.starts_with(&format!("{d}/")))
    };
    if under(&place.cwd) {
        Some("a path under the working directory")
    } else if under(&place.home) {
        Some("a path under the home directory")
    } else {
        None
    }
}

/// Each candidate value with where it is used and the option it is the value of.
type Candidates = BTreeMap<String, (Vec<Seen>, Option<String>)>;

/// A value chosen to lift: where it is used, its option, why.
struct Chosen {
    value: String,
    seen: Vec<Seen>,
    option: Option<String>,
    why: String,
}

/// How many commands use a value.
fn commands_using(seen: &[Seen]) -> usize {
    seen.iter()
        .map(|s| s.line)
        .collect::<std::collections::BTreeSet<_>>()
        .len()
}

/// Lifts literals out of `lines`, in place; returns what it lifted, in the order first
/// used. `taken`: names the draft has already.
pub fn lift(lines: &mut [String], place: &Place, taken: &[String]) -> Vec<Lifted> {
    let chosen = choose(&candidates(lines), place);
    let mut names: Vec<String> = taken.to_vec();
    let mut lifted = Vec::new();
    let mut edits: Vec<(usize, usize, usize, String)> = Vec::new();
    for c in &chosen {
        let name = unique(name_for(&c.value, c.option.as_deref()), &names);
        names.push(name.clone());
        for s in &c.seen {
            let reference = if s.double {
                format!("${{{name}}}")
            } else {
                format!("\"${{{name}}}\"")
            };
            edits.push((s.line, s.start, s.end, reference));
        }
        lifted.push(Lifted {
            name,
            value: c.value.clone(),
            path: c.value.starts_with('/'),
            uses: commands_using(&c.seen),
            why: c.why.clone(),
        });
    }
    rewrite(lines, edits);
    lifted.sort_by_key(|l| {
        lines
            .iter()
            .position(|line| line.contains(&format!("${{{}}}", l.name)))
            .unwrap_or(usize::MAX)
    });
    lifted
}

/// The values worth an argument: this person's paths, and values used in several commands,
/// most used first, then the longest (the deepest directory shared by all its uses); one
/// argument for a place, never also a directory above it or a file in it.
fn choose(found: &Candidates, place: &Place) -> Vec<Chosen> {
    let mut ranked: Vec<_> = found.iter().collect();
    ranked.sort_by_key(|(value, (seen, _))| {
        (
            std::cmp::Reverse(commands_using(seen)),
            std::cmp::Reverse(value.len()),
        )
    });
    let mut chosen: Vec<Chosen> = Vec::new();
    for (value, (seen, option)) in ranked {
        let using = commands_using(seen);
        let path = value.starts_with('/');
        let why = match (path, personal(value, place)) {
            (true, Some(why)) => why.to_string(),
            _ if using > 1 && value.chars().count() >= SHORTEST => {
                format!("used in {using} commands")
            }
            _ => continue,
        };
        // A directory near the root (`/tmp`, `/usr`) is the machine's, not the procedure's.
        if path && value.matches('/').count() < 2 {
            continue;
        }
        let overlaps = chosen.iter().any(|other| {
            path && other.value.starts_with('/')
                && (other.value.starts_with(&format!("{value}/"))
                    || value.starts_with(&format!("{}/", other.value)))
        });
        if overlaps || chosen.len() >= MOST {
            continue;
        }
        chosen.push(Chosen {
            value: value.clone(),
            seen: seen.clone(),
            option: option.clone(),
            why,
        });
    }
    chosen
}

/// Each use replaced by its reference, from the lines' ends so that earlier offsets hold.
/// Two lifted values never share a span (paths overlap only as ancestor and child, and those
/// are not both chosen); a span inside another is the longer's to take.
fn rewrite(lines: &mut [String], mut edits: Vec<(usize, usize, usize, String)>) {
    edits.sort_by_key(|e| std::cmp::Reverse((e.0, e.1, e.2)));
    let mut last: Option<(usize, usize)> = None;
    for (line, start, end, reference) in edits {
        if last.is_some_and(|(l, from)| l == line && end > from) {
            continue;
        }
        if let Some(text) = lines.get_mut(line)
            && text.is_char_boundary(start)
            && text.is_char_boundary(end)
        {
            text.replace_range(start..end, &reference);
            last = Some((line, start));
        }
    }
}

/// An argument's name: the option's (`--env`: `ENV`), else a path's last part (`DEMO_DIR`),
/// else the value's own words (`FEATURE_X`).
fn name_for(value: &str, option: Option<&str>) -> String {
    // Runs of `_` are one: `feature--x` is `FEATURE_X`.
    let upper = |text: &str| -> String {
        crate::workflow::credentials::upper_words(text)
            .split('_')
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("_")
    };
    let base = match option {
        Some(option) if !option.is_empty() => upper(option),
        _ if value.starts_with('/') => {
            let last = value.rsplit('/').next().unwrap_or_default();
            let stem = last.trim_start_matches('.');
            let stem = stem.split('.').next().unwrap_or(stem);
            if last.contains('.') {
                format!("{}_FILE", upper(stem))
            } else {
                format!("{}_DIR", upper(stem))
            }
        }
        _ => upper(value),
    };
    let base = if base.starts_with(|c: char| c.is_ascii_uppercase()) {
        base
    } else {
        format!("VALUE_{base}")
    };
    base.trim_end_matches('_').chars().take(48).collect()
}

fn unique(base: String, taken: &[String]) -> String {
    // A name the shell gives a meaning of its own says it is a value.
    let base = if super::TAKEN.contains(&base.as_str()) {
        format!("{base}_VALUE")
    } else {
        base
    };
    let mut name = base.clone();
    let mut n = 1;
    while taken.contains(&name) || super::TAKEN.contains(&name.as_str()) {
        n += 1;
        name = format!("{base}_{n}");
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lifted(lines: &[&str], place: &Place) -> (Vec<String>, Vec<Lifted>) {
        let mut lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        let lifted = lift(&mut lines, place, &[]);
        (lines, lifted)
    }

    #[test]
    fn a_directory_used_three_times_becomes_one_argument() {
        let (lines, lifted) = lifted(
            &[
                "mkdir -p /srv/build/demo",
                "cd /srv/build/demo && git init -q",
                "touch /srv/build/demo/README.md \"/srv/build/demo/my notes.txt\"",
                "ls /srv",
            ],
            &Place::default(),
        );
        assert_eq!(
            lines,
            [
                "mkdir -p \"${DEMO_DIR}\"",
                "cd \"${DEMO_DIR}\" && git init -q",
                "touch \"${DEMO_DIR}\"/README.md \"${DEMO_DIR}/my notes.txt\"",
                "ls /srv",
            ]
        );
        assert_eq!(lifted.len(), 1, "{lifted:?}");
        assert_eq!(lifted[0].name, "DEMO_DIR");
        assert_eq!(lifted[0].value, "/srv/build/demo");
        assert_eq!(lifted[0].uses, 3);
        assert_eq!(lifted[0].why, "used in 3 commands");
    }

    #[test]
    fn a_path_of_this_person_is_lifted_once_used_and_values_by_their_options() {
        let place = Place {
            home: Some("/home/ana".into()),
            cwd: Some("/work/app".into()),
        };
        let (lines, lifted) = lifted(
            &[
                "cp /home/ana/.config/app.toml /work/app/config/app.toml",
                "deploy --env staging --tag=v1.2.3",
                "notify --env staging 'done with v1.2.3'",
                "git checkout feature-x && git push origin feature-x",
                "docker compose up -d",
                "docker compose logs",
            ],
            &place,
        );
        let names: Vec<(&str, &str)> = lifted
            .iter()
            .map(|l| (l.name.as_str(), l.value.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("APP_FILE", "/home/ana/.config/app.toml"),
                ("APP_FILE_2", "/work/app/config/app.toml"),
                ("ENV_VALUE", "staging"),
            ],
            "{lines:?}"
        );
        assert_eq!(
            lines[1], "deploy --env \"${ENV_VALUE}\" --tag=v1.2.3",
            "once: kept"
        );
        assert_eq!(lines[2], "notify --env \"${ENV_VALUE}\" 'done with v1.2.3'");
        assert_eq!(
            lines[3], "git checkout feature-x && git push origin feature-x",
            "within one command: kept"
        );
        assert_eq!(
            lines[4], "docker compose up -d",
            "subcommands are no values"
        );
        assert!(lifted[1].why.contains("working directory"), "{lifted:?}");
        assert!(lifted[0].why.contains("home"), "{lifted:?}");
    }

    #[test]
    fn quoted_words_and_expansions_are_left_alone() {
        let (lines, lifted) = lifted(
            &[
                "echo '/srv/x/y' $HOME/srv/x/y",
                "echo '/srv/x/y' ${HOME}/srv/x/y",
            ],
            &Place::default(),
        );
        assert!(lifted.is_empty(), "{lifted:?}");
        assert_eq!(lines[0], "echo '/srv/x/y' $HOME/srv/x/y");
    }
}
