//! `POST /v1/checkout/finalize` commits a sale; `POST /v1/checkout/price` shows what it would
//! cost without committing anything.
//!
//! The order of finalize's checks: the body's shape (400), the store network (400), the session
//! and register (422), the price: catalog, promotions, coupon (422), the authority to grant the
//! declared discounts (403), the settlement (422), then one transaction that writes the sale,
//! redeems the coupon, spends the approval, moves stock, accrues loyalty and seals the ticket.
//! An earlier commit of the same transaction id (replay, or 409 for other content) is not
//! looked up first: the commit finds it, and so does any refusal on the way, so a replay is
//! answered whatever has changed since, and a new sale costs no extra query.

mod authority;
pub mod event;
mod quote;
pub mod request;

use crate::auth::Authorized;
use crate::auth::Principal;
use crate::auth::secret::new_ordered_id;
use crate::error::ApiError;
use crate::extract::JsonBody;
use crate::ops;
use crate::state::AppState;
use authority::{authorize_discounts, authorize_unreceipted_return};
use axum::Json;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use event::{
    CouponBlock, Loyalty, SaleEvent, SaleTransaction, SerialView, StockMovement, Ticket, TicketTender, Totals,
    TransactionLine,
};
use jiff::Timestamp;
use quote::{Quote, QuoteRequest, quote};
use request::{PriceRequestBody, SaleRequestBody, parse_price, parse_sale};
use serde::Serialize;
use std::collections::BTreeMap;
use till_core::canonical::to_compact_string;
use till_core::grant::Grant;
use till_core::ids::{RegisterId, SessionId, SkuId, StoreId, TransactionId};
use till_core::instant::format_utc;
use till_core::money::{Cents, MAX_SAFE_INTEGER, checked_sum};
use till_core::pricing::{LineToPrice, VatTotal};
use till_core::sale::{SALE_TEXT_BYTES, SaleRequest, SaleType, Tender, TenderSet};
use till_core::settlement::{SettlementError, check_settlement, loyalty_points};
use till_store::sales::{NewSale, NewSaleLine, SaleAnswer, SaleOutcome};
use till_store::sessions::SessionRecord;
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
    let caller = auth.principal;
    let request = parse_sale(&body)?;
    if request.kind == SaleType::Return && !caller.has(Grant::ReturnsCreate) {
        return Err(ApiError::Forbidden(
            "A return needs the scope pos.returns.create.".into(),
        ));
    }
    let fingerprint = request.fingerprint();
    let transaction_id = request.transaction_id.clone();
    let outcome = book_sale(&state, &caller, request, fingerprint.clone(), &headers).await;
    unless_twin_committed(&state, &transaction_id, &fingerprint, outcome).await
}

/// Prices, authorizes and commits a sale not seen before.
async fn book_sale(
    state: &AppState,
    caller: &Principal,
    request: SaleRequest,
    fingerprint: String,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let now = state.now();
    let session = booking_session(state, caller, &request.store_id, &request.session_id, now).await?;
    let register_id = register_of(request.register_id.as_ref(), &session)?;
    let is_return = request.kind == SaleType::Return;
    if is_return && request.coupon_code.is_some() {
        return Err(ApiError::Business("A coupon cannot be presented with a return.".into()));
    }
    let quote = quote(
        state,
        QuoteRequest {
            store_id: &request.store_id,
            cart: &request.cart,
            declared: &request.declared_discounts,
            coupon_code: request.coupon_code.as_ref(),
            at: request.issued_at.unwrap_or(now),
        },
    )
    .await?;
    let elevation = headers.get("x-elevation-token");
    let grant = if is_return {
        // Declared discounts on a return lower the refund: only the refund needs authority.
        authorize_unreceipted_return(state, caller, &request, quote.priced.total, elevation).await?
    } else {
        authorize_discounts(state, caller, &request, &quote.priced, elevation).await?
    };
    let tolerance = Cents::new(state.config().cash_rounding_tolerance_cents).unwrap_or(Cents::ZERO);
    check_settlement(quote.priced.total, &request.tenders, tolerance)
        .map_err(|error| settlement_error(error, &request, &quote.lines))?;

    let mut sale = build_sale(state, request, fingerprint, register_id, &quote, now)?;
    sale.spends_grant = grant;
    let fingerprint = sale.fingerprint.clone();
    answer(state.store().commit_sale(sale).await?, &fingerprint)
}

/// A refusal may be the shadow of a twin request with the same transaction id: committed
/// before (the session has closed since, the price changed, the approval was spent) or while
/// this one was being checked (it spent the grant, the coupon's last redemption, the units to
/// return). The twin's stored answer is this request's answer too.
pub(crate) async fn unless_twin_committed(
    state: &AppState,
    transaction_id: &TransactionId,
    fingerprint: &str,
    outcome: Result<Response, ApiError>,
) -> Result<Response, ApiError> {
    match outcome {
        Err(
            refusal @ (ApiError::Business(_)
            | ApiError::Forbidden(_)
            | ApiError::Channel { .. }
            | ApiError::Validation(_)
            | ApiError::NotFound(_)),
        ) => match state.store().find_sale(transaction_id).await? {
            Some(stored) => replay(stored, fingerprint),
            None => Err(refusal),
        },
        other => other,
    }
}

/// The answer to a commit: the new ticket, or, when a concurrent request with the same
/// transaction id got there first, its replay (or a 409 if its content differs).
pub(crate) fn answer(outcome: SaleOutcome, fingerprint: &str) -> Result<Response, ApiError> {
    match outcome {
        SaleOutcome::Committed { response, .. } => Ok(created(response, false)),
        SaleOutcome::Existing {
            fingerprint: stored,
            response,
        } => replay((stored, response), fingerprint),
    }
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
    if state.store().store_in_network(&request.store_id).await? == Some(false) {
        return Err(ApiError::field("storeId", "is not a store of the network"));
    }
    let quote = quote(
        &state,
        QuoteRequest {
            store_id: &request.store_id,
            cart: &request.cart,
            declared: &request.declared_discounts,
            coupon_code: request.coupon_code.as_ref(),
            at: request.issued_at.unwrap_or_else(|| state.now()),
        },
    )
    .await?;
    let priced = &quote.priced;
    let lines = request
        .cart
        .lines
        .iter()
        .zip(quote.lines.iter().zip(&priced.lines))
        .map(|(line, (to_price, result))| QuotedLine {
            id: line.id.clone(),
            sku_id: reported_sku(line),
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
    let item_count = item_count(&request.cart)?;
    Ok(Json(PriceQuote {
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
        coupon: coupon_block(&quote),
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
    }))
}

/// The article a line reports: its own, or 64 zeros for a custom line.
pub(crate) fn reported_sku(line: &till_core::sale::CartLine) -> String {
    match (&line.sku_id, line.custom) {
        (Some(sku), false) => sku.as_str().to_owned(),
        _ => SkuId::CUSTOM.to_owned(),
    }
}

fn item_count(cart: &till_core::sale::Cart) -> Result<i64, ApiError> {
    cart.lines
        .iter()
        .try_fold(0i64, |sum, line| sum.checked_add(line.quantity))
        .filter(|count| *count <= MAX_SAFE_INTEGER)
        .ok_or_else(|| ApiError::Business("The sale's quantities are too large to be represented.".into()))
}

fn coupon_block(quote: &Quote) -> Option<CouponBlock> {
    quote.priced.coupon.as_ref().map(|effect| CouponBlock {
        code: effect.code.clone(),
        basket_cents: effect.basket.get(),
        discount_amount_cents: effect.discount.get(),
    })
}

/// The stored answer to a transaction id seen before: the same body if the content matches.
pub(crate) fn replay(
    (stored_fingerprint, response): (String, String),
    fingerprint: &str,
) -> Result<Response, ApiError> {
    if stored_fingerprint == fingerprint {
        Ok(created(response, true))
    } else {
        Err(ApiError::Conflict(
            "This transactionId was already finalized with different content; nothing was changed.".into(),
        ))
    }
}

pub(crate) fn created(body: String, replayed: bool) -> Response {
    let mut response = (StatusCode::CREATED, [(CONTENT_TYPE, "application/json")], body).into_response();
    if replayed {
        response
            .headers_mut()
            .insert("x-idempotent-replay", HeaderValue::from_static("true"));
    }
    response
}

/// The session a ticket is booked against, checked against the store network and the caller.
pub(crate) async fn booking_session(
    state: &AppState,
    caller: &Principal,
    store_id: &StoreId,
    session_id: &SessionId,
    now: Timestamp,
) -> Result<SessionRecord, ApiError> {
    if state.store().store_in_network(store_id).await? == Some(false) {
        return Err(ApiError::field("storeId", "is not a store of the network"));
    }
    if let Some(own) = caller.session()
        && own.session.session_id != *session_id
    {
        return Err(ApiError::Business(format!(
            "This till's token belongs to session {}, but the request names session {session_id}.",
            own.session.session_id
        )));
    }
    // A till's token was resolved to its session in this very request: no second read.
    let session = match caller.session() {
        Some(own) => own.session.clone(),
        None => state
            .store()
            .get_session(session_id)
            .await?
            .ok_or_else(|| ApiError::Business(format!("Register session {session_id} does not exist.")))?,
    };
    if session.closed_at.is_some() || now >= session.expires_at {
        return Err(ApiError::Business(format!(
            "Register session {} is closed; open a new session to book sales.",
            session.session_id
        )));
    }
    if session.store_id != *store_id {
        return Err(ApiError::Business(format!(
            "Register session {} belongs to store {}, not {store_id}.",
            session.session_id, session.store_id
        )));
    }
    Ok(session)
}

/// The register whose chain seals the ticket: the body's, which must be the session's.
pub(crate) fn register_of(named: Option<&RegisterId>, session: &SessionRecord) -> Result<RegisterId, ApiError> {
    match named {
        Some(register) if *register != session.register_id => Err(ApiError::Business(format!(
            "The request names register {register}, but session {} is on register {}.",
            session.session_id, session.register_id
        ))),
        _ => Ok(session.register_id.clone()),
    }
}

/// A settlement refusal, with the lines the till priced differently when that explains it.
fn settlement_error(error: SettlementError, request: &SaleRequest, lines: &[LineToPrice]) -> ApiError {
    let mut message = error.to_string();
    if matches!(error, SettlementError::AmountDue { .. }) {
        let differing: Vec<String> = request
            .cart
            .lines
            .iter()
            .zip(lines)
            .filter(|(line, priced)| line.unit_price != priced.unit_price)
            .take(3)
            .map(|(line, priced)| {
                format!(
                    "line {}: the till says {}, the catalog {}",
                    line.id, line.unit_price, priced.unit_price
                )
            })
            .collect();
        if !differing.is_empty() {
            message.push_str(&format!(" Prices differ on {}.", differing.join("; ")));
        }
    }
    ApiError::Business(message)
}

fn build_sale(
    state: &AppState,
    request: SaleRequest,
    fingerprint: String,
    register_id: RegisterId,
    quote: &Quote,
    now: Timestamp,
) -> Result<NewSale, ApiError> {
    let (lines, priced) = (&quote.lines, &quote.priced);
    // A return without a receipt is a sale in reverse: the same pricing, every amount and the
    // loyalty points negative, the goods coming back into stock.
    let sign = Sign::of(request.kind);
    let too_large = || ApiError::Business("The sale's quantities are too large to be represented.".into());
    let item_count = item_count(&request.cart)?;
    let mut stock: BTreeMap<SkuId, i64> = BTreeMap::new();
    for line in request.cart.lines.iter().filter(|l| !l.custom) {
        if let Some(sku) = &line.sku_id {
            let units = stock.entry(sku.clone()).or_default();
            *units = units.checked_add(sign.units(line.quantity)).ok_or_else(too_large)?;
        }
    }
    let change = checked_sum(request.tenders.tenders.iter().map(|t| t.change))
        .map_err(|_| ApiError::Business("The tenders' change is too large to be represented.".into()))?;
    let points = match &request.customer_id {
        Some(_) => sign.points(loyalty_points(
            priced.total,
            &request.tenders,
            state.config().loyalty_points_per_unit,
        )),
        None => 0,
    };
    let (subtotal, total, change) = (
        sign.money(priced.subtotal),
        sign.money(priced.total),
        sign.money(change),
    );
    let customer = request.customer_id.as_ref().map(|c| c.as_str().to_owned());
    let event = SaleEvent {
        id: new_ordered_id("evt", now),
        register_id: register_id.as_str().to_owned(),
        transaction: SaleTransaction {
            id: request.transaction_id.as_str().to_owned(),
            number: request.number.clone(),
            store_id: request.store_id.as_str().to_owned(),
            seller_id: request.seller_id.as_str().to_owned(),
            customer_id: customer.clone(),
            status: "completed".to_owned(),
            r#type: request.kind.as_str().to_owned(),
            lines: request
                .cart
                .lines
                .iter()
                .zip(lines)
                .map(|(line, priced)| TransactionLine {
                    sku_id: reported_sku(line),
                    quantity: line.quantity,
                    unit_price: priced.unit_price.get(),
                    serial: line.serial.as_ref().map(|s| SerialView {
                        serial_number: s.serial_number.clone(),
                        warranty_months: s.warranty_months,
                    }),
                })
                .collect(),
            totals: Totals {
                subtotal: subtotal.get(),
                total: total.get(),
                item_count,
                line_count: request.cart.lines.len() as i64,
            },
        },
        ticket: Ticket {
            number: request.number.clone(),
            store_id: request.store_id.as_str().to_owned(),
            seller_id: request.seller_id.as_str().to_owned(),
            customer_id: customer.clone(),
            subtotal_cents: subtotal.get(),
            total_cents: total.get(),
            item_count,
            tenders: sign.ticket_tenders(&request.tenders),
            change_cents: change.get(),
        },
        loyalty: Loyalty {
            customer_id: customer,
            points_earned: points,
        },
        stock_movements: stock_movements(&stock),
        coupon: coupon_block(quote),
        emitted_at: format_utc(now),
    };
    let body = to_compact_string(&event, SALE_TEXT_BYTES).map_err(ApiError::internal)?;
    Ok(NewSale {
        transaction_id: request.transaction_id,
        event_id: event.id,
        fingerprint,
        kind: request.kind,
        number: request.number,
        store_id: request.store_id,
        seller_id: request.seller_id,
        customer_id: request.customer_id,
        session_id: request.session_id,
        register_id,
        lines: request
            .cart
            .lines
            .iter()
            .zip(lines.iter().zip(&priced.lines).zip(&quote.labels))
            .map(|(line, ((to_price, result), label))| NewSaleLine {
                line_id: line.id.clone(),
                sku_id: if line.custom { None } else { line.sku_id.clone() },
                label: label.clone(),
                quantity: line.quantity,
                unit_price: to_price.unit_price,
                vat_rate: to_price.vat_rate,
                gross: sign.money(result.gross),
                promotion: sign.money(result.promotion),
                declared: sign.money(result.declared),
                ticket: sign.money(result.ticket),
                net: sign.money(result.net),
            })
            .collect(),
        tenders: request.tenders.tenders.iter().map(|t| sign.tender(t)).collect(),
        vat: priced.vat.iter().map(|v| sign.vat(v)).collect(),
        subtotal,
        total,
        item_count,
        change,
        points_earned: points,
        stock_moves: stock.into_iter().collect(),
        coupon_code: request.coupon_code,
        issued_at: request.issued_at,
        emitted_at: now,
        response: SaleAnswer::Ready(body),
        spends_grant: None,
        adjustments: quote
            .adjustments()
            .into_iter()
            .map(|a| till_store::sales::Adjustment {
                amount: sign.money(a.amount),
                ..a
            })
            .collect(),
        original: None,
    })
}

/// Which way a ticket moves money and goods: a sale takes payment and gives goods, a return
/// the reverse. Tickets are stored with their sign, so that every sum over them is net.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sign {
    Sale,
    Return,
}

/// The sale event's stock block: one movement per article, in SKU order.
pub(crate) fn stock_movements(stock: &BTreeMap<SkuId, i64>) -> Vec<StockMovement> {
    stock
        .iter()
        .map(|(sku, delta)| StockMovement {
            sku_id: sku.as_str().to_owned(),
            delta_quantity: *delta,
        })
        .collect()
}

impl Sign {
    /// The ticket's tenders, with this sign.
    pub(crate) fn ticket_tenders(self, tenders: &TenderSet) -> Vec<TicketTender> {
        tenders
            .tenders
            .iter()
            .map(|t| TicketTender {
                method: t.method.as_str().to_owned(),
                applied_cents: self.money(t.applied).get(),
            })
            .collect()
    }

    fn of(kind: SaleType) -> Sign {
        match kind {
            SaleType::Return => Sign::Return,
            _ => Sign::Sale,
        }
    }

    pub(crate) fn money(self, amount: Cents) -> Cents {
        match self {
            Sign::Sale => amount,
            Sign::Return => amount.checked_neg(),
        }
    }

    /// Units moving into stock for `quantity` on the ticket.
    pub(crate) fn units(self, quantity: i64) -> i64 {
        match self {
            Sign::Sale => -quantity,
            Sign::Return => quantity,
        }
    }

    /// Loyalty points moving into the customer's balance for `points` the amount earns.
    pub(crate) fn points(self, points: i64) -> i64 {
        match self {
            Sign::Sale => points,
            Sign::Return => -points,
        }
    }

    pub(crate) fn tender(self, tender: &Tender) -> Tender {
        Tender {
            id: tender.id.clone(),
            method: tender.method,
            applied: self.money(tender.applied),
            presented: self.money(tender.presented),
            change: self.money(tender.change),
            forfeited: self.money(tender.forfeited),
        }
    }

    pub(crate) fn vat(self, vat: &VatTotal) -> VatTotal {
        VatTotal {
            rate: vat.rate,
            total: self.money(vat.total),
            vat: self.money(vat.vat),
        }
    }
}
