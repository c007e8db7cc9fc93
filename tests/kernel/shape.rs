//! The shape of the source, checked rather than left to review.
//!
//! The layering of SPEC §3.1, which of flowdeck's modules may use which: `engine` uses
//! `workflow`, `store` and `term`; `store` uses `workflow`; the front ends use the engine (and
//! the pure manifest model it speaks in), never each other; `workflow` is pure. Every path that
//! names another module counts (`use` lines, paths in code, `super::` chains that climb out of
//! a module), comments do not.
//!
//! Inside a module, at every depth, its children do not import each other in a circle: a
//! circle is two jobs that cannot be understood apart.
//!
//! And the size of files: past 600 lines outside its tests, a file holds more than one job.

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top module and the modules it may use besides itself.
fn allowed() -> BTreeMap<&'static str, &'static [&'static str]> {
    // Process-wide helpers every layer may use: who acts, panic containment, the process's
    // log and its signals.
    const LEAVES: &[&str] = &["actor", "panics"];
    let mut allowed: BTreeMap<&str, &[&str]> = BTreeMap::new();
    allowed.insert("actor", &[]);
    allowed.insert("panics", &[]);
    allowed.insert("signals", &[]);
    // What every connection served is held to (queues, writer, accepting, throttled log),
    // whatever its protocol: MCP's and the server's.
    allowed.insert("conn", &[]);
    // The log's file lives in the folder's state folder, which the store owns.
    allowed.insert("logfile", &["store"]);
    allowed.insert("workflow", LEAVES);
    allowed.insert("term", LEAVES);
    allowed.insert("store", &["workflow", "actor", "panics"]);
    allowed.insert("engine", &["workflow", "store", "term", "actor", "panics"]);
    allowed.insert("mcp", &["engine", "workflow", "actor", "panics", "conn"]);
    // The folder's server hosts both kinds of front end: it serves MCP's sessions and the
    // studio protocol, and sends screens as the terminal layer mirrors them.
    allowed.insert(
        "server",
        &[
            "engine", "mcp", "workflow", "term", "actor", "panics", "logfile", "conn",
        ],
    );
    // The studio reaches the engine itself or through the server's client.
    allowed.insert(
        "tui",
        &[
            "engine", "workflow", "server", "actor", "panics", "signals", "logfile",
        ],
    );
    allowed
}

/// The composition root and the crate's own files may use anything.
const ROOTS: &[&str] = &["cli", "lib", "main"];

fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

/// The module path of a file under `src/`: `src/tui/draw/pane.rs` is `tui::draw::pane`,
/// `src/tui/mod.rs` is `tui`.
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The other top modules a text of code names, each with its byte offset: the first word of
/// each of its [`paths`] that leaves the file's own top module.
fn named(text: &str, module: &[String]) -> Vec<(usize, String)> {
    let mut names: Vec<(usize, String)> = paths(text, module)
        .into_iter()
        .filter(|(_, path)| path[0] != module[0])
        .map(|(at, mut path)| (at, path.swap_remove(0)))
        .collect();
    // `crate::store::{a, b}` names `store` once.
    names.dedup();
    names
}

fn first_word(text: &str) -> String {
    text.trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

#[test]
fn each_module_uses_only_the_modules_spec_3_1_allows() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let allowed = allowed();
    let mut wrong = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let module = module_of(relative);
        let top = module[0].as_str();
        if ROOTS.contains(&top) {
            continue;
        }
        let Some(may) = allowed.get(top) else {
            wrong.push(format!(
                "src/{}: the module `{top}` has no place in the layering yet: add it to tests/kernel/shape.rs",
                relative.display()
            ));
            continue;
        };
        // A file's tests count too: they may not reach past the layering either.
        let code = uncommented(&std::fs::read_to_string(file).unwrap());
        for (at, name) in named(&code, &module) {
            if name != top && !may.contains(&name.as_str()) {
                let line = code[..at].matches('\n').count();
                wrong.push(format!(
                    "src/{}:{}: `{top}` uses `{name}`; it may use only {may:?}\n    {}",
                    relative.display(),
                    line + 1,
                    code.lines().nth(line).unwrap_or_default().trim()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "SPEC §3.1 layering:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_reader_finds_every_way_of_naming_a_module() {
    let names = |text: &str, module: &[String]| -> Vec<String> {
        named(text, module).into_iter().map(|(_, n)| n).collect()
    };
    let tui_app = module_of(Path::new("tui/app.rs"));
    assert_eq!(tui_app, ["tui", "app"]);
    assert_eq!(module_of(Path::new("tui/mod.rs")), ["tui"]);
    assert_eq!(names("use crate::engine::Engine;", &tui_app), ["engine"]);
    assert_eq!(
        names("use crate::{cli::runtime, store::{a, b}};", &tui_app),
        ["cli", "store"]
    );
    assert_eq!(
        names(
            "use crate::{\n    engine::X,\n    term::{Y, Z},\n};",
            &tui_app
        ),
        ["engine", "term"]
    );
    assert_eq!(names("let r = crate::cli::runtime()?;", &tui_app), ["cli"]);
    // `super::` in tui/app.rs is `tui`; twice is the crate's root.
    assert!(names("use super::state::App;", &tui_app).is_empty());
    assert_eq!(names("use super::super::mcp::x;", &tui_app), ["mcp"]);
    assert!(names("macro_rules! m { () => { $crate::x } }", &tui_app).is_empty());
    // In a file's test module, `super::super::` is the file's parent.
    let tests = "use super::super::mcp::x;\n#[cfg(test)]\nmod tests {\n    use super::super::state::App;\n}\n";
    assert_eq!(names(tests, &tui_app), ["mcp"]);
}

/// The most lines a source file holds outside its tests: past it, a file is doing more than one
/// job (issue 23). The files still over it are listed in [`STILL_OVER`], each with the most it
/// may hold until it is split: the list only shrinks.
const MOST_LINES: usize = 600;

/// Files over [`MOST_LINES`] when the limit came, with their size then: none may grow, and
/// one that is split must leave the list.
const STILL_OVER: &[(&str, usize)] = &[];

/// Lines of a source file outside its tests: up to an inline `#[cfg(test)] mod …`.
fn lines_outside_tests(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .windows(2)
        .position(|pair| pair[0].trim() == "#[cfg(test)]" && pair[1].starts_with("mod "))
        .unwrap_or(lines.len())
}

#[test]
fn no_source_file_grows_past_its_limit() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap().display().to_string();
        if relative.ends_with("_tests.rs") {
            continue;
        }
        let lines = lines_outside_tests(&std::fs::read_to_string(file).unwrap());
        let listed = STILL_OVER.iter().find(|(name, _)| *name == relative);
        match listed {
            None if lines > MOST_LINES => wrong.push(format!(
                "src/{relative}: {lines} lines outside its tests (at most {MOST_LINES}): split it by its jobs"
            )),
            Some((_, most)) if lines > *most => wrong.push(format!(
                "src/{relative}: {lines} lines; it held {most} when the limit came and may not grow: split it"
            )),
            Some(_) if lines <= MOST_LINES => wrong.push(format!(
                "src/{relative}: {lines} lines now: take it off STILL_OVER in tests/kernel/shape.rs"
            )),
            _ => {}
        }
    }
    for (name, _) in STILL_OVER {
        if !files.iter().any(|f| f.ends_with(name)) {
            wrong.push(format!(
                "src/{name} is gone: take it off STILL_OVER in tests/kernel/shape.rs"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_files_tests_do_not_count_against_it() {
    let text = "fn a() {}\n\n#[cfg(test)]\nmod tests {\n    fn b() {}\n}\n";
    assert_eq!(lines_outside_tests(text), 2);
    assert_eq!(lines_outside_tests("fn a() {}\n"), 1);
}

/// The module paths a text of code names, each from the crate's root and with its byte offset:
/// `crate::a::b`, `crate::a::{b, c::{d}}` (over several lines too) and `super::` chains. Only
/// the leading words matter to the checks, so a path ends at its first word that is not a
/// module's (a type, a function), as far as the text can tell: it is cut at the first
/// capitalised word.
fn paths(text: &str, module: &[String]) -> Vec<(usize, Vec<String>)> {
    paths_to(text, module, false)
}

/// [`paths`], each ending with the type it names, if any (see [`expand_to`]).
fn paths_to(text: &str, module: &[String], items: bool) -> Vec<(usize, Vec<String>)> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let part_of_a_word = |at: usize| {
        at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || b"_$:".contains(&bytes[at - 1]))
    };
    let inline = text
        .match_indices("\nmod ")
        .chain(text.match_indices("\npub mod "))
        .map(|(at, _)| at + 1)
        .filter(|at| text[*at..].lines().next().is_some_and(|l| l.ends_with('{')))
        .min();
    for (start, _) in text.match_indices("crate::") {
        if !part_of_a_word(start) {
            for path in expand_to(&text[start + "crate::".len()..], &[], items) {
                found.push((start, path));
            }
        }
    }
    for (start, _) in text.match_indices("super::") {
        if part_of_a_word(start) {
            continue;
        }
        let mut depth = module.len() + usize::from(inline.is_some_and(|at| at < start));
        let mut rest = &text[start..];
        while let Some(after) = rest.strip_prefix("super::") {
            depth = depth.saturating_sub(1);
            rest = after;
        }
        let base: Vec<String> = module.iter().take(depth).cloned().collect();
        for path in expand_to(rest, &base, items) {
            found.push((start, path));
        }
    }
    found.retain(|(_, path)| !path.is_empty());
    found
}

/// The paths `prefix::text…` names: words joined by `::`, and a `{…}` group's items each
/// expanded in turn; with `items`, each path ends with the item it names when that is a type
/// (`ActiveRun`): what a module re-exports is reached by the item's name.
fn expand_to(text: &str, prefix: &[String], items: bool) -> Vec<Vec<String>> {
    let mut path = prefix.to_vec();
    let mut rest = text;
    loop {
        let word = first_word(rest);
        if word.is_empty() {
            let Some(group) = rest.trim_start().strip_prefix('{') else {
                return vec![path];
            };
            return group_items(group)
                .iter()
                .flat_map(|item| expand_to(item, &path, items))
                .collect();
        }
        if word == "self" {
            return vec![path];
        }
        if word.starts_with(|c: char| c.is_ascii_uppercase()) {
            if items {
                path.push(word);
            }
            return vec![path];
        }
        rest = &rest.trim_start()[word.len()..];
        path.push(word);
        match rest.strip_prefix("::") {
            Some(after) => rest = after,
            None => return vec![path],
        }
    }
}

/// The items of a `{…}` group at its own depth (the text starts just after its `{`).
fn group_items(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut from) = (0, 0);
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[from..at]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[from..at]);
                from = at + 1;
            }
            _ => {}
        }
    }
    items.push(&group[from..]);
    items
}

/// Code without its comments, which name modules without using them: blanked, lines kept,
/// so that offsets still give line numbers.
fn uncommented(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.trim_start().starts_with("//") {
                ""
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What each module re-exports from its children: (module, item) → the child it comes from
/// (`pub use registry::{ActiveRun, Phase};` in `engine::run`).
fn reexports(
    modules: &[(PathBuf, Vec<String>)],
    children: &BTreeSet<(Vec<String>, String)>,
) -> BTreeMap<(Vec<String>, String), String> {
    let mut map = BTreeMap::new();
    for (file, module) in modules {
        let text = std::fs::read_to_string(file).unwrap();
        let code = uncommented(&text);
        let uses = ["pub use ", "pub(crate) use ", "pub(super) use "]
            .iter()
            .flat_map(|p| code.match_indices(p).map(|(at, p)| &code[at + p.len()..]));
        for rest in uses {
            for path in expand_to(rest, &[], true) {
                if let [child, .., item] = path.as_slice()
                    && children.contains(&(module.clone(), child.clone()))
                {
                    map.insert((module.clone(), item.clone()), child.clone());
                }
            }
        }
    }
    map
}

#[test]
fn no_two_children_of_a_module_import_each_other_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let modules: Vec<(PathBuf, Vec<String>)> = files
        .iter()
        .map(|f| (f.clone(), module_of(f.strip_prefix(&src).unwrap())))
        .collect();
    // Each (parent, child) → sibling edge, at every depth (`engine` → `run`, and inside
    // `engine::run`, `start` → `ending`), with where it was first seen.
    type Edges = BTreeMap<(Vec<String>, String), BTreeMap<String, String>>;
    let mut edges: Edges = BTreeMap::new();
    let children: BTreeSet<(Vec<String>, String)> = modules
        .iter()
        .flat_map(|(_, m)| (1..m.len()).map(move |k| (m[..k].to_vec(), m[k].clone())))
        .collect();
    let reexports = reexports(&modules, &children);
    for (file, module) in &modules {
        let name = file.file_name().unwrap().to_string_lossy();
        if module.len() < 2 || name.ends_with("_tests.rs") || name == "test_support.rs" {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        // Tests may reach across a module's children: they check how the parts meet.
        let outside_tests = text.lines().take(lines_outside_tests(&text));
        let code = uncommented(&outside_tests.collect::<Vec<_>>().join("\n"));
        for (at, path) in paths_to(&code, module, true) {
            for k in 1..module.len() {
                let parent = &module[..k];
                // A sibling by its name, or by an item the parent re-exports from it
                // (`super::ActiveRun` where the parent has `pub use registry::ActiveRun`).
                let Some(sibling) = path.get(k).map(|named| {
                    reexports
                        .get(&(parent.to_vec(), named.clone()))
                        .filter(|_| path[..k] == *parent)
                        .unwrap_or(named)
                }) else {
                    continue;
                };
                if path[..k] != *parent || *sibling == module[k] {
                    continue;
                }
                if children.contains(&(parent.to_vec(), sibling.clone())) {
                    let line = code[..at].matches('\n').count() + 1;
                    let relative = file.strip_prefix(&src).unwrap().display();
                    edges
                        .entry((parent.to_vec(), module[k].clone()))
                        .or_default()
                        .entry(sibling.clone())
                        .or_insert_with(|| format!("src/{relative}:{line}"));
                }
            }
        }
    }
    let reaches = |parent: &[String], from: &str, to: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(at) = stack.pop() {
            for next in edges
                .get(&(parent.to_vec(), at))
                .into_iter()
                .flat_map(|e| e.keys())
            {
                if next == to {
                    return true;
                }
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        false
    };
    let mut wrong = Vec::new();
    for ((parent, child), uses) in &edges {
        let parent_path = parent.join("::");
        for (sibling, at) in uses {
            if reaches(parent, sibling, child) {
                wrong.push(format!(
                    "{at}: `{parent_path}::{child}` uses `{parent_path}::{sibling}`, which leads back to it"
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "import circles (move the shared part to a module both use, or make one the other's child):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_path_reader_expands_groups_and_climbs_supers() {
    let start = module_of(Path::new("engine/run/start.rs"));
    let read = |text: &str| -> Vec<Vec<String>> {
        paths(text, &start).into_iter().map(|(_, p)| p).collect()
    };
    let p = |words: &[&str]| words.iter().map(|w| (*w).to_string()).collect::<Vec<_>>();
    assert_eq!(
        read("use super::approval::Decision;"),
        [p(&["engine", "run", "approval"])]
    );
    assert_eq!(
        read("use super::super::journal::now;"),
        [p(&["engine", "journal", "now"])]
    );
    assert_eq!(
        read("use crate::engine::{journal::{self, JournalEvent}, Engine, run::x};"),
        [
            p(&["engine", "journal"]),
            p(&["engine", "journal"]),
            p(&["engine"]),
            p(&["engine", "run", "x"])
        ]
    );
    assert_eq!(read("crate::engine::Engine::new()"), [p(&["engine"])]);
    // With the items named, a re-exported type leads to the child it comes from.
    let items = |text: &str| -> Vec<Vec<String>> {
        paths_to(text, &start, true)
            .into_iter()
            .map(|(_, p)| p)
            .collect()
    };
    assert_eq!(
        items("use super::{ActiveRun, registry::Phase};"),
        [
            p(&["engine", "run", "ActiveRun"]),
            p(&["engine", "run", "registry", "Phase"])
        ]
    );
    assert_eq!(
        expand_to("registry::{ActiveRun, Phase};", &[], true),
        [p(&["registry", "ActiveRun"]), p(&["registry", "Phase"])]
    );
}
