//! The folder's `hosts.conf` (not a manifest): groups of hosts for fleets, and hosts reached
//! by a command other than ssh.
//!
//! ```text
//! # GROUP: hosts (separated by spaces or commas; a group may name groups)
//! web: web-1 web-2 web-3
//! all: web db-1
//! # NAME = the command that opens a shell there, given a shell command as its last argument
//! app = docker exec -it app sh -c
//! web-pod = kubectl exec -it web-0 -- sh -c
//! root = sudo -i sh -c
//! ```

use crate::engine::EngineError;
use indexmap::IndexSet;
use std::path::Path;

/// The file's name in the workflows folder.
pub const HOSTS_FILE: &str = "hosts.conf";

/// What `hosts.conf` says.
#[derive(Debug, Default)]
pub struct HostsFile {
    groups: Vec<(String, Vec<String>)>,
    connects: Vec<(String, Vec<String>)>,
}

impl HostsFile {
    /// The folder's file; none (no file) says nothing. A file that cannot be read or parsed
    /// is an error naming it and the line.
    pub fn read(folder: &Path) -> Result<HostsFile, EngineError> {
        let file = folder.join(HOSTS_FILE);
        match std::fs::read_to_string(&file) {
            Ok(text) => HostsFile::parse(&text)
                .map_err(|why| EngineError::InvalidParams(format!("{}: {why}", file.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(HostsFile::default()),
            Err(e) => Err(EngineError::InvalidParams(format!(
                "cannot read {}: {e}",
                file.display()
            ))),
        }
    }

    /// One entry a line: `GROUP: hosts` or `NAME = command`; `#` starts a comment.
    pub fn parse(text: &str) -> Result<HostsFile, String> {
        let mut file = HostsFile::default();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let at = |why: &str| format!("line {}: {why}", n + 1);
            let colon = line.find(':');
            let equals = line.find('=');
            let (name, rest, group) = match (colon, equals) {
                (Some(c), e) if e.is_none_or(|e| c < e) => (&line[..c], &line[c + 1..], true),
                (_, Some(e)) => (&line[..e], &line[e + 1..], false),
                _ => {
                    return Err(at(
                        "not `GROUP: host host ...` nor `NAME = command` (a name, then a colon and hosts, or = and a command)",
                    ));
                }
            };
            let name = name.trim();
            if name.is_empty() || name.contains(char::is_whitespace) {
                return Err(at("a name is one word"));
            }
            if file.named(name) {
                return Err(at(&format!("{name} is named twice")));
            }
            if group {
                let members = rest
                    .split([' ', '\t', ','])
                    .filter(|m| !m.is_empty())
                    .map(str::to_string)
                    .collect();
                file.groups.push((name.to_string(), members));
            } else {
                let argv = shlex::split(rest.trim())
                    .filter(|a| !a.is_empty())
                    .ok_or_else(|| at("the command is empty or has an unclosed quote"))?;
                file.connects.push((name.to_string(), argv));
            }
        }
        Ok(file)
    }

    fn named(&self, name: &str) -> bool {
        self.groups.iter().any(|(g, _)| g == name) || self.connects.iter().any(|(c, _)| c == name)
    }

    pub fn is_group(&self, name: &str) -> bool {
        self.groups.iter().any(|(g, _)| g == name)
    }

    /// The command that opens a shell on `name`, when the file gives one.
    pub fn connect(&self, name: &str) -> Option<&[String]> {
        self.connects
            .iter()
            .find(|(c, _)| c == name)
            .map(|(_, argv)| argv.as_slice())
    }

    /// The hosts `on` names, in order and each once: a group is its hosts (groups may name
    /// groups), anything else a host.
    pub fn hosts(&self, on: &[String]) -> Result<Vec<String>, EngineError> {
        let mut hosts = IndexSet::new();
        for name in on.iter().flat_map(|n| n.split(',')).map(str::trim) {
            if !name.is_empty() {
                self.expand(name, &mut Vec::new(), &mut hosts)?;
            }
        }
        Ok(hosts.into_iter().collect())
    }

    fn expand(
        &self,
        name: &str,
        within: &mut Vec<String>,
        hosts: &mut IndexSet<String>,
    ) -> Result<(), EngineError> {
        let Some((_, members)) = self.groups.iter().find(|(g, _)| g == name) else {
            hosts.insert(name.to_string());
            return Ok(());
        };
        if within.iter().any(|g| g == name) {
            within.push(name.to_string());
            return Err(EngineError::InvalidParams(format!(
                "{HOSTS_FILE}: groups name each other in a circle: {}",
                within.join(" -> ")
            )));
        }
        within.push(name.to_string());
        for member in members {
            self.expand(member, within, hosts)?;
        }
        within.pop();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts_of(text: &str, on: &str) -> Result<Vec<String>, EngineError> {
        HostsFile::parse(text)
            .map_err(EngineError::InvalidParams)?
            .hosts(&[on.to_string()])
    }

    #[test]
    fn groups_expand_in_order_each_host_once() {
        let conf = "# the fleet\nweb: web-1 web-2, web-3\ndb: db-1\nall: web db web-1  # again\n";
        assert_eq!(
            hosts_of(conf, "all,extra").unwrap(),
            ["web-1", "web-2", "web-3", "db-1", "extra"]
        );
    }

    #[test]
    fn circles_and_bad_lines_are_refused_with_where() {
        let circle = hosts_of("a: b\nb: a\n", "a").unwrap_err().to_string();
        assert!(circle.contains("a -> b -> a"), "{circle}");
        assert!(
            HostsFile::parse("web web-1\n")
                .unwrap_err()
                .contains("line 1")
        );
        assert!(
            HostsFile::parse("a: x\na = y\n")
                .unwrap_err()
                .contains("twice")
        );
        assert!(
            HostsFile::parse("a = 'open\n")
                .unwrap_err()
                .contains("quote")
        );
    }

    #[test]
    fn connect_commands_are_split_as_a_shell_would() {
        let file = HostsFile::parse(
            "app = docker exec -it app sh -c\npod = kubectl exec -it 'web 0' -- sh -c\nweb: app pod\n",
        )
        .unwrap();
        assert_eq!(
            file.connect("pod").unwrap(),
            ["kubectl", "exec", "-it", "web 0", "--", "sh", "-c"]
        );
        assert!(file.connect("web").is_none());
        assert!(file.is_group("web"));
    }
}
