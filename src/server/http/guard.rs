//! What every HTTP request passes before rmcp sees it: its bearer token (else a 401 that
//! closes the connection: a client without the token gets nothing more from it, and holds
//! none of the server's connections); for one that would open a session, room for one more;
//! and for a POST, a body no larger than a stdio message that is JSON at all (else the
//! JSON-RPC parse error stdio answers, -32700).

use super::MOST_SESSIONS;
use super::sessions::CountedSessions;
use crate::mcp::wire::MAX_MESSAGE;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// The header a session's requests carry (rmcp's name for it).
const SESSION_HEADER: &str = "mcp-session-id";

/// How long a client refused for want of a session slot waits before trying again.
const RETRY_AFTER_SECONDS: &str = "5";

#[derive(Clone)]
pub struct Guard {
    token: Arc<[u8]>,
    sessions: Arc<CountedSessions>,
}

impl Guard {
    pub fn new(token: String, sessions: Arc<CountedSessions>) -> Self {
        Guard {
            token: token.into_bytes().into(),
            sessions,
        }
    }

    /// Whether the request carries `Authorization: Bearer TOKEN` with this server's token.
    fn authorized(&self, headers: &HeaderMap) -> bool {
        headers
            .get(header::AUTHORIZATION)
            .and_then(|value| bearer(value))
            .is_some_and(|given| same(given, &self.token))
    }
}

pub async fn check(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    if !guard.authorized(request.headers()) {
        return unauthorized();
    }
    if opens_a_session(&request) && guard.sessions.open().await >= MOST_SESSIONS {
        return too_many_sessions();
    }
    let ends_a_session = request.method() == Method::DELETE;
    let mut answer = match well_formed(request).await {
        Ok(request) => next.run(request).await,
        Err(refused) => return refused,
    };
    // rmcp accepts a session's end with 202; the Python SDK counts only 200 and 204 as the
    // session ended (and warns). Nothing follows the end, so 204 says it exactly.
    if ends_a_session && answer.status() == StatusCode::ACCEPTED {
        *answer.status_mut() = StatusCode::NO_CONTENT;
    }
    answer
}

/// A POST's body read whole, at most a stdio message (past it, the rest is never read), and
/// checked to be JSON before rmcp reads it again.
async fn well_formed(request: Request) -> Result<Request, Response> {
    if request.method() != Method::POST {
        return Ok(request);
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_MESSAGE).await else {
        return Err(too_large());
    };
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&bytes) {
        return Err(parse_error(&e));
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// The token of a `Bearer` credential (the scheme's name in any case, RFC 9110).
fn bearer(value: &HeaderValue) -> Option<&[u8]> {
    let value = value.as_bytes();
    let scheme = value.get(..7)?;
    scheme
        .eq_ignore_ascii_case(b"bearer ")
        .then(|| value[7..].trim_ascii())
}

/// Compares in time that depends on the length alone, so that timing the answers does not
/// reveal how much of a guess was right (`subtle`: the comparison is hidden from the
/// optimizer, which could otherwise end a hand-written loop at the first difference).
fn same(given: &[u8], token: &[u8]) -> bool {
    given.ct_eq(token).into()
}

/// A POST without a session's id starts one (an `initialize`), or is a stateless request.
fn opens_a_session(request: &Request) -> bool {
    request.method() == Method::POST && !request.headers().contains_key(SESSION_HEADER)
}

/// The answer to a request without the token; hyper closes the connection after it, as its
/// `Connection: close` says.
fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [
            (header::WWW_AUTHENTICATE, r#"Bearer realm="flowdeck""#),
            (header::CONNECTION, "close"),
        ],
        "flowdeck needs its token on every request: Authorization: Bearer TOKEN (the token is the file `flowdeck serve --http` printed, or FLOWDECK_HTTP_TOKEN)\n",
    )
        .into_response()
}

fn too_large() -> Response {
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "the request's body is larger than {MAX_MESSAGE} bytes (the most one MCP message may hold), or it was cut off\n"
        ),
    )
        .into_response()
}

/// The answer stdio gives a line that is not JSON, with the status HTTP gives bad input.
fn parse_error(e: &serde_json::Error) -> Response {
    let answer = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32700,
            "message": format!("parse error: not JSON ({e}); send one JSON-RPC message per request"),
        },
    });
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        answer.to_string(),
    )
        .into_response()
}

fn too_many_sessions() -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::RETRY_AFTER, RETRY_AFTER_SECONDS)],
        format!(
            "flowdeck already holds {MOST_SESSIONS} MCP sessions over HTTP: end one (DELETE with its Mcp-Session-Id) or wait for an idle one to expire\n"
        ),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_token_after_bearer_passes() {
        let token = b"0123456789abcdef";
        let pass = |value: &str| {
            bearer(&HeaderValue::from_str(value).unwrap()).is_some_and(|t| same(t, token))
        };
        assert!(pass("Bearer 0123456789abcdef"));
        assert!(pass("bearer 0123456789abcdef"));
        assert!(!pass("Bearer 0123456789abcdeg"));
        assert!(!pass("Bearer 0123456789abcde"));
        assert!(!pass("Basic 0123456789abcdef"));
        assert!(!pass("Bearer"));
        assert!(!pass("0123456789abcdef"));
    }
}
