//! Plain JSON for a call that streams nothing. rmcp answers every request of a session as an
//! event stream, even one whose whole answer is its response: the client then parses events
//! off a chunked body for what one JSON body says. When the client accepts JSON and the
//! first message of the stream is the response itself (no progress, no request of the
//! server's before it), the response goes back as `application/json`; anything else keeps
//! streaming as it came, the part read so far first.

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::Response;
use futures::StreamExt;
use serde_json::Value;

/// The longest start of a stream read while deciding: a response larger than this streams.
const MOST_HELD: usize = 4 * 1024 * 1024;

pub async fn answer(request: Request, next: Next) -> Response {
    let accepts_json = request.method() == Method::POST
        && request
            .headers()
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.contains("application/json"));
    let response = next.run(request).await;
    let streams = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|t| t.as_bytes().starts_with(b"text/event-stream"));
    if !accepts_json || !streams {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let mut stream = body.into_data_stream();
    let mut held = Vec::new();
    let mut decided = 0;
    loop {
        let Some(Ok(chunk)) = stream.next().await else {
            // Ended (or broke) before a message: what came is all there is.
            break;
        };
        held.extend_from_slice(&chunk);
        while let Some(end) = find(&held[decided..], b"\n\n").map(|at| decided + at + 2) {
            let event = &held[decided..end];
            decided = end;
            match message(event) {
                None => continue,
                Some(first) if is_response(&first) => {
                    parts.headers.remove(header::TRANSFER_ENCODING);
                    parts.headers.remove(header::CACHE_CONTROL);
                    parts.headers.remove("x-accel-buffering");
                    parts.headers.insert(
                        header::CONTENT_TYPE,
                        HeaderValue::from_static("application/json"),
                    );
                    return Response::from_parts(parts, Body::from(first));
                }
                Some(_) => return streaming(parts, held, stream),
            }
        }
        if held.len() > MOST_HELD {
            break;
        }
    }
    streaming(parts, held, stream)
}

/// The stream as it came: what was read, then the rest.
fn streaming(
    parts: axum::http::response::Parts,
    held: Vec<u8>,
    rest: axum::body::BodyDataStream,
) -> Response {
    let start = futures::stream::once(async move { Ok::<_, axum::Error>(Bytes::from(held)) });
    Response::from_parts(parts, Body::from_stream(start.chain(rest)))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The JSON text of an event's `data` lines, when it has any.
fn message(event: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(event).ok()?;
    let data: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(|rest| rest.strip_prefix(' ').unwrap_or(rest))
        .collect();
    let joined = data.join("\n");
    (!joined.trim().is_empty()).then_some(joined)
}

/// A JSON-RPC response or error: it has an id and no method.
fn is_response(text: &str) -> bool {
    serde_json::from_str::<Value>(text).is_ok_and(|m| {
        m.get("id").is_some() && m.get("method").is_none() && m.get("jsonrpc").is_some()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_s_data_is_its_message_and_a_priming_event_has_none() {
        assert_eq!(message(b"data: \nid: 0/0\nretry: 3000\n\n"), None);
        assert_eq!(
            message(b"data: {\"jsonrpc\":\"2.0\",\"id\":2}\nid: 1/0\n\n").as_deref(),
            Some("{\"jsonrpc\":\"2.0\",\"id\":2}")
        );
        assert!(is_response("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}"));
        assert!(!is_response(
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}"
        ));
        assert!(!is_response(
            "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"sampling/createMessage\"}"
        ));
    }
}
