//! Why an engine call failed.

use crate::term::TermError;
use crate::workflow::pattern::PatternError;
use thiserror::Error;

/// An error from an engine method; front ends turn it into their own error shape.
#[derive(Debug, Error)]
pub enum EngineError {
    #[error(transparent)]
    Term(#[from] TermError),
    #[error("invalid pattern `{pattern}`: {source}")]
    Pattern {
        pattern: String,
        #[source]
        source: PatternError,
    },
    #[error("invalid parameters: {0}")]
    InvalidParams(String),
}

impl EngineError {
    /// A short machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            EngineError::Term(e) => e.code(),
            EngineError::Pattern { source, .. } => source.rule(),
            EngineError::InvalidParams(_) => "invalid_params",
        }
    }
}
