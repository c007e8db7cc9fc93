//! What a line read from the wire is: a message for rmcp, or a refusal answered at once (a
//! parse error, an invalid request, invalid params, a request before the handshake).

use super::{META_PROTOCOL_VERSION, WireTransport};
use rmcp::RoleServer;
// The 2025-era subscribe requests are still served, so their types are still checked.
#[allow(deprecated)]
use rmcp::model::{
    CallToolRequest, CancelTaskRequest, ClientRequest, CompleteRequest, DiscoverRequest, ErrorCode,
    ErrorData, GetPromptRequest, GetTaskRequest, InitializeRequest, JsonRpcMessage, JsonRpcRequest,
    ListToolsRequest, ReadResourceRequest, SubscribeRequest, UnsubscribeRequest,
};
use rmcp::service::RxJsonRpcMessage;
use serde_json::{Map, Value, json};
use tokio::io::AsyncRead;

/// What an invalid request is told it lacks.
const NEEDS: &str =
    "(a request needs \"jsonrpc\": \"2.0\", an id that is a string or number, and a method)";

impl<R: AsyncRead + Unpin + Send> WireTransport<R> {
    /// What to do with one line: a message for the server, or nothing (answered or ignored).
    pub(super) fn classify(&mut self, line: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
        let object = self.object_of(line)?;
        let id = object
            .get("id")
            .filter(|id| id.is_string() || id.is_number())
            .cloned();
        let method = object
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let is_request = method.is_some() && object.contains_key("id");
        let is_response = object.contains_key("result") || object.contains_key("error");
        if method.is_none() && !is_response {
            // Neither a request, a notification nor a response (`{"a":1}`): answered as the
            // invalid request it is, before the handshake too, rather than left unanswered
            // while its client waits.
            self.answer(
                id.unwrap_or(Value::Null),
                ErrorData::invalid_request(format!("invalid request: no method {NEEDS}"), None),
            );
            return None;
        }

        if let Some(error) = self.refusal(&object, method.as_deref(), is_request) {
            if is_request {
                self.answer(id.unwrap_or(Value::Null), error);
            } else {
                tracing::debug!("ignored a message: {}", error.message);
            }
            return None;
        }
        self.decode(object, id, method.as_deref(), is_request)
    }

    /// The JSON object a line holds, or nothing: a blank line, or what is answered as a parse
    /// error or an invalid request.
    fn object_of(&mut self, line: &[u8]) -> Option<Map<String, Value>> {
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let value: Value = match serde_json::from_slice(line) {
            Ok(value) => value,
            Err(e) => {
                self.answer(
                    Value::Null,
                    ErrorData::new(
                        ErrorCode::PARSE_ERROR,
                        format!("parse error: not JSON ({e}); send one JSON-RPC message per line"),
                        None,
                    ),
                );
                return None;
            }
        };
        let Value::Object(object) = value else {
            self.answer(
                Value::Null,
                ErrorData::invalid_request(
                    "invalid request: a message is a JSON object (batches are not supported)",
                    None,
                ),
            );
            return None;
        };
        Some(object)
    }

    /// The message rmcp reads in an object nothing refused, or nothing: a request whose params
    /// do not fit its method or that is no request at all is answered, an unknown
    /// notification ignored.
    fn decode(
        &mut self,
        object: Map<String, Value>,
        id: Option<Value>,
        method: Option<&str>,
        is_request: bool,
    ) -> Option<RxJsonRpcMessage<RoleServer>> {
        let params = object.get("params").cloned();
        let value = Value::Object(object);
        match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value.clone()) {
            Ok(JsonRpcMessage::Request(request))
                if matches!(request.request, ClientRequest::CustomRequest(_))
                    && let Some(method) = method
                    && let Some(problem) = params_problem(method, params) =>
            {
                // rmcp reads a standard method whose params do not fit as a custom request,
                // and would answer "method not found".
                self.answer(
                    id.unwrap_or(Value::Null),
                    ErrorData::invalid_params(
                        format!("invalid params for {method}: {problem}"),
                        None,
                    ),
                );
                None
            }
            Ok(message) => Some(message),
            Err(e) if !is_request && method.is_some() => {
                // A notification cannot be answered; unknown ones are ignored, as the other
                // MCP SDKs do.
                tracing::debug!("ignored a notification that is not MCP: {e}");
                None
            }
            Err(e) => {
                let detail = invalid_request_detail(method, value, &e);
                self.answer(
                    id.unwrap_or(Value::Null),
                    ErrorData::invalid_request(format!("invalid request: {detail} {NEEDS}"), None),
                );
                None
            }
        }
    }

    /// Why a well-formed message is refused before rmcp sees it, if it is.
    fn refusal(
        &mut self,
        object: &Map<String, Value>,
        method: Option<&str>,
        is_request: bool,
    ) -> Option<ErrorData> {
        let params = object.get("params");
        if method == Some("tools/call")
            && let Some(arguments) = params.and_then(|p| p.get("arguments"))
            && !(arguments.is_object() || arguments.is_null())
        {
            return Some(ErrorData::invalid_params(
                format!(
                    "tools/call arguments must be a JSON object of named arguments, not {}",
                    json_type(arguments)
                ),
                None,
            ));
        }
        if self.started {
            return None;
        }
        match method {
            Some("initialize") if is_request => {
                self.started = true;
                None
            }
            Some("ping" | "server/discover") if is_request => None,
            Some(_)
                if is_request
                    && params
                        .and_then(|p| p.get("_meta"))
                        .and_then(|m| m.get(META_PROTOCOL_VERSION))
                        .is_some() =>
            {
                // A 2026-era request that carries its own protocol metadata needs no handshake.
                self.started = true;
                None
            }
            Some(method) if is_request => Some(ErrorData::invalid_request(
                format!(
                    "the connection is not initialized: send `initialize` first (or, in protocol 2026-07-28, give _meta with the protocol version and client capabilities), then {method}"
                ),
                None,
            )),
            // Notifications and responses before the handshake mean nothing yet; rmcp would
            // end the connection on them.
            _ => Some(ErrorData::invalid_request(
                "a message before `initialize` was ignored",
                None,
            )),
        }
    }
}

/// Why the params of a standard MCP request do not fit its method, if they do not.
#[allow(deprecated)]
fn params_problem(method: &str, params: Option<Value>) -> Option<String> {
    let request = json!({"method": method, "params": params});
    macro_rules! check {
        ($($name:literal => $type:ty),* $(,)?) => {
            match method {
                $($name => serde_json::from_value::<$type>(request).err().map(|e| e.to_string()),)*
                _ => None,
            }
        };
    }
    check!(
        "initialize" => InitializeRequest,
        "server/discover" => DiscoverRequest,
        "tools/call" => CallToolRequest,
        "tools/list" => ListToolsRequest,
        "resources/read" => ReadResourceRequest,
        "resources/subscribe" => SubscribeRequest,
        "resources/unsubscribe" => UnsubscribeRequest,
        "prompts/get" => GetPromptRequest,
        "completion/complete" => CompleteRequest,
        "tasks/get" => GetTaskRequest,
        "tasks/cancel" => CancelTaskRequest,
    )
}

/// What is wrong with a message that is no request rmcp reads. Read as a request alone, its
/// error names what is wrong better than the error of reading it as any message.
fn invalid_request_detail(method: Option<&str>, value: Value, e: &serde_json::Error) -> String {
    if method.is_none() {
        "no method".to_string()
    } else {
        serde_json::from_value::<JsonRpcRequest<ClientRequest>>(value)
            .err()
            .map_or_else(|| e.to_string(), |e| e.to_string())
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
