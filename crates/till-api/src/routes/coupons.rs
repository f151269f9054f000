//! `PUT/GET /v1/coupons/{code}`, `GET /v1/coupons`: coupons a customer presents at the till.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, JsonBody, Params, PathParams, QueryParams};
use crate::fields::Problems;
use crate::openapi::{Instant, Text, absent};
use crate::ops;
use crate::pagination::{Page, PageParams, PageQuery, Paging, Scope};
use crate::routes::Written;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use serde_json::Value;
use till_app::coupons::CouponRecord;
use till_core::coupon::{Coupon, CouponReward};
use till_core::ids::CouponCode;
use till_core::instant::{Zone, format_utc};
use till_core::money::{Cents, MAX_SAFE_INTEGER};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(put_coupon, get_coupon))
        .routes(routes!(list_coupons))
}

/// Body of `PUT /v1/coupons/{code}`: a percent or an amount off the basket, exactly one of
/// `percentBps` and `amountCents`.
#[derive(utoipa::ToSchema)]
#[serde(untagged)]
#[allow(dead_code)] // the wire shape for the document; `parse_coupon` reads the body
enum CouponBody {
    Percent(PercentCouponBody),
    Amount(AmountCouponBody),
}

/// A coupon taking a percent off the basket.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct PercentCouponBody {
    /// Percent off the basket, in basis points (1000 = 10 %).
    #[schema(minimum = 1, maximum = 10000)]
    percent_bps: i64,
    #[schema(schema_with = absent)]
    amount_cents: Option<()>,
    /// Smallest basket (after promotions) the coupon applies to. Default 0.
    #[schema(minimum = 0, maximum = 9007199254740991_i64)]
    min_basket_cents: Option<i64>,
    #[schema(value_type = Option<Instant>)]
    valid_from: Option<String>,
    /// Not before `validFrom`.
    #[schema(value_type = Option<Instant>)]
    valid_until: Option<String>,
    /// Most sales that may redeem it; unlimited when absent.
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    max_redemptions: Option<i64>,
    /// Default true.
    active: Option<bool>,
}

/// A coupon taking a fixed amount off the basket.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct AmountCouponBody {
    /// Fixed amount off the basket, in cents, capped at the basket.
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    amount_cents: i64,
    #[schema(schema_with = absent)]
    percent_bps: Option<()>,
    /// Smallest basket (after promotions) the coupon applies to. Default 0.
    #[schema(minimum = 0, maximum = 9007199254740991_i64)]
    min_basket_cents: Option<i64>,
    #[schema(value_type = Option<Instant>)]
    valid_from: Option<String>,
    /// Not before `validFrom`.
    #[schema(value_type = Option<Instant>)]
    valid_until: Option<String>,
    /// Most sales that may redeem it; unlimited when absent.
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    max_redemptions: Option<i64>,
    /// Default true.
    active: Option<bool>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CouponView {
    code: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    percent_bps: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    amount_cents: Option<i64>,
    min_basket_cents: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    valid_from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    valid_until: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_redemptions: Option<i64>,
    /// Sales that redeemed it so far.
    redemptions: i64,
    active: bool,
}

impl From<CouponRecord> for CouponView {
    fn from(record: CouponRecord) -> Self {
        let coupon = record.coupon;
        let (percent_bps, amount_cents) = match coupon.reward {
            CouponReward::Percent(bps) => (Some(bps.get()), None),
            CouponReward::Amount(cents) => (None, Some(cents.get())),
        };
        CouponView {
            code: record.code.into_string(),
            percent_bps,
            amount_cents,
            min_basket_cents: coupon.min_basket.get(),
            valid_from: coupon.valid_from.map(format_utc),
            valid_until: coupon.valid_until.map(format_utc),
            max_redemptions: coupon.max_redemptions,
            redemptions: record.redemptions,
            active: coupon.active,
        }
    }
}

fn parse_coupon(body: &Value) -> Result<Coupon, ApiError> {
    let problems = Problems::new();
    let coupon = problems.root(body).and_then(|root| {
        let percent = root.optional("percentBps", |f| f.bps(1));
        let amount = root.optional("amountCents", |f| f.positive_cents());
        let min_basket = root.optional("minBasketCents", |f| f.cents());
        let valid_from = root.optional("validFrom", |f| f.instant(Zone::UtcOrOffset));
        let valid_until = root.optional("validUntil", |f| f.instant(Zone::UtcOrOffset));
        let max_redemptions = root.optional("maxRedemptions", |f| f.integer(1, MAX_SAFE_INTEGER));
        let active = root.optional("active", |f| f.boolean());
        let reward = match (percent?, amount?) {
            (Some(bps), None) => CouponReward::Percent(bps),
            (None, Some(cents)) => CouponReward::Amount(cents),
            (Some(_), Some(_)) => {
                return root.fail("amountCents", "cannot be given together with percentBps");
            }
            (None, None) => return root.fail("percentBps", "or amountCents is required"),
        };
        let (valid_from, valid_until) = (valid_from?, valid_until?);
        if let (Some(from), Some(until)) = (valid_from, valid_until)
            && until < from
        {
            return root.fail("validUntil", crate::fields::UNTIL_BEFORE_FROM);
        }
        Some(Coupon {
            reward,
            min_basket: min_basket?.unwrap_or(Cents::ZERO),
            valid_from,
            valid_until,
            max_redemptions: max_redemptions?,
            active: active?.unwrap_or(true),
        })
    });
    problems.finish(|| coupon)
}

/// `{code}` of the coupon routes.
struct CouponPath(CouponCode);

impl FromParams for CouponPath {
    fn from_params(params: &Params) -> Option<Self> {
        params.required("code", CouponCode::parse).map(CouponPath)
    }
}

/// Create or replace a coupon.
///
/// Back-office provisioning. The redemption count survives a replace. A person should confirm.
#[utoipa::path(put, path = "/v1/coupons/{code}", operation_id = "putCoupon", tag = "provisioning",
    params(("code" = Text, Path, description = "The code as customers present it; matched exactly")),
    request_body = CouponBody,
    responses((status = 200, description = "Replaced", body = CouponView),
              (status = 201, description = "Created", body = CouponView),
              (status = 422, description = "maxRedemptions below the redemptions already made", body = crate::error::ErrorEnvelope)))]
async fn put_coupon(
    _caller: Authorized<ops::PutCoupon>,
    State(state): State<AppState>,
    PathParams(CouponPath(code)): PathParams<CouponPath>,
    JsonBody(body): JsonBody,
) -> Result<Written<CouponView>, ApiError> {
    let coupon = parse_coupon(&body)?;
    let (record, created) = till_app::coupons::put(state.app(), code, coupon).await?;
    Ok(Written::new(created, record.into()))
}

/// Read a coupon and how often it was redeemed.
///
/// Read-only; safe to call at any time.
#[utoipa::path(get, path = "/v1/coupons/{code}", operation_id = "getCoupon", tag = "provisioning",
    params(("code" = Text, Path)),
    responses((status = 200, description = "The coupon", body = CouponView),
              (status = 404, description = "No such coupon", body = crate::error::ErrorEnvelope)))]
async fn get_coupon(
    _caller: Authorized<ops::GetCoupon>,
    State(state): State<AppState>,
    PathParams(CouponPath(code)): PathParams<CouponPath>,
) -> Result<Json<CouponView>, ApiError> {
    let record = till_app::coupons::coupon(state.app(), &code)
        .await?
        .ok_or_else(|| ApiError::NotFound("Coupon not found.".into()))?;
    Ok(Json(record.into()))
}

/// The page of the coupon list to read; the list has no filter.
struct CouponList(Paging<CouponCode>);

impl FromParams for CouponList {
    fn from_params(params: &Params) -> Option<Self> {
        PageParams::read(params)?
            .paging(params, Scope::new("coupons"))
            .map(CouponList)
    }
}

/// A page of the list, as the document names it.
type CouponPage = Page<CouponView>;

/// List the coupons and how often each was redeemed.
///
/// Every coupon by code, a page at a time: follow `nextCursor` until it is null. Read-only;
/// safe to call at any time.
#[utoipa::path(get, path = "/v1/coupons", operation_id = "listCoupons", tag = "provisioning",
    params(PageQuery),
    responses((status = 200, description = "A page of coupons, by code", body = CouponPage)))]
async fn list_coupons(
    _caller: Authorized<ops::ListCoupons>,
    State(state): State<AppState>,
    QueryParams(CouponList(paging)): QueryParams<CouponList>,
) -> Result<Json<CouponPage>, ApiError> {
    let records = till_app::coupons::coupons(state.app(), &paging.window()).await?;
    Ok(Json(paging.page(
        records,
        |record| record.code.clone(),
        CouponView::from,
    )))
}
