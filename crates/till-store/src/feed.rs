//! The event feed (docs/events.md): an outbox row written in the transaction of each
//! business fact, read back in the order of its position.
//!
//! On SQLite the position is the row id, given by the one writer in commit order. On
//! PostgreSQL nodes commit concurrently, so a number given at insert would become visible out
//! of order and a reader that had gone past it would miss the event. There each event is
//! written without a position, and a sequencer numbers the committed ones after the highest
//! position given: one pass at a time across all nodes (an advisory lock), each in a
//! transaction that starts after the lock is held, so it sees every pass before it
//! (crates/till-store/src/engine/postgres/feed_sequencer.rs; docs/events.md). Readers see the
//! positions up to the feed's head (the view `feed_head`): on PostgreSQL the last one a
//! sequencer pass released once its commit had reached the standby.

use crate::batch::Batch;
use crate::db::Store;
use crate::error::StoreError;
use crate::packed;
use crate::sql::{Conn, Query, Row};
pub use till_app::storage::feed::{FeedEvent, MOST_EVENTS_READ};
use till_core::events::{EventType, FeedCursor};
use till_core::instant::from_micros;

/// An event as its fact's transaction records it.
#[derive(Clone, Debug)]
pub(crate) struct NewEvent<'a> {
    pub(crate) kind: EventType,
    pub(crate) occurred_at: i64,
    pub(crate) store_id: Option<&'a str>,
    pub(crate) register_id: Option<&'a str>,
    /// What the event is about: a transaction id, a session id, a promotion id.
    pub(crate) subject: &'a str,
    /// The event's data as JSON; `None` for a sale or a return, whose stored answer is the data
    /// (unless the answer tells a credit note's code: see `sales::push_sale`).
    pub(crate) data: Option<String>,
}

const RECORD_EVENT: &str =
    "INSERT INTO events (type, occurred_at, store_id, register_id, subject, data) VALUES ($1, $2, $3, $4, $5, $6)";

impl NewEvent<'_> {
    fn params(&self) -> Vec<crate::batch::Param> {
        vec![
            self.kind.as_str().into(),
            self.occurred_at.into(),
            self.store_id.into(),
            self.register_id.into(),
            self.subject.into(),
            self.data.as_deref().into(),
        ]
    }

    /// Queues the event with the rest of its fact's writes.
    pub(crate) fn push(&self, batch: &mut Batch) {
        batch.push(RECORD_EVENT, self.params());
    }

    /// Records the event in its fact's transaction.
    pub(crate) async fn record(&self, conn: &mut Conn) -> Result<(), StoreError> {
        Query::with_params(RECORD_EVENT, self.params())
            .execute(&mut *conn)
            .await?;
        Ok(())
    }
}

/// Articles per statement of [`record_catalog_changes`]: one parameter each.
const CHANGES_PER_STATEMENT: usize = 5000;

/// Records a `catalog.changed` event for each of `sku_ids`, written at `now`, in the write's
/// transaction: many rows per statement, the event's data made by the database from the one
/// value each row binds, so that an import of many articles stays quick.
pub(crate) async fn record_catalog_changes(conn: &mut Conn, sku_ids: &[&str], now: i64) -> Result<(), StoreError> {
    let kind = EventType::CatalogChanged.as_str();
    for chunk in sku_ids.chunks(CHANGES_PER_STATEMENT) {
        let rows = (0..chunk.len())
            .map(|n| format!("(${})", n + 1))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "INSERT INTO events (type, occurred_at, store_id, register_id, subject, data) \
             SELECT '{kind}', {now}, NULL, NULL, v.column1, '{{\"skuId\":\"' || v.column1 || '\"}}' \
             FROM (VALUES {rows}) AS v"
        );
        let params = chunk.iter().map(|sku_id| (*sku_id).into()).collect();
        Query::with_params(sql, params).execute(&mut *conn).await?;
    }
    Ok(())
}

impl Store {
    pub async fn events_after(
        &self,
        after: FeedCursor,
        limit: i64,
        types: &[EventType],
    ) -> Result<Vec<FeedEvent>, StoreError> {
        let filter: String = match types {
            [] => String::new(),
            _ => {
                let places: Vec<String> = (0..types.len()).map(|n| format!("${}", n + 3)).collect();
                format!(" AND e.type IN ({})", places.join(", "))
            }
        };
        let sql = format!(
            "SELECT e.seq, e.position, e.type, e.occurred_at, e.store_id, e.register_id, e.data, s.packed \
             FROM events e LEFT JOIN sales s ON e.data IS NULL AND s.transaction_id = e.subject \
             WHERE e.position > $1 AND e.position <= (SELECT position FROM feed_head){filter} \
             ORDER BY e.position LIMIT $2"
        );
        let mut read = Query::with_params(
            sql,
            vec![after.position().into(), limit.clamp(1, MOST_EVENTS_READ).into()],
        );
        for kind in types {
            read = read.bind(kind.as_str());
        }
        let rows = read.fetch_all(self.reader()).await?;
        rows.iter().map(event_of).collect()
    }

    /// Numbers the events committed without a position (PostgreSQL; SQLite numbers them as it
    /// writes them). Answers how many it numbered: none when another node is at it.
    pub async fn place_events(&self) -> Result<u64, StoreError> {
        self.database().place_events().await
    }
}

fn event_of(row: &Row) -> Result<FeedEvent, StoreError> {
    let kind: String = row.try_get("type")?;
    let kind = EventType::parse(&kind).ok_or_else(|| StoreError::Corrupt(format!("an event of type {kind:?}")))?;
    let data = match row.try_get::<Option<String>>("data")? {
        Some(data) => data,
        None => packed::response_of(row)?,
    };
    Ok(FeedEvent {
        id: row.try_get("seq")?,
        cursor: FeedCursor::at(row.try_get("position")?),
        kind,
        occurred_at: from_micros(row.try_get("occurred_at")?),
        store_id: row.try_get("store_id")?,
        register_id: row.try_get("register_id")?,
        data,
    })
}

/// The data of an event whose fact keeps no answer of its own: one of the documents of
/// till-core, with the names and shapes the API gives the same records.
pub(crate) fn data_of(document: &impl serde::Serialize) -> Result<String, StoreError> {
    serde_json::to_string(document).map_err(|e| StoreError::Corrupt(format!("an event's data: {e}")))
}
