//! Receipts sent by e-mail (migration 0031): the queue every node's mailer claims from and each
//! send's record. A claim takes a queued send that is due and free with a guarded update, so
//! two nodes never hold one send at once; a mailer writes how its attempt went only while its
//! lease holds. A node that dies loses its leases when they run out, and another node tries
//! those sends again.

use crate::db::Store;
use crate::error::StoreError;
use crate::receipts::link_token;
use crate::sql::{Conn, Row, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
pub use till_app::storage::receipt_mail::{ClaimedSend, MailQueue, NewSend, Queued, SendOutcome, SendRecord};
use till_core::customer::Email;
use till_core::e_receipt::{MailFailure, Recipient, RecipientKind, SendState};
use till_core::ids::{CustomerId, SendId, TransactionId};
use till_core::instant::{from_micros, to_micros};

const SEND_COLUMNS: &str =
    "id, transaction_id, recipient, email, state, attempts, last_failure, queued_at, due_at, sent_at";

/// A send a mailer may take at `$1`: queued, due, and not leased to a node.
const CLAIMABLE: &str = "state = 'queued' AND due_at <= $1 AND lease_until <= $1";

/// A queued send to the one-off address that customer `$1`'s profile holds.
const QUEUED_TO_CUSTOMER: &str =
    "state = 'queued' AND email IN (SELECT email FROM customer_profiles WHERE customer_id = $1)";

impl Store {
    pub async fn queue_receipt_send(&self, send: NewSend) -> Result<Queued, StoreError> {
        self.write(send, |c, send| Box::pin(queue(c, send))).await
    }

    pub async fn receipt_sends(&self, transaction_id: &TransactionId) -> Result<Vec<SendRecord>, StoreError> {
        query(format!(
            "SELECT {SEND_COLUMNS} FROM receipt_sends WHERE transaction_id = $1 ORDER BY queued_at, id"
        ))
        .bind(transaction_id.as_str())
        .fetch_all(self.reader())
        .await?
        .iter()
        .map(send_of)
        .collect()
    }

    pub async fn claim_receipt_sends(
        &self,
        token: &str,
        now: Timestamp,
        until: Timestamp,
        most: i64,
    ) -> Result<Vec<ClaimedSend>, StoreError> {
        let now = to_micros(now);
        // A look on a reader first: most of the time nothing is due, and the writer is spared.
        let due = query(format!("SELECT 1 AS due FROM receipt_sends WHERE {CLAIMABLE} LIMIT 1"))
            .bind(now)
            .fetch_optional(self.reader())
            .await?;
        if due.is_none() {
            return Ok(Vec::new());
        }
        let claim = Claim {
            token: token.to_owned(),
            now,
            until: to_micros(until),
            most: most.max(1),
        };
        self.write(claim, |c, claim| Box::pin(take(c, claim))).await
    }

    pub async fn record_send(&self, id: &SendId, lease: &str, outcome: SendOutcome) -> Result<bool, StoreError> {
        let input = (id.as_str().to_owned(), lease.to_owned(), outcome);
        self.write(input, |c, (id, lease, outcome)| {
            Box::pin(record(c, id, lease, *outcome))
        })
        .await
    }

    pub async fn give_up_sends_to_customer(
        &self,
        customer_id: &CustomerId,
        failure: MailFailure,
    ) -> Result<u64, StoreError> {
        // A look on a reader first: a customer erased seldom has a send waiting, and the
        // retention job's pass spares the writer a transaction for each of the others.
        let waiting = query(format!(
            "SELECT 1 AS waiting FROM receipt_sends WHERE {QUEUED_TO_CUSTOMER} LIMIT 1"
        ))
        .bind(customer_id.as_str())
        .fetch_optional(self.reader())
        .await?;
        if waiting.is_none() {
            return Ok(0);
        }
        self.write((customer_id.clone(), failure), |c, (customer_id, failure)| {
            Box::pin(give_up_to_customer(c, customer_id, *failure))
        })
        .await
    }

    pub async fn mail_queue(&self) -> Result<MailQueue, StoreError> {
        let row = query(
            "SELECT (SELECT COUNT(*) FROM receipt_sends WHERE state = 'queued') AS queued, \
                    (SELECT MIN(queued_at) FROM receipt_sends WHERE state = 'queued') AS oldest, \
                    (SELECT COUNT(*) FROM receipt_sends WHERE state = 'failed') AS failed",
        )
        .fetch_one(self.reader())
        .await?;
        Ok(MailQueue {
            queued: row.try_get::<i64>("queued")?.max(0).unsigned_abs(),
            oldest_queued_at: row.try_get::<Option<i64>>("oldest")?.map(from_micros),
            failed: row.try_get::<i64>("failed")?.max(0).unsigned_abs(),
        })
    }
}

fn queue<'a>(conn: &'a mut Conn, send: &'a NewSend) -> BoxFuture<'a, Result<Queued, StoreError>> {
    Box::pin(async move {
        let now = to_micros(send.now);
        let (kind, email) = match &send.recipient {
            Recipient::Address(email) => (RecipientKind::Address, Some(email.as_str())),
            Recipient::Customer(_) => (RecipientKind::Customer, None),
        };
        let inserted = query(format!(
            "INSERT INTO receipt_sends (id, transaction_id, recipient, email, requested_by, state, queued_at, due_at) \
             VALUES ($1, $2, $3, $4, $5, 'queued', $6, $6) ON CONFLICT (id) DO NOTHING RETURNING {SEND_COLUMNS}"
        ))
        .bind(send.id.as_str())
        .bind(send.transaction_id.as_str())
        .bind(kind.as_str())
        .bind(email)
        .bind(send.requested_by.as_str())
        .bind(now)
        .fetch_optional(&mut *conn)
        .await?;
        if let Some(row) = inserted {
            link_token(conn, send.transaction_id.as_str(), &send.link_token, now).await?;
            return Ok(Queued::New(send_of(&row)?));
        }
        let before = query(format!("SELECT {SEND_COLUMNS} FROM receipt_sends WHERE id = $1"))
            .bind(send.id.as_str())
            .fetch_one(&mut *conn)
            .await?;
        let before = send_of(&before)?;
        Ok(match before.transaction_id == send.transaction_id {
            true => Queued::Replayed(before),
            false => Queued::IdTaken,
        })
    })
}

struct Claim {
    token: String,
    now: i64,
    until: i64,
    most: i64,
}

fn take<'a>(conn: &'a mut Conn, claim: &'a Claim) -> BoxFuture<'a, Result<Vec<ClaimedSend>, StoreError>> {
    Box::pin(async move {
        // The conditions again outside the subquery: on PostgreSQL a node that waited for
        // another's claim of the same row sees it taken and leaves it.
        let rows = query(format!(
            "UPDATE receipt_sends SET lease_token = $2, lease_until = $3 \
             WHERE id IN (SELECT id FROM receipt_sends WHERE {CLAIMABLE} ORDER BY due_at, id LIMIT $4) \
               AND {CLAIMABLE} \
             RETURNING {SEND_COLUMNS}"
        ))
        .bind(claim.now)
        .bind(claim.token.as_str())
        .bind(claim.until)
        .bind(claim.most)
        .fetch_all(&mut *conn)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(ClaimedSend {
                    record: send_of(row)?,
                    lease: claim.token.clone(),
                })
            })
            .collect()
    })
}

fn record<'a>(
    conn: &'a mut Conn,
    id: &'a str,
    lease: &'a str,
    outcome: SendOutcome,
) -> BoxFuture<'a, Result<bool, StoreError>> {
    Box::pin(async move {
        // Every outcome frees the lease; a delivered or given-up send lets its address go.
        const HELD: &str = "WHERE id = $1 AND lease_token = $2 AND state = 'queued'";
        let written = match outcome {
            SendOutcome::Delivered { at } => query(format!(
                "UPDATE receipt_sends SET state = 'sent', sent_at = $3, attempts = attempts + 1, \
                 last_failure = NULL, email = NULL, lease_token = NULL, lease_until = 0 {HELD}"
            ))
            .bind(id)
            .bind(lease)
            .bind(to_micros(at)),
            SendOutcome::RetryAt { failure, at } => query(format!(
                "UPDATE receipt_sends SET due_at = $3, attempts = attempts + 1, last_failure = $4, \
                 lease_token = NULL, lease_until = 0 {HELD}"
            ))
            .bind(id)
            .bind(lease)
            .bind(to_micros(at))
            .bind(failure.as_str()),
            SendOutcome::GaveUp { failure, at: _ } => query(format!(
                "UPDATE receipt_sends SET state = 'failed', attempts = attempts + 1, last_failure = $3, \
                 email = NULL, lease_token = NULL, lease_until = 0 {HELD}"
            ))
            .bind(id)
            .bind(lease)
            .bind(failure.as_str()),
        }
        .execute(&mut *conn)
        .await?;
        Ok(written == 1)
    })
}

fn give_up_to_customer<'a>(
    conn: &'a mut Conn,
    customer_id: &'a CustomerId,
    failure: MailFailure,
) -> BoxFuture<'a, Result<u64, StoreError>> {
    Box::pin(async move {
        // The lease goes too: a mailer holding one of these sends finds it no longer queued
        // and writes nothing of its attempt.
        let given_up = query(format!(
            "UPDATE receipt_sends SET state = 'failed', last_failure = $2, email = NULL, \
             lease_token = NULL, lease_until = 0 WHERE {QUEUED_TO_CUSTOMER}"
        ))
        .bind(customer_id.as_str())
        .bind(failure.as_str())
        .execute(&mut *conn)
        .await?;
        Ok(given_up)
    })
}

fn send_of(row: &Row) -> Result<SendRecord, StoreError> {
    let word = |column: &str| -> Result<String, StoreError> { row.try_get(column) };
    let corrupt = |what: &str| StoreError::Corrupt(format!("a receipt send's {what} that does not read"));
    let state = SendState::parse(&word("state")?).ok_or_else(|| corrupt("state"))?;
    let last_failure = match row.try_get::<Option<String>>("last_failure")? {
        Some(failure) => Some(MailFailure::parse(&failure).ok_or_else(|| corrupt("failure"))?),
        None => None,
    };
    Ok(SendRecord {
        id: SendId::from_trusted(word("id")?),
        transaction_id: TransactionId::from_trusted(word("transaction_id")?),
        recipient: RecipientKind::parse(&word("recipient")?).ok_or_else(|| corrupt("recipient"))?,
        email: row.try_get::<Option<String>>("email")?.map(Email::from_trusted),
        state,
        attempts: u32::try_from(row.try_get::<i64>("attempts")?).unwrap_or(u32::MAX),
        last_failure,
        queued_at: from_micros(row.try_get("queued_at")?),
        due_at: (state == SendState::Queued).then(|| from_micros(row.try_get::<i64>("due_at").unwrap_or_default())),
        sent_at: row.try_get::<Option<i64>>("sent_at")?.map(from_micros),
    })
}
