//! The scalars a manifest writes as values: an argument's default or choices, a `set_env`
//! value. Apart from the model so that actions and the model can both use it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A scalar written in a manifest: a default, an enum choice or a `set_env` value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Scalar {
    Bool(bool),
    Integer(i64),
    Number(f64),
    String(String),
}

impl fmt::Display for Scalar {
    /// The text an environment variable holds for this scalar.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Bool(b) => write!(f, "{b}"),
            Scalar::Integer(i) => write!(f, "{i}"),
            Scalar::Number(n) => write!(f, "{n}"),
            Scalar::String(s) => f.write_str(s),
        }
    }
}
