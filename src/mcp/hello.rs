//! The relay's hello: before the first byte of MCP, `flowdeck mcp` tells the host the options
//! of its own command line (toolsets, `--read-only`, `--approve`), in one JSON line that is
//! not a JSON-RPC message. The host serves that agent with the stricter of its options and
//! the agent's: a person who configured an agent read-only, or its runs to need approval,
//! keeps that whether the agent ends up relayed to a studio or not.
//!
//! A connection that begins with anything else (a client speaking MCP on the socket
//! directly) is served with the host's options, its first line passed on untouched.

use super::{McpOptions, Toolset};
use serde::{Deserialize, Serialize};
use std::io::Cursor;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

/// A first line longer than this is no hello: it is passed on as MCP.
const MAX_HELLO: u64 = 64 * 1024;

#[derive(Debug, Serialize, Deserialize)]
struct Hello {
    flowdeck_relay: AgentOptions,
}

/// What the agent's `flowdeck mcp` was started with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentOptions {
    pub toolsets: Vec<String>,
    pub read_only: bool,
    pub dynamic_filters: Vec<String>,
    pub approve_agent_runs: bool,
}

/// The hello line (with its newline) that tells the host `options`.
pub fn line(options: &McpOptions) -> String {
    let mut toolsets: Vec<String> = options
        .toolsets
        .iter()
        .map(|t| t.as_str().to_string())
        .collect();
    toolsets.sort();
    let hello = Hello {
        flowdeck_relay: AgentOptions {
            toolsets,
            read_only: options.read_only,
            dynamic_filters: options.dynamic_filters.clone(),
            approve_agent_runs: options.approve_agent_runs,
        },
    };
    // A struct of strings and booleans always serializes.
    let mut text = serde_json::to_string(&hello).unwrap_or_default();
    text.push('\n');
    text
}

/// The stream a connection's MCP is read from once its hello (if any) was taken.
pub type Rest<R> = tokio::io::Chain<Cursor<Vec<u8>>, BufReader<R>>;

/// Reads a connection's first line: the agent's options if it is a hello, and the stream
/// to serve MCP from (holding the first line again when it was not a hello).
pub async fn read<R: AsyncRead + Unpin>(read: R) -> (Option<AgentOptions>, Rest<R>) {
    let mut reader = BufReader::new(read);
    let mut first = Vec::new();
    // An error or an early end is for the MCP transport to meet and report.
    let _ = (&mut reader)
        .take(MAX_HELLO)
        .read_until(b'\n', &mut first)
        .await;
    match serde_json::from_slice::<Hello>(&first) {
        Ok(hello) => (
            Some(hello.flowdeck_relay),
            Cursor::new(Vec::new()).chain(reader),
        ),
        Err(_) => (None, Cursor::new(first).chain(reader)),
    }
}

/// The stricter of the host's options and the agent's: only the toolsets both offer,
/// read-only or approval mode if either asks. The agent's workflow filters replace the
/// host's (they narrow a list, they guard nothing).
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
        dynamic_filters: if agent.dynamic_filters.is_empty() {
            host.dynamic_filters.clone()
        } else {
            agent.dynamic_filters.clone()
        },
        approve_agent_runs: host.approve_agent_runs || agent.approve_agent_runs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn rest_of(rest: Rest<&[u8]>) -> String {
        let mut text = String::new();
        let mut rest = rest;
        rest.read_to_string(&mut text).await.expect("read");
        text
    }

    #[tokio::test]
    async fn a_hello_is_taken_and_anything_else_is_passed_on_whole() {
        let options = McpOptions {
            read_only: true,
            approve_agent_runs: true,
            ..McpOptions::default()
        };
        let stream = format!("{}{{\"jsonrpc\":\"2.0\"}}\n", line(&options));
        let (agent, rest) = read(stream.as_bytes()).await;
        let agent = agent.expect("a hello");
        assert!(agent.read_only && agent.approve_agent_runs);
        assert_eq!(agent.toolsets.len(), 5);
        assert_eq!(rest_of(rest).await, "{\"jsonrpc\":\"2.0\"}\n");

        let direct = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n{\"x\":1}\n";
        let (agent, rest) = read(direct.as_bytes()).await;
        assert_eq!(agent, None);
        assert_eq!(rest_of(rest).await, direct);

        let long = "x".repeat(200 * 1024);
        let (agent, rest) = read(long.as_bytes()).await;
        assert_eq!(agent, None);
        assert_eq!(
            rest_of(rest).await,
            long,
            "an overlong first line is kept whole"
        );
    }

    #[test]
    fn the_stricter_options_win() {
        let host = McpOptions {
            toolsets: [Toolset::Terminal, Toolset::Runs].into_iter().collect(),
            ..McpOptions::default()
        };
        let agent = AgentOptions {
            toolsets: vec!["runs".into(), "authoring".into(), "nonsense".into()],
            read_only: true,
            dynamic_filters: vec!["deploy_*".into()],
            approve_agent_runs: true,
        };
        let merged = merge(&host, &agent);
        assert_eq!(
            merged.toolsets,
            [Toolset::Runs].into_iter().collect(),
            "only what both offer"
        );
        assert!(merged.read_only && merged.approve_agent_runs);
        assert_eq!(merged.dynamic_filters, vec!["deploy_*".to_string()]);
        let lenient = AgentOptions {
            toolsets: Toolset::ALL.iter().map(|t| t.as_str().into()).collect(),
            read_only: false,
            dynamic_filters: Vec::new(),
            approve_agent_runs: false,
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
    }
}
