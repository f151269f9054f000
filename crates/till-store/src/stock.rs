//! Stock on hand per store and article.
//!
//! On SQLite a sale appends its moves to `stock_moves` instead of updating `stock`: updating in
//! place rewrote one page of `stock` per article sold in every commit, a third of the pages a
//! commit wrote. The moves are folded into `stock` about once a second, in one transaction of
//! the writer (which is the only writer), and reads add the moves not yet folded. PostgreSQL
//! updates `stock` in place and has no moves to add.

use crate::db::Store;
use crate::error::StoreError;
use crate::sql::{Conn, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
use till_core::ids::{SkuId, StoreId};
use till_core::instant::{from_micros, to_micros};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StockLevel {
    pub store_id: StoreId,
    pub sku_id: SkuId,
    pub on_hand: i64,
    pub updated_at: Timestamp,
}

struct PutStock {
    store_id: StoreId,
    sku_id: SkuId,
    on_hand: i64,
    now: i64,
}

impl Store {
    /// Sets the counted quantity. The store and the article must exist.
    pub async fn put_stock(
        &self,
        store_id: StoreId,
        sku_id: SkuId,
        on_hand: i64,
        now: Timestamp,
    ) -> Result<StockLevel, StoreError> {
        let input = PutStock {
            store_id,
            sku_id,
            on_hand,
            now: to_micros(now),
        };
        self.write(input, |c, i| Box::pin(put_stock(c, i))).await
    }

    /// `None` when no quantity was ever recorded or moved for the pair.
    pub async fn get_stock(&self, store_id: &StoreId, sku_id: &SkuId) -> Result<Option<StockLevel>, StoreError> {
        let row = query(
            "SELECT (SELECT on_hand FROM stock WHERE store_id = $1 AND sku_id = $2) AS counted, \
                    (SELECT updated_at FROM stock WHERE store_id = $1 AND sku_id = $2) AS counted_at, \
                    (SELECT CAST(SUM(delta) AS BIGINT) FROM stock_moves WHERE store_id = $1 AND sku_id = $2) AS moved, \
                    (SELECT MAX(at) FROM stock_moves WHERE store_id = $1 AND sku_id = $2) AS moved_at",
        )
        .bind(store_id.as_str())
        .bind(sku_id.as_str())
        .fetch_one(self.reader())
        .await?;
        let counted: Option<i64> = row.try_get("counted")?;
        let counted_at: Option<i64> = row.try_get("counted_at")?;
        let moved: Option<i64> = row.try_get("moved")?;
        let moved_at: Option<i64> = row.try_get("moved_at")?;
        if counted.is_none() && moved.is_none() {
            return Ok(None);
        }
        let on_hand = counted
            .unwrap_or(0)
            .checked_add(moved.unwrap_or(0))
            .ok_or_else(|| StoreError::Corrupt(format!("the stock of {sku_id} overflows")))?;
        Ok(Some(StockLevel {
            store_id: store_id.clone(),
            sku_id: sku_id.clone(),
            on_hand,
            updated_at: from_micros(counted_at.max(moved_at).unwrap_or_default()),
        }))
    }

    /// Folds the moves appended since the last fold into `stock` (SQLite), and answers
    /// whether there were any.
    pub async fn fold_stock_moves(&self) -> Result<bool, StoreError> {
        let pending = query("SELECT EXISTS (SELECT 1 FROM stock_moves) AS pending")
            .fetch_one(self.reader())
            .await?;
        if !pending.try_get::<bool>("pending")? {
            return Ok(false);
        }
        self.write((), |c, _| fold_moves(c)).await?;
        Ok(true)
    }
}

/// Every move into `stock`, then the ledger emptied, in the caller's transaction. The writer
/// is the only one appending moves, so none arrives between the two statements.
fn fold_moves(conn: &mut Conn) -> BoxFuture<'_, Result<(), StoreError>> {
    Box::pin(async move {
        // `WHERE true` tells SQLite's parser that ON CONFLICT belongs to the INSERT.
        query(
            "INSERT INTO stock (store_id, sku_id, on_hand, updated_at) \
             SELECT store_id, sku_id, CAST(SUM(delta) AS BIGINT), MAX(at) FROM stock_moves WHERE true \
             GROUP BY store_id, sku_id \
             ON CONFLICT (store_id, sku_id) DO UPDATE SET on_hand = stock.on_hand + excluded.on_hand, \
                 updated_at = CASE WHEN excluded.updated_at > stock.updated_at \
                     THEN excluded.updated_at ELSE stock.updated_at END",
        )
        .execute(&mut *conn)
        .await?;
        query("DELETE FROM stock_moves").execute(&mut *conn).await?;
        Ok(())
    })
}

/// How often the ledger is folded. Each fold rewrites the stock pages of the articles sold
/// since the last (a few hundred pages at most) in one job of the writer. Folding four times
/// a second measured the same as once (throughput and p99), so the fewer rewrites it is.
const FOLD_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// Folds the stock ledger every [`FOLD_INTERVAL`] for as long as the store is open.
pub(crate) async fn keep_folding(store: std::sync::Weak<crate::db::Inner>) {
    loop {
        tokio::time::sleep(FOLD_INTERVAL).await;
        let Some(store) = Store::upgrade(&store) else {
            return;
        };
        if let Err(error) = store.fold_stock_moves().await {
            tracing::warn!(%error, "stock moves could not be folded; trying again");
        }
    }
}

fn put_stock<'a>(conn: &'a mut Conn, input: &'a PutStock) -> BoxFuture<'a, Result<StockLevel, StoreError>> {
    Box::pin(async move {
        let store = query("SELECT 1 FROM stores WHERE store_id = $1")
            .bind(input.store_id.as_str())
            .fetch_optional(&mut *conn)
            .await?;
        if store.is_none() {
            return Err(StoreError::NotFound("store"));
        }
        let sku = query("SELECT 1 FROM skus WHERE sku_id = $1")
            .bind(input.sku_id.as_str())
            .fetch_optional(&mut *conn)
            .await?;
        if sku.is_none() {
            return Err(StoreError::NotFound("article"));
        }
        // A count supersedes the moves before it.
        query("DELETE FROM stock_moves WHERE store_id = $1 AND sku_id = $2")
            .bind(input.store_id.as_str())
            .bind(input.sku_id.as_str())
            .execute(&mut *conn)
            .await?;
        query(
            "INSERT INTO stock (store_id, sku_id, on_hand, updated_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (store_id, sku_id) DO UPDATE SET on_hand = excluded.on_hand, updated_at = excluded.updated_at",
        )
        .bind(input.store_id.as_str())
        .bind(input.sku_id.as_str())
        .bind(input.on_hand)
        .bind(input.now)
        .execute(&mut *conn)
        .await?;
        Ok(StockLevel {
            store_id: input.store_id.clone(),
            sku_id: input.sku_id.clone(),
            on_hand: input.on_hand,
            updated_at: from_micros(input.now),
        })
    })
}
