//! `search_output`'s parameters: a tool call, not a step action, kept beside the actions'
//! parameters because it is validated and described the same way.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which hits `search_output` gives first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchOrder {
    // The newest line first (default): the latest error is what is usually wanted.
    #[default]
    NewestFirst,
    // The oldest retained line first.
    OldestFirst,
}

/// `search_output`: the lines of a session's history, and of a full-screen program's screen,
/// that match a regex. A tool call, not a step action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchOutputParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub session_id: Option<String>,
    /// Regex matched against each line as displayed; a match never spans lines.
    #[schemars(length(min = 1, max = 1000))]
    pub pattern: String,
    /// Match letters of either case.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ignore_case: bool,
    /// Lines before and after each hit (default 0, at most 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 20))]
    pub context: Option<u32>,
    /// Which hits first (default `newest_first`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<SearchOrder>,
    /// Hits in a page (default 20, at most 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<u32>,
    /// The previous page's `next_cursor`, to go on from where it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 200))]
    pub cursor: Option<String>,
}
