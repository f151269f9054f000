//! `POST /v1/elevation-grants`: a manager at the till approves, with their PIN, a discount the
//! cashier may not grant alone ([`till_app::elevation`]). The till receives a single-use token
//! carrying one scope, spent as `x-elevation-token` by the one sale it approves. The cashier's
//! own token never changes. `GET /v1/elevation-events` reads the audit trail.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, JsonBody, Params, QueryParams};
use crate::fields::{FromBody, Obj, parse_body};
use crate::openapi::{Text, words};
use crate::ops;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use till_app::elevation::{GrantOperation, GrantRequest, IssuedGrant, asking_till, request_grant as grant};
use till_core::ids::{RegisterId, Subject};
use till_core::instant::format_utc;
use till_core::money::MAX_SAFE_INTEGER;
use utoipa::openapi::schema::{AnyOfBuilder, Schema};
use utoipa::openapi::{Ref, RefOr};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(request_grant))
        .routes(routes!(events))
}

/// Body of `POST /v1/elevation-grants`: the size of the reduction in `amountCents`, in
/// `percentBps`, or in both; at least one of them.
enum GrantRequestBody {
    ByAmount(GrantRequestByAmount),
    ByPercent(GrantRequestByPercent),
}

impl utoipa::PartialSchema for GrantRequestBody {
    fn schema() -> RefOr<Schema> {
        AnyOfBuilder::new()
            .item(Ref::from_schema_name("GrantRequestByAmount"))
            .item(Ref::from_schema_name("GrantRequestByPercent"))
            .description(Some(
                "The size of the reduction in `amountCents`, in `percentBps`, or in both; at least one of them.",
            ))
            .into()
    }
}

impl utoipa::ToSchema for GrantRequestBody {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        use utoipa::PartialSchema;
        schemas.push(("GrantRequestByAmount".to_owned(), GrantRequestByAmount::schema()));
        schemas.push(("GrantRequestByPercent".to_owned(), GrantRequestByPercent::schema()));
        <GrantRequestByAmount as utoipa::ToSchema>::schemas(schemas);
    }
}

/// A grant request sized in cents (and perhaps in basis points too).
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct GrantRequestByAmount {
    /// The approving manager, present at the till.
    #[schema(value_type = Text)]
    manager_subject: Subject,
    /// The manager's own PIN as enrolled (4 to 12 digits); any other text is a wrong PIN.
    #[schema(value_type = Text)]
    pin: String,
    #[schema(schema_with = operation_schema)]
    operation: GrantOperation,
    /// Size of the reduction as the till believes it. Decides whether approval is needed, never
    /// what the sale may be: finalize re-prices the cart.
    #[schema(minimum = 0, maximum = 9007199254740991_i64)]
    amount_cents: i64,
    /// The same size in basis points.
    #[schema(minimum = 0, maximum = 9007199254740991_i64)]
    percent_bps: Option<i64>,
}

/// A grant request sized in basis points (and perhaps in cents too).
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct GrantRequestByPercent {
    /// The approving manager, present at the till.
    #[schema(value_type = Text)]
    manager_subject: Subject,
    /// The manager's own PIN as enrolled (4 to 12 digits); any other text is a wrong PIN.
    #[schema(value_type = Text)]
    pin: String,
    #[schema(schema_with = operation_schema)]
    operation: GrantOperation,
    /// Size of the reduction in cents, as the till believes it.
    #[schema(minimum = 0, maximum = 9007199254740991_i64)]
    amount_cents: Option<i64>,
    /// Size of the reduction in basis points. Decides whether approval is needed, never what
    /// the sale may be: finalize re-prices the cart.
    #[schema(minimum = 0, maximum = 9007199254740991_i64)]
    percent_bps: i64,
}

fn operation_schema() -> Schema {
    words(
        GrantOperation::ALL.iter().map(|operation| operation.as_str()),
        "The governed act: one line, or the whole ticket.",
    )
}

impl FromBody for GrantRequestBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let operations: Vec<(&str, GrantOperation)> = GrantOperation::ALL.iter().map(|o| (o.as_str(), *o)).collect();
        let manager = root.required("managerSubject", |f| f.parse_text(Subject::parse));
        let pin = root.required("pin", |f| f.text());
        let operation = root.required("operation", |f| f.one_of(&operations));
        let amount = root.optional("amountCents", |f| f.integer(0, MAX_SAFE_INTEGER));
        let percent = root.optional("percentBps", |f| f.integer(0, MAX_SAFE_INTEGER));
        let (amount, percent) = (amount?, percent?);
        let (manager_subject, pin, operation) = (manager?, pin?, operation?);
        match (amount, percent) {
            (Some(amount_cents), percent_bps) => Some(GrantRequestBody::ByAmount(GrantRequestByAmount {
                manager_subject,
                pin,
                operation,
                amount_cents,
                percent_bps,
            })),
            (None, Some(percent_bps)) => Some(GrantRequestBody::ByPercent(GrantRequestByPercent {
                manager_subject,
                pin,
                operation,
                amount_cents: None,
                percent_bps,
            })),
            (None, None) => root.fail("amountCents", "or percentBps is required: the size of the reduction"),
        }
    }
}

impl From<GrantRequestBody> for GrantRequest {
    fn from(body: GrantRequestBody) -> GrantRequest {
        match body {
            GrantRequestBody::ByAmount(by) => GrantRequest {
                manager: by.manager_subject,
                pin: by.pin,
                operation: by.operation,
                amount: Some(by.amount_cents),
                percent: by.percent_bps,
            },
            GrantRequestBody::ByPercent(by) => GrantRequest {
                manager: by.manager_subject,
                pin: by.pin,
                operation: by.operation,
                amount: by.amount_cents,
                percent: Some(by.percent_bps),
            },
        }
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrantView {
    grant_id: String,
    /// `pos_el_...`: send it as `x-elevation-token` on the one finalize call it approves.
    token: String,
    /// Always `pos.discount.override`.
    scope: String,
    operation: String,
    /// About five minutes after issue.
    expires_at: String,
}

/// Request a manager elevation grant.
///
/// A manager standing at the till types their PIN to approve a discount the cashier may not
/// grant alone. Only a till may ask (a register-session token); wrong PINs count against the
/// manager and lock them out after too many. Tier `human`: a person must be present; an
/// automated agent must never call it.
#[utoipa::path(post, path = "/v1/elevation-grants", operation_id = "requestElevationGrant", tag = "checkout",
    request_body = GrantRequestBody,
    responses(
        (status = 201, description = "Granted: a single-use token for one scope", body = GrantView),
        (status = 401, description = "INVALID_CREDENTIAL: wrong PIN or unknown manager (indistinguishable)", body = crate::error::ErrorEnvelope),
        (status = 403, description = "FORBIDDEN (not a till), MISSING_AUTHORITY, or GRANTS_STALE", body = crate::error::ErrorEnvelope),
        (status = 422, description = "NO_ELEVATION_REQUIRED, ELEVATION_UNAVAILABLE, or a closed session", body = crate::error::ErrorEnvelope),
        (status = 429, description = "RATE_LIMITED or LOCKED_OUT; honour Retry-After (seconds)", body = crate::error::ErrorEnvelope)))]
async fn request_grant(
    auth: Authorized<ops::RequestElevation>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<GrantView>), ApiError> {
    // Who may ask is answered before what was asked.
    let till = asking_till(&auth.principal)?;
    let request = parse_body::<GrantRequestBody>(&body)?;
    let issued = grant(state.app(), till, &GrantRequest::from(request)).await?;
    Ok((StatusCode::CREATED, Json(GrantView::from(issued))))
}

impl From<IssuedGrant> for GrantView {
    fn from(issued: IssuedGrant) -> GrantView {
        GrantView {
            grant_id: issued.grant_id,
            token: issued.token,
            scope: issued.scope,
            operation: issued.operation.as_str().to_owned(),
            expires_at: format_utc(issued.expires_at),
        }
    }
}

/// Most events one read answers.
const MAX_EVENTS: i64 = 1_000;

#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
struct EventsQuery {
    /// Only this manager's events.
    #[param(value_type = Option<Text>)]
    manager_subject: Option<Subject>,
    /// Only this till's events.
    #[param(value_type = Option<Text>)]
    register_id: Option<RegisterId>,
    /// At most this many, newest first (default 100).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<i64>,
}

impl FromParams for EventsQuery {
    fn from_params(params: &Params) -> Option<Self> {
        let manager_subject = params.optional("managerSubject", Subject::parse);
        let register_id = params.optional("registerId", RegisterId::parse);
        let limit = params.integer("limit", 1, MAX_EVENTS);
        Some(EventsQuery {
            manager_subject: manager_subject?,
            register_id: register_id?,
            limit: limit?,
        })
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventView {
    occurred_at: String,
    /// `issued`, `spent`, `refused`, `locked_out` or `rate_limited`.
    outcome: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<String>,
    manager_subject: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    register_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cashier_subject: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    operation: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    amount_cents: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    percent_bps: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    grant_id: Option<String>,
    /// The sale that spent the grant.
    #[serde(skip_serializing_if = "Option::is_none")]
    transaction_id: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct EventList {
    events: Vec<EventView>,
}

/// Read the elevation audit trail.
///
/// Every grant issued, spent or refused and every lockout: manager, till, when, operation and
/// size. Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/elevation-events", operation_id = "listElevationEvents", tag = "checkout",
    params(EventsQuery),
    responses((status = 200, description = "Newest first", body = EventList)))]
async fn events(
    _caller: Authorized<ops::ListElevationEvents>,
    State(state): State<AppState>,
    QueryParams(query): QueryParams<EventsQuery>,
) -> Result<Json<EventList>, ApiError> {
    let limit = query.limit.unwrap_or(100);
    let events = till_app::elevation::events(
        state.app(),
        query.manager_subject.as_ref(),
        query.register_id.as_ref(),
        limit,
    )
    .await?;
    Ok(Json(EventList {
        events: events
            .into_iter()
            .map(|e| EventView {
                occurred_at: e.occurred_at.map(format_utc).unwrap_or_default(),
                outcome: e.outcome,
                code: e.code,
                manager_subject: e.manager_subject,
                session_id: e.session_id,
                register_id: e.register_id,
                cashier_subject: e.cashier_subject,
                operation: e.operation,
                amount_cents: e.amount_cents,
                percent_bps: e.percent_bps,
                grant_id: e.grant_id,
                transaction_id: e.transaction_id,
            })
            .collect(),
    }))
}
