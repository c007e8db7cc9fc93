//! What is a credential: names that say they hold one, and credentials typed on command
//! lines. One list, kept here, for everything that must not write one down: drafts
//! (workflow/draft.rs) lift them into secret arguments, the audit log (mcp/audit.rs) masks
//! arguments by the same names. Patterns after what shell-history tools look for (atuin's
//! secret filters): assignments to secret-looking names, password options, authorization
//! headers, passwords in URLs, and the shapes of well-known tokens.

use regex::Regex;
use std::ops::Range;
use std::sync::LazyLock;

/// Whether a variable, option, key or header name says it holds a credential: `*SECRET*`,
/// `*TOKEN*`, `*PASSWORD*`, `*PASSWD*`, `*CREDENTIAL*`, `*API_KEY*`, `*_KEY`, `*PRIVATE_KEY*`,
/// whatever the case and separators (`api-key`, `apiKey`). Not a name for where one is kept
/// (`TOKEN_FILE`, `SSH_KEY_PATH`).
pub fn is_secret_name(name: &str) -> bool {
    let name: String = name
        .chars()
        .map(|c| match c {
            '-' | '.' => '_',
            c => c.to_ascii_uppercase(),
        })
        .collect();
    let says = [
        "SECRET",
        "TOKEN",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "APIKEY",
        "API_KEY",
    ]
    .iter()
    .any(|w| name.contains(w))
        || name.ends_with("_KEY")
        || name.contains("PRIVATE_KEY")
        || name == "PASS"
        || name.ends_with("_PASS");
    let a_place = [
        "_FILE", "_PATH", "_DIR", "_ENV", "_URL", "_NAME", "_ID", "_TYPE",
    ]
    .iter()
    .any(|w| name.ends_with(w));
    says && !a_place
}

/// A credential found in a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credential {
    /// Its bytes in the line: the value alone, or (for an assignment) the whole word after
    /// `=`, quotes included.
    pub range: Range<usize>,
    /// A name for the argument that takes its place (`^[A-Z][A-Z0-9_]*$`).
    pub name: String,
    /// What it was, for the draft to say: `the value of AWS_SECRET_ACCESS_KEY`.
    pub what: String,
}

/// Shapes of tokens that are credentials wherever they stand, with the argument's name.
static TOKENS: LazyLock<Vec<(Regex, &'static str, &'static str)>> = LazyLock::new(|| {
    [
        (
            r"\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
            "GITHUB_TOKEN",
            "a GitHub token",
        ),
        (
            r"\bglpat-[A-Za-z0-9_-]{20,}\b",
            "GITLAB_TOKEN",
            "a GitLab token",
        ),
        (
            r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b",
            "SLACK_TOKEN",
            "a Slack token",
        ),
        (
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            "AWS_ACCESS_KEY_ID",
            "an AWS access key",
        ),
        (
            r"\b[rs]k_live_[A-Za-z0-9]{20,}\b",
            "STRIPE_KEY",
            "a Stripe key",
        ),
        (
            r"\bAIza[0-9A-Za-z_-]{35}\b",
            "GOOGLE_API_KEY",
            "a Google API key",
        ),
        (r"\bnpm_[A-Za-z0-9]{36}\b", "NPM_TOKEN", "an npm token"),
        (
            r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{32,}\b",
            "API_KEY",
            "an API key",
        ),
    ]
    .into_iter()
    .filter_map(|(pattern, name, what)| Some((Regex::new(pattern).ok()?, name, what)))
    .collect()
});

/// `NAME=` at the start of a shell word (after `export`, `env`, a `;`), with its name.
static ASSIGNMENT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"(?:^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)="#).ok());
/// `--name=value`, with the option's name. Not `--name value`: too many such options take
/// no value (`psql --password mydb` asks for one; `--password-stdin` reads one), and the next
/// word would be taken for a secret.
static LONG_OPTION: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"(?:^|\s)--([A-Za-z][A-Za-z0-9_-]*)="#).ok());
/// An authorization header's credential (after its scheme, if it has one).
static HEADER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)\b(proxy-authorization|authorization|x-[a-z0-9-]*(?:api-?key|token|secret|auth)[a-z0-9-]*|api-?key)\s*:\s*(?:(?:bearer|basic|token|digest|bot)\s+)?([^\s'"]+)"#,
    )
    .ok()
});
/// A password in a URL's `user:password@`.
static URL_PASSWORD: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@'"]+:([^\s@/'"]+)@"#).ok());
/// `-pPASSWORD` glued to the option (quoted or not), for the programs that take it so (for
/// others `-p` is something else: `mkdir -p`).
static GLUED_PASSWORD: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"(?:^|\s)-p(\S)"#).ok());
/// `-u user:password` (curl, wget).
static USER_PASSWORD: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"(?:^|\s)(?:-u|--user|--proxy-user)(?:\s+|=)['"]?[^\s:'"]+:([^\s'"]+)"#).ok()
});

/// Programs whose `-p` glued to a value is a password.
const GLUED_P: &[&str] = &[
    "mysql",
    "mysqldump",
    "mysqladmin",
    "mysqlimport",
    "mysqlshow",
    "mysqlcheck",
    "mariadb",
    "mariadb-dump",
    "mariadb-admin",
    "sshpass",
];

/// The credentials typed in a command line, in order, none overlapping another.
pub fn credentials_in(line: &str) -> Vec<Credential> {
    let mut found = Found {
        line,
        list: Vec::new(),
    };
    found.assignments();
    found.long_options();
    found.headers();
    found.passwords();
    for (re, name, what) in TOKENS.iter() {
        for m in re.find_iter(line) {
            found.add(m.range(), (*name).into(), (*what).into());
        }
    }
    let mut list = found.list;
    list.sort_by_key(|c| c.range.start);
    list
}

/// The credentials found so far in one line.
struct Found<'a> {
    line: &'a str,
    list: Vec<Credential>,
}

impl Found<'_> {
    /// Adds one, unless it is no literal (a variable's reference, nothing) or overlaps one
    /// found before (the more telling patterns look first).
    fn add(&mut self, range: Range<usize>, name: String, what: String) {
        let literal = self.line[range.clone()].trim_matches(['"', '\'']);
        if literal.is_empty() || literal.starts_with('$') || literal.starts_with('<') {
            return;
        }
        if self
            .list
            .iter()
            .any(|c| c.range.start < range.end && range.start < c.range.end)
        {
            return;
        }
        self.list.push(Credential { range, name, what });
    }

    /// `NAME=value` where the name says it holds a credential: the whole value word.
    fn assignments(&mut self) {
        let Some(re) = ASSIGNMENT.as_ref() else {
            return;
        };
        for c in re.captures_iter(self.line) {
            let (Some(name), Some(all)) = (c.get(1), c.get(0)) else {
                continue;
            };
            if is_secret_name(name.as_str()) {
                let value = all.end()..word_end(self.line, all.end());
                let what = format!("the value of {}", name.as_str());
                self.add(value, argument_name(name.as_str()), what);
            }
        }
    }

    /// `--password=value`, `--api-key=value`: the whole value word.
    fn long_options(&mut self) {
        let Some(re) = LONG_OPTION.as_ref() else {
            return;
        };
        for c in re.captures_iter(self.line) {
            let (Some(name), Some(all)) = (c.get(1), c.get(0)) else {
                continue;
            };
            if !is_secret_name(name.as_str()) {
                continue;
            }
            let value = all.end()..word_end(self.line, all.end());
            let what = format!("the value of --{}", name.as_str());
            self.add(value, argument_name(name.as_str()), what);
        }
    }

    /// `Authorization: Bearer …`, `X-Api-Key: …`: the credential after the scheme.
    fn headers(&mut self) {
        let Some(re) = HEADER.as_ref() else { return };
        for c in re.captures_iter(self.line) {
            let (Some(header), Some(value)) = (c.get(1), c.get(2)) else {
                continue;
            };
            let header = header.as_str();
            let name = if header.eq_ignore_ascii_case("authorization")
                || header.eq_ignore_ascii_case("proxy-authorization")
            {
                "AUTH_TOKEN".to_string()
            } else {
                argument_name(header)
            };
            self.add(value.range(), name, format!("the {header} header"));
        }
    }

    /// Passwords in URLs, after `-u user:`, and glued to `-p` where a program takes it so.
    fn passwords(&mut self) {
        let line = self.line;
        let mut each = |re: &Option<Regex>, name: &str, what: &str| {
            let Some(re) = re.as_ref() else { return };
            for c in re.captures_iter(line) {
                if let Some(value) = c.get(1) {
                    self.add(value.range(), name.into(), what.into());
                }
            }
        };
        each(&URL_PASSWORD, "URL_PASSWORD", "the password in a URL");
        each(
            &USER_PASSWORD,
            "USER_PASSWORD",
            "the password of -u user:password",
        );
        if let (Some(program), Some(re)) = (program_of(line), GLUED_PASSWORD.as_ref())
            && GLUED_P.contains(&program)
        {
            // The whole word after `-p`, quotes and all.
            for c in re.captures_iter(line) {
                let Some(first) = c.get(1) else { continue };
                let from = first.start();
                let value = from..word_end(line, from);
                let name = argument_name(&format!("{program}_password"));
                self.add(value, name, format!("the password of {program} -p"));
            }
        }
    }
}

/// The credentials' values in a command line, as typed and without the quotes around them:
/// what a recording of the line must mask.
pub fn values_in(line: &str) -> Vec<String> {
    let mut values = Vec::new();
    for credential in credentials_in(line) {
        let typed = &line[credential.range];
        values.push(typed.to_string());
        let bare = typed.trim_matches(['"', '\'']);
        if bare != typed {
            values.push(bare.to_string());
        }
    }
    values
}

/// The program a command line runs: its first word that is not an assignment nor `sudo`,
/// `env` or `exec`, without its directory.
fn program_of(line: &str) -> Option<&str> {
    line.split_whitespace()
        .find(|w| !w.contains('=') && !["sudo", "env", "exec", "command", "time"].contains(w))
        .map(|w| w.rsplit('/').next().unwrap_or(w))
}

/// Text as a variable's name has it: upper case, `_` for anything else, none at its ends.
pub(in crate::workflow) fn upper_words(text: &str) -> String {
    let name: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    name.trim_matches('_').to_string()
}

/// A name as an argument's name: upper case, `_` for anything else, a letter first.
fn argument_name(name: &str) -> String {
    let name = upper_words(name);
    match name.chars().next() {
        Some(c) if c.is_ascii_uppercase() => name.to_string(),
        _ => format!("SECRET_{name}").trim_end_matches('_').to_string(),
    }
}

/// Where the shell word that starts at `from` ends: at the first blank or `;&|)` outside
/// quotes, or, for a word inside quotes that began before it (`sh -c 'export K=v'`), where
/// those quotes close.
fn word_end(line: &str, from: usize) -> usize {
    let enclosing = match quoting_at(line, from) {
        Quoting::None => None,
        Quoting::Single => Some('\''),
        Quoting::Double => Some('"'),
    };
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line[from..].char_indices() {
        match (quote, c) {
            _ if escaped => escaped = false,
            (Some('\''), '\'') => quote = None,
            (Some('\''), _) => {}
            (_, '\\') => escaped = true,
            (Some('"'), '"') => quote = None,
            (Some(_), _) => {}
            (None, q) if Some(q) == enclosing => return from + i,
            (None, '\'' | '"') => quote = Some(c),
            (None, c) if c.is_whitespace() || ";&|)".contains(c) => return from + i,
            (None, _) => {}
        }
    }
    line.len()
}

/// How the shell reads the text at byte `at` of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quoting {
    None,
    Single,
    Double,
}

/// The quoting in force at byte `at` of `line`.
pub fn quoting_at(line: &str, at: usize) -> Quoting {
    let mut quote = Quoting::None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if i >= at {
            break;
        }
        match (quote, c) {
            _ if escaped => escaped = false,
            (Quoting::Single, '\'') => quote = Quoting::None,
            (Quoting::Single, _) => {}
            (_, '\\') => escaped = true,
            (Quoting::Double, '"') => quote = Quoting::None,
            (Quoting::None, '\'') => quote = Quoting::Single,
            (Quoting::None, '"') => quote = Quoting::Double,
            _ => {}
        }
    }
    quote
}

/// The line with each credential replaced by a reference to the shell variable `name` that
/// the run exports it as, quoted for where it stands: `"${NAME}"` outside quotes, `${NAME}`
/// inside double quotes, `'"${NAME}"'` inside single quotes (which end, and begin again).
pub fn with_references(line: &str, replaced: &[(Range<usize>, String)]) -> String {
    let mut out = String::with_capacity(line.len());
    let mut from = 0;
    for (range, name) in replaced {
        out.push_str(&line[from..range.start]);
        match quoting_at(line, range.start) {
            Quoting::None => out.push_str(&format!("\"${{{name}}}\"")),
            Quoting::Double => out.push_str(&format!("${{{name}}}")),
            // The quote that ended it would begin an empty one: it ends here instead.
            Quoting::Single if line[range.end..].starts_with('\'') => {
                out.push_str(&format!("'\"${{{name}}}\""));
                from = range.end + 1;
                continue;
            }
            Quoting::Single => out.push_str(&format!("'\"${{{name}}}\"'")),
        }
        from = range.end;
    }
    out.push_str(&line[from..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lifted(line: &str) -> (String, Vec<String>) {
        let found = credentials_in(line);
        let replaced: Vec<(Range<usize>, String)> = found
            .iter()
            .map(|c| (c.range.clone(), c.name.clone()))
            .collect();
        (
            with_references(line, &replaced),
            found.into_iter().map(|c| c.name).collect(),
        )
    }

    #[test]
    fn secret_names_are_told_from_others() {
        for yes in [
            "AWS_SECRET_ACCESS_KEY",
            "GITHUB_TOKEN",
            "db_password",
            "MYSQL_PWD_PASSWD",
            "api-key",
            "apiKey",
            "SSH_PRIVATE_KEY",
            "STRIPE_KEY",
            "PASS",
        ] {
            assert!(is_secret_name(yes), "{yes}");
        }
        for no in [
            "PATH",
            "HOME",
            "TOKEN_FILE",
            "SSH_KEY_PATH",
            "KEYBOARD",
            "AWS_ACCESS_KEY_ID",
            "name",
            "sort",
        ] {
            assert!(!is_secret_name(no), "{no}");
        }
    }

    #[test]
    fn the_credentials_of_common_command_lines_become_references() {
        let cases = [
            (
                "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG",
                r#"export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY}""#,
            ),
            (
                "mysql -u root -pS3cret! mydb",
                r#"mysql -u root -p"${MYSQL_PASSWORD}" mydb"#,
            ),
            (
                "mysqldump -p'S3 cret' db",
                r#"mysqldump -p"${MYSQLDUMP_PASSWORD}" db"#,
            ),
            (
                r#"curl -H "Authorization: Bearer ghp_abcdefghijklmnopqrstuvwxyz0123456789" https://api.github.com"#,
                r#"curl -H "Authorization: Bearer ${AUTH_TOKEN}" https://api.github.com"#,
            ),
            (
                "curl -H 'X-Api-Key: k3y-v4lue' https://x",
                r#"curl -H 'X-Api-Key: '"${X_API_KEY}" https://x"#,
            ),
            (
                "git clone https://bob:hunter2@example.com/r.git",
                r#"git clone https://bob:"${URL_PASSWORD}"@example.com/r.git"#,
            ),
            (
                "psql --password='p w' -h db",
                r#"psql --password="${PASSWORD}" -h db"#,
            ),
            (
                "TOKEN='it s' ./deploy.sh --api-key=abc123",
                r#"TOKEN="${TOKEN}" ./deploy.sh --api-key="${API_KEY}""#,
            ),
            (
                "curl -u bob:pw1 https://x",
                r#"curl -u bob:"${USER_PASSWORD}" https://x"#,
            ),
            (
                "sh -c 'export API_TOKEN=abc123; ./go'",
                r#"sh -c 'export API_TOKEN='"${API_TOKEN}"'; ./go'"#,
            ),
            (
                r#"ssh h "export API_TOKEN=abc123""#,
                r#"ssh h "export API_TOKEN=${API_TOKEN}""#,
            ),
            ("mysql -pñandú db", r#"mysql -p"${MYSQL_PASSWORD}" db"#),
        ];
        for (line, want) in cases {
            assert_eq!(lifted(line).0, want, "{line}");
        }
    }

    #[test]
    fn what_is_no_credential_stays() {
        for line in [
            "mkdir -p build",
            "export TOKEN=$(cat token.txt)",
            "export TOKEN=\"$GITHUB_TOKEN\"",
            "ls --color=auto",
            "grep -r password src/",
            "make install",
            "echo --token-file=~/.t",
            "psql --password mydb",
            "docker login --password-stdin ghcr.io",
        ] {
            assert_eq!(lifted(line), (line.to_string(), Vec::new()), "{line}");
        }
    }

    #[test]
    fn quoting_is_read_as_the_shell_reads_it() {
        let line = r#"a 'b "c' "d 'e" \'f"#;
        assert_eq!(
            quoting_at(line, line.find('b').unwrap_or(0)),
            Quoting::Single
        );
        assert_eq!(
            quoting_at(line, line.find('c').unwrap_or(0)),
            Quoting::Single
        );
        assert_eq!(
            quoting_at(line, line.find('d').unwrap_or(0)),
            Quoting::Double
        );
        assert_eq!(
            quoting_at(line, line.find('e').unwrap_or(0)),
            Quoting::Double
        );
        assert_eq!(quoting_at(line, line.find('f').unwrap_or(0)), Quoting::None);
    }
}
