//! `POST /v1/checkout/finalize`: the only way to commit a sale.
//!
//! The order of the checks: the body's shape (400), an earlier commit of the same transaction
//! id (replay or 409), the store network (400), the session and register (422), the catalog
//! (422), the price, the authority to grant the declared discounts (403), the settlement (422),
//! then one transaction that writes the sale, moves stock, accrues loyalty and seals the ticket.

pub mod event;
pub mod request;

use crate::auth::secret::{ELEVATION_TOKEN_PREFIX, is_token_shaped, new_id, token_hash};
use crate::auth::{Authorized, Principal};
use crate::error::ApiError;
use crate::extract::JsonBody;
use crate::ops;
use crate::state::AppState;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use event::{
    Loyalty, SaleEvent, SaleTransaction, SerialView, StockMovement, Ticket, TicketTender, Totals,
    TransactionLine,
};
use jiff::Timestamp;
use request::{SaleRequestBody, parse_sale};
use std::collections::{BTreeMap, HashMap};
use till_core::catalog::CatalogItem;
use till_core::grant::Grant;
use till_core::ids::{RegisterId, SkuId};
use till_core::instant::format_utc;
use till_core::money::{Bps, Cents, MAX_SAFE_INTEGER, checked_sum};
use till_core::pricing::{LineToPrice, Priced, PricingError, PricingInput, price};
use till_core::sale::{DeclaredKind, SaleRequest, SaleType};
use till_core::settlement::{SettlementError, check_settlement, loyalty_points};
use till_core::staff::effective_limit;
use till_store::elevation::GrantOperation;
use till_store::sales::{NewSale, NewSaleLine, SaleOutcome};
use till_store::sessions::SessionRecord;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(finalize))
}

/// Finalize a sale: commit a settled cart and its tenders as one idempotent sale event.
///
/// The server re-prices every catalog line from its own price authority (the cart's prices are
/// advisory; custom lines are trusted), applies declared discounts, checks the tenders against
/// its total, then in one transaction books the sale against the register session, decrements
/// stock, accrues the customer's loyalty points and seals the ticket in the register's NF525
/// chain. Idempotent by `transactionId`: the same content replays the stored 201 body, other
/// content is a 409. Tier `avoid`: an automated agent must never call this unprompted; it
/// moves money and stock and writes an unalterable fiscal record.
#[utoipa::path(post, path = "/v1/checkout/finalize", operation_id = "finalizeSale", tag = "checkout",
    params(("x-elevation-token" = Option<String>, Header,
        description = "A single-use manager elevation token, spent on this call's declared discounts")),
    request_body = SaleRequestBody,
    responses(
        (status = 201, description = "Committed (or replayed): the sale event", body = SaleEvent),
        (status = 403, description = "Missing scope, or declared discounts beyond the caller's authority", body = crate::error::ErrorEnvelope),
        (status = 409, description = "The transactionId was already finalized with other content", body = crate::error::ErrorEnvelope),
        (status = 422, description = "Empty cart, unknown article, price or settlement mismatch, closed session, other business rule", body = crate::error::ErrorEnvelope)))]
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
    if let Some(stored) = state.store().find_sale(&request.transaction_id).await? {
        return replay(stored, &fingerprint);
    }
    if request.kind == SaleType::Return {
        return Err(ApiError::Business(
            "Returns without a receipt are not accepted by finalize yet; use a sale type.".into(),
        ));
    }
    let now = state.now();
    let session = booking_session(&state, &caller, &request, now).await?;
    let register_id = register_of(&request, &session)?;
    if request.cart.lines.is_empty() {
        return Err(ApiError::Business(
            "The cart is empty: a sale needs at least one line.".into(),
        ));
    }
    let catalog = catalog_for(&state, &request).await?;
    let lines = lines_to_price(&request, &catalog)?;
    let priced = price(&PricingInput {
        lines: &lines,
        declared: &request.declared_discounts,
        ..Default::default()
    })
    .map_err(pricing_error)?;
    let grant = authorize_discounts(
        &state,
        &caller,
        &request,
        &priced,
        headers.get("x-elevation-token"),
    )
    .await?;
    let tolerance = Cents::new(state.config().cash_rounding_tolerance_cents).unwrap_or(Cents::ZERO);
    check_settlement(priced.total, &request.tenders, tolerance)
        .map_err(|error| settlement_error(error, &request, &lines))?;

    let mut sale = build_sale(
        &state,
        request,
        fingerprint,
        register_id,
        &lines,
        &priced,
        now,
    )?;
    sale.record.spends_grant = grant;
    match state.store().commit_sale(sale.record).await? {
        SaleOutcome::Committed { .. } => Ok(created(sale.body, false)),
        SaleOutcome::Existing {
            fingerprint: stored,
            response,
        } => replay((stored, response), &sale.fingerprint),
    }
}

/// The stored answer to a transaction id seen before: the same body if the content matches.
fn replay(
    (stored_fingerprint, response): (String, String),
    fingerprint: &str,
) -> Result<Response, ApiError> {
    if stored_fingerprint == fingerprint {
        Ok(created(response, true))
    } else {
        Err(ApiError::Conflict(
            "This transactionId was already finalized with different content; nothing was changed."
                .into(),
        ))
    }
}

fn created(body: String, replayed: bool) -> Response {
    let mut response = (
        StatusCode::CREATED,
        [(CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response();
    if replayed {
        response
            .headers_mut()
            .insert("x-idempotent-replay", HeaderValue::from_static("true"));
    }
    response
}

/// The session the sale is booked against, checked against the store network and the caller.
async fn booking_session(
    state: &AppState,
    caller: &Principal,
    request: &SaleRequest,
    now: Timestamp,
) -> Result<SessionRecord, ApiError> {
    if state.store().store_in_network(&request.store_id).await? == Some(false) {
        return Err(ApiError::field("storeId", "is not a store of the network"));
    }
    if let Some(own) = caller.session()
        && own.session.session_id != request.session_id
    {
        return Err(ApiError::Business(format!(
            "This till's token belongs to session {}, but the sale names session {}.",
            own.session.session_id, request.session_id
        )));
    }
    let session = state
        .store()
        .get_session(&request.session_id)
        .await?
        .ok_or_else(|| {
            ApiError::Business(format!(
                "Register session {} does not exist.",
                request.session_id
            ))
        })?;
    if session.closed_at.is_some() || now >= session.expires_at {
        return Err(ApiError::Business(format!(
            "Register session {} is closed; open a new session to book sales.",
            session.session_id
        )));
    }
    if session.store_id != request.store_id {
        return Err(ApiError::Business(format!(
            "Register session {} belongs to store {}, not {}.",
            session.session_id, session.store_id, request.store_id
        )));
    }
    Ok(session)
}

/// The register whose chain seals the ticket: the body's, which must be the session's.
fn register_of(request: &SaleRequest, session: &SessionRecord) -> Result<RegisterId, ApiError> {
    match &request.register_id {
        Some(register) if *register != session.register_id => Err(ApiError::Business(format!(
            "The sale names register {register}, but session {} is on register {}.",
            session.session_id, session.register_id
        ))),
        _ => Ok(session.register_id.clone()),
    }
}

async fn catalog_for(
    state: &AppState,
    request: &SaleRequest,
) -> Result<HashMap<SkuId, CatalogItem>, ApiError> {
    let wanted: Vec<&SkuId> = request
        .cart
        .lines
        .iter()
        .filter(|l| !l.custom)
        .filter_map(|l| l.sku_id.as_ref())
        .collect();
    Ok(state.store().catalog_items(&wanted).await?)
}

/// Each line at the price the server stands behind: the authority's, or a custom line's own.
fn lines_to_price(
    request: &SaleRequest,
    catalog: &HashMap<SkuId, CatalogItem>,
) -> Result<Vec<LineToPrice>, ApiError> {
    request
        .cart
        .lines
        .iter()
        .map(|line| {
            let (unit_price, vat_rate) = if line.custom {
                (line.unit_price, line.vat_rate)
            } else {
                let sku = line.sku_id.as_ref().ok_or_else(|| {
                    ApiError::Business(format!(
                        "Line {} names no article (skuId is null) and is not marked custom.",
                        line.id
                    ))
                })?;
                let item = catalog.get(sku).ok_or_else(|| {
                    ApiError::Business(format!(
                        "Line {}: article {sku} is not in the catalog.",
                        line.id
                    ))
                })?;
                (item.price, item.vat_rate)
            };
            Ok(LineToPrice {
                line_id: line.id.clone(),
                unit_price,
                quantity: line.quantity,
                vat_rate,
            })
        })
        .collect()
}

fn pricing_error(error: PricingError) -> ApiError {
    match error {
        PricingError::Overflow => {
            ApiError::Business("The sale's amounts are too large to be represented.".into())
        }
        other => ApiError::Business(format!("{other}.")),
    }
}

/// Declared discounts need authority: the caller's own (`price:override`, or within their
/// discount limit) or a manager's single-use elevation token, whose grant id is returned so the
/// commit spends it. A token presented when none is needed is left unspent.
async fn authorize_discounts(
    state: &AppState,
    caller: &Principal,
    request: &SaleRequest,
    priced: &Priced,
    elevation: Option<&HeaderValue>,
) -> Result<Option<String>, ApiError> {
    if request.declared_discounts.is_empty() || caller.has(Grant::PriceOverride) {
        return Ok(None);
    }
    let amount = priced.declared_total();
    let base = priced
        .subtotal
        .checked_sub(priced.promotion_total())
        .unwrap_or(priced.subtotal);
    let limit = match caller.session() {
        Some(session) => session.cashier.member.effective_limit(),
        None => match state.store().get_staff(&caller.subject).await? {
            Some(staff) => staff.member.effective_limit(),
            None => effective_limit(None, caller.grants),
        },
    };
    // The percent limit caps the amount with the same rounding the discounts get, plus the
    // cent each percent discount may have gained rounding half away: rounding never tips a
    // discount over a limit.
    let percent_discounts = request
        .declared_discounts
        .iter()
        .filter(|d| !matches!(d.kind, DeclaredKind::TicketAmount { .. }))
        .count();
    let slack = Cents::new(percent_discounts as i64).unwrap_or(Cents::ZERO);
    let percent_cap = base
        .percent(limit.percent)
        .checked_add(slack)
        .unwrap_or(base);
    if amount <= limit.amount && amount <= percent_cap {
        return Ok(None);
    }
    if let Some(token) = elevation {
        return approved_by(state, request, token).await.map(Some);
    }
    let percent = share_bps(amount, base);
    Err(ApiError::Forbidden(format!(
        "The declared discounts take {amount} ({}.{:02} %), more than {} may grant alone; a manager's approval \
         (x-elevation-token) or the price:override permission is needed.",
        percent.get() / 100,
        percent.get() % 100,
        caller.subject
    )))
}

/// The grant behind an `x-elevation-token`, if it may approve this sale's discounts: unspent,
/// unexpired, issued to the sale's session, for the scope of the discounts (line or ticket).
/// Spending it is the commit's job, so a refused sale leaves it whole.
async fn approved_by(
    state: &AppState,
    request: &SaleRequest,
    header: &HeaderValue,
) -> Result<String, ApiError> {
    let refuse = |why: &str| {
        ApiError::Forbidden(format!(
            "The elevation token cannot approve these discounts: {why}."
        ))
    };
    let token = header
        .to_str()
        .ok()
        .filter(|token| is_token_shaped(token, ELEVATION_TOKEN_PREFIX))
        .ok_or_else(|| refuse("it is not an elevation token"))?;
    let grant = state
        .store()
        .grant_by_token(&token_hash(token))
        .await?
        .ok_or_else(|| refuse("no such grant"))?;
    if grant.spent_at.is_some() {
        return Err(refuse("it was already spent"));
    }
    if grant.expires_at <= state.now() {
        return Err(refuse("it has expired"));
    }
    if grant.session_id != request.session_id.as_str() {
        return Err(refuse("it was issued to another till session"));
    }
    let line = request
        .declared_discounts
        .iter()
        .any(|d| d.is_line_scoped());
    let ticket = request
        .declared_discounts
        .iter()
        .any(|d| !d.is_line_scoped());
    let needed = match (line, ticket) {
        (true, true) => {
            return Err(refuse(
                "one approval covers line discounts or ticket discounts, not both",
            ));
        }
        (true, false) => GrantOperation::DiscountLine,
        _ => GrantOperation::DiscountTicket,
    };
    if grant.operation != needed {
        return Err(refuse(&format!(
            "it approves {}, the sale needs {}",
            grant.operation.as_str(),
            needed.as_str()
        )));
    }
    Ok(grant.grant_id)
}

/// `amount` as a share of `base`, in basis points rounded up (an approval is never understated).
fn share_bps(amount: Cents, base: Cents) -> Bps {
    if base.get() <= 0 {
        return if amount.get() > 0 {
            Bps::FULL
        } else {
            Bps::new(0).unwrap_or(Bps::FULL)
        };
    }
    let (numerator, base) = (i128::from(amount.get()) * 10_000, i128::from(base.get()));
    let bps = (numerator + base - 1) / base;
    Bps::new(bps.min(10_000) as i64).unwrap_or(Bps::FULL)
}

/// A settlement refusal, with the lines the till priced differently when that explains it.
fn settlement_error(
    error: SettlementError,
    request: &SaleRequest,
    lines: &[LineToPrice],
) -> ApiError {
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

struct BuiltSale {
    record: NewSale,
    body: String,
    fingerprint: String,
}

fn build_sale(
    state: &AppState,
    request: SaleRequest,
    fingerprint: String,
    register_id: RegisterId,
    lines: &[LineToPrice],
    priced: &Priced,
    now: Timestamp,
) -> Result<BuiltSale, ApiError> {
    let too_large =
        || ApiError::Business("The sale's quantities are too large to be represented.".into());
    let item_count = request
        .cart
        .lines
        .iter()
        .try_fold(0i64, |sum, line| sum.checked_add(line.quantity))
        .filter(|count| *count <= MAX_SAFE_INTEGER)
        .ok_or_else(too_large)?;
    let mut stock: BTreeMap<SkuId, i64> = BTreeMap::new();
    for line in request.cart.lines.iter().filter(|l| !l.custom) {
        if let Some(sku) = &line.sku_id {
            let units = stock.entry(sku.clone()).or_default();
            *units = units.checked_sub(line.quantity).ok_or_else(too_large)?;
        }
    }
    let change = checked_sum(request.tenders.tenders.iter().map(|t| t.change)).map_err(|_| {
        ApiError::Business("The tenders' change is too large to be represented.".into())
    })?;
    let points = match &request.customer_id {
        Some(_) => loyalty_points(
            priced.total,
            &request.tenders,
            state.config().loyalty_points_per_unit,
        ),
        None => 0,
    };
    let customer = request.customer_id.as_ref().map(|c| c.as_str().to_owned());
    let event = SaleEvent {
        id: new_id("evt"),
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
                    sku_id: match (&line.sku_id, line.custom) {
                        (Some(sku), false) => sku.as_str().to_owned(),
                        _ => SkuId::CUSTOM.to_owned(),
                    },
                    quantity: line.quantity,
                    unit_price: priced.unit_price.get(),
                    serial: line.serial.as_ref().map(|s| SerialView {
                        serial_number: s.serial_number.clone(),
                        warranty_months: s.warranty_months,
                    }),
                })
                .collect(),
            totals: Totals {
                subtotal: priced.subtotal.get(),
                total: priced.total.get(),
                item_count,
                line_count: request.cart.lines.len() as i64,
            },
        },
        ticket: Ticket {
            number: request.number.clone(),
            store_id: request.store_id.as_str().to_owned(),
            seller_id: request.seller_id.as_str().to_owned(),
            customer_id: customer.clone(),
            subtotal_cents: priced.subtotal.get(),
            total_cents: priced.total.get(),
            item_count,
            tenders: request
                .tenders
                .tenders
                .iter()
                .map(|t| TicketTender {
                    method: t.method.as_str().to_owned(),
                    applied_cents: t.applied.get(),
                })
                .collect(),
            change_cents: change.get(),
        },
        loyalty: Loyalty {
            customer_id: customer,
            points_earned: points,
        },
        stock_movements: stock
            .iter()
            .map(|(sku, delta)| StockMovement {
                sku_id: sku.as_str().to_owned(),
                delta_quantity: *delta,
            })
            .collect(),
        coupon: None,
        emitted_at: format_utc(now),
    };
    let body = serde_json::to_string(&event).map_err(ApiError::internal)?;
    let record = NewSale {
        transaction_id: request.transaction_id,
        event_id: event.id,
        fingerprint: fingerprint.clone(),
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
            .zip(lines.iter().zip(&priced.lines))
            .map(|(line, (to_price, result))| NewSaleLine {
                line_id: line.id.clone(),
                sku_id: if line.custom {
                    None
                } else {
                    line.sku_id.clone()
                },
                quantity: line.quantity,
                unit_price: to_price.unit_price,
                vat_rate: to_price.vat_rate,
                gross: result.gross,
                promotion: result.promotion,
                declared: result.declared,
                ticket: result.ticket,
                net: result.net,
            })
            .collect(),
        tenders: request.tenders.tenders,
        vat: priced.vat.clone(),
        subtotal: priced.subtotal,
        total: priced.total,
        item_count,
        change,
        points_earned: points,
        stock_moves: stock.into_iter().collect(),
        coupon_code: request.coupon_code,
        issued_at: request.issued_at,
        emitted_at: now,
        response: body.clone(),
        spends_grant: None,
    };
    Ok(BuiltSale {
        record,
        body,
        fingerprint,
    })
}
