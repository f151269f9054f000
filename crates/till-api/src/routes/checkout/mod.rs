//! `POST /v1/checkout/finalize` commits a sale; `POST /v1/checkout/price` shows what it would
//! cost without committing anything. Both are [`till_app::finalize`] and [`till_app::quote`]
//! behind a parse and a render.
//!
//! The order of finalize's checks: the body's shape (400), the store network (400), the session
//! and register (422), the price: catalog, promotions, coupon (422), the authority to grant the
//! declared discounts (403), the settlement (422), then the commit.

pub mod discounts;
pub mod event;
pub mod request;
pub mod tenders;

use crate::auth::Authorized;
use crate::error::ApiError;
use crate::extract::JsonBody;
use crate::ops;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use event::{CouponBlock, SaleEvent, Totals, reported_sku};
use request::{PriceRequest, PriceRequestBody, SaleRequestBody, parse_price, parse_sale};
use serde::Serialize;
use till_app::Booked;
use till_app::finalize::finalize as finalize_sale;
use till_app::quote::{CartPrice, QuoteRequest, price_cart as price};
use till_core::pricing::CouponEffect;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(finalize))
        .routes(routes!(price_cart))
}

/// Finalize a sale: commit a settled cart and its tenders as one idempotent sale event.
///
/// The server re-prices every catalog line from its own price authority (the cart's prices are
/// advisory; custom lines are trusted), applies the automatic promotions in force, the declared
/// discounts and a presented coupon, checks the tenders against its total, then in one
/// transaction books the sale against the register session, decrements stock, accrues the
/// customer's loyalty points and seals the ticket in the register's NF525 chain. Idempotent by
/// `transactionId`: the same content replays the stored 201 body, other content is a 409.
/// Tier `avoid`: an automated agent must never call this unprompted; it moves money and stock
/// and writes an unalterable fiscal record.
#[utoipa::path(post, path = "/v1/checkout/finalize", operation_id = "finalizeSale", tag = "checkout",
    params(("x-elevation-token" = Option<String>, Header,
        description = "A single-use manager elevation token, spent on this call's declared discounts")),
    request_body = SaleRequestBody,
    responses(
        (status = 201, description = "Committed (or replayed): the sale event", body = SaleEvent),
        (status = 403, description = "Missing scope, or declared discounts beyond the caller's authority", body = crate::error::ErrorEnvelope),
        (status = 409, description = "The transactionId was already finalized with other content", body = crate::error::ErrorEnvelope),
        (status = 422, description = "Empty cart, unknown article, unusable coupon, price or settlement mismatch, closed session, other business rule", body = crate::error::ErrorEnvelope)))]
async fn finalize(
    auth: Authorized<ops::FinalizeSale>,
    State(state): State<AppState>,
    headers: HeaderMap,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let request = parse_sale(&body)?;
    let elevation = headers.get("x-elevation-token").map(HeaderValue::as_bytes);
    let booked = finalize_sale(state.app(), &auth.principal, request, elevation).await?;
    Ok(created(booked))
}

/// The 201 of a committed ticket: its stored body, marked when it is a replay.
pub(crate) fn created(booked: Booked) -> Response {
    let mut response = (StatusCode::CREATED, [(CONTENT_TYPE, "application/json")], booked.body).into_response();
    if booked.replayed {
        response
            .headers_mut()
            .insert("x-idempotent-replay", HeaderValue::from_static("true"));
    }
    response
}

/// The server's pricing of a cart, line by line.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PriceQuote {
    lines: Vec<QuotedLine>,
    /// Every promotion, declared discount and coupon that took something, in the order applied.
    adjustments: Vec<QuotedAdjustment>,
    #[serde(skip_serializing_if = "Option::is_none")]
    coupon: Option<CouponBlock>,
    totals: Totals,
    vat: Vec<QuotedVat>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuotedLine {
    id: String,
    /// 64 zeros for a custom line.
    sku_id: String,
    quantity: i64,
    /// The authority's unit price (the line's own for a custom line).
    unit_price: i64,
    #[schema(value_type = f64)]
    vat_rate: serde_json::Number,
    gross_cents: i64,
    /// Taken by automatic promotions.
    promotion_cents: i64,
    /// Taken by declared line discounts.
    discount_cents: i64,
    /// This line's share of ticket discounts, basket promotions and the coupon.
    ticket_cents: i64,
    net_cents: i64,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuotedAdjustment {
    /// `promotion`, `declared` or `coupon`.
    source: String,
    /// The promotion id, declared discount id or coupon code.
    id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    amount_cents: i64,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuotedVat {
    #[schema(value_type = f64)]
    vat_rate: serde_json::Number,
    total_cents: i64,
    vat_cents: i64,
}

/// Price a cart without committing anything.
///
/// Returns what finalize would charge: each line at the authority's price, each promotion,
/// declared discount and coupon that applies, the totals and the VAT breakdown. Nothing is
/// written, no coupon is redeemed. Read-only; safe to call at any time, for instance to show
/// the right total before payment.
#[utoipa::path(post, path = "/v1/checkout/price", operation_id = "priceCart", tag = "checkout",
    request_body = PriceRequestBody,
    responses(
        (status = 200, description = "The server's price of the cart", body = PriceQuote),
        (status = 422, description = "Empty cart, unknown article, unusable coupon", body = crate::error::ErrorEnvelope)))]
async fn price_cart(
    _caller: Authorized<ops::PriceCart>,
    State(state): State<AppState>,
    JsonBody(body): JsonBody,
) -> Result<Json<PriceQuote>, ApiError> {
    let request = parse_price(&body)?;
    let priced = price(
        state.app(),
        QuoteRequest {
            store_id: &request.store_id,
            cart: &request.cart,
            declared: &request.declared_discounts,
            coupon_code: request.coupon_code.as_ref(),
            customer_id: request.customer_id.as_ref(),
            at: request.issued_at.unwrap_or_else(|| state.now()),
        },
    )
    .await?;
    Ok(Json(PriceQuote::new(&request, priced)))
}

impl PriceQuote {
    fn new(request: &PriceRequest, CartPrice { quote, item_count }: CartPrice) -> PriceQuote {
        let priced = &quote.priced;
        let lines = request
            .cart
            .lines
            .iter()
            .zip(quote.lines.iter().zip(&priced.lines))
            .map(|(line, (to_price, result))| QuotedLine {
                id: line.id.clone(),
                sku_id: reported_sku(line.sku_id.as_ref().filter(|_| !line.custom)).to_owned(),
                quantity: line.quantity,
                unit_price: to_price.unit_price.get(),
                vat_rate: to_price.vat_rate.as_json_number(),
                gross_cents: result.gross.get(),
                promotion_cents: result.promotion.get(),
                discount_cents: result.declared.get(),
                ticket_cents: result.ticket.get(),
                net_cents: result.net.get(),
            })
            .collect();
        PriceQuote {
            lines,
            adjustments: quote
                .adjustments()
                .into_iter()
                .map(|a| QuotedAdjustment {
                    source: a.source.to_owned(),
                    id: a.source_id,
                    name: a.label,
                    amount_cents: a.amount.get(),
                })
                .collect(),
            coupon: priced.coupon.as_ref().map(coupon_block),
            totals: Totals {
                subtotal: priced.subtotal.get(),
                total: priced.total.get(),
                item_count,
                line_count: request.cart.lines.len() as i64,
            },
            vat: priced
                .vat
                .iter()
                .map(|v| QuotedVat {
                    vat_rate: v.rate.as_json_number(),
                    total_cents: v.total.get(),
                    vat_cents: v.vat.get(),
                })
                .collect(),
        }
    }
}

/// What a coupon took, as the answers show it.
pub(crate) fn coupon_block(effect: &CouponEffect) -> CouponBlock {
    CouponBlock {
        code: effect.code.clone(),
        basket_cents: effect.basket.get(),
        discount_amount_cents: effect.discount.get(),
    }
}
