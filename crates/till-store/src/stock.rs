//! Stock on hand per store and article.
//!
//! A sale's moves reach `stock` in one of two ways. Where one writer runs every unit in turn
//! (SQLite) it adds each into its article's row. Where writers run at once (PostgreSQL) they are
//! appended to `stock_moves`, and each node folds them into `stock` about once a second (the
//! stock fold, started with the store's maintenance): an update in place would hold the
//! article's row lock until the sale committed, so every sale of a popular article, on every
//! node, would wait for the one before it. A level read meanwhile is the article's row plus its
//! moves not yet folded.

use crate::batch::{Batch, Param, Shapes};
use crate::catalog::placeholders;
use crate::db::Store;
use crate::engine::Writers;
use crate::error::StoreError;
use crate::feed::{self, NewEvent};
use crate::sql::{Conn, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
use till_core::events::EventType;
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

    /// `None` when no quantity was ever recorded for the pair. One statement, so one snapshot:
    /// a fold removes moves and adds them to the row in one commit, seen whole or not at all.
    pub async fn get_stock(&self, store_id: &StoreId, sku_id: &SkuId) -> Result<Option<StockLevel>, StoreError> {
        let row = query(
            "SELECT count(*) AS found, CAST(sum(on_hand) AS BIGINT) AS on_hand, max(updated_at) AS updated_at \
             FROM (SELECT on_hand, updated_at FROM stock WHERE store_id = $1 AND sku_id = $2 \
                 UNION ALL SELECT delta, moved_at FROM stock_moves WHERE store_id = $1 AND sku_id = $2) AS level",
        )
        .bind(store_id.as_str())
        .bind(sku_id.as_str())
        .fetch_one(self.reader())
        .await?;
        if row.try_get::<i64>("found")? == 0 {
            return Ok(None);
        }
        Ok(Some(StockLevel {
            store_id: store_id.clone(),
            sku_id: sku_id.clone(),
            on_hand: row.try_get("on_hand")?,
            updated_at: from_micros(row.try_get("updated_at")?),
        }))
    }

    /// Adds the moves queued where writers run at once into `stock` and deletes them, at most
    /// [`FOLD_LIMIT`] at a time; answers how many it folded (none where one writer updates
    /// `stock` in place). The store's maintenance runs it about once a second.
    pub async fn fold_stock_moves(&self) -> Result<u64, StoreError> {
        self.database().fold_stock_moves().await
    }
}

pub use crate::engine::FOLD_LIMIT;

/// Rows per multi-row insert: 2 parameters a row, far below every limit.
const ROWS_PER_INSERT: usize = 200;

/// Row counts whose statement text is kept once built; longer carts build theirs each time.
const KEPT_SHAPES: usize = 65;

static MOVES_IN_PLACE: Shapes<KEPT_SHAPES> = Shapes::new(|count| {
    format!(
        "INSERT INTO stock (store_id, sku_id, on_hand, updated_at) VALUES {} \
         ON CONFLICT (store_id, sku_id) DO UPDATE SET on_hand = stock.on_hand + excluded.on_hand, \
             updated_at = excluded.updated_at",
        rows_with(count, 2, "$1", "$2")
    )
});

static MOVES_QUEUED: Shapes<KEPT_SHAPES> = Shapes::new(|count| {
    format!(
        "INSERT INTO stock_moves (store_id, sku_id, delta, moved_at) VALUES {}",
        rows_with(count, 2, "$1", "$2")
    )
});

/// Queues a sale's stock moves, one statement for every article: in place with one writer,
/// into `stock_moves` where writers run at once (see the module's comment).
pub(crate) fn push_moves(batch: &mut Batch, writers: Writers, store_id: &StoreId, moves: &[(SkuId, i64)], now: i64) {
    let shapes = match writers {
        Writers::One => &MOVES_IN_PLACE,
        Writers::Many => &MOVES_QUEUED,
    };
    for chunk in moves.chunks(ROWS_PER_INSERT) {
        let mut params: Vec<Param> = vec![store_id.as_str().into(), now.into()];
        for (sku, delta) in chunk {
            params.extend([sku.as_str().into(), (*delta).into()]);
        }
        batch.push(shapes.get(chunk.len()), params);
    }
}

/// Rows `($1, $sku, $delta, $2)`.
fn rows_with(count: usize, width: usize, store: &str, now: &str) -> String {
    (0..count)
        .map(|row| format!("({store}, {}, {now})", placeholders(3 + row * width, width)))
        .collect::<Vec<_>>()
        .join(", ")
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
        // The count stands for every move committed before it: those not yet folded go.
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
        let level = StockLevel {
            store_id: input.store_id.clone(),
            sku_id: input.sku_id.clone(),
            on_hand: input.on_hand,
            updated_at: from_micros(input.now),
        };
        NewEvent {
            kind: EventType::StockAdjusted,
            occurred_at: input.now,
            store_id: Some(input.store_id.as_str()),
            register_id: None,
            subject: input.sku_id.as_str(),
            data: Some(feed::stock_adjusted(&level)),
        }
        .record(conn)
        .await?;
        Ok(level)
    })
}
