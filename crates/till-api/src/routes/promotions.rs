//! Automatic promotion rules: `POST /v1/promotions` (upsert), `GET /v1/promotions`, `GET` and
//! `PUT /v1/promotions/{id}/rule` (read, full replace), `POST /v1/promotions/{id}/deactivate`.
//!
//! Every write bumps the rule's version, sent as its `ETag`; a replace with `If-Match` naming
//! another version is refused with 412, so two back-office users cannot overwrite each other
//! unknowingly.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, JsonBody, Params, PathParams, QueryParams};
use crate::fields::{Field, Obj, Problems};
use crate::openapi::{Instant, SkuId as SkuIdText, Text};
use crate::ops;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::header::{ETAG, IF_MATCH};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashSet;
use till_app::promotions::{Replaced, StoredRule};
use till_core::ids::{PromotionId, SkuId, StoreId};
use till_core::instant::Zone;
use till_core::money::MAX_SAFE_INTEGER;
use till_core::promotions::{self, BuySide, Component, GetSide, Mechanics, Products};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(upsert, list))
        .routes(routes!(read_rule, replace_rule))
        .routes(routes!(deactivate))
}

/// The three shapes of a rule, each a schema of its own carrying its `type`, joined by a union
/// with a discriminator on `type`. Written twice: with `id` required (the upsert, and every
/// answer) and with `id` optional (the replace, where the path names the rule). Left as written
/// by rustfmt, which indents the discriminator's attribute further at every run.
#[rustfmt::skip]
macro_rules! rule_shapes {
    ($union:ident, $bogo:ident, $bundle:ident, $percent_off:ident,
     id: $id:ty, required: $required:literal, $id_doc:literal, $union_doc:literal) => {
        #[doc = $union_doc]
        #[derive(utoipa::ToSchema)]
        #[serde(untagged)]
        #[schema(discriminator(
            property_name = "type",
            mapping(
                ("bogo" = concat!("#/components/schemas/", stringify!($bogo))),
                ("bundle" = concat!("#/components/schemas/", stringify!($bundle))),
                ("percent_off" = concat!("#/components/schemas/", stringify!($percent_off)))
            )
        ))]
        #[allow(dead_code)] // the wire shape for the document; `parse_rule` reads bodies
        enum $union {
            Bogo($bogo),
            Bundle($bundle),
            PercentOff($percent_off),
        }

        /// For every `buy.quantity` units bought, `get.quantity` further units get
        /// `get.percentBps` off; repeats per multiple; the cheapest eligible units are the
        /// discounted ones.
        #[derive(utoipa::ToSchema)]
        #[serde(rename_all = "camelCase")]
        #[allow(dead_code)]
        struct $bogo {
            #[schema(inline)]
            r#type: BogoType,
            #[doc = $id_doc]
            #[schema(value_type = $id, required = $required)]
            id: Option<String>,
            #[schema(value_type = Text)]
            name: String,
            #[schema(value_type = Instant)]
            valid_from: String,
            /// Not before `validFrom`.
            #[schema(value_type = Instant)]
            valid_until: String,
            /// Higher first. Default 0.
            #[schema(minimum = -9007199254740991_i64, maximum = 9007199254740991_i64)]
            priority: Option<i64>,
            /// Applies only alone, excluding every other promotion of the sale. Default false.
            exclusive: Option<bool>,
            /// The stores it runs in, at least one; absent: every store.
            #[schema(value_type = Option<Vec<Text>>, min_items = 1)]
            store_ids: Option<Vec<String>>,
            /// Default true; the deactivate operation turns it off.
            active: Option<bool>,
            buy: BuySideBody,
            get: GetSideBody,
            /// At most this many applications per sale; unlimited when absent.
            #[schema(minimum = 1, maximum = 9007199254740991_i64)]
            max_applications: Option<i64>,
        }

        /// Each complete set of components sells for `priceCents`, repeated while sets are
        /// complete.
        #[derive(utoipa::ToSchema)]
        #[serde(rename_all = "camelCase")]
        #[allow(dead_code)]
        struct $bundle {
            #[schema(inline)]
            r#type: BundleType,
            #[doc = $id_doc]
            #[schema(value_type = $id, required = $required)]
            id: Option<String>,
            #[schema(value_type = Text)]
            name: String,
            #[schema(value_type = Instant)]
            valid_from: String,
            /// Not before `validFrom`.
            #[schema(value_type = Instant)]
            valid_until: String,
            /// Higher first. Default 0.
            #[schema(minimum = -9007199254740991_i64, maximum = 9007199254740991_i64)]
            priority: Option<i64>,
            /// Applies only alone, excluding every other promotion of the sale. Default false.
            exclusive: Option<bool>,
            /// The stores it runs in, at least one; absent: every store.
            #[schema(value_type = Option<Vec<Text>>, min_items = 1)]
            store_ids: Option<Vec<String>>,
            /// Default true; the deactivate operation turns it off.
            active: Option<bool>,
            /// At least one; each article in one component only.
            #[schema(min_items = 1)]
            components: Vec<ComponentBody>,
            #[schema(minimum = 0, maximum = 9007199254740991_i64)]
            price_cents: i64,
        }

        /// `percentBps` off the named products (absent: the whole basket) once their subtotal
        /// reaches `minSubtotalCents`.
        #[derive(utoipa::ToSchema)]
        #[serde(rename_all = "camelCase")]
        #[allow(dead_code)]
        struct $percent_off {
            #[schema(inline)]
            r#type: PercentOffType,
            #[doc = $id_doc]
            #[schema(value_type = $id, required = $required)]
            id: Option<String>,
            #[schema(value_type = Text)]
            name: String,
            #[schema(value_type = Instant)]
            valid_from: String,
            /// Not before `validFrom`.
            #[schema(value_type = Instant)]
            valid_until: String,
            /// Higher first. Default 0.
            #[schema(minimum = -9007199254740991_i64, maximum = 9007199254740991_i64)]
            priority: Option<i64>,
            /// Applies only alone, excluding every other promotion of the sale. Default false.
            exclusive: Option<bool>,
            /// The stores it runs in, at least one; absent: every store.
            #[schema(value_type = Option<Vec<Text>>, min_items = 1)]
            store_ids: Option<Vec<String>>,
            /// Default true; the deactivate operation turns it off.
            active: Option<bool>,
            /// The articles it takes off, at least one; absent: the whole basket.
            #[schema(value_type = Option<Vec<SkuIdText>>, min_items = 1)]
            product_ids: Option<Vec<String>>,
            #[schema(minimum = 1, maximum = 10000)]
            percent_bps: i64,
            #[schema(minimum = 0, maximum = 9007199254740991_i64)]
            min_subtotal_cents: Option<i64>,
        }
    };
}

rule_shapes!(PromotionRule, BogoRule, BundleRule, PercentOffRule,
    id: Text, required: true, "The rule's id: the upsert creates or replaces the rule it names.",
    "A promotion rule: one of three shapes selected by `type`.");

rule_shapes!(PromotionRuleReplacement, BogoRuleReplacement, BundleRuleReplacement, PercentOffRuleReplacement,
    id: Option<Text>, required: false, "Optional; if present, overwritten by the path's id.",
    "The whole new content of a rule: one of three shapes selected by `type`. Every field absent \
     is gone after the replace.");

#[derive(utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum BogoType {
    Bogo,
}

#[derive(utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum BundleType {
    Bundle,
}

#[derive(utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum PercentOffType {
    PercentOff,
}

/// The units that must be bought.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct BuySideBody {
    /// At least one article.
    #[schema(value_type = Vec<SkuIdText>, min_items = 1)]
    product_ids: Vec<String>,
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    quantity: i64,
}

/// The units that get the reduction.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct GetSideBody {
    /// At least one article.
    #[schema(value_type = Vec<SkuIdText>, min_items = 1)]
    product_ids: Vec<String>,
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    quantity: i64,
    #[schema(minimum = 1, maximum = 10000)]
    percent_bps: i64,
}

#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct ComponentBody {
    #[schema(value_type = SkuIdText)]
    product_id: String,
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    quantity: i64,
}

#[derive(Clone, Copy)]
enum Kind {
    Bogo,
    Bundle,
    PercentOff,
}

/// Parses a rule; `path_id` (a replace) overrides whatever id the body carries.
fn parse_rule(body: &Value, path_id: Option<PromotionId>) -> Result<promotions::PromotionRule, ApiError> {
    let problems = Problems::new();
    let rule = problems.root(body).and_then(|root| {
        // A replace's body may carry an id; it must be one, and the path's replaces it.
        let id = match path_id {
            Some(id) => root.optional("id", |f| f.parse_text(PromotionId::parse)).map(|_| id),
            None => root.required("id", |f| f.parse_text(PromotionId::parse)),
        };
        let kinds = [
            ("bogo", Kind::Bogo),
            ("bundle", Kind::Bundle),
            ("percent_off", Kind::PercentOff),
        ];
        let kind = root.required("type", |f| f.one_of(&kinds));
        let name = root.required("name", |f| f.text());
        let valid_from = root.required("validFrom", |f| f.instant(Zone::UtcOrOffset));
        let valid_until = root.required("validUntil", |f| f.instant(Zone::UtcOrOffset));
        let priority = root.optional("priority", |f| f.integer(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER));
        let exclusive = root.optional("exclusive", |f| f.boolean());
        let store_ids = root.optional("storeIds", |f| non_empty(f, |s| s.parse_text(StoreId::parse)));
        let active = root.optional("active", |f| f.boolean());
        let mechanics = kind.and_then(|kind| match kind {
            Kind::Bogo => bogo(&root),
            Kind::Bundle => bundle(&root),
            Kind::PercentOff => percent_off(&root),
        });
        let (valid_from, valid_until) = (valid_from?, valid_until?);
        if valid_until < valid_from {
            return root.fail("validUntil", crate::fields::UNTIL_BEFORE_FROM);
        }
        Some(promotions::PromotionRule {
            id: id?,
            name: name?,
            valid_from,
            valid_until,
            priority: priority?.unwrap_or(0),
            exclusive: exclusive?.unwrap_or(false),
            store_ids: store_ids?,
            active: active?.unwrap_or(true),
            mechanics: mechanics?,
        })
    });
    problems.finish(|| rule)
}

/// An array with at least one element, each parsed by `each`.
fn non_empty<'a, T>(field: Field<'a>, each: impl FnMut(Field<'a>) -> Option<T>) -> Option<Vec<T>> {
    if field.value().as_array().is_some_and(Vec::is_empty) {
        return field.fail("must not be empty");
    }
    field.array(each)
}

fn products(field: Field<'_>) -> Option<Vec<SkuId>> {
    non_empty(field, |p| p.parse_text(SkuId::parse))
}

fn quantity(field: Field<'_>) -> Option<i64> {
    field.integer(1, MAX_SAFE_INTEGER)
}

fn bogo(root: &Obj<'_>) -> Option<Mechanics> {
    let buy = root.required("buy", |f| {
        let side = f.object()?;
        let ids = side.required("productIds", products);
        let quantity = side.required("quantity", quantity);
        Some(BuySide {
            product_ids: ids?.into(),
            quantity: quantity?,
        })
    });
    let get = root.required("get", |f| {
        let side = f.object()?;
        let ids = side.required("productIds", products);
        let quantity = side.required("quantity", quantity);
        let percent = side.required("percentBps", |f| f.bps(1));
        Some(GetSide {
            product_ids: ids?.into(),
            quantity: quantity?,
            percent_bps: percent?,
        })
    });
    let max_applications = root.optional("maxApplications", quantity);
    Some(Mechanics::Bogo {
        buy: buy?,
        get: get?,
        max_applications: max_applications?,
    })
}

fn bundle(root: &Obj<'_>) -> Option<Mechanics> {
    let mut seen = HashSet::new();
    let components = root.required("components", |f| {
        non_empty(f, |c| {
            let component = c.object()?;
            let product = component.required("productId", |f| f.parse_text(SkuId::parse));
            let product = match product {
                Some(id) if !seen.insert(id.clone()) => {
                    component.fail("productId", "appears in another component; give it one quantity")
                }
                other => other,
            };
            let quantity = component.required("quantity", quantity);
            Some(Component {
                product_id: product?,
                quantity: quantity?,
            })
        })
    });
    let price = root.required("priceCents", |f| f.cents());
    Some(Mechanics::Bundle {
        components: components?,
        price_cents: price?,
    })
}

fn percent_off(root: &Obj<'_>) -> Option<Mechanics> {
    let product_ids = root.optional("productIds", products);
    let percent = root.required("percentBps", |f| f.bps(1));
    let minimum = root.optional("minSubtotalCents", |f| f.cents());
    Some(Mechanics::PercentOff {
        product_ids: product_ids?.map(Products::from),
        percent_bps: percent?,
        min_subtotal_cents: minimum?,
    })
}

/// `{id}` of the promotion routes.
struct PromotionPath(PromotionId);

impl FromParams for PromotionPath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("id", PromotionId::parse).map(PromotionPath)
    }
}

/// The rule as answered: its JSON, with the version as a strong ETag.
fn rule_response(status: StatusCode, stored: &StoredRule) -> Response {
    let body = serde_json::to_value(&stored.rule).unwrap_or(Value::Null);
    let mut response = (status, Json(body)).into_response();
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
    let rule = parse_rule(&body, None)?;
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
    #[schema(value_type = Vec<PromotionRule>)]
    promotions: Vec<Value>,
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
        .map(|rule| serde_json::to_value(rule).unwrap_or(Value::Null))
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
    let rule = parse_rule(&body, Some(id))?;
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
