//! The Model Context Protocol (DESIGN.md section 19): till's operations as tools for an AI
//! assistant, served over stdio by `till mcp` and over streamable HTTP at `/v1/mcp`.
//!
//! The tools come from the operation table ([`crate::ops`]) through the OpenAPI document
//! ([`tools`]): `allow` operations are tools, `confirm` operations are tools that act only when
//! called again with the token their first call answered ([`confirm`]), `avoid` and `human`
//! operations are never tools. A tool call is an API request made in this process through the
//! API's own router with the agent's bearer token, so the route guards, the scopes, the
//! parsing, the idempotency and the error envelope are exactly the API's: an agent can do
//! with a tool nothing its token could not do over HTTP, and never what an agent may not do.

mod confirm;
pub mod http;
pub mod tools;

use crate::auth::{Principal, may_call};
use crate::error::ApiError;
use crate::ops::{self, Tier};
use crate::state::AppState;
use axum::body::Body;
use axum::extract::FromRequestParts;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE};
use axum::http::{HeaderName, HeaderValue, Request, Response};
use axum::response::IntoResponse;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use std::sync::Arc;
use till_app::confirmations;
use tools::{CONFIRMATION, Call, ToolSpec};
use tower::ServiceExt as _;

/// What the server tells an assistant when it connects.
const INSTRUCTIONS: &str = "till is a point-of-sale backend. These tools are its API operations that an \
    assistant may call with the token it was given, and no others: sales are committed at the till and \
    manager approvals need the manager, never a tool. Tools marked read-only change nothing. Every other \
    tool changes data and takes two calls: the first answers a summary and a confirmation token and \
    changes nothing; call again with that token only after the person agreed to the summary. Amounts are \
    integer cents; a refusal is an error holding till's envelope, whose message you should relay.";

/// The MCP server of one agent: the shared state and the bearer token it acts with.
#[derive(Clone)]
pub struct TillMcp {
    state: AppState,
    token: Arc<str>,
}

impl TillMcp {
    pub fn new(state: AppState, token: impl Into<Arc<str>>) -> TillMcp {
        TillMcp {
            state,
            token: token.into(),
        }
    }

    /// Who the token is, checked now: a session token's cashier may have changed role, a JWT
    /// may have expired since the agent started.
    pub async fn principal(&self) -> Result<Principal, ApiError> {
        let request = Request::builder()
            .header(AUTHORIZATION, format!("Bearer {}", self.token))
            .body(())
            .map_err(|_| ApiError::Unauthorized("The token is not readable text.".to_owned()))?;
        let (mut parts, ()) = request.into_parts();
        Principal::from_request_parts(&mut parts, &self.state).await
    }

    /// Makes `call` through the API's router as the agent, and answers what the API did.
    async fn act(&self, call: Call) -> CallToolResult {
        let router = self.state.service();
        let mut request = Request::builder()
            .method(call.method)
            .uri(call.target)
            .header(AUTHORIZATION, format!("Bearer {}", self.token));
        for (name, value) in call.headers {
            let (Ok(name), Ok(value)) = (HeaderName::try_from(&name), HeaderValue::try_from(&value)) else {
                return refused(format!("The argument `{name}` is not a valid header value."));
            };
            request = request.header(name, value);
        }
        let body = match call.body {
            Some(body) => {
                request = request.header(CONTENT_TYPE, "application/json");
                Body::from(body.to_string())
            }
            None => Body::empty(),
        };
        let request = match request.body(body) {
            Ok(request) => request,
            Err(_) => return refused("The arguments do not make a valid request.".to_owned()),
        };
        let Ok(response) = router.oneshot(request).await;
        answered(response).await
    }

    async fn call(&self, request: CallToolRequestParams) -> Result<CallToolResult, ErrorData> {
        let name = request.name.as_ref();
        let Some(spec) = tools::find(name) else {
            return match ops::ALL.iter().find(|operation| operation.id == name) {
                Some(operation) => Ok(refused(not_a_tool(operation))),
                None => Err(ErrorData::invalid_params(format!("There is no tool {name}."), None)),
            };
        };
        let principal = match self.principal().await {
            Ok(principal) => principal,
            Err(error) => return Ok(enveloped(error).await),
        };
        let mut arguments = request.arguments.unwrap_or_default();
        let confirmation = match spec.operation.tier {
            Tier::Confirm => arguments.remove(CONFIRMATION),
            _ => None,
        };
        let call = match spec.call(&arguments) {
            Ok(call) => call,
            Err(problem) => return Ok(refused(problem)),
        };
        if spec.operation.tier != Tier::Confirm {
            return Ok(self.act(call).await);
        }
        match confirmation {
            None => Ok(self.ask(&principal, spec, &arguments, &call).await),
            Some(Value::String(token)) => {
                let app = self.state.app();
                match confirmations::spend(app, &principal, spec.operation.id, &arguments, &token).await {
                    Ok(Ok(())) => Ok(self.act(call).await),
                    Ok(Err(mismatch)) => Ok(refused(confirm::refusal(&mismatch, spec.operation.id))),
                    Err(error) => Ok(enveloped(error.into()).await),
                }
            }
            Some(_) => Ok(refused(format!(
                "`{CONFIRMATION}` must be the token string the first call answered."
            ))),
        }
    }

    /// The first call of a `confirm` tool: the caller's scope is checked as the API would,
    /// then the summary and its token.
    async fn ask(
        &self,
        principal: &Principal,
        spec: &ToolSpec,
        arguments: &serde_json::Map<String, Value>,
        call: &Call,
    ) -> CallToolResult {
        if let Err(refusal) = may_call(principal, spec.operation) {
            return enveloped(refusal).await;
        }
        match confirm::ask(&self.state, principal, spec, arguments, call).await {
            Ok(summary) => CallToolResult::success(vec![ContentBlock::text(
                serde_json::to_string_pretty(&summary).unwrap_or_default(),
            )]),
            Err(error) => enveloped(error).await,
        }
    }
}

impl ServerHandler for TillMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("till", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    /// The tools this token may call: those of the agent tiers whose operation accepts one of
    /// the token's scopes (or none). A tool left out still answers, with the API's refusal.
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let principal = self
            .principal()
            .await
            .map_err(|error| ErrorData::invalid_request(error.to_string(), None))?;
        let tools: Vec<Tool> = tools::catalog()
            .iter()
            .filter(|spec| may_call(&principal, spec.operation).is_ok())
            .map(|spec| spec.tool.clone())
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request).await.map(CallToolResponse::from)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::find(name).map(|spec| spec.tool.clone())
    }
}

/// Serves the tools over this process's standard input and output until the client leaves.
/// The token is checked first, so that a wrong one stops `till mcp` with its reason.
pub async fn serve_stdio(state: AppState, token: String) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let server = TillMcp::new(state, token);
    server
        .principal()
        .await
        .map_err(|error| format!("the token is refused: {error}"))?;
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}

/// Why an operation of the table is not a tool.
fn not_a_tool(operation: &ops::Operation) -> String {
    let id = operation.id;
    match operation.tier {
        Tier::Avoid => format!(
            "{id} is not a tool: an automated caller must never trigger it (tier avoid). It is done at the till by a person."
        ),
        Tier::Human => format!("{id} is not a tool: it needs a person physically present (tier human)."),
        Tier::Allow | Tier::Confirm => format!("{id} is the endpoint serving these tools, not a tool."),
    }
}

/// A refusal of the tool layer itself, in words for the agent; nothing was done.
fn refused(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// A refusal in the API's envelope, as the API would have answered it.
async fn enveloped(error: ApiError) -> CallToolResult {
    answered(error.into_response()).await
}

/// Headers an agent needs to act on an answer: the version to send back as `If-Match`, where a
/// created resource is, an archive's id and checksum, a receipt's print number, a replay.
const REPORTED_HEADERS: [&str; 6] = [
    "etag",
    "location",
    "x-till-archive-id",
    "x-till-archive-sha256",
    "x-till-print",
    "x-idempotent-replay",
];

/// The API's answer as a tool result: its body first, exactly as the API wrote it, then its
/// status and the headers an agent may need. A 4xx or 5xx answer is an error result.
async fn answered(response: Response<Body>) -> CallToolResult {
    let (parts, body) = response.into_parts();
    let body = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(body) => body,
        Err(_) => return refused("The answer could not be read; it is safe to read the resource again.".to_owned()),
    };
    let mut status = format!("HTTP {}", parts.status);
    for name in REPORTED_HEADERS {
        if let Some(value) = parts.headers.get(name).and_then(|value| value.to_str().ok()) {
            status.push_str(&format!("; {name}: {value}"));
        }
    }
    let text = if body.is_empty() {
        "Done; the API answers nothing more.".to_owned()
    } else {
        String::from_utf8_lossy(&body).into_owned()
    };
    let content = vec![ContentBlock::text(text), ContentBlock::text(status)];
    if parts.status.is_client_error() || parts.status.is_server_error() {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}
