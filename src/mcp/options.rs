//! An agent's own options: `flowdeck mcp` tells the folder's server the options of its command
//! line (toolsets, `--read-only`, `--approve`) in its hello (server/hello.rs), and the server
//! serves that agent with the stricter of its options and the agent's: a person who configured
//! an agent read-only, or its runs to need approval, keeps that whatever server the agent
//! ends up on.

use super::dynamic::DynamicFilter;
use super::{McpOptions, Toolset};
use serde::{Deserialize, Serialize};

/// What the agent's `flowdeck mcp` was started with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentOptions {
    pub toolsets: Vec<String>,
    pub read_only: bool,
    pub dynamic_filters: DynamicFilter,
    pub approve_agent_runs: bool,
    /// `--max-wait`, in milliseconds (a server older than it reads none: its ceiling).
    #[serde(default)]
    pub max_wait_ms: Option<u64>,
}

/// An agent that said nothing of its options (an MCP client on the socket or over HTTP)
/// gets what `flowdeck mcp` gives by default.
impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions {
            toolsets: Toolset::DEFAULT
                .iter()
                .map(|t| t.as_str().to_string())
                .collect(),
            read_only: false,
            dynamic_filters: DynamicFilter::default(),
            approve_agent_runs: false,
            max_wait_ms: None,
        }
    }
}

impl AgentOptions {
    /// The options of an agent's own command line, as its hello tells them.
    pub fn of(options: &McpOptions) -> Self {
        let mut toolsets: Vec<String> = options
            .toolsets
            .iter()
            .map(|t| t.as_str().to_string())
            .collect();
        toolsets.sort();
        AgentOptions {
            toolsets,
            read_only: options.read_only,
            dynamic_filters: options.dynamic_filters.clone(),
            approve_agent_runs: options.approve_agent_runs,
            max_wait_ms: u64::try_from(options.max_wait.as_millis()).ok(),
        }
    }
}

/// The stricter of the host's options and the agent's: only the toolsets both offer,
/// read-only or approval mode if either asks, only the workflows both filters pass, and the
/// shorter wait.
pub fn merge(host: &McpOptions, agent: &AgentOptions) -> McpOptions {
    let theirs: Vec<Toolset> = agent
        .toolsets
        .iter()
        .filter_map(|name| Toolset::parse(name))
        .collect();
    McpOptions {
        toolsets: host
            .toolsets
            .iter()
            .copied()
            .filter(|t| theirs.contains(t))
            .collect(),
        read_only: host.read_only || agent.read_only,
        dynamic_filters: host.dynamic_filters.and(&agent.dynamic_filters),
        approve_agent_runs: host.approve_agent_runs || agent.approve_agent_runs,
        max_wait: agent
            .max_wait_ms
            .map(std::time::Duration::from_millis)
            .map_or(host.max_wait, |theirs| theirs.min(host.max_wait)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stricter_options_win() {
        let host = McpOptions {
            toolsets: [Toolset::Terminal, Toolset::Runs].into_iter().collect(),
            ..McpOptions::default()
        };
        let agent = AgentOptions {
            toolsets: vec!["runs".into(), "authoring".into(), "nonsense".into()],
            read_only: true,
            dynamic_filters: DynamicFilter::any_of(vec!["deploy_*".into()]),
            approve_agent_runs: true,
            max_wait_ms: Some(20_000),
        };
        let merged = merge(&host, &agent);
        assert_eq!(merged.max_wait, std::time::Duration::from_secs(20));
        assert_eq!(
            merged.toolsets,
            [Toolset::Runs].into_iter().collect(),
            "only what both offer"
        );
        assert!(merged.read_only && merged.approve_agent_runs);
        assert!(merged.dynamic_filters.matches("deploy_web"));
        assert!(!merged.dynamic_filters.matches("build"));
        let lenient = AgentOptions {
            toolsets: Toolset::ALL.iter().map(|t| t.as_str().into()).collect(),
            read_only: false,
            dynamic_filters: DynamicFilter::default(),
            approve_agent_runs: false,
            max_wait_ms: Some(600_000),
        };
        let strict_host = McpOptions {
            read_only: true,
            approve_agent_runs: true,
            ..McpOptions::default()
        };
        let merged = merge(&strict_host, &lenient);
        assert!(
            merged.read_only && merged.approve_agent_runs,
            "an agent cannot loosen the host"
        );
        assert_eq!(merged.max_wait, strict_host.max_wait, "nor wait longer");
    }
}
