//! Why a server does not serve MCP over HTTP although it was asked to (a port another program
//! holds): told in every front end's welcome (hello.rs), so that the person sees it in the
//! studio and the agent's host in `flowdeck mcp`'s stderr, not only in the server's log. A
//! program holding the port would otherwise receive the agents' requests and their token.

use std::sync::Mutex;

static TROUBLE: Mutex<Option<String>> = Mutex::new(None);

/// Records why HTTP is not served (`None`: it is, or was not asked for).
pub fn set(why: Option<String>) {
    *TROUBLE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = why;
}

/// Why HTTP is not served, if it was asked for and is not.
pub fn get() -> Option<String> {
    TROUBLE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// The sentence front ends show for an HTTP server that could not start: the error first (the
/// studio's status line shows what fits), then what it means and what to do.
pub fn sentence(error: &dyn std::fmt::Display) -> String {
    format!(
        "{error}: agents set up for that address may be reaching another program, which would receive their requests and token; free the port or choose another (FLOWDECK_HTTP), and prefer the generated token (`flowdeck docs mcp`)"
    )
}
