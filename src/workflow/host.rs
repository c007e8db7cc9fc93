//! A manifest's `host:`: where its runs open their terminal, through ssh, unless the run is
//! given a host. `$NAME` and `${NAME}` take the value of the argument NAME (given to the
//! run, else its default), so that one workflow serves any host: `host: $TARGET`.

use super::model::Workflow;
use indexmap::IndexMap;

/// The arguments `template` names (`$NAME`, `${NAME}`), in order.
pub fn referenced(template: &str) -> Vec<String> {
    let mut names = Vec::new();
    let _ = expand(template, |name| {
        names.push(name.to_string());
        Some(String::new())
    });
    names
}

/// `template` with each `$NAME` and `${NAME}` replaced by `value(NAME)`; fails naming the
/// first that has none. `$$` is a `$`.
pub fn expand(
    template: &str,
    mut value: impl FnMut(&str) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(after) = after.strip_prefix('$') {
            out.push('$');
            rest = after;
            continue;
        }
        let (name, next) = match after.strip_prefix('{') {
            Some(inner) => match inner.find('}') {
                Some(end) => (&inner[..end], &inner[end + 1..]),
                None => return Err(format!("`${{` without its `}}` in {template:?}")),
            },
            None => {
                let end = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..end], &after[end..])
            }
        };
        if name.is_empty() {
            return Err(format!(
                "a `$` not followed by an argument's name in {template:?} (write `$$` for a `$`)"
            ));
        }
        match value(name) {
            Some(v) => out.push_str(&v),
            None => return Err(format!("{name} has no value")),
        }
        rest = next;
    }
    out.push_str(rest);
    Ok(out)
}

impl Workflow {
    /// Where a run with `inputs` opens its terminal, from `host:`; `None` for here.
    pub fn host_for(&self, inputs: &IndexMap<String, String>) -> Result<Option<String>, String> {
        let Some(template) = &self.host else {
            return Ok(None);
        };
        let value = |name: &str| {
            inputs.get(name).cloned().or_else(|| {
                self.arguments
                    .get(name)
                    .and_then(|a| a.default.as_ref())
                    .map(ToString::to_string)
            })
        };
        expand(template, value)
            .map(Some)
            .map_err(|why| format!("the workflow's host ({template}) cannot be worked out: {why}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_expanded_in_both_spellings() {
        let value = |n: &str| (n == "TARGET").then(|| "web-1".to_string());
        assert_eq!(expand("$TARGET", value).unwrap(), "web-1");
        assert_eq!(
            expand("deploy@${TARGET}.lan", value).unwrap(),
            "deploy@web-1.lan"
        );
        assert_eq!(expand("a$$b", value).unwrap(), "a$b");
        assert!(expand("$OTHER", value).unwrap_err().contains("OTHER"));
        assert!(expand("${TARGET", value).is_err());
        assert!(expand("x$", value).is_err());
        assert_eq!(referenced("${A}.$B_2-x"), ["A", "B_2"]);
    }
}
