//! What a ticket moves in stored value, inside its own transaction: the cards its lines sell,
//! what its tenders draw on or pay into, the credit note a return issues, and points.

use super::{CardChange, PAY_IN, REDEEM, amount, record, record_points};
use crate::error::{Rule, StoreError};
use crate::feed::{self, NewEvent};
use crate::sales::NewSale;
use crate::sql::{Conn, query};
use till_core::documents::CreditNoteIssued;
use till_core::events::EventType;
use till_core::ids::CustomerId;
use till_core::instant::{from_micros, to_micros};
use till_core::stored_value::{
    ActivityKind, CardAction, CardMove, Direction, Instrument, InstrumentDigestKey, InstrumentKind, InstrumentRefusal,
    PointsActivity, Standing, TenderMove, code_lookup, why_refused,
};

/// Everything `sale` moves in stored value, in its transaction: the gift cards its lines sell,
/// what its tenders draw on or pay into, the credit note a return issues (numbered
/// `credit_note`, redeemed with the code the sale carries), and on a return the earned points
/// taken back, never below zero. A card or credit note written here gets its digest under
/// `key`. A refusal names the tender or the line; the caller's transaction then keeps nothing.
pub(crate) async fn move_for_ticket(
    conn: &mut Conn,
    sale: &NewSale,
    credit_note: Option<&str>,
    key: &InstrumentDigestKey,
    now: i64,
) -> Result<(), StoreError> {
    let (transaction, store) = (sale.transaction_id.as_str(), sale.store_id.as_str());
    for card in &sale.stored_value.cards {
        sell_card(conn, card, store, transaction, key, now).await?;
    }
    let mut new_note = 0i64;
    for tender in &sale.stored_value.tenders {
        let refused = |why| {
            StoreError::Rule(Rule::Tender {
                tender: tender.tender,
                why,
            })
        };
        match (&tender.instrument, tender.direction) {
            (Instrument::GiftCard(code), direction) => {
                let lookup = code.lookup();
                let at = Place {
                    kind: InstrumentKind::GiftCard,
                    lookup: &lookup,
                    store,
                    now,
                };
                move_balance(conn, &at, tender, direction, transaction)
                    .await
                    .map_err(|e| e.into_store(refused))?;
            }
            (Instrument::CreditNote(reference), direction) => {
                let lookup = code_lookup(reference.as_str());
                let at = Place {
                    kind: InstrumentKind::CreditNote,
                    lookup: &lookup,
                    store,
                    now,
                };
                move_balance(conn, &at, tender, direction, transaction)
                    .await
                    .map_err(|e| e.into_store(refused))?;
            }
            (Instrument::NewCreditNote, _) => {
                new_note = new_note
                    .checked_add(tender.amount.get())
                    .ok_or_else(|| StoreError::Corrupt("a credit note too large".into()))?;
            }
            (Instrument::Points(customer), Direction::Redeem) => {
                redeem_points(conn, customer, tender.points, transaction, now)
                    .await
                    .map_err(|e| e.into_store(refused))?;
            }
            (Instrument::Points(customer), Direction::Refund) => {
                add_points(conn, customer, tender.points, now).await?;
                record_points(conn, customer, PointsActivity::Refund, tender.points, transaction, now).await?;
            }
        }
    }
    if new_note > 0 {
        let number = credit_note.ok_or_else(|| StoreError::Corrupt("a credit note without its number".into()))?;
        let code = sale
            .stored_value
            .credit_note_code
            .as_ref()
            .ok_or_else(|| StoreError::Corrupt("a credit note without its code".into()))?;
        let lookup = code.lookup();
        let expires_at = sale.stored_value.credit_note_expires_at.map(to_micros);
        let id = query(
            "INSERT INTO stored_value (kind, lookup, label, balance_cents, issued_at, activated_at, expires_at, \
                 blocked, restricted, updated_at, code, digest) \
             VALUES ('credit_note', $1, $2, $3, $4, $4, $5, 0, 0, $4, $6, $7) RETURNING instrument_id",
        )
        .bind(lookup.as_str())
        .bind(number)
        .bind(new_note)
        .bind(now)
        .bind(expires_at)
        .bind(code.as_str())
        .bind(key.digest(InstrumentKind::CreditNote, &lookup))
        .fetch_one(&mut *conn)
        .await?
        .try_get("instrument_id")?;
        record(
            conn,
            id,
            ActivityKind::Issue,
            new_note,
            new_note,
            Some(transaction),
            now,
        )
        .await?;
        let data = feed::data_of(&CreditNoteIssued {
            number,
            amount_cents: new_note,
            expires_at: expires_at.map(from_micros),
            transaction_id: transaction,
        })?;
        NewEvent {
            kind: EventType::CreditNoteIssued,
            occurred_at: now,
            store_id: Some(store),
            register_id: Some(sale.register_id.as_str()),
            subject: number,
            data: Some(data),
        }
        .record(conn)
        .await?;
    }
    if let Some(customer) = &sale.customer_id
        && sale.points_earned < 0
    {
        take_back_points(conn, customer, -sale.points_earned, transaction, now).await?;
    }
    Ok(())
}

/// Where a ticket moves an instrument's balance.
struct Place<'a> {
    kind: InstrumentKind,
    lookup: &'a str,
    store: &'a str,
    now: i64,
}

/// A refusal before it names what it refuses.
enum Refused {
    Why(InstrumentRefusal),
    Store(StoreError),
}

impl From<StoreError> for Refused {
    fn from(error: StoreError) -> Self {
        Refused::Store(error)
    }
}

impl Refused {
    fn into_store(self, name: impl FnOnce(InstrumentRefusal) -> StoreError) -> StoreError {
        match self {
            Refused::Why(why) => name(why),
            Refused::Store(error) => error,
        }
    }
}

/// Takes a tender's amount from an instrument (a sale) or pays it in (a return): one update
/// that refuses an instrument blocked, expired, of another store, or without the balance.
async fn move_balance(
    conn: &mut Conn,
    at: &Place<'_>,
    tender: &TenderMove,
    direction: Direction,
    transaction: &str,
) -> Result<(), Refused> {
    let (sql, kind, amount) = match direction {
        Direction::Redeem => (REDEEM, ActivityKind::Redeem, -tender.amount.get()),
        Direction::Refund => (PAY_IN, ActivityKind::Refund, tender.amount.get()),
    };
    let moved = query(sql)
        .bind(at.kind.as_str())
        .bind(at.lookup)
        .bind(tender.amount.get())
        .bind(at.now)
        .bind(at.store)
        .fetch_optional(&mut *conn)
        .await?;
    let Some(row) = moved else {
        return Err(Refused::Why(why_not(conn, at).await?));
    };
    let (id, balance) = (row.try_get("instrument_id")?, row.try_get("balance_cents")?);
    record(conn, id, kind, amount, balance, Some(transaction), at.now).await?;
    Ok(())
}

/// Why an instrument refused a move, as till-core tells it from how the instrument stands.
async fn why_not(conn: &mut Conn, at: &Place<'_>) -> Result<InstrumentRefusal, StoreError> {
    let row = query(
        "SELECT balance_cents, blocked, expires_at, \
             (restricted = 0 OR EXISTS (SELECT 1 FROM stored_value_stores w \
                 WHERE w.instrument_id = stored_value.instrument_id AND w.store_id = $3)) AS here \
         FROM stored_value WHERE kind = $1 AND lookup = $2",
    )
    .bind(at.kind.as_str())
    .bind(at.lookup)
    .bind(at.store)
    .fetch_optional(&mut *conn)
    .await?;
    let standing = match row {
        Some(row) => Some(Standing {
            taken_here: row.try_get("here")?,
            blocked: row.try_get::<i64>("blocked")? != 0,
            expires_at: row.try_get::<Option<i64>>("expires_at")?.map(from_micros),
            balance: amount(row.try_get("balance_cents")?)?,
        }),
        None => None,
    };
    Ok(why_refused(standing.as_ref(), from_micros(at.now)))
}

/// Activates or loads the gift card a cart line sells.
async fn sell_card(
    conn: &mut Conn,
    card: &CardMove,
    store: &str,
    transaction: &str,
    key: &InstrumentDigestKey,
    now: i64,
) -> Result<(), StoreError> {
    let refused = |why| {
        StoreError::Rule(Rule::GiftCardLine {
            line_id: card.line_id.clone(),
            why,
        })
    };
    let lookup = card.code.lookup();
    match card.action {
        CardAction::Activate => {
            let id: i64 = query(
                "INSERT INTO stored_value (kind, lookup, label, balance_cents, issued_at, activated_at, expires_at, \
                     blocked, restricted, updated_at, digest) \
                 VALUES ('gift_card', $1, $2, $3, $4, $4, NULL, 0, 0, $4, $5) \
                 ON CONFLICT (kind, lookup) DO NOTHING RETURNING instrument_id",
            )
            .bind(lookup.as_str())
            .bind(card.code.last_four())
            .bind(card.amount.get())
            .bind(now)
            .bind(key.digest(InstrumentKind::GiftCard, &lookup))
            .fetch_optional(&mut *conn)
            .await?
            .ok_or_else(|| refused(InstrumentRefusal::AlreadyActive))?
            .try_get("instrument_id")?;
            let amount = card.amount.get();
            record(conn, id, ActivityKind::Activate, amount, amount, Some(transaction), now).await?;
            let change = CardChange {
                lookup: &lookup,
                label: card.code.last_four(),
                activity: ActivityKind::Activate,
                amount,
                balance: amount,
                transaction_id: Some(transaction),
                store_id: Some(store),
                at: now,
            };
            change.announce(conn).await
        }
        CardAction::Load => {
            let at = Place {
                kind: InstrumentKind::GiftCard,
                lookup: &lookup,
                store,
                now,
            };
            let moved = query(PAY_IN)
                .bind(at.kind.as_str())
                .bind(at.lookup)
                .bind(card.amount.get())
                .bind(now)
                .bind(store)
                .fetch_optional(&mut *conn)
                .await?;
            let Some(row) = moved else {
                return Err(refused(why_not(conn, &at).await?));
            };
            let (id, balance) = (row.try_get("instrument_id")?, row.try_get("balance_cents")?);
            let amount = card.amount.get();
            record(conn, id, ActivityKind::Load, amount, balance, Some(transaction), now).await?;
            let change = CardChange {
                lookup: &lookup,
                label: card.code.last_four(),
                activity: ActivityKind::Load,
                amount,
                balance,
                transaction_id: Some(transaction),
                store_id: Some(store),
                at: now,
            };
            change.announce(conn).await
        }
    }
}

/// Spends a customer's points: refused, changing nothing, when they have fewer.
async fn redeem_points(
    conn: &mut Conn,
    customer: &CustomerId,
    points: i64,
    transaction: &str,
    now: i64,
) -> Result<(), Refused> {
    let spent = query(
        "UPDATE customers SET points = points - $2, updated_at = $3 WHERE customer_id = $1 AND points >= $2 \
         RETURNING points",
    )
    .bind(customer.as_str())
    .bind(points)
    .bind(now)
    .fetch_optional(&mut *conn)
    .await?;
    if spent.is_none() {
        let held = query("SELECT points FROM customers WHERE customer_id = $1")
            .bind(customer.as_str())
            .fetch_optional(&mut *conn)
            .await?
            .map(|row| row.try_get::<i64>("points"))
            .transpose()?
            .unwrap_or(0);
        return Err(Refused::Why(InstrumentRefusal::NotEnoughPoints { points: held }));
    }
    record_points(conn, customer, PointsActivity::Redeem, -points, transaction, now).await?;
    Ok(())
}

/// Adds points to a customer, enrolling one not seen before.
async fn add_points(conn: &mut Conn, customer: &CustomerId, points: i64, now: i64) -> Result<(), StoreError> {
    query(ADD_POINTS)
        .bind(customer.as_str())
        .bind(points)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

pub(crate) const ADD_POINTS: &str = "INSERT INTO customers (customer_id, points, enrolled_at, updated_at) VALUES ($1, $2, $3, $3) \
     ON CONFLICT (customer_id) DO UPDATE SET points = customers.points + excluded.points, \
         updated_at = excluded.updated_at";

/// Takes back up to `points` a return's original earned, never below zero. The first update
/// holds the customer's row, so the points read are those the second one changes.
async fn take_back_points(
    conn: &mut Conn,
    customer: &CustomerId,
    points: i64,
    transaction: &str,
    now: i64,
) -> Result<(), StoreError> {
    let held = query("UPDATE customers SET updated_at = $2 WHERE customer_id = $1 RETURNING points")
        .bind(customer.as_str())
        .bind(now)
        .fetch_optional(&mut *conn)
        .await?;
    let Some(held) = held else {
        return Ok(());
    };
    let taken = points.min(held.try_get::<i64>("points")?.max(0));
    if taken > 0 {
        query("UPDATE customers SET points = points - $2 WHERE customer_id = $1")
            .bind(customer.as_str())
            .bind(taken)
            .execute(&mut *conn)
            .await?;
        record_points(conn, customer, PointsActivity::TakeBack, -taken, transaction, now).await?;
    }
    Ok(())
}
