//! The OpenAPI 3.1 document, generated from the handlers and finished by one pass that adds
//! what every operation shares: its scopes and agent tier from [`crate::ops`], the bearer
//! security requirement, and the error responses of the envelope.

use crate::error::ErrorEnvelope;
use crate::ops;
use std::sync::OnceLock;
use utoipa::PartialSchema;
use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::path::Operation;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::tag::{Tag, TagBuilder};
use utoipa::openapi::{ContentBuilder, InfoBuilder, OpenApi, RefOr, ResponseBuilder};

/// The finished document.
pub fn document() -> OpenApi {
    let (_, api) = crate::routes::api_router().split_for_parts();
    finish(api)
}

/// The document as served and committed: pretty JSON with sorted keys, so it diffs cleanly.
pub fn document_json() -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| {
        let value = serde_json::to_value(document()).expect("the document serializes");
        let mut text =
            serde_json::to_string_pretty(&till_core::canonical::sorted(&value)).expect("a JSON value serializes");
        text.push('\n');
        text
    })
}

fn finish(mut api: OpenApi) -> OpenApi {
    api.info = InfoBuilder::new()
        .title("till")
        .version(env!("CARGO_PKG_VERSION"))
        .description(Some(
            "Point-of-sale backend: commits re-priced, idempotent sales sealed in an NF525 fiscal \
             journal; mints single-use manager approvals; manages promotions and provisioning. \
             Amounts are integer cents; rates are basis points. Every failure is the error \
             envelope `{error: {code, message, statusCode}}`; branch on `code`. Each operation \
             lists the scopes it accepts in `x-pos-scopes` (any one suffices) and, in \
             `x-agent-tier`, how freely an automated agent may call it: `allow` (read-only, \
             safe), `confirm` (a write a person should confirm), `avoid` (never unprompted), \
             `human` (a person must be present).",
        ))
        .build();
    api.tags = Some(tags());
    let components = api.components.get_or_insert_with(Default::default);
    components.add_security_scheme(
        "bearer",
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .bearer_format("JWT")
                .description(Some(
                    "An identity provider's access token (JWT, scopes in `scope`), or a register \
                     session token `pos_st_...` from openRegisterSession.",
                ))
                .build(),
        ),
    );
    components
        .schemas
        .insert("ErrorEnvelope".to_owned(), ErrorEnvelope::schema());
    for item in api.paths.paths.values_mut() {
        for operation in [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ]
        .into_iter()
        .flatten()
        {
            apply_policy(operation);
        }
    }
    api
}

fn apply_policy(operation: &mut Operation) {
    let id = operation.operation_id.as_deref().unwrap_or_default();
    let spec = ops::ALL
        .iter()
        .find(|spec| spec.id == id)
        .unwrap_or_else(|| panic!("operation {id} is missing from ops::ALL"));
    let scopes: Vec<&str> = spec.scopes.iter().map(|g| g.as_str()).collect();
    let mut extensions = Extensions::default();
    extensions.insert("x-pos-scopes".to_owned(), serde_json::json!(scopes));
    extensions.insert("x-agent-tier".to_owned(), serde_json::json!(spec.tier.as_str()));
    operation
        .extensions
        .get_or_insert_with(Default::default)
        .merge(extensions);
    if spec.scopes.is_empty() {
        operation.security = Some(vec![SecurityRequirement::default()]);
        return;
    }
    operation.security = Some(vec![SecurityRequirement::new::<_, _, &str>("bearer", [])]);
    let mut standard = vec![
        (
            "401",
            "No valid credential (missing, malformed, expired or unknown token)",
        ),
        ("403", "Authenticated, but without a scope this operation accepts"),
        ("500", "Unexpected server error; safe to retry an idempotent request"),
        (
            "503",
            "The database is unavailable; nothing was recorded; retry after Retry-After",
        ),
    ];
    if operation.request_body.is_some() || operation.parameters.is_some() {
        standard.push(("400", "Malformed request: VALIDATION_FAILED with fieldErrors"));
    }
    for (status, description) in standard {
        operation
            .responses
            .responses
            .entry(status.to_owned())
            .or_insert_with(|| error_response(description));
    }
}

pub(crate) fn error_response(description: &str) -> RefOr<utoipa::openapi::Response> {
    RefOr::T(
        ResponseBuilder::new()
            .description(description)
            .content(
                "application/json",
                ContentBuilder::new()
                    .schema(Some(utoipa::openapi::Ref::from_schema_name("ErrorEnvelope")))
                    .build(),
            )
            .build(),
    )
}

fn tags() -> Vec<Tag> {
    [
        (
            "checkout",
            "Pricing and committing sales, and manager approvals of discounts.",
        ),
        (
            "returns",
            "Goods given back against a receipt: refunds at what was paid, and credit notes (avoirs).",
        ),
        ("promotions", "Automatic promotion rules applied when a sale is priced."),
        ("sessions", "Register sessions: a cashier's shift on one till."),
        ("fiscal", "The NF525 journal: public keys and chain verification."),
        (
            "provisioning",
            "Stores, catalog, stock, staff, coupons and customers, set up by the back office.",
        ),
        ("operations", "Health, readiness, metrics and this document."),
    ]
    .into_iter()
    .map(|(name, description)| TagBuilder::new().name(name).description(Some(description)).build())
    .collect()
}
