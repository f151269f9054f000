//! Stock on hand per store and article, and the ledger of every movement that changed it
//! (DESIGN.md section 16).
//!
//! Every change of stock is a row of `stock_movements` with its reason and reference, written
//! with the change; an article's level is the sum of its movements. Reading a level does not
//! add the ledger up: it reads `stock`, which the same writes keep, in one of two ways. Where one
//! writer runs every unit in turn (SQLite) a movement is added into its article's row. Where
//! writers run at once (PostgreSQL) it is also appended to `stock_moves`, and each node folds
//! those into `stock` about once a second (the stock fold, started with the store's
//! maintenance): an update in place would hold the article's row lock until the sale committed,
//! so every sale of a popular article, on every node, would wait for the one before it. A level
//! read meanwhile is the article's row plus its moves not yet folded.
//!
//! A level is set (a count, an adjustment) by a movement of the difference between the level
//! wanted and the level the write sees, holding the article's row so that two settings take
//! turns; a sale committed meanwhile is not in what the write saw, and its own movement adds on
//! top. So no sale is ever lost to a count, on either engine.

use crate::batch::{Batch, Param, Shapes};
use crate::db::Store;
use crate::engine::Writers;
use crate::error::StoreError;
use crate::feed::{self, NewEvent};
use crate::page::Window;
use crate::sql::{Conn, Row, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
use till_core::events::EventType;
use till_core::ids::{SkuId, StoreId};
use till_core::instant::{from_micros, to_micros};
use till_core::stock::StockReason;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StockLevel {
    pub store_id: StoreId,
    pub sku_id: SkuId,
    pub on_hand: i64,
    pub updated_at: Timestamp,
}

/// One movement of the ledger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Movement {
    /// Increases with each movement written; on PostgreSQL two nodes' movements may commit out
    /// of this order.
    pub id: i64,
    pub store_id: StoreId,
    pub sku_id: SkuId,
    pub delta: i64,
    pub reason: StockReason,
    /// The sale's or return's transaction id, the count's or the transfer's id; none for an
    /// adjustment.
    pub reference: Option<String>,
    pub at: Timestamp,
}

/// A level set by a count or an adjustment: what the write saw and the movement it made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelSet {
    pub sku_id: SkuId,
    pub level: i64,
    pub previous: i64,
    pub delta: i64,
}

/// What moved stock, as its movements record it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cause<'a> {
    pub reason: StockReason,
    pub reference: Option<&'a str>,
}

struct PutStock {
    store_id: StoreId,
    sku_id: SkuId,
    on_hand: i64,
    now: i64,
}

impl Store {
    /// Sets the quantity on hand as an adjustment. The store and the article must exist.
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

    /// `None` when no quantity was ever recorded for the pair.
    pub async fn get_stock(&self, store_id: &StoreId, sku_id: &SkuId) -> Result<Option<StockLevel>, StoreError> {
        let mut conn = self.reader().acquire().await?;
        read_level(&mut conn, store_id, sku_id).await
    }

    /// The movements of an article in a store, oldest first, after the movement `window.after`.
    pub async fn stock_movements(
        &self,
        store_id: &StoreId,
        sku_id: &SkuId,
        window: &Window<i64>,
    ) -> Result<Vec<Movement>, StoreError> {
        let rows = query(
            "SELECT movement_id, delta, reason, reference, moved_at FROM stock_movements \
             WHERE store_id = $1 AND sku_id = $2 AND movement_id > $3 ORDER BY movement_id LIMIT $4",
        )
        .bind(store_id.as_str())
        .bind(sku_id.as_str())
        .bind(window.after.unwrap_or(0))
        .bind(i64::try_from(window.take).unwrap_or(i64::MAX))
        .fetch_all(self.reader())
        .await?;
        rows.iter().map(|row| movement(row, store_id, sku_id)).collect()
    }

    /// The last `count` movements of an article in a store, oldest first: the index by store,
    /// article and id read backwards.
    pub async fn latest_stock_movements(
        &self,
        store_id: &StoreId,
        sku_id: &SkuId,
        count: usize,
    ) -> Result<Vec<Movement>, StoreError> {
        let rows = query(
            "SELECT movement_id, delta, reason, reference, moved_at FROM stock_movements \
             WHERE store_id = $1 AND sku_id = $2 ORDER BY movement_id DESC LIMIT $3",
        )
        .bind(store_id.as_str())
        .bind(sku_id.as_str())
        .bind(i64::try_from(count).unwrap_or(i64::MAX))
        .fetch_all(self.reader())
        .await?;
        rows.iter().rev().map(|row| movement(row, store_id, sku_id)).collect()
    }

    /// Adds the moves queued where writers run at once into `stock` and deletes them, at most
    /// [`FOLD_LIMIT`] at a time; answers how many it folded (none where one writer updates
    /// `stock` in place). The store's maintenance runs it about once a second.
    pub async fn fold_stock_moves(&self) -> Result<u64, StoreError> {
        self.database().fold_stock_moves().await
    }
}

pub use crate::engine::FOLD_LIMIT;

fn movement(row: &Row, store_id: &StoreId, sku_id: &SkuId) -> Result<Movement, StoreError> {
    let reason: String = row.try_get("reason")?;
    Ok(Movement {
        id: row.try_get("movement_id")?,
        store_id: store_id.clone(),
        sku_id: sku_id.clone(),
        delta: row.try_get("delta")?,
        reason: StockReason::parse(&reason)
            .ok_or_else(|| StoreError::Corrupt(format!("a stock movement of reason {reason:?}")))?,
        reference: row.try_get("reference")?,
        at: from_micros(row.try_get("moved_at")?),
    })
}

/// The level of a pair: its row plus its moves not yet folded, in one statement, so one
/// snapshot (a fold removes moves and adds them to the row in one commit, seen whole or not at
/// all). `None` when no quantity was ever recorded for the pair.
pub(crate) async fn read_level(
    conn: &mut Conn,
    store_id: &StoreId,
    sku_id: &SkuId,
) -> Result<Option<StockLevel>, StoreError> {
    let row = query(
        "SELECT count(*) AS found, CAST(sum(on_hand) AS BIGINT) AS on_hand, max(updated_at) AS updated_at \
         FROM (SELECT on_hand, updated_at FROM stock WHERE store_id = $1 AND sku_id = $2 \
             UNION ALL SELECT delta, moved_at FROM stock_moves WHERE store_id = $1 AND sku_id = $2) AS level",
    )
    .bind(store_id.as_str())
    .bind(sku_id.as_str())
    .fetch_one(&mut *conn)
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

/// Sets the level of each article (in the order given: callers sort them, so that two writes
/// hold rows in one order) to `target`, with one movement each for `cause`, and answers what
/// each write saw. Holding the article's `stock` row first makes two settings of one article
/// take turns, and keeps a fold of the article's queued moves from landing between the look
/// and the movement.
pub(crate) async fn set_levels(
    conn: &mut Conn,
    store_id: &StoreId,
    targets: &[(SkuId, i64)],
    cause: Cause<'_>,
    now: i64,
) -> Result<Vec<LevelSet>, StoreError> {
    let mut set = Vec::with_capacity(targets.len());
    for (sku_id, target) in targets {
        query(
            "INSERT INTO stock (store_id, sku_id, on_hand, updated_at) VALUES ($1, $2, 0, $3) \
             ON CONFLICT (store_id, sku_id) DO UPDATE SET updated_at = stock.updated_at",
        )
        .bind(store_id.as_str())
        .bind(sku_id.as_str())
        .bind(now)
        .execute(&mut *conn)
        .await?;
        let previous = read_level(conn, store_id, sku_id)
            .await?
            .map_or(0, |level| level.on_hand);
        let delta = target
            .checked_sub(previous)
            .ok_or_else(|| StoreError::Corrupt("a stock level beyond every bound".into()))?;
        set.push(LevelSet {
            sku_id: sku_id.clone(),
            level: *target,
            previous,
            delta,
        });
    }
    let moves: Vec<(SkuId, i64)> = set.iter().map(|s| (s.sku_id.clone(), s.delta)).collect();
    let mut batch = Batch::default();
    push_moves(&mut batch, conn.writers(), store_id, &moves, cause, now);
    batch.run(conn).await?;
    Ok(set)
}

/// Rows per multi-row insert: at most 2 parameters a row, far below every limit.
const ROWS_PER_INSERT: usize = 200;

/// Row counts whose statement text is kept once built; longer carts build theirs each time.
const KEPT_SHAPES: usize = 65;

static MOVES_IN_PLACE: Shapes<KEPT_SHAPES> = Shapes::new(|count| {
    format!(
        "INSERT INTO stock (store_id, sku_id, on_hand, updated_at) VALUES {} \
         ON CONFLICT (store_id, sku_id) DO UPDATE SET on_hand = stock.on_hand + excluded.on_hand, \
             updated_at = excluded.updated_at",
        rows_with(count, 3, |sku, delta| format!("($1, {sku}, {delta}, $2)"))
    )
});

static MOVES_QUEUED: Shapes<KEPT_SHAPES> = Shapes::new(|count| {
    format!(
        "INSERT INTO stock_moves (store_id, sku_id, delta, moved_at) VALUES {}",
        rows_with(count, 3, |sku, delta| format!("($1, {sku}, {delta}, $2)"))
    )
});

static MOVEMENTS: Shapes<KEPT_SHAPES> = Shapes::new(|count| {
    format!(
        "INSERT INTO stock_movements (store_id, sku_id, delta, reason, reference, moved_at) VALUES {}",
        rows_with(count, 5, |sku, delta| format!("($1, {sku}, {delta}, $3, $4, $2)"))
    )
});

/// Queues the movements of one cause in a store, one statement for every article into the
/// ledger and one into the level: in place with one writer, into `stock_moves` where writers
/// run at once (see the module's comment).
pub(crate) fn push_moves(
    batch: &mut Batch,
    writers: Writers,
    store_id: &StoreId,
    moves: &[(SkuId, i64)],
    cause: Cause<'_>,
    now: i64,
) {
    let levels = match writers {
        Writers::One => &MOVES_IN_PLACE,
        Writers::Many => &MOVES_QUEUED,
    };
    for chunk in moves.chunks(ROWS_PER_INSERT) {
        let pairs = chunk
            .iter()
            .flat_map(|(sku, delta)| [Param::from(sku.as_str()), Param::from(*delta)]);
        let mut level_params: Vec<Param> = vec![store_id.as_str().into(), now.into()];
        level_params.extend(pairs.clone());
        batch.push(levels.get(chunk.len()), level_params);
        let mut ledger_params: Vec<Param> = vec![
            store_id.as_str().into(),
            now.into(),
            cause.reason.as_str().into(),
            cause.reference.into(),
        ];
        ledger_params.extend(pairs);
        batch.push(MOVEMENTS.get(chunk.len()), ledger_params);
    }
}

/// `count` rows, each `row` of the placeholders of its article and delta, numbered from
/// `first`.
fn rows_with(count: usize, first: usize, row: impl Fn(&str, &str) -> String) -> String {
    (0..count)
        .map(|i| {
            let sku = format!("${}", first + i * 2);
            let delta = format!("${}", first + i * 2 + 1);
            row(&sku, &delta)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn put_stock<'a>(conn: &'a mut Conn, input: &'a PutStock) -> BoxFuture<'a, Result<StockLevel, StoreError>> {
    Box::pin(async move {
        crate::stores::store_and_article_exist(conn, &input.store_id, &input.sku_id).await?;
        let cause = Cause {
            reason: StockReason::Adjustment,
            reference: None,
        };
        let targets = [(input.sku_id.clone(), input.on_hand)];
        set_levels(conn, &input.store_id, &targets, cause, input.now).await?;
        let level = StockLevel {
            store_id: input.store_id.clone(),
            sku_id: input.sku_id.clone(),
            on_hand: input.on_hand,
            updated_at: from_micros(input.now),
        };
        record_adjusted(conn, &level).await?;
        Ok(level)
    })
}

/// `stock.adjusted` in the feed: a level set to `level.on_hand` at `level.updated_at`.
pub(crate) async fn record_adjusted(conn: &mut Conn, level: &StockLevel) -> Result<(), StoreError> {
    NewEvent {
        kind: EventType::StockAdjusted,
        occurred_at: to_micros(level.updated_at),
        store_id: Some(level.store_id.as_str()),
        register_id: None,
        subject: level.sku_id.as_str(),
        data: Some(feed::stock_adjusted(level)),
    }
    .record(conn)
    .await
}
