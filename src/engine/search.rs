//! Searching a session's output: the tool's parameters in, a page of hits out. The studio's
//! pane search calls this method too, so it holds nothing of a front end.

use super::{Engine, EngineError};
use crate::term::search::{self, Order, Query};
// What a page holds, for front ends, which name `term` through the engine only.
pub use crate::term::search::{ContextLine, Found, Hit, Source};
use crate::workflow::action::{SearchOrder, SearchOutputParams};
use crate::workflow::pattern::{self, PatternError};
use regex::Regex;
use schemars::JsonSchema;
use serde::Serialize;

/// Hits in a page when none is asked.
pub const DEFAULT_LIMIT: usize = 20;

/// The answer to `search_output`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, JsonSchema)]
pub struct SearchResult {
    pub session_id: String,
    pub pattern: String,
    pub order: SearchOrder,
    /// The hits a page holds at most, as applied (1 to 200; a larger ask is clamped).
    pub limit: usize,
    /// The context lines given before and after each hit, as applied (at most 20).
    pub context: usize,
    #[serde(flatten)]
    pub found: Found,
}

impl Engine {
    /// A page of the lines of a session's retained history, and of a full-screen program's
    /// screen, that match a regex (term/search.rs). Asked limits beyond their bounds are
    /// clamped; a cursor must come from a page of the same session and order.
    pub fn search_output(
        &self,
        session: &str,
        p: &SearchOutputParams,
    ) -> Result<SearchResult, EngineError> {
        let s = self.terminals.get(session)?;
        let regex = compile(&p.pattern, p.ignore_case)?;
        let order = p.order.unwrap_or_default();
        let term_order = match order {
            SearchOrder::NewestFirst => Order::NewestFirst,
            SearchOrder::OldestFirst => Order::OldestFirst,
        };
        let cursor = p
            .cursor
            .as_deref()
            .map(|c| s.search_cursor(c, term_order))
            .transpose()?;
        let limit = p
            .limit
            .map_or(DEFAULT_LIMIT, |l| l as usize)
            .clamp(1, search::MAX_LIMIT);
        let context = p.context.map_or(0, |c| c as usize).min(search::MAX_CONTEXT);
        let found = s.search(&Query {
            regex,
            order: term_order,
            context,
            limit,
            cursor,
        });
        Ok(SearchResult {
            session_id: s.id().to_string(),
            pattern: p.pattern.clone(),
            order,
            limit,
            context,
            found,
        })
    }
}

/// The pattern with the limits waits have. An empty one would list every line, which is
/// reading the history, not searching it.
fn compile(text: &str, ignore_case: bool) -> Result<Regex, EngineError> {
    let refused = |source| EngineError::Pattern {
        pattern: text.to_string(),
        source,
    };
    if text.is_empty() {
        return Err(refused(PatternError::Invalid(
            "the pattern is empty and would match every line; to read lines, read the history instead".into(),
        )));
    }
    pattern::compile_with_flags(text, if ignore_case { "mi" } else { "m" }).map_err(refused)
}
