//! The inputs `flowdeck run` sends with a run: the `-i KEY=VALUE` given, then, for a run on
//! this machine, the workflow's declared arguments that this command's environment holds.
//!
//! Why the environment is read here: a run's shell looks up the arguments it was not given
//! in its own environment. Run in an engine of this command, that shell inherits the
//! person's environment, so `export LOG_DIR=/var/log` works; run in the folder's server, it
//! has the server's, and the same advice failed (issue 37, F26). Sending the values with the
//! run gives one answer wherever it runs. Only the workflow's own arguments are read, never
//! the rest of the environment; secret ones travel as `-i` values do (to this user's
//! checked socket) and are masked wherever the run writes.

use crate::workflow::Workflow;
use crate::workflow::names::sanitize;
use anyhow::{Result, bail};
use indexmap::IndexMap;

/// Parses `KEY=VALUE` inputs (the value may itself hold `=`).
pub(super) fn parse_inputs(inputs: &[String]) -> Result<IndexMap<String, String>> {
    let mut parsed = IndexMap::new();
    for input in inputs {
        let Some((key, value)) = input.split_once('=') else {
            bail!("input {} is not KEY=VALUE", sanitize(input));
        };
        if parsed.insert(key.to_string(), value.to_string()).is_some() {
            bail!("input {} is given twice", sanitize(key));
        }
    }
    Ok(parsed)
}

/// The inputs of a run of `workflow`: `given`, then its arguments not given that `env` has.
/// None from the environment for a run on another host (`--on`, or the workflow's `host:`):
/// there the far shell's environment is the one the person meant, as before.
pub(super) fn for_run(
    workflow: &Workflow,
    given: &[String],
    on_a_host: bool,
    env: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Result<IndexMap<String, String>> {
    let mut inputs = parse_inputs(given)?;
    if on_a_host || workflow.host.is_some() {
        return Ok(inputs);
    }
    for name in workflow.arguments.keys() {
        if inputs.contains_key(name) {
            continue;
        }
        let Some(value) = env(name) else { continue };
        let Ok(value) = value.into_string() else {
            bail!("{name} in your environment is not UTF-8 text; give it with -i {name}=VALUE");
        };
        inputs.insert(name.clone(), value);
    }
    Ok(inputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_key_value_pairs() {
        let parsed = parse_inputs(&["A=1".into(), "B=x=y".into(), "C=".into()]).unwrap();
        assert_eq!(parsed["B"], "x=y");
        assert_eq!(parsed["C"], "");
        assert!(parse_inputs(&["novalue".into()]).is_err());
        assert!(parse_inputs(&["A=1".into(), "A=2".into()]).is_err());
    }

    fn workflow(extra: &str) -> Workflow {
        let text = format!(
            "name: w\ndescription: d\n{extra}arguments:\n  LOG_DIR: {{ description: d }}\n  DAYS: {{ description: d, required: false }}\ninitial_state: a\nstates:\n  a: {{ action: {{ tool: list_terminal_sessions }} }}\n"
        );
        crate::workflow::validate::check_bytes(text.as_bytes(), crate::workflow::Format::Yaml)
            .workflow
            .unwrap()
    }

    fn env(name: &str) -> Option<std::ffi::OsString> {
        match name {
            "LOG_DIR" => Some("/var/log/app".into()),
            "DAYS" => Some("7".into()),
            "HOME" => Some("/home/someone".into()),
            _ => None,
        }
    }

    #[test]
    fn declared_arguments_come_from_the_environment_after_what_was_given() {
        let inputs = for_run(&workflow(""), &["DAYS=3".into()], false, env).unwrap();
        assert_eq!(inputs["DAYS"], "3", "given wins");
        assert_eq!(inputs["LOG_DIR"], "/var/log/app");
        assert!(!inputs.contains_key("HOME"), "only declared arguments");
        assert_eq!(inputs.len(), 2);
    }

    #[test]
    fn a_run_on_a_host_takes_nothing_from_here() {
        assert!(for_run(&workflow(""), &[], true, env).unwrap().is_empty());
        let on_host = workflow("host: web-1\n");
        assert!(for_run(&on_host, &[], false, env).unwrap().is_empty());
    }

    #[test]
    fn a_value_that_is_not_text_is_refused_naming_it() {
        use std::os::unix::ffi::OsStringExt;
        let bytes =
            |name: &str| (name == "LOG_DIR").then(|| std::ffi::OsString::from_vec(vec![0xff]));
        let told = for_run(&workflow(""), &[], false, bytes)
            .unwrap_err()
            .to_string();
        assert!(
            told.contains("LOG_DIR") && told.contains("-i LOG_DIR="),
            "{told}"
        );
    }
}
