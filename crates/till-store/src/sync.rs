//! A store's snapshot for its tills (docs/sync.md), read in one read-only transaction: on
//! PostgreSQL at repeatable read, on SQLite on one connection whose WAL keeps the view it began
//! with. The feed's head is read first, in the same view: every event up to it is of a change
//! the reads after it see, and a change they do not see has an event after it.

use crate::catalog::{SELECT_SKUS, record};
use crate::coupons::{LIST_COUPONS, coupon_from_row};
use crate::db::Engine;
use crate::db::Store;
use crate::engine::sqlite::READER_MAP_BYTES;
use crate::error::StoreError;
use crate::page::Keyset;
use crate::promotions::stored_from_row;
use crate::sql::{Conn, query};
use crate::staff::{LIST_STAFF, staff_from_row};
use crate::store_prices::{READ_CHUNK, store_prices_on};
use crate::stores::{SELECT_STORE, store_from_row};
use jiff::Timestamp;
use till_app::storage::sync::{SnapshotArticle, SnapshotHead, SnapshotPart, Taken};
use till_core::events::FeedCursor;
use till_core::ids::{SkuId, StoreId};
use till_core::instant::to_micros;
use tokio::sync::mpsc::Sender;

/// Articles per page: one look-up of the store's prices each.
const PAGE: usize = READ_CHUNK;

impl Store {
    pub async fn store_snapshot(
        &self,
        store_id: &StoreId,
        now: Timestamp,
        parts: Sender<SnapshotPart>,
    ) -> Result<Taken, StoreError> {
        let store_id = store_id.clone();
        // Read only: the end keeps nothing, and the connection goes back to its pool clean. A
        // SQLite reader maps the database file for look-ups; a scan of every article through
        // that map would make the whole file resident in the node, so the snapshot reads
        // through SQLite's small page cache instead and memory stays flat.
        let (begin, end) = match self.engine() {
            Engine::Postgres => (
                "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY".to_owned(),
                "ROLLBACK".to_owned(),
            ),
            Engine::Sqlite => (
                "PRAGMA mmap_size = 0; BEGIN".to_owned(),
                format!("ROLLBACK; PRAGMA mmap_size = {READER_MAP_BYTES}"),
            ),
        };
        self.long_read(move |conn| {
            Box::pin(async move {
                conn.run_script(&begin).await?;
                let taken = read(conn, &store_id, now, &parts).await;
                let ended = conn.run_script(&end).await;
                let taken = taken?;
                ended?;
                Ok(taken)
            })
        })
        .await
    }
}

async fn read(
    conn: &mut Conn,
    store_id: &StoreId,
    now: Timestamp,
    parts: &Sender<SnapshotPart>,
) -> Result<Taken, StoreError> {
    let head: Option<i64> = query("SELECT position FROM feed_head")
        .fetch_optional(&mut *conn)
        .await?
        .map(|row| row.try_get::<Option<i64>>("position"))
        .transpose()?
        .flatten();
    let Some(store) = query(SELECT_STORE)
        .bind(store_id.as_str())
        .fetch_optional(&mut *conn)
        .await?
    else {
        return Ok(Taken::UnknownStore);
    };
    let head = SnapshotHead {
        cursor: FeedCursor::at(head.unwrap_or(0)),
        taken_at: now,
        store: store_from_row(&store)?,
    };
    if parts.send(SnapshotPart::Head(Box::new(head))).await.is_err() {
        return Ok(Taken::Abandoned);
    }

    let mut after: Option<SkuId> = None;
    loop {
        let rows = Keyset::binding(SELECT_SKUS, to_micros(now))
            .by_id("s.sku_id", after.as_ref().map(SkuId::as_str), PAGE)
            .fetch_all(&mut *conn)
            .await?;
        let records = rows.iter().map(|row| record(row, now)).collect::<Result<Vec<_>, _>>()?;
        let Some(last) = records.last() else { break };
        after = Some(last.item.sku_id.clone());
        let sku_ids: Vec<&SkuId> = records.iter().map(|r| &r.item.sku_id).collect();
        let mut own = store_prices_on(conn, store_id, &sku_ids).await?;
        let articles = records
            .into_iter()
            .map(|record| SnapshotArticle {
                own: own.remove(&record.item.sku_id).unwrap_or_default(),
                record,
            })
            .collect();
        if parts.send(SnapshotPart::Articles(articles)).await.is_err() {
            return Ok(Taken::Abandoned);
        }
        if rows.len() < PAGE {
            break;
        }
    }

    // Rules, coupons and staff are a back office's handful: one read each.
    let rules = query("SELECT rule, version, created_at, updated_at FROM promotions ORDER BY promotion_id")
        .fetch_all(&mut *conn)
        .await?;
    let rules = rules.iter().map(stored_from_row).collect::<Result<_, _>>()?;
    let coupons = query(format!("{LIST_COUPONS} ORDER BY code"))
        .fetch_all(&mut *conn)
        .await?;
    let coupons = coupons.iter().map(coupon_from_row).collect::<Result<_, _>>()?;
    let staff = query(format!("{LIST_STAFF} ORDER BY subject"))
        .fetch_all(&mut *conn)
        .await?;
    let staff = staff.iter().map(staff_from_row).collect::<Result<_, _>>()?;
    for part in [
        SnapshotPart::Promotions(rules),
        SnapshotPart::Coupons(coupons),
        SnapshotPart::Staff(staff),
    ] {
        if parts.send(part).await.is_err() {
            return Ok(Taken::Abandoned);
        }
    }
    Ok(Taken::Whole)
}
