//! Stored value: gift cards and credit notes with the ledger of their activities, and the
//! ledger of customers' loyalty points. A ticket moves them inside its own transaction (see
//! [`crate::sales`]), each as one guarded update that refuses what the balance, the state or
//! the store does not allow: concurrent tickets serialize on the instrument's row, on either
//! engine and across nodes, so a balance is never spent twice.

use crate::db::Store;
use crate::error::{Conflict, StoreError};
use crate::feed::{self, NewEvent};
use crate::sql::{Conn, Row, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
use till_core::documents::GiftCardChanged;
use till_core::events::EventType;
use till_core::ids::{CustomerId, StoreId};
use till_core::instant::{from_micros, to_micros};
use till_core::money::Cents;
use till_core::stored_value::{ActivityKind, InstrumentCode, InstrumentKind, PointsActivity, code_lookup};

/// A card to issue, with the digest sealed records will name it by.
struct IssuedCard {
    card: NewCard,
    digest: String,
}

struct Blocking {
    kind: InstrumentKind,
    lookup: String,
    blocked: bool,
    now: i64,
}

mod backfill;
mod one_statement;
mod ticket;

pub(crate) use one_statement::{in_one_statement, push_points_earned};
use ticket::ADD_POINTS;
pub(crate) use ticket::move_for_ticket;
pub use till_app::storage::stored_value::{Activity, InstrumentRecord, NewCard};

/// An update of the balance of the instrument of kind `$1` and look-up `$2` by `$3`, where it
/// may be taken: not blocked, not expired at `$4`, and in the store `$5` when it names its
/// stores. Answers the instrument and its balance after, or no row.
macro_rules! move_where_usable {
    ($set:literal, $guard:literal) => {
        concat!(
            "UPDATE stored_value SET balance_cents = ",
            $set,
            ", updated_at = $4 WHERE kind = $1 AND lookup = $2 ",
            $guard,
            " AND blocked = 0 AND (expires_at IS NULL OR expires_at > $4) \
             AND (restricted = 0 OR EXISTS (SELECT 1 FROM stored_value_stores w \
                 WHERE w.instrument_id = stored_value.instrument_id AND w.store_id = $5)) \
             RETURNING instrument_id, balance_cents"
        )
    };
}

/// Spends `$3` of an instrument's balance, refusing to go below zero.
const REDEEM: &str = move_where_usable!("balance_cents - $3", "AND balance_cents >= $3");

/// Pays `$3` into an instrument.
const PAY_IN: &str = move_where_usable!("balance_cents + $3", "");

impl Store {
    pub async fn issue_gift_card(&self, card: NewCard) -> Result<InstrumentRecord, StoreError> {
        let lookup = card.code.lookup();
        let digest = self.instrument_key().await?.digest(InstrumentKind::GiftCard, &lookup);
        self.write(IssuedCard { card, digest }, |c, issued| Box::pin(issue_card(c, issued)))
            .await?;
        self.instrument(InstrumentKind::GiftCard, &lookup, None)
            .await?
            .ok_or(StoreError::NotFound("gift card"))
    }

    pub async fn gift_card(
        &self,
        code: &InstrumentCode,
        store: Option<&StoreId>,
    ) -> Result<Option<InstrumentRecord>, StoreError> {
        self.instrument(InstrumentKind::GiftCard, &code.lookup(), store).await
    }

    pub async fn credit_note(
        &self,
        code: &str,
        store: Option<&StoreId>,
    ) -> Result<Option<InstrumentRecord>, StoreError> {
        self.instrument(InstrumentKind::CreditNote, &code_lookup(code), store)
            .await
    }

    pub async fn block_gift_card(
        &self,
        code: &InstrumentCode,
        blocked: bool,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let input = Blocking {
            kind: InstrumentKind::GiftCard,
            lookup: code.lookup(),
            blocked,
            now: to_micros(now),
        };
        self.write(input, |c, i| Box::pin(set_blocked(c, i))).await
    }

    /// The points of `customer`'s ledger, oldest first: they add up to the customer's points.
    pub async fn loyalty_ledger(&self, customer: &CustomerId) -> Result<Vec<(String, i64)>, StoreError> {
        let rows = query("SELECT kind, points FROM loyalty_activities WHERE customer_id = $1 ORDER BY activity_id")
            .bind(customer.as_str())
            .fetch_all(self.reader())
            .await?;
        rows.iter()
            .map(|row| Ok((row.try_get("kind")?, row.try_get("points")?)))
            .collect()
    }

    async fn instrument(
        &self,
        kind: InstrumentKind,
        lookup: &str,
        store: Option<&StoreId>,
    ) -> Result<Option<InstrumentRecord>, StoreError> {
        let Some(row) = query(
            "SELECT instrument_id, label, balance_cents, issued_at, expires_at, blocked FROM stored_value \
             WHERE kind = $1 AND lookup = $2",
        )
        .bind(kind.as_str())
        .bind(lookup)
        .fetch_optional(self.reader())
        .await?
        else {
            return Ok(None);
        };
        let id: i64 = row.try_get("instrument_id")?;
        let store_ids: Vec<String> =
            query("SELECT store_id FROM stored_value_stores WHERE instrument_id = $1 ORDER BY store_id")
                .bind(id)
                .fetch_all(self.reader())
                .await?
                .iter()
                .map(|row| row.try_get("store_id"))
                .collect::<Result<_, _>>()?;
        if let Some(store) = store
            && !store_ids.is_empty()
            && !store_ids.iter().any(|s| s == store.as_str())
        {
            return Ok(None);
        }
        let activities = query(
            "SELECT activity_id, kind, amount_cents, balance_after_cents, transaction_id, at \
             FROM stored_value_activities WHERE instrument_id = $1 ORDER BY activity_id",
        )
        .bind(id)
        .fetch_all(self.reader())
        .await?
        .iter()
        .map(activity_of)
        .collect::<Result<_, _>>()?;
        Ok(Some(InstrumentRecord {
            kind,
            label: row.try_get("label")?,
            balance: amount(row.try_get("balance_cents")?)?,
            issued_at: from_micros(row.try_get("issued_at")?),
            expires_at: row.try_get::<Option<i64>>("expires_at")?.map(from_micros),
            blocked: row.try_get::<i64>("blocked")? != 0,
            store_ids,
            activities,
        }))
    }
}

fn activity_of(row: &Row) -> Result<Activity, StoreError> {
    let kind: String = row.try_get("kind")?;
    Ok(Activity {
        id: row.try_get("activity_id")?,
        kind: ActivityKind::parse(&kind).ok_or_else(|| StoreError::Corrupt(format!("activity kind {kind}")))?,
        amount: row.try_get("amount_cents")?,
        balance_after: row.try_get("balance_after_cents")?,
        transaction_id: row.try_get("transaction_id")?,
        at: from_micros(row.try_get("at")?),
    })
}

fn amount(cents: i64) -> Result<Cents, StoreError> {
    Cents::new(cents).ok_or_else(|| StoreError::Corrupt("a stored balance out of range".into()))
}

fn issue_card<'a>(conn: &'a mut Conn, issued: &'a IssuedCard) -> BoxFuture<'a, Result<(), StoreError>> {
    Box::pin(async move {
        let card = &issued.card;
        let now = to_micros(card.now);
        let id = query(
            "INSERT INTO stored_value (kind, lookup, label, balance_cents, issued_at, activated_at, expires_at, \
                 blocked, restricted, updated_at, digest) \
             VALUES ('gift_card', $1, $2, $3, $4, $4, $5, 0, $6, $4, $7) \
             ON CONFLICT (kind, lookup) DO NOTHING RETURNING instrument_id",
        )
        .bind(card.code.lookup())
        .bind(card.code.last_four())
        .bind(card.balance.get())
        .bind(now)
        .bind(card.expires_at.map(to_micros))
        .bind(i64::from(!card.store_ids.is_empty()))
        .bind(issued.digest.as_str())
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(StoreError::Conflict(Conflict::GiftCardExists))?
        .try_get::<i64>("instrument_id")?;
        for store in &card.store_ids {
            query("INSERT INTO stored_value_stores (instrument_id, store_id) VALUES ($1, $2) ON CONFLICT DO NOTHING")
                .bind(id)
                .bind(store.as_str())
                .execute(&mut *conn)
                .await?;
        }
        let balance = card.balance.get();
        record(conn, id, ActivityKind::Issue, balance, balance, None, now).await?;
        let change = CardChange {
            lookup: &card.code.lookup(),
            label: card.code.last_four(),
            activity: ActivityKind::Issue,
            amount: balance,
            balance,
            transaction_id: None,
            store_id: None,
            at: now,
        };
        change.announce(conn).await
    })
}

fn set_blocked<'a>(conn: &'a mut Conn, input: &'a Blocking) -> BoxFuture<'a, Result<(), StoreError>> {
    Box::pin(async move {
        let row = query(
            "UPDATE stored_value SET blocked = $3, updated_at = $4 WHERE kind = $1 AND lookup = $2 \
             RETURNING instrument_id, balance_cents, label",
        )
        .bind(input.kind.as_str())
        .bind(input.lookup.as_str())
        .bind(i64::from(input.blocked))
        .bind(input.now)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(StoreError::NotFound("gift card"))?;
        let kind = if input.blocked {
            ActivityKind::Block
        } else {
            ActivityKind::Unblock
        };
        let (id, balance) = (row.try_get("instrument_id")?, row.try_get("balance_cents")?);
        record(conn, id, kind, 0, balance, None, input.now).await?;
        let label: String = row.try_get("label")?;
        let change = CardChange {
            lookup: &input.lookup,
            label: &label,
            activity: kind,
            amount: 0,
            balance,
            transaction_id: None,
            store_id: None,
            at: input.now,
        };
        change.announce(conn).await
    })
}

/// A change of a gift card the feed announces (`giftcard.changed`): its issue, activation or
/// load by a sale's line, block and unblock. What tenders draw on it or pay back is in the
/// sale's or the return's own event.
struct CardChange<'a> {
    lookup: &'a str,
    label: &'a str,
    activity: ActivityKind,
    amount: i64,
    balance: i64,
    transaction_id: Option<&'a str>,
    store_id: Option<&'a str>,
    at: i64,
}

impl CardChange<'_> {
    async fn announce(&self, conn: &mut Conn) -> Result<(), StoreError> {
        let data = feed::data_of(&GiftCardChanged {
            code_sha256: self.lookup,
            last4: self.label,
            activity: self.activity.as_str(),
            amount_cents: self.amount,
            balance_cents: self.balance,
            transaction_id: self.transaction_id,
        })?;
        NewEvent {
            kind: EventType::GiftCardChanged,
            occurred_at: self.at,
            store_id: self.store_id,
            register_id: None,
            subject: self.lookup,
            data: Some(data),
        }
        .record(conn)
        .await
    }
}

/// One activity of an instrument's ledger.
async fn record(
    conn: &mut Conn,
    instrument: i64,
    kind: ActivityKind,
    amount: i64,
    balance_after: i64,
    transaction_id: Option<&str>,
    at: i64,
) -> Result<(), StoreError> {
    query(
        "INSERT INTO stored_value_activities (instrument_id, kind, amount_cents, balance_after_cents, transaction_id, at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(instrument)
    .bind(kind.as_str())
    .bind(amount)
    .bind(balance_after)
    .bind(transaction_id)
    .bind(at)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// One activity of a customer's points.
pub(crate) const RECORD_POINTS: &str =
    "INSERT INTO loyalty_activities (customer_id, kind, points, transaction_id, at) VALUES ($1, $2, $3, $4, $5)";

async fn record_points(
    conn: &mut Conn,
    customer: &CustomerId,
    kind: PointsActivity,
    points: i64,
    transaction_id: &str,
    at: i64,
) -> Result<(), StoreError> {
    query(RECORD_POINTS)
        .bind(customer.as_str())
        .bind(kind.as_str())
        .bind(points)
        .bind(transaction_id)
        .bind(at)
        .execute(&mut *conn)
        .await?;
    Ok(())
}
