//! Finalize: commit a settled cart and its tenders as one idempotent sale.
//!
//! The order of the checks: the session and register, the price (catalog, promotions,
//! coupon), the authority to grant the declared discounts, the settlement, then one
//! transaction that writes the sale, redeems the coupon, spends the approval, moves stock,
//! accrues loyalty and seals the ticket. An earlier commit of the same transaction id (replay,
//! or a refusal for other content) is not looked up first: the commit finds it, and so does
//! any refusal on the way, so a replay is answered whatever has changed since, and a new sale
//! costs no extra query.

use crate::app::App;
use crate::authority::{authorize_discounts, authorize_unreceipted_return};
use crate::booking::{Booked, Freshness, Timing, answer, booking_session, register_of, unless_twin_committed};
use crate::caller::Principal;
use crate::quote::{Quote, QuoteRequest, item_count, quote};
use crate::refusal::{CardLineProblem, Error, PriceGap, Refusal};
use crate::secret::{new_instrument_code, new_ordered_id};
use crate::storage::Rule;
use crate::storage::StoreError;
use crate::storage::sales::NewSale;
use jiff::{SignedDuration, Timestamp};
use std::collections::BTreeMap;
use till_core::committed::{Capture, NewSaleLine, SaleAnswer, Sign};
use till_core::grant::Grant;
use till_core::ids::{RegisterId, SkuId};
use till_core::money::{Cents, checked_sum};
use till_core::offline::{SessionSpan, check_issued_at, check_within_session};
use till_core::payment::{self, CaptureBy, CaptureRefusal, Change};
use till_core::pricing::LineToPrice;
use till_core::sale::{Cart, SaleRequest, SaleType};
use till_core::settlement::{SettlementError, check_settlement, loyalty_points};
use till_core::stored_value::{CardMove, Direction, TenderRules, TicketMoves, tender_moves};

/// Finalizes `request`; `elevation` is the `x-elevation-token` presented with it, if any.
pub async fn finalize(
    app: &App,
    caller: &Principal,
    request: SaleRequest,
    elevation: Option<&[u8]>,
) -> Result<Booked, Error> {
    if request.kind == SaleType::Return && !caller.has(Grant::ReturnsCreate) {
        return Err(Refusal::ReturnNeedsScope.into());
    }
    let fingerprint = request.fingerprint();
    let transaction_id = request.transaction_id.clone();
    // A session the till's token showed open may have closed on another node since: then the
    // commit refuses it, and a sale carrying the instant it was rung is booked late, as a till
    // that was offline books it. Only such a sale is kept for a second attempt: one without
    // that instant is refused either way.
    let again = request.issued_at.is_some().then(|| request.clone());
    let outcome = match book_sale(app, caller, request, &fingerprint, elevation, Freshness::AsResolved).await {
        Err(Error::Store(StoreError::Rule(Rule::SessionClosed(session)))) => match again {
            Some(again) => book_sale(app, caller, again, &fingerprint, elevation, Freshness::Stored).await,
            None => Err(Refusal::SessionClosed(session).into()),
        },
        outcome => outcome,
    };
    unless_twin_committed(app, &transaction_id, &fingerprint, outcome).await
}

/// Prices, authorizes and commits a sale not seen before.
async fn book_sale(
    app: &App,
    caller: &Principal,
    request: SaleRequest,
    fingerprint: &str,
    elevation: Option<&[u8]>,
    freshness: Freshness,
) -> Result<Booked, Error> {
    let now = app.now();
    if let Some(issued_at) = request.issued_at {
        let max_age = SignedDuration::try_from(app.settings().max_sale_age).unwrap_or(SignedDuration::MAX);
        check_issued_at(issued_at, now, max_age).map_err(Refusal::IssuedAt)?;
    }
    let (session, timing) =
        booking_session(app, caller, &request.store_id, &request.session_id, now, freshness).await?;
    // A late sale is sealed with the instant it was rung: without one, a closed session books
    // nothing more.
    if timing == Timing::Late && request.issued_at.is_none() {
        return Err(Refusal::SessionClosed(session.session_id).into());
    }
    // The instant prices the sale: the till picks it within its session only, so a closed
    // session's token books only the sales rung before the close.
    if let Some(issued_at) = request.issued_at {
        let span = SessionSpan {
            opened_at: session.opened_at,
            closed_at: session.closed_at,
        };
        let skew = SignedDuration::try_from(app.settings().clock_skew).unwrap_or(SignedDuration::MAX);
        check_within_session(issued_at, span, now, skew).map_err(Refusal::IssuedAt)?;
    }
    let register_id = register_of(request.register_id.as_ref(), &session)?;
    let is_return = request.kind == SaleType::Return;
    if is_return && request.coupon_code.is_some() {
        return Err(Refusal::CouponWithReturn.into());
    }
    let quote = quote(
        app,
        QuoteRequest {
            store_id: &request.store_id,
            cart: &request.cart,
            declared: &request.declared_discounts,
            coupon_code: request.coupon_code.as_ref(),
            customer_id: request.customer_id.as_ref(),
            at: request.issued_at.unwrap_or(now),
        },
    )
    .await?;
    let grant = if is_return {
        // Declared discounts on a return lower the refund: only the refund needs authority.
        authorize_unreceipted_return(app, caller, &request, quote.priced.total, elevation).await?
    } else {
        authorize_discounts(app, caller, &request, &quote.priced, elevation).await?
    };
    let tolerance = Cents::new(app.settings().cash_rounding_tolerance_cents).unwrap_or(Cents::ZERO);
    check_settlement(quote.priced.total, &request.tenders, tolerance)
        .map_err(|error| settlement_refusal(error, &request, &quote.lines))?;

    let captures = card_captures(app, &request, now).await?;
    let stored_value = ticket_moves(app, &request, &quote, now)?;
    let mut sale = build_sale(app, request, fingerprint.to_owned(), register_id, &quote, now)?;
    sale.late = timing == Timing::Late;
    sale.stored_value = stored_value;
    sale.captures = captures;
    sale.spends_grant = grant;
    let fingerprint = sale.fingerprint.clone();
    answer(app, app.sales_book().commit_sale(sale).await?, &fingerprint).await
}

/// The approved payment attempts the sale's `card` tenders capture, each checked against what
/// is held now; the sale's transaction captures them only if none moved since. A sale asking
/// again for attempts it captured captures nothing more (its stored answer is replayed).
async fn card_captures(app: &App, request: &SaleRequest, now: Timestamp) -> Result<Vec<Capture>, Error> {
    if request.kind == SaleType::Return {
        return Ok(Vec::new());
    }
    let tenders = &request.tenders.tenders;
    let references = payment::card_references(tenders, app.settings().card_attempts_required)
        .map_err(|(tender, refusal)| Refusal::Capture { tender, refusal })?;
    let mut captures = Vec::with_capacity(references.len());
    for (tender, payment_id) in references {
        let refused = |refusal| Refusal::Capture { tender, refusal };
        let attempt = app
            .payments()
            .get_attempt(&payment_id)
            .await?
            .ok_or(refused(CaptureRefusal::NoSuchPayment))?;
        let applied = tenders[tender].applied;
        let by = CaptureBy {
            transaction_id: &request.transaction_id,
            session_id: &request.session_id,
            applied,
        };
        if let Change::Changed(_) = payment::capture(&attempt, by, now).map_err(refused)? {
            captures.push(Capture {
                tender,
                payment_id,
                from: attempt.state,
                amount: applied,
            });
        }
    }
    Ok(captures)
}

/// What the sale moves in stored value: the gift cards its lines sell, and what its tenders
/// draw on (a return without a receipt pays into them instead).
fn ticket_moves(app: &App, request: &SaleRequest, quote: &Quote, now: Timestamp) -> Result<TicketMoves, Refusal> {
    let settings = app.settings();
    let direction = match request.kind {
        SaleType::Return => Direction::Refund,
        _ => Direction::Redeem,
    };
    let rules = TenderRules {
        external: &settings.external_tenders,
        point_value: settings.loyalty_point_value_cents,
    };
    let tenders = tender_moves(&request.tenders.tenders, request.customer_id.as_ref(), direction, rules)
        .map_err(|(tender, problem)| Refusal::Tender { tender, problem })?;
    let mut cards = Vec::new();
    for (line, priced) in request.cart.lines.iter().zip(&quote.priced.lines) {
        let Some(card) = &line.gift_card else { continue };
        let refused = |problem| Refusal::GiftCardLine {
            line_id: line.id.clone(),
            problem,
        };
        if direction == Direction::Refund {
            return Err(refused(CardLineProblem::OnReturn));
        }
        if !line.custom {
            return Err(refused(CardLineProblem::NotCustom));
        }
        if line.vat_rate.hundredths() != 0 {
            return Err(refused(CardLineProblem::Taxed));
        }
        cards.push(CardMove {
            line_id: line.id.clone(),
            code: card.code.clone(),
            action: card.action,
            amount: priced.net,
        });
    }
    let validity = jiff::SignedDuration::try_from(settings.credit_note_validity).ok();
    Ok(TicketMoves {
        credit_note_code: TicketMoves::issues_credit_note(&tenders).then(new_instrument_code),
        tenders,
        cards,
        credit_note_expires_at: validity.and_then(|validity| now.checked_add(validity).ok()),
    })
}

/// A settlement refusal, with the lines the till priced differently when that explains it.
fn settlement_refusal(error: SettlementError, request: &SaleRequest, lines: &[LineToPrice]) -> Refusal {
    let differing = match error {
        SettlementError::AmountDue { .. } => request
            .cart
            .lines
            .iter()
            .zip(lines)
            .filter(|(line, priced)| line.unit_price != priced.unit_price)
            .take(3)
            .map(|(line, priced)| PriceGap {
                line_id: line.id.clone(),
                till: line.unit_price,
                catalog: priced.unit_price,
            })
            .collect(),
        _ => Vec::new(),
    };
    Refusal::Settlement { error, differing }
}

/// Units moving into stock per article: out for a sale, back in for a return. Custom lines
/// move no stock.
fn stock_moves(cart: &Cart, sign: Sign) -> Result<BTreeMap<SkuId, i64>, Refusal> {
    let mut stock: BTreeMap<SkuId, i64> = BTreeMap::new();
    for line in cart.lines.iter().filter(|l| !l.custom) {
        if let Some(sku) = &line.sku_id {
            let units = stock.entry(sku.clone()).or_default();
            *units = units
                .checked_add(sign.units(line.quantity))
                .ok_or(Refusal::QuantitiesTooLarge)?;
        }
    }
    Ok(stock)
}

/// The sale as it is committed, with the answer it is stored with.
fn build_sale(
    app: &App,
    request: SaleRequest,
    fingerprint: String,
    register_id: RegisterId,
    quote: &Quote,
    now: Timestamp,
) -> Result<NewSale, Error> {
    let priced = &quote.priced;
    // A return without a receipt is a sale in reverse: the same pricing, every amount and the
    // loyalty points negative, the goods coming back into stock.
    let sign = Sign::of(request.kind);
    let item_count = item_count(&request.cart)?;
    let stock = stock_moves(&request.cart, sign)?;
    let change = checked_sum(request.tenders.tenders.iter().map(|t| t.change)).map_err(|_| Refusal::ChangeTooLarge)?;
    let points = match &request.customer_id {
        Some(_) => sign.points(loyalty_points(
            priced.total,
            &request.tenders,
            app.settings().loyalty_points_per_unit,
        )),
        None => 0,
    };
    let mut sale = NewSale {
        transaction_id: request.transaction_id,
        event_id: new_ordered_id("evt", now),
        fingerprint,
        kind: request.kind,
        number: request.number,
        store_id: request.store_id,
        seller_id: request.seller_id,
        customer_id: request.customer_id,
        session_id: request.session_id,
        register_id,
        lines: sale_lines(&request.cart, quote, sign),
        tenders: request.tenders.tenders.iter().map(|t| sign.tender(t)).collect(),
        vat: priced.vat.iter().map(|v| sign.vat(v)).collect(),
        subtotal: sign.money(priced.subtotal),
        total: sign.money(priced.total),
        item_count,
        change: sign.money(change),
        points_earned: points,
        stock_moves: stock.into_iter().collect(),
        coupon_code: request.coupon_code,
        issued_at: request.issued_at,
        emitted_at: now,
        late: false,
        response: SaleAnswer::Ready(String::new()),
        spends_grant: None,
        adjustments: quote
            .adjustments()
            .into_iter()
            .map(|a| till_core::committed::Adjustment {
                amount: sign.money(a.amount),
                ..a
            })
            .collect(),
        original: None,
        stored_value: TicketMoves::default(),
        relies_on_groups: quote.relies_on_groups.clone(),
        captures: Vec::new(),
        card_refunds: Vec::new(),
    };
    let body = app
        .answers()
        .sale(&sale, &request.cart, priced.coupon.as_ref())
        .map_err(Error::internal)?;
    sale.response = SaleAnswer::Ready(body);
    Ok(sale)
}

/// The cart's lines as priced, with this sign.
fn sale_lines(cart: &Cart, quote: &Quote, sign: Sign) -> Vec<NewSaleLine> {
    cart.lines
        .iter()
        .zip(quote.lines.iter().zip(&quote.priced.lines).zip(&quote.labels))
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
        .collect()
}
