//! The inputs form shown before a run: one field per argument of the workflow, pre-filled
//! with its default, checked before the run may start, and last the host to run on (empty:
//! here, or the workflow's own `host:`; several, or a group of hosts.conf: a fleet). Pure: no
//! terminal, no engine.

use crate::engine::authoring::InputSpec;
use indexmap::IndexMap;

/// One argument being filled.
#[derive(Debug, Clone)]
pub struct Field {
    pub spec: InputSpec,
    pub value: String,
    /// Why the value cannot be used, once the person tried to start.
    pub error: Option<String>,
}

impl Field {
    /// The values the field is picked from, when it is not typed: an enum's choices, or
    /// `true` and `false` for a boolean.
    pub fn options(&self) -> Option<Vec<String>> {
        match &self.spec.choices {
            Some(choices) => Some(choices.clone()),
            None if self.spec.kind == "boolean" => Some(vec!["true".into(), "false".into()]),
            None => None,
        }
    }
}

/// The name of the form's last field, where the host goes.
pub const HOST_FIELD: &str = "on host";

/// What the form starts: the values, and where (`None`: here or the workflow's host).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submitted {
    pub inputs: IndexMap<String, String>,
    pub host: Option<String>,
}

/// The form of one workflow's run.
#[derive(Debug, Clone)]
pub struct InputsForm {
    pub workflow: String,
    pub fields: Vec<Field>,
    pub selected: usize,
}

impl InputsForm {
    pub fn new(workflow: String, inputs: Vec<InputSpec>) -> InputsForm {
        let mut fields: Vec<Field> = inputs
            .into_iter()
            .map(|spec| Field {
                // The last run's value first (never a secret's: the engine leaves those
                // out), if it is still one of the choices; then the default.
                value: spec
                    .last_value
                    .clone()
                    .filter(|v| spec.choices.as_ref().is_none_or(|c| c.contains(v)))
                    .or_else(|| spec.default.clone())
                    .or_else(|| spec.choices.as_ref().and_then(|c| c.first().cloned()))
                    .unwrap_or_default(),
                spec,
                error: None,
            })
            .collect();
        fields.push(Field {
            spec: InputSpec {
                name: HOST_FIELD.to_string(),
                description: "via ssh; several (a,b) or a hosts.conf group: on each; empty: here"
                    .into(),
                required: false,
                kind: "host".into(),
                default: None,
                choices: None,
                pattern: None,
                secret: false,
                last_value: None,
            },
            value: String::new(),
            error: None,
        });
        InputsForm {
            workflow,
            fields,
            selected: 0,
        }
    }

    pub fn move_by(&mut self, delta: isize) {
        let n = self.fields.len();
        if n > 0 {
            self.selected = (self.selected as isize + delta).rem_euclid(n as isize) as usize;
        }
    }

    pub fn type_char(&mut self, c: char) {
        let Some(field) = self.fields.get_mut(self.selected) else {
            return;
        };
        // A field with choices (an enum, a boolean) is picked, not typed: free text could
        // only be wrong. Space picks the next, as it ticks a checkbox.
        if field.options().is_none() {
            field.value.push(c);
            field.error = check(field);
        } else if c == ' ' {
            self.cycle_choice(1);
        }
    }

    pub fn delete_char(&mut self) {
        if let Some(field) = self.fields.get_mut(self.selected)
            && field.options().is_none()
        {
            field.value.pop();
            field.error = check(field);
        }
    }

    /// Moves an enum field to its previous (-1) or next (+1) choice; toggles a boolean.
    pub fn cycle_choice(&mut self, delta: isize) {
        let Some(field) = self.fields.get_mut(self.selected) else {
            return;
        };
        let Some(options) = field.options().filter(|o| !o.is_empty()) else {
            return;
        };
        let next = match options.iter().position(|o| *o == field.value) {
            Some(at) => (at as isize + delta).rem_euclid(options.len() as isize) as usize,
            // Unset yet: the first step lands on the first or the last choice.
            None if delta < 0 => options.len() - 1,
            None => 0,
        };
        field.value = options[next].clone();
        field.error = None;
    }

    /// The values to start the run with and where, or `None` with each field's error set.
    /// Empty optional fields are left out so that the workflow's own default applies.
    pub fn submit(&mut self) -> Option<Submitted> {
        let mut ok = true;
        for field in &mut self.fields {
            field.error = check(field);
            ok &= field.error.is_none();
        }
        if !ok {
            if let Some(first) = self.fields.iter().position(|f| f.error.is_some()) {
                self.selected = first;
            }
            return None;
        }
        let (host, inputs): (Vec<&Field>, Vec<&Field>) =
            self.fields.iter().partition(|f| f.spec.kind == "host");
        Some(Submitted {
            inputs: inputs
                .into_iter()
                .filter(|f| !f.value.is_empty())
                .map(|f| (f.spec.name.clone(), f.value.clone()))
                .collect(),
            host: host
                .first()
                .map(|f| f.value.trim().to_string())
                .filter(|h| !h.is_empty()),
        })
    }
}

/// What is wrong with a field's value, as far as the form can tell before the engine checks
/// the contract again at start.
fn check(field: &Field) -> Option<String> {
    let value = field.value.as_str();
    if value.is_empty() {
        return field.spec.required.then(|| "required".to_string());
    }
    if let Some(choices) = &field.spec.choices
        && !choices.iter().any(|c| c == value)
    {
        return Some(format!("one of {}", choices.join(", ")));
    }
    match field.spec.kind.as_str() {
        "host"
            if value.starts_with('-')
                || value.contains(char::is_whitespace) && !value.contains(',') =>
        {
            Some("a host, user@host or an ssh alias (several: a,b)".into())
        }
        "integer" if value.parse::<i64>().is_err() => Some("a whole number".into()),
        "number" if value.parse::<f64>().is_err() => Some("a number".into()),
        "boolean" if !matches!(value, "true" | "false") => Some("true or false".into()),
        _ => None,
    }
}
