//! `POST /v1/mcp`: the tools over MCP's streamable HTTP transport, statelessly (each message
//! stands alone, so any node of a deployment answers it) and in JSON (never a stream).
//!
//! Before the SDK's transport sees a message, this route does what every route of till does:
//! the bearer token is checked (401, 403), and the body is read as the one JSON-RPC message the
//! document describes (400 with `fieldErrors` otherwise). A well-formed request whose `params`
//! do not fit its method is answered in JSON-RPC, as a JSON-RPC server answers it; what the
//! transport itself refuses comes back in the error envelope.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::JsonBody;
use crate::fields::Problems;
use crate::mcp::TillMcp;
use crate::ops;
use crate::state::AppState;
use axum::body::Body;
use axum::extract::State;
use axum::http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST};
use axum::http::{HeaderMap, Method, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use rmcp::model::{ClientJsonRpcMessage, ErrorData, JsonRpcError, RequestId};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::sync::Arc;
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(send_mcp_message))
}

/// Send one Model Context Protocol message to till's agent tools.
///
/// The Model Context Protocol's streamable HTTP transport, stateless and in JSON: point an
/// MCP client (an AI assistant) at this URL with the agent's bearer token. Its tools are the
/// operations of this document an agent may call (`x-agent-tier` allow or confirm) whose
/// scopes the token holds; `confirm` tools change nothing until called again with the
/// confirmation token their first call answered; `avoid` and `human` operations are never
/// tools. Every tool call is checked as the API checks it, with the same token. Safe to call
/// at any time: it is how an agent reaches till.
#[utoipa::path(post, path = "/v1/mcp", operation_id = "sendMcpMessage", tag = "agents",
    request_body(content = McpMessage, description = "One JSON-RPC 2.0 message of the Model Context Protocol"),
    responses(
        (status = 200, description = "The JSON-RPC answer to a request: its result, or a JSON-RPC error for a \
            method this server does not serve or params that do not fit the method", body = McpReply),
        (status = 202, description = "A notification (a message without `id`) taken; there is nothing to answer"),
        (status = 404, description = "NOT_FOUND: a method the protocol revision the message names does not serve",
            body = crate::error::ErrorEnvelope),
    ))]
async fn send_mcp_message(
    State(state): State<AppState>,
    _caller: Authorized<ops::Mcp>,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let message = parse_message(&body)?;
    let token = bearer_token(&headers)
        .ok_or_else(|| ApiError::Unauthorized("The Authorization header must be: Bearer <token>.".to_owned()))?;
    let wire = message.to_json();
    if let Err(problem) = serde_json::from_value::<ClientJsonRpcMessage>(wire.clone()) {
        return Ok(match message.id {
            Some(id) => params_refused(id, &message.method, &problem.to_string()),
            None => StatusCode::ACCEPTED.into_response(),
        });
    }
    let server = TillMcp::new(state.clone(), token);
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(usize::MAX)
        .disable_allowed_hosts();
    let transport = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let mut request = Request::builder()
        .method(Method::POST)
        .uri("/v1/mcp")
        .header(HOST, "localhost")
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream");
    for (name, value) in headers.iter().filter(|(name, _)| is_protocol_header(name.as_str())) {
        request = request.header(name, value);
    }
    let request = request.body(Body::from(wire.to_string())).map_err(ApiError::internal)?;
    transported(transport.handle(request).await).await
}

/// The headers of MCP's transport that the SDK checks against the message.
fn is_protocol_header(name: &str) -> bool {
    matches!(name, "mcp-protocol-version" | "mcp-method" | "mcp-name") || name.starts_with("mcp-param-")
}

fn bearer_token(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (_, token) = value.split_once(' ')?;
    Some(token.trim().to_owned())
}

/// One JSON-RPC message as this route reads it.
#[derive(Debug, PartialEq)]
struct Message {
    /// A string or an integer; absent (or `null`) for a notification.
    id: Option<Value>,
    method: String,
    params: Option<Map<String, Value>>,
}

impl Message {
    /// The message as the transport is handed it: only what was read, no other property.
    fn to_json(&self) -> Value {
        let mut message = Map::new();
        message.insert("jsonrpc".to_owned(), json!("2.0"));
        if let Some(id) = &self.id {
            message.insert("id".to_owned(), id.clone());
        }
        message.insert("method".to_owned(), Value::from(self.method.clone()));
        if let Some(params) = &self.params {
            message.insert("params".to_owned(), Value::Object(params.clone()));
        }
        Value::Object(message)
    }
}

fn parse_message(body: &Value) -> Result<Message, ApiError> {
    let problems = Problems::new();
    let (version, id, method, params) = match problems.root(body) {
        Some(root) => (
            root.required("jsonrpc", |f| f.one_of(&[("2.0", ())])),
            root.optional("id", |f| match f.value() {
                Value::String(text) => Some(Value::from(text.clone())),
                Value::Number(_) => f.integer(i64::MIN, i64::MAX).map(Value::from),
                _ => f.fail("must be a string or an integer"),
            }),
            root.required("method", |f| f.text()),
            root.optional("params", |f| f.object().and_then(|_| f.value().as_object().cloned())),
        ),
        None => (None, None, None, None),
    };
    problems.finish(|| {
        version?;
        Some(Message {
            id: id?,
            method: method?,
            params: params?,
        })
    })
}

/// A request whose params the protocol's types do not take: JSON-RPC's "invalid params".
fn params_refused(id: Value, method: &str, problem: &str) -> Response {
    let Ok(id) = serde_json::from_value::<RequestId>(id) else {
        return StatusCode::ACCEPTED.into_response();
    };
    let error = JsonRpcError::new(
        Some(id),
        ErrorData::invalid_params(format!("The params do not fit the method {method}: {problem}."), None),
    );
    axum::Json(error).into_response()
}

/// The transport's answer: as it is when it took the message, else in the envelope.
async fn transported<B>(response: Response<B>) -> Result<Response, ApiError>
where
    B: axum::body::HttpBody<Data = bytes::Bytes, Error = std::convert::Infallible> + Send + 'static,
{
    let (parts, body) = response.into_parts();
    if parts.status.is_success() {
        return Ok(Response::from_parts(parts, Body::new(body)));
    }
    let Ok(collected) = body.collect().await;
    let bytes = collected.to_bytes();
    let text = String::from_utf8_lossy(&bytes);
    let message = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|reply| reply["error"]["message"].as_str().map(str::to_owned))
        .unwrap_or_else(|| text.trim().trim_start_matches("Bad Request: ").to_owned());
    Err(match parts.status {
        StatusCode::NOT_FOUND => ApiError::NotFound(message),
        StatusCode::FORBIDDEN => ApiError::Forbidden(message),
        status if status.is_client_error() => ApiError::field("mcp", format!("was refused: {message}")),
        status => ApiError::internal(std::io::Error::other(format!(
            "the MCP transport answered {status}: {text}"
        ))),
    })
}

/// The body of `POST /v1/mcp`, exactly as [`parse_message`] reads it.
pub struct McpMessage;

impl PartialSchema for McpMessage {
    fn schema() -> RefOr<Schema> {
        serde_json::from_value(json!({
            "type": "object",
            "description": "A JSON-RPC 2.0 request (with `id`) or notification (without) of the Model Context \
                Protocol, such as `initialize`, `tools/list` or `tools/call`. One message per request: \
                batches are not taken.",
            "required": ["jsonrpc", "method"],
            "properties": {
                "jsonrpc": {"type": "string", "enum": ["2.0"]},
                "id": {
                    "type": ["string", "integer", "null"],
                    "minimum": i64::MIN,
                    "maximum": i64::MAX,
                    "description": "The request's id, echoed in its answer; absent or null for a notification."
                },
                "method": {"$ref": "#/components/schemas/Text"},
                "params": {
                    "type": ["object", "null"],
                    "additionalProperties": true,
                    "description": "The method's parameters, as the Model Context Protocol defines them."
                }
            }
        }))
        .expect("the MCP message schema is a schema")
    }
}

impl ToSchema for McpMessage {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("McpMessage")
    }
}

/// The JSON-RPC answer of `POST /v1/mcp` to a request.
pub struct McpReply;

impl PartialSchema for McpReply {
    fn schema() -> RefOr<Schema> {
        serde_json::from_value(json!({
            "type": "object",
            "description": "A JSON-RPC 2.0 response: `result` on success, else `error`.",
            "required": ["jsonrpc", "id"],
            "properties": {
                "jsonrpc": {"type": "string", "enum": ["2.0"]},
                "id": {"type": ["string", "integer"], "description": "The request's id."},
                "result": {
                    "type": "object",
                    "additionalProperties": true,
                    "description": "The method's result, as the Model Context Protocol defines it (a tool's \
                        answer is in `content`, with `isError` true when the API refused)."
                },
                "error": {
                    "type": "object",
                    "description": "Why the request was not served.",
                    "required": ["code", "message"],
                    "properties": {
                        "code": {"type": "integer", "description": "A JSON-RPC error code, such as -32601 (no such method) or -32602 (invalid params)."},
                        "message": {"type": "string"}
                    }
                }
            }
        }))
        .expect("the MCP reply schema is a schema")
    }
}

impl ToSchema for McpReply {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("McpReply")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_read_as_the_document_describes_it() {
        let request = parse_message(&json!({"jsonrpc": "2.0", "id": 3.0, "method": "tools/list", "extra": 1})).unwrap();
        assert_eq!(request.id, Some(json!(3)));
        assert_eq!(
            request.to_json(),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        );
        let notification =
            parse_message(&json!({"jsonrpc": "2.0", "id": null, "method": "notifications/initialized"})).unwrap();
        assert_eq!(notification.id, None);
        for (body, field) in [
            (json!({"jsonrpc": "1.0", "id": 1, "method": "ping"}), "jsonrpc"),
            (json!({"id": 1, "method": "ping"}), "jsonrpc"),
            (json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}), "id"),
            (json!({"jsonrpc": "2.0", "id": true, "method": "ping"}), "id"),
            (json!({"jsonrpc": "2.0", "id": 1, "method": ""}), "method"),
            (
                json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": []}),
                "params",
            ),
        ] {
            match parse_message(&body) {
                Err(ApiError::Validation(errors)) => assert_eq!(errors[0].field, field, "{body}"),
                other => panic!("{body}: {other:?}"),
            }
        }
        assert!(parse_message(&json!([{"jsonrpc": "2.0", "method": "ping"}])).is_err());
    }

    #[test]
    fn the_documented_schemas_are_json_schemas() {
        for schema in [McpMessage::schema(), McpReply::schema()] {
            let value = serde_json::to_value(schema).unwrap();
            assert_eq!(value["type"], "object", "{value}");
        }
    }
}
