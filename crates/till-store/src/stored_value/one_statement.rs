//! A sale's stored value written inside its one statement (PostgreSQL, see
//! `Store::commit_predicted`): the redemptions of a plain sale and the points it earns.
//!
//! Each redemption is the same guarded update as in a transaction, marked required, so that a
//! card without the balance refuses the whole statement and the sale goes down the checked
//! path, which names the refusal. Its ledger row reads the balance the update returned, not
//! the statement's snapshot: under a concurrent redemption of the same card, the update waits
//! and applies to the newer balance, and the ledger must say so.

use super::{ADD_POINTS, RECORD_POINTS, REDEEM};
use crate::batch::Batch;
use crate::sales::NewSale;
use till_core::ids::CustomerId;
use till_core::stored_value::{ActivityKind, Direction, Instrument, InstrumentKind, PointsActivity, code_lookup};

/// A redemption's ledger row, with the instrument and balance its update returned.
const RECORD_REDEMPTION: &str = "INSERT INTO stored_value_activities \
         (instrument_id, kind, amount_cents, balance_after_cents, transaction_id, at) \
     SELECT instrument_id, $1, $2, balance_cents, $3, $4 FROM {previous}";

/// Spends a customer's points and adds those the same sale earns, in one update of their row:
/// two writes of one row in one statement would keep only one of them.
const SPEND_AND_EARN_POINTS: &str = "UPDATE customers SET points = points - $2 + $3, updated_at = $4 \
     WHERE customer_id = $1 AND points >= $2 RETURNING points";

/// What a sale moves in stored value, when all of it fits in one statement.
pub(crate) struct InOneStatement<'a> {
    sale: &'a NewSale,
    /// Cards and credit notes drawn on, each once, in the order of their look-ups.
    drawn: Vec<(InstrumentKind, String, i64)>,
    /// Points the sale's customer spends.
    points: Option<i64>,
}

/// `sale`'s stored value as writes of one statement, or `None` when it needs the checked
/// path: a card sold, anything paid back, a credit note issued, points taken back, or an
/// instrument drawn on by two tenders (one row written twice in one statement keeps one write).
pub(crate) fn in_one_statement(sale: &NewSale) -> Option<InOneStatement<'_>> {
    if !sale.stored_value.cards.is_empty() || sale.points_earned < 0 {
        return None;
    }
    let mut drawn = Vec::new();
    let mut points = None;
    for tender in &sale.stored_value.tenders {
        if tender.direction != Direction::Redeem {
            return None;
        }
        match &tender.instrument {
            Instrument::GiftCard(code) => drawn.push((InstrumentKind::GiftCard, code.lookup(), tender.amount.get())),
            Instrument::CreditNote(reference) => drawn.push((
                InstrumentKind::CreditNote,
                code_lookup(reference.as_str()),
                tender.amount.get(),
            )),
            Instrument::Points(customer) if points.is_none() && Some(customer) == sale.customer_id.as_ref() => {
                points = Some(tender.points)
            }
            Instrument::Points(_) | Instrument::NewCreditNote => return None,
        }
    }
    // One order for every sale, so that two sales drawing on the same two cards lock them alike.
    drawn.sort_by(|a, b| (a.0.as_str(), &a.1).cmp(&(b.0.as_str(), &b.1)));
    if drawn
        .windows(2)
        .any(|pair| pair[0].0 == pair[1].0 && pair[0].1 == pair[1].1)
    {
        return None;
    }
    Some(InOneStatement { sale, drawn, points })
}

impl InOneStatement<'_> {
    /// Queues the redemptions, each with its ledger row, then the customer's points.
    pub(crate) fn push(&self, batch: &mut Batch, now: i64) {
        let sale = self.sale;
        let (transaction, store) = (sale.transaction_id.as_str(), sale.store_id.as_str());
        for (kind, lookup, amount) in &self.drawn {
            batch.push_required(
                REDEEM,
                vec![
                    kind.as_str().into(),
                    lookup.as_str().into(),
                    (*amount).into(),
                    now.into(),
                    store.into(),
                ],
            );
            batch.push_reading_previous(
                RECORD_REDEMPTION,
                vec![
                    ActivityKind::Redeem.as_str().into(),
                    (-*amount).into(),
                    transaction.into(),
                    now.into(),
                ],
            );
        }
        match (&sale.customer_id, self.points) {
            (Some(customer), Some(spent)) => {
                let earned = sale.points_earned;
                batch.push_required(
                    SPEND_AND_EARN_POINTS,
                    vec![customer.as_str().into(), spent.into(), earned.into(), now.into()],
                );
                push_points_activity(batch, customer, PointsActivity::Redeem, -spent, transaction, now);
                push_points_activity(batch, customer, PointsActivity::Earn, earned, transaction, now);
            }
            _ => push_points_earned(batch, sale, now),
        }
    }
}

/// Queues the points `sale` earns for its customer, enrolling one not seen before. Points a
/// return takes back are taken by its transaction, never below zero.
pub(crate) fn push_points_earned(batch: &mut Batch, sale: &NewSale, now: i64) {
    let Some(customer) = &sale.customer_id else {
        return;
    };
    let earned = sale.points_earned.max(0);
    batch.push(ADD_POINTS, vec![customer.as_str().into(), earned.into(), now.into()]);
    let transaction = sale.transaction_id.as_str();
    push_points_activity(batch, customer, PointsActivity::Earn, earned, transaction, now);
}

/// Queues a line of a customer's points ledger; none for no points.
fn push_points_activity(
    batch: &mut Batch,
    customer: &CustomerId,
    kind: PointsActivity,
    points: i64,
    transaction: &str,
    now: i64,
) {
    if points == 0 {
        return;
    }
    batch.push(
        RECORD_POINTS,
        vec![
            customer.as_str().into(),
            kind.as_str().into(),
            points.into(),
            transaction.into(),
            now.into(),
        ],
    );
}
