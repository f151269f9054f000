//! A return against a receipt: goods given back from a committed sale, as a ticket of its own
//! with a credit note (avoir): negative amounts, the goods back into stock, loyalty points
//! taken back, sealed in the register's ticket chain with a reference to the original. Each
//! unit refunds what the customer paid for it on the original sale (see
//! [`till_core::returns`]). Idempotent by its own transaction id, like finalize.

use crate::app::App;
use crate::booking::{
    Booked, Freshness, answer, booking_session, in_session, register_of, replay, unless_twin_committed,
};
use crate::caller::Principal;
use crate::refusal::{Error, Refusal};
use crate::secret::{new_instrument_code, new_ordered_id};
use crate::storage::StoreError;
use crate::storage::sales::NewSale;
use crate::storage::sales::OriginalSale;
use crate::storage::sales::ReturnOf;
use jiff::Timestamp;
use std::collections::BTreeMap;
use till_core::committed::{CardRefund, NewSaleLine, ReturnedLine, SaleAnswer, Sign};
use till_core::ids::{CustomerId, RegisterId, SkuId, TransactionId};
use till_core::money::{Cents, checked_sum};
use till_core::payment::{self, PaymentId, RefundRefusal, RefundRequest};
use till_core::returns::{ReturnPlan, ReturnRequest, plan_return};
use till_core::sale::SaleType;
use till_core::settlement::check_settlement;
use till_core::stored_value::{Direction, TenderRules, TicketMoves, check_refund, refund_share, tender_moves};

/// How many times a return is priced again when another return of the same sale commits
/// between its pricing and its commit.
const STALE_RETRIES: u32 = 3;

/// Gives back what `request` names. A transaction id committed before is answered first, with
/// its stored answer (or a refusal for other content).
pub async fn give_back(app: &App, caller: &Principal, request: &ReturnRequest) -> Result<Booked, Error> {
    let fingerprint = request.fingerprint();
    if let Some(stored) = app.sales_book().find_sale(&request.transaction_id).await? {
        return replay(app, stored, &fingerprint).await;
    }
    let outcome = book_return(app, caller, request, &fingerprint).await;
    unless_twin_committed(app, &request.transaction_id, &fingerprint, outcome).await
}

async fn book_return(
    app: &App,
    caller: &Principal,
    request: &ReturnRequest,
    fingerprint: &str,
) -> Result<Booked, Error> {
    let now = app.now();
    let booking = booking_session(
        app,
        caller,
        &request.store_id,
        &request.session_id,
        now,
        Freshness::AsResolved,
    )
    .await?;
    let session = in_session(booking)?;
    let register_id = register_of(request.register_id.as_ref(), &session)?;
    let tolerance = Cents::new(app.settings().cash_rounding_tolerance_cents).unwrap_or(Cents::ZERO);
    let mut attempt = 0;
    loop {
        let original = returnable_original(app, &request.original_transaction_id).await?;
        let plan = plan_return(&original.returnable, &request.lines).map_err(|error| Refusal::Return {
            error,
            original: original.transaction_id.clone(),
        })?;
        check_settlement(plan.refund, &request.tenders, tolerance).map_err(|error| Refusal::RefundMismatch {
            error,
            refund: plan.refund,
        })?;
        let share = refund_share(original.paid_with, original.returnable.refunded, plan.refund);
        check_refund(share, &request.tenders.tenders).map_err(Refusal::RefundPolicy)?;
        let mut ticket = build_return(app, request, fingerprint, &register_id, &original, &plan, now)?;
        ticket.card_refunds = card_refunds(app, request, now).await?;
        match app.sales_book().commit_sale(ticket).await {
            // Another return of this sale committed first: price ours again from what is left.
            Err(StoreError::Stale(_)) if attempt < STALE_RETRIES => attempt += 1,
            outcome => return answer(app, outcome?, fingerprint).await,
        }
    }
}

/// What the return's tenders pay into stored value: a gift card named by its reference, a
/// new credit note, the customer's points.
fn refund_moves(
    app: &App,
    request: &ReturnRequest,
    customer: Option<&CustomerId>,
    now: Timestamp,
) -> Result<TicketMoves, Refusal> {
    let settings = app.settings();
    let rules = TenderRules {
        external: &settings.external_tenders,
        point_value: settings.loyalty_point_value_cents,
    };
    let tenders = tender_moves(&request.tenders.tenders, customer, Direction::Refund, rules)
        .map_err(|(tender, problem)| Refusal::Tender { tender, problem })?;
    let validity = jiff::SignedDuration::try_from(settings.credit_note_validity).ok();
    Ok(TicketMoves {
        credit_note_code: TicketMoves::issues_credit_note(&tenders).then(new_instrument_code),
        tenders,
        cards: Vec::new(),
        credit_note_expires_at: validity.and_then(|validity| now.checked_add(validity).ok()),
    })
}

/// What the return's `card` tenders naming a payment give back to it, each checked against
/// what was refunded to the payment so far; the return's transaction records each refund only
/// if no other return refunded that payment meanwhile. The payment must be one the original
/// sale captured.
async fn card_refunds(app: &App, request: &ReturnRequest, now: Timestamp) -> Result<Vec<CardRefund>, Error> {
    let tenders = &request.tenders.tenders;
    let references = payment::card_references(tenders, false).map_err(|(tender, _)| Refusal::CardRefund {
        tender,
        refusal: RefundRefusal::NamedTwice,
    })?;
    let mut refunds = Vec::with_capacity(references.len());
    for (tender, payment_id) in references {
        let refused = |refusal| Refusal::CardRefund { tender, refusal };
        let payment = app
            .payments()
            .get_attempt(&payment_id)
            .await?
            .ok_or(refused(RefundRefusal::NoSuchPayment))?;
        let asked = RefundRequest {
            id: PaymentId::from_trusted(new_ordered_id("rfd", now)),
            transaction_id: request.transaction_id.clone(),
            original: request.original_transaction_id.clone(),
            session_id: request.session_id.clone(),
            amount: tenders[tender].applied,
            // The money goes back through the card's own acquirer: the reports count it there.
            terminal_id: payment.terminal_id.clone(),
            provider: payment.provider.clone(),
        };
        let refund = payment::refund(&payment, asked, now).map_err(refused)?;
        refunds.push(CardRefund {
            tender,
            refunded_before: payment.refunded,
            refund,
        });
    }
    Ok(refunds)
}

async fn returnable_original(app: &App, id: &TransactionId) -> Result<OriginalSale, Error> {
    let original = app
        .sales_book()
        .original_sale(id)
        .await?
        .ok_or_else(|| Refusal::NoOriginal(id.clone()))?;
    if original.kind == SaleType::Return.as_str() {
        return Err(Refusal::OriginalIsReturn(id.clone()).into());
    }
    Ok(original)
}

/// The return as a ticket: the original's lines for the units coming back, every amount
/// negative, what it pays into stored value, and its answer (which names the code of the
/// credit note it issues), written once the commit gives the credit note its number.
fn build_return(
    app: &App,
    request: &ReturnRequest,
    fingerprint: &str,
    register_id: &RegisterId,
    original: &OriginalSale,
    plan: &ReturnPlan,
    now: Timestamp,
) -> Result<NewSale, Error> {
    let moves = refund_moves(app, request, original.customer_id.as_ref(), now)?;
    let sign = Sign::Return;
    let mut stock: BTreeMap<SkuId, i64> = BTreeMap::new();
    let mut lines = Vec::with_capacity(plan.lines.len());
    for refund in &plan.lines {
        let (sold, kept) = (&original.returnable.lines[refund.index], &original.lines[refund.index]);
        if let Some(sku) = &kept.sku_id {
            let units = stock.entry(sku.clone()).or_default();
            *units = units.checked_add(refund.units).ok_or(Refusal::ReturnAmountsTooLarge)?;
        }
        lines.push(NewSaleLine {
            line_id: sold.line_id.clone(),
            sku_id: kept.sku_id.clone(),
            label: kept.label.clone(),
            quantity: refund.units,
            unit_price: kept.unit_price,
            vat_rate: refund.vat_rate,
            gross: sign.money(refund.gross),
            promotion: sign.money(refund.promotion),
            declared: sign.money(refund.declared),
            ticket: sign.money(refund.ticket),
            net: sign.money(refund.refund),
        });
    }
    let change =
        checked_sum(request.tenders.tenders.iter().map(|t| t.change)).map_err(|_| Refusal::ReturnAmountsTooLarge)?;
    let mut ticket = NewSale {
        transaction_id: request.transaction_id.clone(),
        event_id: new_ordered_id("evt", now),
        fingerprint: fingerprint.to_owned(),
        kind: SaleType::Return,
        number: request.number.clone(),
        store_id: request.store_id.clone(),
        seller_id: request.seller_id.clone(),
        customer_id: original.customer_id.clone(),
        session_id: request.session_id.clone(),
        register_id: register_id.clone(),
        lines,
        tenders: request.tenders.tenders.iter().map(|t| sign.tender(t)).collect(),
        vat: plan.vat.iter().map(|v| sign.vat(v)).collect(),
        subtotal: sign.money(plan.subtotal),
        total: sign.money(plan.refund),
        item_count: plan.item_count,
        change: sign.money(change),
        points_earned: sign.points(plan.points_back),
        stock_moves: stock.into_iter().collect(),
        coupon_code: None,
        issued_at: None,
        emitted_at: now,
        late: false,
        response: SaleAnswer::Ready(String::new()),
        spends_grant: None,
        adjustments: Vec::new(),
        original: None,
        stored_value: moves,
        // A return against a receipt takes back what the original was priced at, whatever
        // groups its customer is in now.
        relies_on_groups: Default::default(),
        captures: Vec::new(),
        card_refunds: Vec::new(),
    };
    let original = return_of(original, plan);
    ticket.response = app.answers().return_ticket(&ticket, &original);
    ticket.original = Some(original);
    Ok(ticket)
}

/// What the return takes from its original, with the state it was computed from.
fn return_of(original: &OriginalSale, plan: &ReturnPlan) -> ReturnOf {
    ReturnOf {
        transaction_id: original.transaction_id.clone(),
        register_id: original.register_id.clone(),
        seq: original.seq,
        lines: plan
            .lines
            .iter()
            .map(|l| ReturnedLine {
                line_no: original.lines[l.index].line_no,
                units: l.units,
                returned_before: l.returned_before,
            })
            .collect(),
        refund: plan.refund,
        points_back: plan.points_back,
        refunded_before: original.returnable.refunded,
        points_returned_before: original.returnable.points_returned,
        counted: original.counted.clone(),
    }
}
