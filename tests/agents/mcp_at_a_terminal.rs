//! `flowdeck mcp` typed by a person at a terminal (issue 37): it says on stderr what it is
//! for and how to give it to an agent, and still serves the protocol on stdin and stdout.

// Helpers outside #[test] functions unwrap too: a failure there is the test's failure.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::studio::{exit_code, expect, open};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flowdeck_mcp_at_a_terminal_says_what_it_is_for_and_still_serves() {
    let (folder, runtime) = common::tiny_folder();
    let terminals = flowdeck::term::Terminals::new(flowdeck::term::TermConfig::default());
    let program = vec![
        env!("CARGO_BIN_EXE_flowdeck").to_string(),
        "--workflows".into(),
        folder.path().display().to_string(),
        "mcp".into(),
    ];
    let xdg = (
        "XDG_RUNTIME_DIR".to_string(),
        runtime.path().display().to_string(),
    );
    // Wide, so that no line of the answer is wrapped across the patterns.
    let mcp = open(&terminals, program, None, (400, 40), vec![xdg]);
    expect(&mcp, "flowdeck mcp is the MCP server for agents").await;
    expect(
        &mcp,
        "claude mcp add flowdeck -- flowdeck mcp --workflows /",
    )
    .await;
    expect(&mcp, "`flowdeck` opens the studio").await;
    mcp.send_text(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"person\",\"version\":\"0\"}}}\r",
        "test",
    )
    .unwrap();
    // The typed line's echo holds no "result": only the server's answer does.
    expect(&mcp, r#""id":1,"result":\{"#).await;
    mcp.send_text("\x04", "test").unwrap();
    assert_eq!(exit_code(&mcp).await, Some(0));
}
