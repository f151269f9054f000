//! Manager elevation grants: minted after a manager's PIN, spent once by the sale they approve.
//! The rate limiter and every outcome's audit row live here too, in the database, so that
//! every node sees the same counts.

use crate::db::Store;
use crate::error::{Forbidden, StoreError};
use crate::journal::{self, jet};
use crate::sql::{Conn, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
pub use till_app::storage::access::{ElevationEvent, GrantOperation, GrantRecord, NewGrant, RateDecision};
use till_core::instant::{from_micros, to_micros};

struct RateAttempt {
    subject: String,
    now: i64,
    limit: i64,
    window: i64,
}

struct Issue {
    grant: NewGrant,
    key: std::sync::Arc<crate::sealer::Sealer>,
}

struct Record {
    event: ElevationEvent,
    now: i64,
}

impl Store {
    pub async fn count_elevation_attempt(
        &self,
        subject: &str,
        now: Timestamp,
        limit: u32,
        window: std::time::Duration,
    ) -> Result<RateDecision, StoreError> {
        let input = RateAttempt {
            subject: subject.to_owned(),
            now: to_micros(now),
            limit: i64::from(limit.max(1)),
            window: i64::try_from(window.as_micros()).unwrap_or(i64::MAX / 4).max(1),
        };
        self.write(input, |c, i| Box::pin(rate_attempt(c, i))).await
    }

    pub async fn issue_grant(&self, grant: NewGrant) -> Result<(), StoreError> {
        let key = self.fiscal_key()?;
        self.write(Issue { grant, key }, |c, i| Box::pin(issue(c, i))).await
    }

    pub async fn record_elevation_event(&self, event: ElevationEvent, now: Timestamp) -> Result<(), StoreError> {
        self.write(
            Record {
                event,
                now: to_micros(now),
            },
            |c, i| Box::pin(async move { insert_event(c, &i.event, i.now).await }),
        )
        .await
    }

    pub async fn grant_by_token(&self, token_hash: &[u8]) -> Result<Option<GrantRecord>, StoreError> {
        let row = query(
            "SELECT grant_id, manager_subject, session_id, register_id, operation, amount_cents, percent_bps, \
                 expires_at, spent_at \
             FROM elevation_grants WHERE token_hash = $1",
        )
        .bind(token_hash.to_vec())
        .fetch_optional(self.reader())
        .await?;
        row.map(|row| {
            let operation: String = row.try_get("operation")?;
            Ok(GrantRecord {
                grant_id: row.try_get("grant_id")?,
                manager_subject: row.try_get("manager_subject")?,
                session_id: row.try_get("session_id")?,
                register_id: row.try_get("register_id")?,
                operation: GrantOperation::parse(&operation)
                    .ok_or_else(|| StoreError::Corrupt(format!("grant operation {operation}")))?,
                amount_cents: row.try_get("amount_cents")?,
                percent_bps: row.try_get("percent_bps")?,
                expires_at: from_micros(row.try_get("expires_at")?),
                spent_at: row.try_get::<Option<i64>>("spent_at")?.map(from_micros),
            })
        })
        .transpose()
    }

    pub async fn elevation_events(
        &self,
        manager: Option<&str>,
        register: Option<&str>,
        limit: i64,
    ) -> Result<Vec<ElevationEvent>, StoreError> {
        let rows = query(
            "SELECT event_id, occurred_at, outcome, code, manager_subject, session_id, register_id, cashier_subject, \
                 operation, amount_cents, percent_bps, grant_id, transaction_id FROM elevation_events \
             WHERE (CAST($1 AS TEXT) IS NULL OR manager_subject = $1) \
               AND (CAST($2 AS TEXT) IS NULL OR register_id = $2) \
             ORDER BY event_id DESC LIMIT $3",
        )
        .bind(manager)
        .bind(register)
        .bind(limit)
        .fetch_all(self.reader())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(ElevationEvent {
                    event_id: row.try_get("event_id")?,
                    occurred_at: Some(from_micros(row.try_get("occurred_at")?)),
                    outcome: row.try_get("outcome")?,
                    code: row.try_get("code")?,
                    manager_subject: row.try_get("manager_subject")?,
                    session_id: row.try_get("session_id")?,
                    register_id: row.try_get("register_id")?,
                    cashier_subject: row.try_get("cashier_subject")?,
                    operation: row.try_get("operation")?,
                    amount_cents: row.try_get("amount_cents")?,
                    percent_bps: row.try_get("percent_bps")?,
                    grant_id: row.try_get("grant_id")?,
                    transaction_id: row.try_get("transaction_id")?,
                })
            })
            .collect()
    }
}

fn rate_attempt<'a>(conn: &'a mut Conn, input: &'a RateAttempt) -> BoxFuture<'a, Result<RateDecision, StoreError>> {
    Box::pin(async move {
        // A window that has run out starts again at this attempt.
        let row = query(
            "INSERT INTO elevation_rate (subject, window_start, attempts) VALUES ($1, $2, 1) \
             ON CONFLICT (subject) DO UPDATE SET \
                 window_start = CASE WHEN elevation_rate.window_start + $3 <= $2 THEN $2 ELSE elevation_rate.window_start END, \
                 attempts = CASE WHEN elevation_rate.window_start + $3 <= $2 THEN 1 ELSE elevation_rate.attempts + 1 END \
             RETURNING window_start, attempts",
        )
        .bind(&input.subject)
        .bind(input.now)
        .bind(input.window)
        .fetch_one(&mut *conn)
        .await?;
        let window_start: i64 = row.try_get("window_start")?;
        let attempts: i64 = row.try_get("attempts")?;
        Ok(if attempts > input.limit {
            RateDecision::LimitedUntil(from_micros(window_start.saturating_add(input.window)))
        } else {
            RateDecision::Allowed
        })
    })
}

fn issue<'a>(conn: &'a mut Conn, input: &'a Issue) -> BoxFuture<'a, Result<(), StoreError>> {
    Box::pin(async move {
        let grant = &input.grant;
        let issued_at = to_micros(grant.issued_at);
        query(
            "INSERT INTO elevation_grants (grant_id, token_hash, manager_subject, session_id, register_id, \
                 cashier_subject, operation, scope, amount_cents, percent_bps, issued_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        )
        .bind(&grant.grant_id)
        .bind(grant.token_hash.clone())
        .bind(&grant.manager_subject)
        .bind(&grant.session_id)
        .bind(&grant.register_id)
        .bind(&grant.cashier_subject)
        .bind(grant.operation.as_str())
        .bind(&grant.scope)
        .bind(grant.amount_cents)
        .bind(grant.percent_bps)
        .bind(issued_at)
        .bind(to_micros(grant.expires_at))
        .execute(&mut *conn)
        .await?;
        let event = ElevationEvent {
            outcome: "issued".to_owned(),
            manager_subject: grant.manager_subject.clone(),
            session_id: Some(grant.session_id.clone()),
            register_id: Some(grant.register_id.clone()),
            cashier_subject: Some(grant.cashier_subject.clone()),
            operation: Some(grant.operation.as_str().to_owned()),
            amount_cents: grant.amount_cents,
            percent_bps: grant.percent_bps,
            grant_id: Some(grant.grant_id.clone()),
            ..ElevationEvent::default()
        };
        insert_event(conn, &event, issued_at).await?;
        let issued = jet::approval_issued(&grant.grant_id, &grant.manager_subject, grant.operation.as_str());
        journal::append_event(
            conn,
            &grant.register_id,
            issued.event,
            &issued.detail,
            issued_at,
            &input.key,
        )
        .await?;
        Ok(())
    })
}

pub(crate) async fn insert_event(conn: &mut Conn, event: &ElevationEvent, now: i64) -> Result<(), StoreError> {
    query(
        "INSERT INTO elevation_events (occurred_at, outcome, code, manager_subject, session_id, register_id, \
             cashier_subject, operation, amount_cents, percent_bps, grant_id, transaction_id) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(now)
    .bind(&event.outcome)
    .bind(event.code.as_deref())
    .bind(&event.manager_subject)
    .bind(event.session_id.as_deref())
    .bind(event.register_id.as_deref())
    .bind(event.cashier_subject.as_deref())
    .bind(event.operation.as_deref())
    .bind(event.amount_cents)
    .bind(event.percent_bps)
    .bind(event.grant_id.as_deref())
    .bind(event.transaction_id.as_deref())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Spends a grant inside the sale's transaction: it must be unspent and unexpired at `now`.
/// Concurrent sales presenting one grant serialize on its row; exactly one spends it.
pub(crate) async fn spend_grant(
    conn: &mut Conn,
    grant_id: &str,
    transaction_id: &str,
    now: i64,
) -> Result<(), StoreError> {
    let spent = query(
        "UPDATE elevation_grants SET spent_at = $2, spent_by = $3 \
         WHERE grant_id = $1 AND spent_at IS NULL AND expires_at > $2 \
         RETURNING manager_subject, session_id, register_id, cashier_subject, operation, amount_cents, percent_bps",
    )
    .bind(grant_id)
    .bind(now)
    .bind(transaction_id)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(row) = spent else {
        return Err(StoreError::Forbidden(Forbidden::GrantSpentOrExpired));
    };
    let event = ElevationEvent {
        outcome: "spent".to_owned(),
        manager_subject: row.try_get("manager_subject")?,
        session_id: row.try_get("session_id")?,
        register_id: row.try_get("register_id")?,
        cashier_subject: row.try_get("cashier_subject")?,
        operation: row.try_get("operation")?,
        amount_cents: row.try_get("amount_cents")?,
        percent_bps: row.try_get("percent_bps")?,
        grant_id: Some(grant_id.to_owned()),
        transaction_id: Some(transaction_id.to_owned()),
        ..ElevationEvent::default()
    };
    insert_event(conn, &event, now).await
}
