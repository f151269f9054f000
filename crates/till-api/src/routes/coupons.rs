//! `PUT/GET /v1/coupons/{code}`, `GET /v1/coupons`: coupons a customer presents at the till.

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::{FromParams, Params, Parsed, PathParams, QueryParams};
use crate::fields::{FromBody, Obj};
use crate::openapi::{Absent, Instant, Text, absent};
use crate::ops;
use crate::pagination::{Page, PageQuery, Paging, Scope};
use crate::routes::Written;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use jiff::Timestamp;
use serde::Serialize;
use till_app::coupons::CouponRecord;
use till_core::coupon::{Coupon, CouponReward};
use till_core::ids::CouponCode;
use till_core::instant::{Zone, format_utc};
use till_core::money::{Bps, Cents, MAX_SAFE_INTEGER};
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
enum CouponBody {
    Percent(PercentCouponBody),
    Amount(AmountCouponBody),
}

/// A coupon taking a percent off the basket.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct PercentCouponBody {
    /// Percent off the basket, in basis points (1000 = 10 %).
    #[schema(value_type = i64, minimum = 1, maximum = 10000)]
    percent_bps: Bps,
    // The parser refuses both rewards together.
    #[schema(schema_with = absent, required = false)]
    amount_cents: Absent,
    /// Smallest basket (after promotions) the coupon applies to. Default 0.
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 9007199254740991_i64)]
    min_basket_cents: Option<Cents>,
    #[schema(value_type = Option<Instant>)]
    valid_from: Option<Timestamp>,
    /// Not before `validFrom`.
    #[schema(value_type = Option<Instant>)]
    valid_until: Option<Timestamp>,
    /// Most sales that may redeem it; unlimited when absent.
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    max_redemptions: Option<i64>,
    /// Default true.
    active: Option<bool>,
}

/// A coupon taking a fixed amount off the basket.
#[derive(utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct AmountCouponBody {
    /// Fixed amount off the basket, in cents, capped at the basket.
    #[schema(value_type = i64, minimum = 1, maximum = 9007199254740991_i64)]
    amount_cents: Cents,
    // The parser refuses both rewards together.
    #[schema(schema_with = absent, required = false)]
    percent_bps: Absent,
    /// Smallest basket (after promotions) the coupon applies to. Default 0.
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 9007199254740991_i64)]
    min_basket_cents: Option<Cents>,
    #[schema(value_type = Option<Instant>)]
    valid_from: Option<Timestamp>,
    /// Not before `validFrom`.
    #[schema(value_type = Option<Instant>)]
    valid_until: Option<Timestamp>,
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

impl FromBody for CouponBody {
    fn from_body(root: &Obj<'_>) -> Option<Self> {
        let percent = root.optional("percentBps", |f| f.bps(1));
        let amount = root.optional("amountCents", |f| f.positive_cents());
        let min_basket_cents = root.optional("minBasketCents", |f| f.cents());
        let valid_from = root.optional("validFrom", |f| f.instant(Zone::UtcOrOffset));
        let valid_until = root.optional("validUntil", |f| f.instant(Zone::UtcOrOffset));
        let max_redemptions = root.optional("maxRedemptions", |f| f.integer(1, MAX_SAFE_INTEGER));
        let active = root.optional("active", |f| f.boolean());
        let (percent, amount) = (percent?, amount?);
        if percent.is_some() && amount.is_some() {
            return root.fail("amountCents", "cannot be given together with percentBps");
        }
        if percent.is_none() && amount.is_none() {
            return root.fail("percentBps", "or amountCents is required");
        }
        let (valid_from, valid_until) = (valid_from?, valid_until?);
        if let (Some(from), Some(until)) = (valid_from, valid_until)
            && until < from
        {
            return root.fail("validUntil", crate::fields::UNTIL_BEFORE_FROM);
        }
        let (min_basket_cents, max_redemptions, active) = (min_basket_cents?, max_redemptions?, active?);
        Some(match (percent, amount) {
            (Some(percent_bps), _) => CouponBody::Percent(PercentCouponBody {
                percent_bps,
                amount_cents: Absent,
                min_basket_cents,
                valid_from,
                valid_until,
                max_redemptions,
                active,
            }),
            (None, amount) => CouponBody::Amount(AmountCouponBody {
                amount_cents: amount?,
                percent_bps: Absent,
                min_basket_cents,
                valid_from,
                valid_until,
                max_redemptions,
                active,
            }),
        })
    }
}

impl From<CouponBody> for Coupon {
    fn from(body: CouponBody) -> Coupon {
        let (reward, min_basket, valid_from, valid_until, max_redemptions, active) = match body {
            CouponBody::Percent(PercentCouponBody {
                percent_bps,
                amount_cents: Absent,
                min_basket_cents,
                valid_from,
                valid_until,
                max_redemptions,
                active,
            }) => (
                CouponReward::Percent(percent_bps),
                min_basket_cents,
                valid_from,
                valid_until,
                max_redemptions,
                active,
            ),
            CouponBody::Amount(AmountCouponBody {
                amount_cents,
                percent_bps: Absent,
                min_basket_cents,
                valid_from,
                valid_until,
                max_redemptions,
                active,
            }) => (
                CouponReward::Amount(amount_cents),
                min_basket_cents,
                valid_from,
                valid_until,
                max_redemptions,
                active,
            ),
        };
        Coupon {
            reward,
            min_basket: min_basket.unwrap_or(Cents::ZERO),
            valid_from,
            valid_until,
            max_redemptions,
            active: active.unwrap_or(true),
        }
    }
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
    Parsed(body): Parsed<CouponBody>,
) -> Result<Written<CouponView>, ApiError> {
    let (record, created) = till_app::coupons::put(state.app(), code, body.into()).await?;
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
        PageQuery::read(params)?
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
