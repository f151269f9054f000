//! Automatic promotion rules: `POST /v1/promotions` (upsert), `GET /v1/promotions`, `GET` and
//! `PUT /v1/promotions/{id}/rule` (read, full replace), `POST /v1/promotions/{id}/deactivate`.
//!
//! Every write bumps the rule's version, sent as its `ETag`; a replace with `If-Match` naming
//! another version is refused with 412, so two back-office users cannot overwrite each other
//! unknowingly.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, JsonBody, Params, PathParams, QueryParams};
use crate::fields::parse_body;
use crate::openapi::Text;
use crate::ops;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::header::{ETAG, IF_MATCH};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use rule::{PromotionRule, PromotionRuleReplacement};
use serde::Serialize;
use till_app::promotions::{Replaced, StoredRule};
use till_core::ids::{PromotionId, StoreId};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

mod rule;
pub(crate) use rule::PromotionRule as PromotionRuleView;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(upsert, list))
        .routes(routes!(read_rule, replace_rule))
        .routes(routes!(deactivate))
}

/// `{id}` of the promotion routes.
struct PromotionPath(PromotionId);

impl FromParams for PromotionPath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("id", PromotionId::parse).map(PromotionPath)
    }
}

/// The rule as answered, with the version as a strong ETag.
fn rule_response(status: StatusCode, stored: &StoredRule) -> Response {
    let mut response = (status, Json(PromotionRule::from(&stored.rule))).into_response();
    if let Ok(etag) = HeaderValue::from_str(&format!("\"{}\"", stored.version)) {
        response.headers_mut().insert(ETAG, etag);
    }
    response
}

/// The version an `If-Match` header names: `None` for `*` or no header.
fn expected_version(headers: &HeaderMap) -> Result<Option<i64>, ApiError> {
    let Some(value) = headers.get(IF_MATCH) else {
        return Ok(None);
    };
    let text = value.to_str().unwrap_or_default().trim();
    if text == "*" {
        return Ok(None);
    }
    let bare = text.trim_start_matches("W/").trim_matches('"');
    bare.parse::<i64>()
        .map(Some)
        .map_err(|_| ApiError::PreconditionFailed("If-Match names no version of this rule.".into()))
}

/// Create or replace a promotion rule.
///
/// Upsert by the body's `id`: 201 when created, 200 when it replaced a rule. A person should
/// confirm: the rule changes the price of every matching sale from then on.
#[utoipa::path(post, path = "/v1/promotions", operation_id = "upsertPromotion", tag = "promotions",
    request_body = PromotionRule,
    responses((status = 200, description = "Replaced; ETag is the new version", body = PromotionRule, headers(("ETag" = String, description = "The rule's version"))),
              (status = 201, description = "Created; ETag is its version", body = PromotionRule, headers(("ETag" = String, description = "The rule's version")))))]
async fn upsert(
    _caller: Authorized<ops::UpsertPromotion>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let rule = parse_body::<PromotionRule>(&body)?.into_rule(());
    let (stored, created) = till_app::promotions::upsert(state.app(), rule).await?;
    Ok(rule_response(
        if created { StatusCode::CREATED } else { StatusCode::OK },
        &stored,
    ))
}

#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
struct ListQuery {
    /// Only rules that are (true) or are not (false) active.
    active: Option<bool>,
    /// Only rules that run in this store.
    #[param(value_type = Option<Text>)]
    store_id: Option<StoreId>,
}

impl FromParams for ListQuery {
    fn from_params(params: &Params) -> Option<Self> {
        let active = params.boolean("active");
        let store_id = params.optional("storeId", StoreId::parse);
        Some(ListQuery {
            active: active?,
            store_id: store_id?,
        })
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct RuleList {
    promotions: Vec<PromotionRule>,
}

/// List promotion rules.
///
/// Filter by `active` and by the store they run in. Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/promotions", operation_id = "listPromotions", tag = "promotions",
    params(ListQuery),
    responses((status = 200, description = "Rules by id", body = RuleList)))]
async fn list(
    _caller: Authorized<ops::ListPromotions>,
    State(state): State<AppState>,
    QueryParams(query): QueryParams<ListQuery>,
) -> Result<Json<RuleList>, ApiError> {
    let store = query.store_id;
    let rules = till_app::promotions::rules(state.app()).await?;
    let promotions = rules
        .into_iter()
        .map(|stored| stored.rule)
        .filter(|rule| query.active.is_none_or(|active| rule.active == active))
        .filter(|rule| match (&store, &rule.store_ids) {
            (Some(store), Some(stores)) => stores.contains(store),
            _ => true,
        })
        .map(|rule| PromotionRule::from(&rule))
        .collect();
    Ok(Json(RuleList { promotions }))
}

/// Read the live rule.
///
/// The first step of a replace: read, change only what is needed, send the whole rule back
/// with `If-Match` set to this ETag. Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/promotions/{id}/rule", operation_id = "getPromotionRule", tag = "promotions",
    params(("id" = Text, Path)),
    responses((status = 200, description = "The rule; ETag is its version", body = PromotionRule, headers(("ETag" = String, description = "The rule's version"))),
              (status = 404, description = "No such rule", body = crate::error::ErrorEnvelope)))]
async fn read_rule(
    _caller: Authorized<ops::GetPromotionRule>,
    State(state): State<AppState>,
    PathParams(PromotionPath(id)): PathParams<PromotionPath>,
) -> Result<Response, ApiError> {
    let stored = till_app::promotions::rule(state.app(), &id)
        .await?
        .ok_or_else(not_found)?;
    Ok(rule_response(StatusCode::OK, &stored))
}

/// Replace a promotion rule wholesale.
///
/// Never creates: an unknown id is a 404. The body's id, if any, is overwritten by the path's;
/// every field absent from the body is gone after the replace, reward mechanics included.
/// With `If-Match`, the replace happens only if the rule is still at that version (else 412).
/// A person should confirm.
#[utoipa::path(put, path = "/v1/promotions/{id}/rule", operation_id = "replacePromotionRule", tag = "promotions",
    params(("id" = Text, Path), ("If-Match" = Option<String>, Header, description = "The ETag read last, or `*`")),
    request_body = PromotionRuleReplacement,
    responses((status = 200, description = "Replaced; ETag is the new version", body = PromotionRule, headers(("ETag" = String, description = "The rule's version"))),
              (status = 404, description = "No such rule; nothing was created", body = crate::error::ErrorEnvelope),
              (status = 412, description = "The rule changed since the ETag in If-Match", body = crate::error::ErrorEnvelope)))]
async fn replace_rule(
    _caller: Authorized<ops::ReplacePromotionRule>,
    State(state): State<AppState>,
    PathParams(PromotionPath(id)): PathParams<PromotionPath>,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let rule = parse_body::<PromotionRuleReplacement>(&body)?.into_rule(id);
    let expected = expected_version(&headers)?;
    match till_app::promotions::replace(state.app(), rule, expected).await? {
        Replaced::Done(stored) => Ok(rule_response(StatusCode::OK, &stored)),
        Replaced::NotFound => Err(not_found()),
        Replaced::Stale(current) => Err(ApiError::PreconditionFailed(format!(
            "The rule changed since you read it: it is at version {current}. Read it again, then replace."
        ))),
    }
}

/// Deactivate a promotion rule.
///
/// The way to stop a rule: it stays readable but no longer applies. Idempotent. A person
/// should confirm.
#[utoipa::path(post, path = "/v1/promotions/{id}/deactivate", operation_id = "deactivatePromotion", tag = "promotions",
    params(("id" = Text, Path)),
    responses((status = 200, description = "Deactivated; the rule", body = PromotionRule, headers(("ETag" = String, description = "The rule's version"))),
              (status = 404, description = "No such rule", body = crate::error::ErrorEnvelope)))]
async fn deactivate(
    _caller: Authorized<ops::DeactivatePromotion>,
    State(state): State<AppState>,
    PathParams(PromotionPath(id)): PathParams<PromotionPath>,
) -> Result<Response, ApiError> {
    let stored = deactivate_rule(&state, id).await?;
    Ok(rule_response(StatusCode::OK, &stored))
}

/// Deactivates the rule `id` (this node's rules in memory follow), or the 404 of an unknown one.
pub(crate) async fn deactivate_rule(state: &AppState, id: PromotionId) -> Result<StoredRule, ApiError> {
    till_app::promotions::deactivate(state.app(), id)
        .await?
        .ok_or_else(not_found)
}

fn not_found() -> ApiError {
    ApiError::NotFound("No promotion rule with this id.".into())
}
