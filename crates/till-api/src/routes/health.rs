//! Liveness, readiness, metrics and the OpenAPI document: public, no credential (the metrics
//! ask for the operator's metrics token when one is set).

use crate::error::ApiError;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE};
use axum::response::IntoResponse;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(metrics))
        .routes(routes!(openapi_json))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Health {
    /// `ok` when the check passed.
    status: &'static str,
    /// `sqlite` or `postgres` (readiness only).
    #[serde(skip_serializing_if = "Option::is_none")]
    database: Option<&'static str>,
}

/// Liveness: the process answers.
///
/// Safe for anyone to call at any time; it touches nothing.
#[utoipa::path(get, path = "/healthz", operation_id = "getHealth", tag = "operations",
    responses((status = 200, description = "The process is alive", body = Health)))]
async fn healthz() -> Json<Health> {
    Json(Health {
        status: "ok",
        database: None,
    })
}

/// Readiness: the process answers and its database does too.
///
/// Load balancers route to a node only while this returns 200. Safe to call at any time.
#[utoipa::path(get, path = "/readyz", operation_id = "getReadiness", tag = "operations",
    responses((status = 200, description = "Ready to serve", body = Health),
              (status = 503, description = "The database does not answer", body = crate::error::ErrorEnvelope)))]
async fn readyz(State(state): State<AppState>) -> Result<Json<Health>, ApiError> {
    let engine = till_app::health::ready(state.app())
        .await
        .map_err(|error| match error {
            till_app::Error::Store(error) => ApiError::Unavailable(error),
            other => other.into(),
        })?;
    Ok(Json(Health {
        status: "ok",
        database: Some(engine.as_str()),
    }))
}

/// Prometheus metrics in the text exposition format.
///
/// Request counts and latencies per route template, method and status class; the node's
/// database connections and SQLite writer queue; the feed's and the webhooks' backlog and
/// delivery attempts; the build it runs and its process's CPU, memory and files. Open to anyone
/// unless the operator set a metrics token (`TILL_METRICS_TOKEN`): then only a request that
/// carries it as `Authorization: Bearer <token>` reads them. Safe to scrape at any time.
#[utoipa::path(get, path = "/metrics", operation_id = "getMetrics", tag = "operations",
    responses((status = 200, description = "Prometheus text format", content_type = "text/plain", body = String),
              (status = 401, description = "A metrics token is set and the request does not carry it", body = crate::error::ErrorEnvelope)))]
async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Result<impl IntoResponse, ApiError> {
    if let Some(expected) = &state.config().metrics_token
        && !carries_token(&headers, expected)
    {
        return Err(ApiError::Unauthorized(
            "The metrics are read with the metrics token (Authorization: Bearer <token>).".to_owned(),
        ));
    }
    Ok((
        [(CONTENT_TYPE, "text/plain; version=0.0.4")],
        crate::metrics::render(&state).await,
    ))
}

/// Whether the request's bearer token is `expected`. Digests are compared, so that the time
/// taken says nothing of how much of the token was right.
fn carries_token(headers: &HeaderMap, expected: &str) -> bool {
    let digest = |text: &str| Sha256::digest(text.as_bytes());
    headers
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .is_some_and(|(_, token)| digest(token.trim()) == digest(expected))
}

/// This OpenAPI 3.1 document.
///
/// Lists every operation with its scopes (`x-pos-scopes`) and how freely an automated agent may
/// call it (`x-agent-tier`). Safe to read at any time.
#[utoipa::path(get, path = "/v1/openapi.json", operation_id = "getOpenApiDocument", tag = "operations",
    responses((status = 200, description = "The OpenAPI document", content_type = "application/json", body = OpenApiDocument)))]
async fn openapi_json() -> impl IntoResponse {
    ([(CONTENT_TYPE, "application/json")], crate::openapi::document_json())
}

/// What `getOpenApiDocument` answers: an OpenAPI 3.1 document, whose own schema is the
/// OpenAPI Specification's.
pub struct OpenApiDocument;

impl PartialSchema for OpenApiDocument {
    fn schema() -> RefOr<Schema> {
        serde_json::from_value(serde_json::json!({
            "type": "object",
            "description": "An OpenAPI 3.1 document (https://spec.openapis.org/oas/v3.1.0).",
            "required": ["openapi", "info", "paths"],
            "properties": {
                "openapi": {"type": "string", "description": "`3.1.0`."},
                "info": {"type": "object", "additionalProperties": true},
                "paths": {"type": "object", "additionalProperties": true},
                "components": {"type": "object", "additionalProperties": true},
                "tags": {"type": "array", "items": {"type": "object", "additionalProperties": true}}
            },
            "additionalProperties": true
        }))
        .expect("the document's schema is a schema")
    }
}

impl ToSchema for OpenApiDocument {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("OpenApiDocument")
    }
}
