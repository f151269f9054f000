//! The payment-attempt ledger (migration 0027): attempts, their outcomes, voids and orphans.
//! The store writes each change guarded by the state the use case computed it from; which
//! change is allowed is decided in `till_core::payment`.

use crate::db::Store;
use crate::error::StoreError;
use crate::page::{Keyset, Window};
use crate::sql::{Conn, Row, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
pub use till_app::storage::payments::{PaymentChange, PaymentFilter};
use till_core::events::EventType;
use till_core::ids::{SessionId, TransactionId};
use till_core::instant::{from_micros, to_micros};
use till_core::money::Cents;
use till_core::payment::{
    Attempt, AttemptKind, Outcome, OutcomeInput, PaymentId, PaymentState, Provider, ReportedAttempt, TerminalId,
    TerminalKey,
};

const ATTEMPT_COLUMNS: &str = "payment_id, kind, session_id, amount_cents, terminal_id, provider, state, \
     outcome_status, authorized_cents, authorization_code, card_brand, last4, entry_mode, \
     terminal_transaction_id, terminal_receipt, requested_at, authorized_at, captured_by, captured_at, \
     orphaned_at, voided_at, refund_of, refunded_cents";

/// Every attempt, for a list to filter.
static SELECT_ATTEMPTS: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| format!("SELECT {ATTEMPT_COLUMNS} FROM payment_attempts"));

impl Store {
    pub async fn record_attempt(&self, attempt: &Attempt) -> Result<bool, StoreError> {
        self.write(attempt.clone(), |c, attempt| Box::pin(insert_attempt(c, attempt)))
            .await
    }

    pub async fn get_attempt(&self, payment_id: &PaymentId) -> Result<Option<Attempt>, StoreError> {
        query(format!(
            "SELECT {ATTEMPT_COLUMNS} FROM payment_attempts WHERE payment_id = $1"
        ))
        .bind(payment_id.as_str())
        .fetch_optional(self.reader())
        .await?
        .map(|row| attempt(&row))
        .transpose()
    }

    pub async fn replace_attempt(
        &self,
        from: PaymentState,
        next: &Attempt,
        change: PaymentChange,
    ) -> Result<(), StoreError> {
        self.write((from, next.clone(), change), |c, (from, next, change)| {
            Box::pin(replace(c, *from, next, *change))
        })
        .await
    }

    pub async fn list_attempts(
        &self,
        filter: &PaymentFilter,
        window: &Window<PaymentId>,
    ) -> Result<Vec<Attempt>, StoreError> {
        let mut keyset = Keyset::new(SELECT_ATTEMPTS.as_str());
        if let Some(session) = &filter.session_id {
            keyset.compare("session_id", "=", session.as_str());
        }
        if let Some(state) = filter.state {
            keyset.compare("state", "=", state.as_str());
        }
        let after = window.after.as_ref().map(PaymentId::as_str);
        keyset
            .by_id("payment_id", after, window.take)
            .fetch_all(self.reader())
            .await?
            .iter()
            .map(attempt)
            .collect()
    }

    pub async fn awaiting_capture(&self, cutoff: Timestamp, limit: usize) -> Result<Vec<Attempt>, StoreError> {
        query(format!(
            "SELECT {ATTEMPT_COLUMNS} FROM payment_attempts \
             WHERE state IN ('authorized', 'partially_authorized') AND authorized_at < $1 \
             ORDER BY authorized_at, payment_id LIMIT $2"
        ))
        .bind(to_micros(cutoff))
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(self.reader())
        .await?
        .iter()
        .map(attempt)
        .collect()
    }

    pub async fn claim_orphan_sweep(&self, holder: &str, now: Timestamp, until: Timestamp) -> Result<bool, StoreError> {
        self.claim_turn(crate::turns::Turn::PaymentOrphanSweep, holder, now, until)
            .await
    }
}

/// An attempt's columns in [`ATTEMPT_COLUMNS`]'s order, as bound values.
fn insert_attempt<'a>(conn: &'a mut Conn, attempt: &'a Attempt) -> BoxFuture<'a, Result<bool, StoreError>> {
    Box::pin(async move {
        let outcome = attempt.outcome.as_ref();
        let written = query(format!(
            "INSERT INTO payment_attempts ({ATTEMPT_COLUMNS}) VALUES \
             ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, 0) \
             ON CONFLICT (payment_id) DO NOTHING RETURNING payment_id"
        ))
        .bind(attempt.id.as_str())
        .bind(attempt.kind.as_str())
        .bind(attempt.session_id.as_str())
        .bind(attempt.amount.get())
        .bind(attempt.terminal_id.as_ref().map(TerminalId::as_str))
        .bind(attempt.provider.as_ref().map(Provider::as_str))
        .bind(attempt.state.as_str())
        .bind(outcome.map(|o| o.status().as_str()))
        .bind(outcome.and_then(Outcome::authorized).map(Cents::get))
        .bind(outcome.and_then(|o| o.authorization_code()).map(|v| v.as_str()))
        .bind(outcome.and_then(|o| o.card_brand()).map(|v| v.as_str()))
        .bind(outcome.and_then(|o| o.last4()).map(|v| v.as_str()))
        .bind(outcome.and_then(|o| o.entry_mode()).map(|v| v.as_str()))
        .bind(outcome.and_then(|o| o.terminal_transaction_id()).map(|v| v.as_str()))
        .bind(outcome.and_then(|o| o.terminal_receipt()).map(|v| v.as_str()))
        .bind(to_micros(attempt.requested_at))
        .bind(attempt.authorized_at.map(to_micros))
        .bind(attempt.captured_by.as_ref().map(TransactionId::as_str))
        .bind(attempt.captured_at.map(to_micros))
        .bind(attempt.orphaned_at.map(to_micros))
        .bind(attempt.voided_at.map(to_micros))
        .bind(attempt.refund_of.as_ref().map(PaymentId::as_str))
        .fetch_optional(&mut *conn)
        .await?;
        Ok(written.is_some())
    })
}

/// Writes `next` over the attempt held in state `from`; an orphan is announced in the feed in
/// the same transaction.
fn replace<'a>(
    conn: &'a mut Conn,
    from: PaymentState,
    next: &'a Attempt,
    change: PaymentChange,
) -> BoxFuture<'a, Result<(), StoreError>> {
    Box::pin(async move {
        let outcome = next.outcome.as_ref();
        let written = query(
            "UPDATE payment_attempts SET state = $3, outcome_status = $4, authorized_cents = $5, \
                 authorization_code = $6, card_brand = $7, last4 = $8, entry_mode = $9, \
                 terminal_transaction_id = $10, terminal_receipt = $11, authorized_at = $12, \
                 orphaned_at = $13, voided_at = $14 \
             WHERE payment_id = $1 AND state = $2 RETURNING payment_id",
        )
        .bind(next.id.as_str())
        .bind(from.as_str())
        .bind(next.state.as_str())
        .bind(outcome.map(|o| o.status().as_str()))
        .bind(outcome.and_then(Outcome::authorized).map(Cents::get))
        .bind(outcome.and_then(|o| o.authorization_code()).map(|v| v.as_str()))
        .bind(outcome.and_then(|o| o.card_brand()).map(|v| v.as_str()))
        .bind(outcome.and_then(|o| o.last4()).map(|v| v.as_str()))
        .bind(outcome.and_then(|o| o.entry_mode()).map(|v| v.as_str()))
        .bind(outcome.and_then(|o| o.terminal_transaction_id()).map(|v| v.as_str()))
        .bind(outcome.and_then(|o| o.terminal_receipt()).map(|v| v.as_str()))
        .bind(next.authorized_at.map(to_micros))
        .bind(next.orphaned_at.map(to_micros))
        .bind(next.voided_at.map(to_micros))
        .fetch_optional(&mut *conn)
        .await?;
        if written.is_none() {
            return Err(StoreError::NotWritten);
        }
        if change == PaymentChange::Orphaned {
            let data = crate::feed::data_of(&serde_json::json!({
                "paymentId": next.id.as_str(),
                "sessionId": next.session_id.as_str(),
                "authorizedCents": next.authorized().map(Cents::get),
            }))?;
            crate::feed::NewEvent {
                kind: EventType::PaymentOrphaned,
                occurred_at: next.orphaned_at.map(to_micros).unwrap_or_default(),
                store_id: None,
                register_id: None,
                subject: next.id.as_str(),
                data: Some(data),
            }
            .record(conn)
            .await?;
        }
        Ok(())
    })
}

fn attempt(row: &Row) -> Result<Attempt, StoreError> {
    let corrupt = |what: &str| StoreError::Corrupt(format!("a payment attempt's {what}"));
    let kind: String = row.try_get("kind")?;
    let state: String = row.try_get("state")?;
    let status: Option<String> = row.try_get("outcome_status")?;
    let outcome = match status.as_deref() {
        None => None,
        Some(status) => {
            let text = |column: &str| row.try_get::<Option<String>>(column);
            let code = text("authorization_code")?;
            let brand = text("card_brand")?;
            let last4 = text("last4")?;
            let entry = text("entry_mode")?;
            let reference = text("terminal_transaction_id")?;
            let receipt = text("terminal_receipt")?;
            let input = OutcomeInput {
                status,
                authorized_cents: row.try_get("authorized_cents")?,
                authorization_code: code.as_deref(),
                card_brand: brand.as_deref(),
                last4: last4.as_deref(),
                entry_mode: entry.as_deref(),
                terminal_transaction_id: reference.as_deref(),
                terminal_receipt: receipt.as_deref(),
            };
            Some(Outcome::parse(&input).map_err(|_| corrupt("outcome"))?)
        }
    };
    let at = |column: &str| -> Result<Option<Timestamp>, StoreError> {
        Ok(row.try_get::<Option<i64>>(column)?.map(from_micros))
    };
    Ok(Attempt {
        id: PaymentId::from_trusted(row.try_get("payment_id")?),
        kind: AttemptKind::parse(&kind).ok_or_else(|| corrupt("kind"))?,
        session_id: SessionId::from_trusted(row.try_get("session_id")?),
        amount: Cents::new(row.try_get("amount_cents")?).ok_or_else(|| corrupt("amount"))?,
        terminal_id: row
            .try_get::<Option<String>>("terminal_id")?
            .map(TerminalId::from_trusted),
        provider: row.try_get::<Option<String>>("provider")?.map(Provider::from_trusted),
        state: PaymentState::parse(&state).ok_or_else(|| corrupt("state"))?,
        outcome,
        requested_at: from_micros(row.try_get("requested_at")?),
        authorized_at: at("authorized_at")?,
        captured_by: row
            .try_get::<Option<String>>("captured_by")?
            .map(TransactionId::from_trusted),
        captured_at: at("captured_at")?,
        orphaned_at: at("orphaned_at")?,
        voided_at: at("voided_at")?,
        refund_of: row.try_get::<Option<String>>("refund_of")?.map(PaymentId::from_trusted),
        refunded: Cents::new(row.try_get("refunded_cents")?).ok_or_else(|| corrupt("refunded amount"))?,
    })
}

/// Captures an attempt for `sale` in its transaction, only while it is still in the state the
/// sale was checked against, of the sale's session and for the tender's amount; refused as
/// stale otherwise (the sale is checked again, and refused with the reason). Announces
/// `payment.captured`.
pub(crate) async fn capture(
    conn: &mut Conn,
    capture: &till_core::committed::Capture,
    sale: &crate::sales::NewSale,
    now: i64,
) -> Result<(), StoreError> {
    let captured = query(
        "UPDATE payment_attempts SET state = 'captured', captured_by = $3, captured_at = $4 \
         WHERE payment_id = $1 AND state = $2 AND session_id = $5 AND authorized_cents = $6 \
             AND kind = 'payment' AND captured_by IS NULL \
         RETURNING payment_id",
    )
    .bind(capture.payment_id.as_str())
    .bind(capture.from.as_str())
    .bind(sale.transaction_id.as_str())
    .bind(now)
    .bind(sale.session_id.as_str())
    .bind(capture.amount.get())
    .fetch_optional(&mut *conn)
    .await?;
    if captured.is_none() {
        return Err(StoreError::Stale(till_app::storage::Stale::PaymentMoved(
            capture.tender,
        )));
    }
    let data = crate::feed::data_of(&serde_json::json!({
        "paymentId": capture.payment_id.as_str(),
        "transactionId": sale.transaction_id.as_str(),
        "amountCents": capture.amount.get(),
    }))?;
    crate::feed::NewEvent {
        kind: EventType::PaymentCaptured,
        occurred_at: now,
        store_id: Some(sale.store_id.as_str()),
        register_id: Some(sale.register_id.as_str()),
        subject: capture.payment_id.as_str(),
        data: Some(data),
    }
    .record(conn)
    .await
}

/// Gives `refund` back to the payment it names in the return's transaction, only while the
/// payment still holds what the return was checked against (captured by the original, with
/// as much refunded to it); refused as stale otherwise (the return is checked again). Records
/// the refund attempt and announces `payment.refunded`.
pub(crate) async fn refund(
    conn: &mut Conn,
    refund: &till_core::committed::CardRefund,
    sale: &crate::sales::NewSale,
    now: i64,
) -> Result<(), StoreError> {
    let attempt = &refund.refund;
    let (Some(payment_id), Some(original)) = (&attempt.refund_of, sale.original.as_ref()) else {
        return Err(StoreError::Corrupt("a card refund without its payment".into()));
    };
    let moved = query(
        "UPDATE payment_attempts SET refunded_cents = refunded_cents + $3 \
         WHERE payment_id = $1 AND refunded_cents = $2 AND state = 'captured' AND kind = 'payment' \
             AND captured_by = $4 \
         RETURNING payment_id",
    )
    .bind(payment_id.as_str())
    .bind(refund.refunded_before.get())
    .bind(attempt.amount.get())
    .bind(original.transaction_id.as_str())
    .fetch_optional(&mut *conn)
    .await?;
    if moved.is_none() {
        return Err(StoreError::Stale(till_app::storage::Stale::RefundMoved(refund.tender)));
    }
    insert_attempt(conn, attempt).await?;
    let data = crate::feed::data_of(&serde_json::json!({
        "paymentId": payment_id.as_str(),
        "refundId": attempt.id.as_str(),
        "transactionId": sale.transaction_id.as_str(),
        "amountCents": attempt.amount.get(),
    }))?;
    crate::feed::NewEvent {
        kind: EventType::PaymentRefunded,
        occurred_at: now,
        store_id: Some(sale.store_id.as_str()),
        register_id: Some(sale.register_id.as_str()),
        subject: payment_id.as_str(),
        data: Some(data),
    }
    .record(conn)
    .await
}

/// Which attempts a shift's card totals are added up from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShiftCards {
    /// The ledger as it stands: the X report of an open shift.
    Live,
    /// What the Z report kept of each attempt at the close: the Z report and the audit.
    AsClosed,
}

/// The session's attempts as the X and Z reports read them.
pub(crate) async fn reported(
    conn: &mut Conn,
    session_id: &str,
    cards: ShiftCards,
) -> Result<Vec<ReportedAttempt>, StoreError> {
    let sql = match cards {
        ShiftCards::Live => {
            "SELECT kind, terminal_id, provider, state, amount_cents, authorized_cents, \
                 CAST(CASE WHEN orphaned_at IS NULL THEN 0 ELSE 1 END AS BIGINT) AS orphaned \
             FROM payment_attempts WHERE session_id = $1"
        }
        ShiftCards::AsClosed => {
            "SELECT kind, terminal_id, provider, state, amount_cents, authorized_cents, orphaned \
             FROM shift_card_attempts WHERE session_id = $1"
        }
    };
    let corrupt = |what: &str| StoreError::Corrupt(format!("a reported payment attempt's {what}"));
    let rows = query(sql).bind(session_id).fetch_all(&mut *conn).await?;
    rows.iter()
        .map(|row| {
            let kind: String = row.try_get("kind")?;
            let state: String = row.try_get("state")?;
            let authorized: Option<i64> = row.try_get("authorized_cents")?;
            Ok(ReportedAttempt {
                key: TerminalKey {
                    terminal_id: row
                        .try_get::<Option<String>>("terminal_id")?
                        .map(TerminalId::from_trusted),
                    provider: row.try_get::<Option<String>>("provider")?.map(Provider::from_trusted),
                },
                kind: AttemptKind::parse(&kind).ok_or_else(|| corrupt("kind"))?,
                state: PaymentState::parse(&state).ok_or_else(|| corrupt("state"))?,
                amount: Cents::new(row.try_get("amount_cents")?).ok_or_else(|| corrupt("amount"))?,
                authorized: authorized
                    .map(|cents| Cents::new(cents).ok_or_else(|| corrupt("authorized amount")))
                    .transpose()?,
                orphaned: row.try_get::<i64>("orphaned")? != 0,
            })
        })
        .collect()
}

/// Keeps what the session's Z report reads of each of its attempts, as they stand, in the
/// close's transaction.
pub(crate) async fn keep_for_close(conn: &mut Conn, session_id: &str) -> Result<(), StoreError> {
    query(
        "INSERT INTO shift_card_attempts (session_id, payment_id, kind, terminal_id, provider, state, \
             amount_cents, authorized_cents, orphaned) \
         SELECT session_id, payment_id, kind, terminal_id, provider, state, amount_cents, authorized_cents, \
             CASE WHEN orphaned_at IS NULL THEN 0 ELSE 1 END \
         FROM payment_attempts WHERE session_id = $1",
    )
    .bind(session_id)
    .execute(&mut *conn)
    .await?;
    Ok(())
}
