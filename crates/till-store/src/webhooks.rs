//! Webhook endpoints, the leases by which one node task at a time works on each, and the
//! record of every delivery attempt (docs/events.md, "Webhooks").
//!
//! An endpoint's cursor (`delivered_through`) only moves past events its receiver answered
//! 2xx, so an event is sent at least once. Nodes share the work through the database: a node
//! claims a due endpoint with a guarded update that takes it only when its lease has expired,
//! works on it alone, and writes its progress only while it still holds that lease. A node
//! that dies loses its leases when they expire, and another continues from the cursor.

use crate::db::Store;
use crate::engine::Writers;
use crate::error::StoreError;
use crate::sql::{Conn, Param, Query, Row, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
use std::time::Duration;
pub use till_app::storage::feed::{
    Attempt, Claimed, DeliveryRecord, Disabled, EndpointRecord, Lease, MOST_DELIVERIES_READ, NewEndpoint, Progress,
    Replayed, Standing,
};
use till_app::storage::health::{Backlog, EndpointBacklog};
use till_core::events::{EventType, FeedCursor};
use till_core::instant::{from_micros, to_micros};
use till_core::webhooks::{DisableReason, Failure, Streak, WebhookSecret};

/// Attempts kept per endpoint; older ones are pruned now and then.
pub const KEPT_DELIVERIES: i64 = 10_000;

const ENDPOINT_COLUMNS: &str = "id, url, types, description, secret, created_at, delivered_through, due_at, \
     failing_since, failures, last_failure, last_status, disabled_at, disabled_reason, generation";

/// The feed's last position handed out: each engine's migrations define the view.
macro_rules! feed_head {
    () => {
        "(SELECT position FROM feed_head)"
    };
}
const FEED_HEAD: &str = feed_head!();

impl Store {
    pub async fn feed_head(&self) -> Result<FeedCursor, StoreError> {
        let head: i64 = query(format!("SELECT {FEED_HEAD} AS head"))
            .fetch_one(self.reader())
            .await?
            .try_get("head")?;
        Ok(FeedCursor::at(head))
    }

    /// The feed's head, its events not handed out yet, and each endpoint's place in it.
    pub async fn backlog(&self) -> Result<Backlog, StoreError> {
        // One statement: its one snapshot sees each event either handed out or waiting, to be
        // numbered or, numbered, to be released.
        let unplaced = match self.writers() {
            // SQLite numbers and releases an event as it writes it.
            Writers::One => "0",
            Writers::Many => {
                "(SELECT COUNT(*) FROM events WHERE position IS NULL OR position > (SELECT position FROM feed_head))"
            }
        };
        let row = query(format!("SELECT {FEED_HEAD} AS head, {unplaced} AS unplaced"))
            .fetch_one(self.reader())
            .await?;
        let head = FeedCursor::at(row.try_get("head")?);
        let unplaced_events = row.try_get::<i64>("unplaced")?.max(0).unsigned_abs();
        let rows = query(
            "SELECT e.delivered_through, e.failing_since, e.disabled_at, \
                 (SELECT n.occurred_at FROM events n WHERE n.position > e.delivered_through \
                  ORDER BY n.position LIMIT 1) AS next_event_at \
             FROM webhook_endpoints e",
        )
        .fetch_all(self.reader())
        .await?;
        let endpoints = rows
            .iter()
            .map(|row| {
                Ok(EndpointBacklog {
                    delivered_through: FeedCursor::at(row.try_get("delivered_through")?),
                    next_event_at: row.try_get::<Option<i64>>("next_event_at")?.map(from_micros),
                    failing_since: row.try_get::<Option<i64>>("failing_since")?.map(from_micros),
                    disabled: row.try_get::<Option<i64>>("disabled_at")?.is_some(),
                })
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(Backlog {
            head,
            unplaced_events,
            endpoints,
        })
    }

    pub async fn create_webhook(&self, endpoint: NewEndpoint) -> Result<EndpointRecord, StoreError> {
        self.write(endpoint, |c, i| Box::pin(create(c, i))).await
    }

    pub async fn webhooks(&self) -> Result<Vec<EndpointRecord>, StoreError> {
        let rows = query(format!(
            "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints ORDER BY created_at, id"
        ))
        .fetch_all(self.reader())
        .await?;
        rows.iter().map(endpoint_of).collect()
    }

    pub async fn delete_webhook(&self, id: String) -> Result<bool, StoreError> {
        self.write(id, |c, id| Box::pin(delete(c, id))).await
    }

    pub async fn webhook_deliveries(&self, id: &str, limit: i64) -> Result<Option<Vec<DeliveryRecord>>, StoreError> {
        let known = query("SELECT 1 AS known FROM webhook_endpoints WHERE id = $1")
            .bind(id)
            .fetch_optional(self.reader())
            .await?;
        if known.is_none() {
            return Ok(None);
        }
        let rows = query(
            "SELECT id, event_seq, attempt, status_code, failure, at, duration_ms FROM webhook_deliveries \
             WHERE endpoint_id = $1 ORDER BY id DESC LIMIT $2",
        )
        .bind(id)
        .bind(limit.clamp(1, MOST_DELIVERIES_READ))
        .fetch_all(self.reader())
        .await?;
        rows.iter().map(delivery_of).collect::<Result<_, _>>().map(Some)
    }

    pub async fn replay_webhook(&self, id: String, after: FeedCursor, now: Timestamp) -> Result<Replayed, StoreError> {
        self.write((id, after, to_micros(now)), |c, i| Box::pin(replay(c, i)))
            .await
    }

    pub async fn claim_webhooks(
        &self,
        token: String,
        now: Timestamp,
        until: Timestamp,
        limit: i64,
    ) -> Result<Vec<Claimed>, StoreError> {
        let now = to_micros(now);
        let due = query(format!(
            "SELECT 1 AS due FROM webhook_endpoints WHERE {CLAIMABLE} LIMIT 1"
        ))
        .bind(now)
        .fetch_optional(self.reader())
        .await?;
        if due.is_none() {
            return Ok(Vec::new());
        }
        let input = Claim {
            token,
            now,
            until: to_micros(until),
            limit,
        };
        self.write(input, |c, i| Box::pin(claim(c, i))).await
    }

    pub async fn record_progress(&self, id: &str, lease: &Lease, progress: Progress) -> Result<bool, StoreError> {
        let input = Recorded {
            id: id.to_owned(),
            lease: lease.clone(),
            progress,
        };
        self.write(input, |c, i| Box::pin(record(c, i))).await
    }
}

/// An endpoint a task may take at `$1`: due, enabled, free, and behind the feed.
const CLAIMABLE: &str = concat!(
    "disabled_at IS NULL AND lease_until <= $1 AND due_at <= $1 AND delivered_through < ",
    feed_head!()
);

fn create<'a>(conn: &'a mut Conn, new: &'a NewEndpoint) -> BoxFuture<'a, Result<EndpointRecord, StoreError>> {
    Box::pin(async move {
        let now = to_micros(new.now);
        let row = query(format!(
            "INSERT INTO webhook_endpoints (id, url, types, description, secret, created_at, delivered_through, due_at) \
             VALUES ($1, $2, $3, $4, $5, $6, {FEED_HEAD}, $6) RETURNING {ENDPOINT_COLUMNS}"
        ))
        .bind(new.id.as_str())
        .bind(new.url.as_str())
        .bind(new.types.as_deref().map(types_text))
        .bind(new.description.as_deref())
        .bind(new.secret.to_text())
        .bind(now)
        .fetch_one(&mut *conn)
        .await?;
        endpoint_of(&row)
    })
}

fn delete<'a>(conn: &'a mut Conn, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
    Box::pin(async move {
        let deleted = query("DELETE FROM webhook_endpoints WHERE id = $1")
            .bind(id)
            .execute(&mut *conn)
            .await?;
        query("DELETE FROM webhook_deliveries WHERE endpoint_id = $1")
            .bind(id)
            .execute(&mut *conn)
            .await?;
        Ok(deleted > 0)
    })
}

fn replay<'a>(
    conn: &'a mut Conn,
    (id, after, now): &'a (String, FeedCursor, i64),
) -> BoxFuture<'a, Result<Replayed, StoreError>> {
    Box::pin(async move {
        let head: i64 = query(format!("SELECT {FEED_HEAD} AS head"))
            .fetch_one(&mut *conn)
            .await?
            .try_get("head")?;
        if after.position() > head {
            return Ok(Replayed::PastHead(FeedCursor::at(head)));
        }
        let row = query(format!(
            "UPDATE webhook_endpoints SET delivered_through = $2, due_at = $3, failing_since = NULL, failures = 0, \
                 last_failure = NULL, last_status = NULL, disabled_at = NULL, disabled_reason = NULL, \
                 generation = generation + 1 \
             WHERE id = $1 RETURNING {ENDPOINT_COLUMNS}"
        ))
        .bind(id.as_str())
        .bind(after.position())
        .bind(*now)
        .fetch_optional(&mut *conn)
        .await?;
        match row {
            Some(row) => Ok(Replayed::Done(endpoint_of(&row)?)),
            None => Ok(Replayed::Unknown),
        }
    })
}

struct Claim {
    token: String,
    now: i64,
    until: i64,
    limit: i64,
}

fn claim<'a>(conn: &'a mut Conn, claim: &'a Claim) -> BoxFuture<'a, Result<Vec<Claimed>, StoreError>> {
    Box::pin(async move {
        // The conditions again outside the subquery: on PostgreSQL a node that waited for
        // another's claim of the same row sees it taken and leaves it.
        let rows = query(format!(
            "UPDATE webhook_endpoints SET lease_token = $2, lease_until = $3 \
             WHERE id IN (SELECT id FROM webhook_endpoints WHERE {CLAIMABLE} ORDER BY due_at, id LIMIT $4) \
               AND disabled_at IS NULL AND lease_until <= $1 AND due_at <= $1 \
             RETURNING {ENDPOINT_COLUMNS}"
        ))
        .bind(claim.now)
        .bind(claim.token.as_str())
        .bind(claim.until)
        .bind(claim.limit.max(1))
        .fetch_all(&mut *conn)
        .await?;
        rows.iter()
            .map(|row| {
                let secret: String = row.try_get("secret")?;
                Ok(Claimed {
                    endpoint: endpoint_of(row)?,
                    secret: WebhookSecret::parse(&secret)
                        .ok_or_else(|| StoreError::Corrupt("a webhook secret that does not read".to_owned()))?,
                    lease: Lease {
                        token: claim.token.clone(),
                        generation: row.try_get("generation")?,
                    },
                })
            })
            .collect()
    })
}

struct Recorded {
    id: String,
    lease: Lease,
    progress: Progress,
}

fn record<'a>(conn: &'a mut Conn, input: &'a Recorded) -> BoxFuture<'a, Result<bool, StoreError>> {
    Box::pin(async move {
        let progress = &input.progress;
        let now = to_micros(progress.now);
        let (due_at, streak, failure, disabled) = match progress.standing {
            Standing::Healthy => (now, None, None, None),
            Standing::Failing {
                streak,
                failure,
                retry_at,
            } => (to_micros(retry_at), Some(streak), Some(failure), None),
            Standing::Disabled {
                reason,
                streak,
                failure,
            } => (now, Some(streak), Some(failure), Some(reason)),
        };
        let token = input.lease.token.as_str();
        let (kept_token, until) = match progress.hold_until {
            Some(until) => (Some(token), to_micros(until)),
            None => (None, 0),
        };
        let held = query(
            "UPDATE webhook_endpoints SET delivered_through = $3, due_at = $4, failing_since = $5, failures = $6, \
                 last_failure = $7, last_status = $8, disabled_at = $9, disabled_reason = $10, \
                 lease_token = $11, lease_until = $12 \
             WHERE id = $1 AND lease_token = $2 AND generation = $13",
        )
        .bind(input.id.as_str())
        .bind(token)
        .bind(progress.delivered_through.position())
        .bind(due_at)
        .bind(streak.map(|streak| to_micros(streak.since)))
        .bind(streak.map_or(0, |streak| i64::from(streak.failures)))
        .bind(failure.map(Failure::kind))
        .bind(failure.and_then(Failure::status).map(i64::from))
        .bind(disabled.map(|_| now))
        .bind(disabled.map(DisableReason::as_str))
        .bind(kept_token)
        .bind(until)
        .bind(input.lease.generation)
        .execute(&mut *conn)
        .await?
            > 0;
        if !held {
            let known = query(
                "UPDATE webhook_endpoints SET lease_token = NULL, lease_until = 0 WHERE id = $1 AND lease_token = $2",
            )
            .bind(input.id.as_str())
            .bind(token)
            .execute(&mut *conn)
            .await?;
            let known = known > 0
                || query("SELECT 1 AS known FROM webhook_endpoints WHERE id = $1")
                    .bind(input.id.as_str())
                    .fetch_optional(&mut *conn)
                    .await?
                    .is_some();
            if !known {
                return Ok(false);
            }
        }
        insert_attempts(conn, &input.id, &progress.attempts).await?;
        if progress.prune {
            query(
                "DELETE FROM webhook_deliveries WHERE endpoint_id = $1 AND id < ( \
                     SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)",
            )
            .bind(input.id.as_str())
            .bind(KEPT_DELIVERIES - 1)
            .execute(&mut *conn)
            .await?;
        }
        Ok(held)
    })
}

/// Every attempt of a batch in one statement.
async fn insert_attempts(conn: &mut Conn, endpoint: &str, attempts: &[Attempt]) -> Result<(), StoreError> {
    if attempts.is_empty() {
        return Ok(());
    }
    const COLUMNS: usize = 7;
    let mut rows = Vec::with_capacity(attempts.len());
    let mut params: Vec<Param> = Vec::with_capacity(attempts.len() * COLUMNS);
    for (n, attempt) in attempts.iter().enumerate() {
        let places: Vec<String> = (1..=COLUMNS).map(|c| format!("${}", n * COLUMNS + c)).collect();
        rows.push(format!("({})", places.join(", ")));
        params.extend([
            endpoint.into(),
            attempt.event_id.into(),
            i64::from(attempt.attempt).into(),
            attempt.status.map(i64::from).into(),
            attempt.failure.map(Failure::kind).into(),
            to_micros(attempt.at).into(),
            i64::try_from(attempt.duration.as_millis()).unwrap_or(i64::MAX).into(),
        ]);
    }
    Query::with_params(
        format!(
            "INSERT INTO webhook_deliveries (endpoint_id, event_seq, attempt, status_code, failure, at, duration_ms) \
             VALUES {}",
            rows.join(", ")
        ),
        params,
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

fn delivery_of(row: &Row) -> Result<DeliveryRecord, StoreError> {
    let status = row.try_get::<Option<i64>>("status_code")?.map(status_of).transpose()?;
    let failure = match row.try_get::<Option<String>>("failure")? {
        Some(kind) => Some(failure_of(&kind, status)?),
        None => None,
    };
    Ok(DeliveryRecord {
        id: row.try_get("id")?,
        attempt: Attempt {
            event_id: row.try_get("event_seq")?,
            attempt: u32::try_from(row.try_get::<i64>("attempt")?).unwrap_or(u32::MAX),
            status,
            failure,
            at: from_micros(row.try_get("at")?),
            duration: Duration::from_millis(u64::try_from(row.try_get::<i64>("duration_ms")?).unwrap_or(0)),
        },
    })
}

fn status_of(code: i64) -> Result<u16, StoreError> {
    u16::try_from(code).map_err(|_| StoreError::Corrupt(format!("a delivery's status {code}")))
}

fn failure_of(kind: &str, status: Option<u16>) -> Result<Failure, StoreError> {
    Failure::from_parts(kind, status).ok_or_else(|| StoreError::Corrupt(format!("a delivery failure {kind:?}")))
}

fn types_text(types: &[EventType]) -> String {
    types.iter().map(|kind| kind.as_str()).collect::<Vec<_>>().join(",")
}

fn endpoint_of(row: &Row) -> Result<EndpointRecord, StoreError> {
    let types = match row.try_get::<Option<String>>("types")? {
        Some(text) => Some(
            text.split(',')
                .map(|name| {
                    EventType::parse(name)
                        .ok_or_else(|| StoreError::Corrupt(format!("a webhook's event type {name:?}")))
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        None => None,
    };
    let failing = match (
        row.try_get::<Option<i64>>("failing_since")?,
        row.try_get::<Option<String>>("last_failure")?,
    ) {
        (Some(since), Some(kind)) => {
            let status = row.try_get::<Option<i64>>("last_status")?.map(status_of).transpose()?;
            let streak = Streak {
                since: from_micros(since),
                failures: u32::try_from(row.try_get::<i64>("failures")?).unwrap_or(u32::MAX),
            };
            Some((streak, failure_of(&kind, status)?))
        }
        _ => None,
    };
    let disabled = match (
        row.try_get::<Option<i64>>("disabled_at")?,
        row.try_get::<Option<String>>("disabled_reason")?,
    ) {
        (Some(at), Some(reason)) => Some(Disabled {
            at: from_micros(at),
            reason: DisableReason::parse(&reason)
                .ok_or_else(|| StoreError::Corrupt(format!("a webhook disabled for {reason:?}")))?,
        }),
        _ => None,
    };
    Ok(EndpointRecord {
        id: row.try_get("id")?,
        url: row.try_get("url")?,
        types,
        description: row.try_get("description")?,
        created_at: from_micros(row.try_get("created_at")?),
        delivered_through: FeedCursor::at(row.try_get("delivered_through")?),
        due_at: from_micros(row.try_get("due_at")?),
        failing,
        disabled,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::scratch_sqlite_store;

    fn at(micros: i64) -> Timestamp {
        from_micros(1_700_000_000_000_000 + micros)
    }

    /// Appends `count` events to the feed.
    async fn events(store: &Store, count: i64) {
        store
            .write(count, |conn, count| {
                Box::pin(async move {
                    for _ in 0..*count {
                        query("INSERT INTO events (type, occurred_at, subject) VALUES ('stock.adjusted', 0, 'x')")
                            .execute(&mut *conn)
                            .await?;
                    }
                    Ok(())
                })
            })
            .await
            .unwrap();
    }

    fn progress(through: i64, attempts: Vec<Attempt>, now: Timestamp) -> Progress {
        Progress {
            delivered_through: FeedCursor::at(through),
            attempts,
            standing: Standing::Healthy,
            hold_until: None,
            prune: false,
            now,
        }
    }

    fn delivered(event_id: i64, now: Timestamp) -> Attempt {
        Attempt {
            event_id,
            attempt: 1,
            status: Some(200),
            failure: None,
            at: now,
            duration: Duration::from_millis(3),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_task_holds_an_endpoint_until_its_lease_runs_out_and_a_replay_outranks_it() {
        let dir = tempfile::tempdir().unwrap();
        let (_, store) = scratch_sqlite_store(dir.path()).await;
        store.migrate().await.unwrap();
        events(&store, 2).await;
        let created = store
            .create_webhook(NewEndpoint {
                id: "whk_1".into(),
                url: "https://example.com/hook".into(),
                types: Some(vec![EventType::StockAdjusted]),
                description: None,
                secret: WebhookSecret::from_key([1; 32]),
                now: at(0),
            })
            .await
            .unwrap();
        assert_eq!(
            created.delivered_through,
            FeedCursor::at(2),
            "it starts after the feed's end"
        );
        let claim = |token: &str, now: i64| store.claim_webhooks(token.into(), at(now), at(now + 1_000), 10);
        assert!(claim("a", 10).await.unwrap().is_empty(), "nothing to deliver yet");

        events(&store, 3).await;
        let mut first = claim("a", 10).await.unwrap();
        assert_eq!(first.len(), 1);
        assert!(claim("b", 20).await.unwrap().is_empty(), "held by the first task");
        // The first task dies: once its lease runs out, another takes the endpoint.
        let second = claim("b", 1_011).await.unwrap().pop().expect("taken again");
        let late = first.pop().unwrap();
        assert!(
            !store
                .record_progress("whk_1", &late.lease, progress(5, vec![], at(1_020)))
                .await
                .unwrap(),
            "a lapsed lease writes no progress"
        );

        // A replay while the second task works: its batch is not kept, its lease is let go.
        let replayed = store
            .replay_webhook("whk_1".into(), FeedCursor::at(3), at(1_030))
            .await
            .unwrap();
        assert!(matches!(replayed, Replayed::Done(ref e) if e.delivered_through == FeedCursor::at(3)));
        assert!(
            claim("c", 1_040).await.unwrap().is_empty(),
            "the second task finishes first"
        );
        let done = progress(5, vec![delivered(4, at(1_050)), delivered(5, at(1_050))], at(1_050));
        assert!(!store.record_progress("whk_1", &second.lease, done).await.unwrap());
        let third = claim("c", 1_060)
            .await
            .unwrap()
            .pop()
            .expect("free after the stale batch");
        assert_eq!(third.endpoint.delivered_through, FeedCursor::at(3), "the replay stands");
        assert_eq!(store.webhook_deliveries("whk_1", 10).await.unwrap().unwrap().len(), 2);

        assert!(
            store
                .record_progress(
                    "whk_1",
                    &third.lease,
                    progress(5, vec![delivered(4, at(1_070))], at(1_070))
                )
                .await
                .unwrap()
        );
        let listed = store.webhooks().await.unwrap();
        assert_eq!(listed[0].delivered_through, FeedCursor::at(5));
        assert!(claim("d", 1_080).await.unwrap().is_empty(), "caught up");

        // A deleted endpoint keeps nothing of a batch under way.
        events(&store, 1).await;
        let fourth = claim("d", 1_090).await.unwrap().pop().unwrap();
        assert!(store.delete_webhook("whk_1".into()).await.unwrap());
        assert!(
            !store
                .record_progress(
                    "whk_1",
                    &fourth.lease,
                    progress(6, vec![delivered(6, at(1_100))], at(1_100))
                )
                .await
                .unwrap()
        );
        assert_eq!(store.webhook_deliveries("whk_1", 10).await.unwrap(), None);
        assert_eq!(store.count_deliveries().await, 0);
    }

    impl Store {
        async fn count_deliveries(&self) -> i64 {
            query("SELECT count(*) AS n FROM webhook_deliveries")
                .fetch_one(self.reader())
                .await
                .unwrap()
                .try_get("n")
                .unwrap()
        }
    }
}
