//! Stock on hand per store and article, and the ledger of every movement that changed it
//! (docs/stock.md).
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
//!
//! An article's movements are found through an index by store and article where writers run
//! at once; where one writer runs, through the article's `stock` row, which lists the ids of
//! its latest movements, and the chunks those lists are moved into once they hold 32 (the
//! schema's migration 0021 says why and how).

use crate::batch::{Batch, Param, Shapes};
use crate::db::Store;
use crate::engine::Writers;
use crate::error::StoreError;
use crate::feed::{self, NewEvent};
use crate::page::Window;
use crate::sql::{Conn, Row, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
use till_core::documents::StockAdjusted;
use till_core::events::EventType;
use till_core::ids::{SkuId, StoreId};
use till_core::instant::{from_micros, to_micros};
use till_core::stock::StockReason;

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

    pub async fn get_stock(&self, store_id: &StoreId, sku_id: &SkuId) -> Result<Option<StockLevel>, StoreError> {
        let mut conn = self.reader().acquire().await?;
        read_level(&mut conn, store_id, sku_id).await
    }

    pub async fn stock_movements(
        &self,
        store_id: &StoreId,
        sku_id: &SkuId,
        window: &Window<i64>,
    ) -> Result<Vec<Movement>, StoreError> {
        let take = i64::try_from(window.take).unwrap_or(i64::MAX);
        let read = match self.writers() {
            Writers::One => query(PAGE_FROM_STOCK_ROWS),
            Writers::Many => query(PAGE_FROM_INDEX),
        };
        let read = read
            .bind(store_id.as_str())
            .bind(sku_id.as_str())
            .bind(window.after.unwrap_or(0))
            .bind(take);
        let read = match self.writers() {
            Writers::One => read.bind(chunks_holding(take)),
            Writers::Many => read,
        };
        let rows = read.fetch_all(self.reader()).await?;
        rows.iter().map(|row| movement(row, store_id, sku_id)).collect()
    }

    pub async fn latest_stock_movements(
        &self,
        store_id: &StoreId,
        sku_id: &SkuId,
        count: usize,
    ) -> Result<Vec<Movement>, StoreError> {
        let count = i64::try_from(count).unwrap_or(i64::MAX);
        let read = match self.writers() {
            Writers::One => query(LATEST_FROM_STOCK_ROWS),
            Writers::Many => query(LATEST_FROM_INDEX),
        };
        let read = read.bind(store_id.as_str()).bind(sku_id.as_str()).bind(count);
        let read = match self.writers() {
            Writers::One => read.bind(chunks_holding(count)),
            Writers::Many => read,
        };
        let rows = read.fetch_all(self.reader()).await?;
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
pub use till_app::storage::stock::{Movement, StockLevel};

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

/// Where one writer updates `stock` in place (SQLite), the fewest ids a chunk of an article's
/// ledger holds (the schema's migration 0021 says how the chunks and lists are kept).
const CHUNK: i64 = 32;

/// How many chunks hold at least `ids` ids after any id: the one holding that id, then enough
/// full ones.
fn chunks_holding(ids: i64) -> i64 {
    ids.div_euclid(CHUNK).saturating_add(2)
}

/// Where writers run at once: a page of the ledger through its index by article.
const PAGE_FROM_INDEX: &str = "SELECT movement_id, delta, reason, reference, moved_at FROM stock_movements \
     WHERE store_id = $1 AND sku_id = $2 AND movement_id > $3 ORDER BY movement_id LIMIT $4";

/// Where one writer runs: the ids listed by the article's chunks after `$3` (at most `$5`
/// chunks) and by its `stock` row, in one statement and so one snapshot.
const PAGE_FROM_STOCK_ROWS: &str = "SELECT m.movement_id, m.delta, m.reason, m.reference, m.moved_at \
     FROM (SELECT j.value AS id FROM (SELECT ids FROM stock_movement_chunks \
               WHERE store_id = $1 AND sku_id = $2 AND last_id > $3 ORDER BY last_id LIMIT $5) AS c, \
               json_each('[' || c.ids || ']') AS j \
           UNION ALL SELECT j.value FROM stock AS s, json_each('[' || s.recent || ']') AS j \
               WHERE s.store_id = $1 AND s.sku_id = $2) AS listed \
     JOIN stock_movements AS m ON m.movement_id = listed.id \
     WHERE listed.id > $3 ORDER BY listed.id LIMIT $4";

/// The last `$3` movements of an article, newest first.
const LATEST_FROM_INDEX: &str = "SELECT movement_id, delta, reason, reference, moved_at FROM stock_movements \
     WHERE store_id = $1 AND sku_id = $2 ORDER BY movement_id DESC LIMIT $3";

const LATEST_FROM_STOCK_ROWS: &str = "SELECT m.movement_id, m.delta, m.reason, m.reference, m.moved_at \
     FROM (SELECT j.value AS id FROM (SELECT ids FROM stock_movement_chunks \
               WHERE store_id = $1 AND sku_id = $2 ORDER BY last_id DESC LIMIT $4) AS c, \
               json_each('[' || c.ids || ']') AS j \
           UNION ALL SELECT j.value FROM stock AS s, json_each('[' || s.recent || ']') AS j \
               WHERE s.store_id = $1 AND s.sku_id = $2) AS listed \
     JOIN stock_movements AS m ON m.movement_id = listed.id \
     ORDER BY listed.id DESC LIMIT $3";

/// Where one writer runs: the levels and lists of the articles moved by the statement just
/// before, [`MOVEMENTS`] of `count` rows, one row per article, whose ids are the last ones it
/// wrote: the last `last_insert_rowid()`, each row's `count - 1 - i` before it (a row id is the
/// table's largest plus one). The values are its own: the store `$1`, the time `$2`, then each
/// movement's article and delta from `$3`. An article whose list holds 32 ids or more has it
/// moved into a chunk by the trigger `stock_list_full` (migration 0022) as this starts its list
/// again. Built for articles each moved once; see [`levels_of`] for the others.
static LEVELS: Shapes<KEPT_SHAPES> = Shapes::new(|count| {
    let positions: Vec<Vec<usize>> = (0..count).map(|i| vec![i]).collect();
    levels_text(count, &positions)
});

/// The tail of every [`LEVELS`] statement: a movement adds into its article's row and its ids
/// onto the row's list, started again where it was full.
const LEVELS_UPSERT: &str = " ON CONFLICT (store_id, sku_id) DO UPDATE SET on_hand = stock.on_hand + excluded.on_hand, \
         updated_at = excluded.updated_at, \
         recent = CASE WHEN stock.recent_count >= 32 OR stock.recent = '' THEN excluded.recent \
             ELSE stock.recent || ',' || excluded.recent END, \
         recent_count = CASE WHEN stock.recent_count >= 32 THEN excluded.recent_count \
             ELSE stock.recent_count + excluded.recent_count END, \
         recent_last = excluded.recent_last";

/// The [`LEVELS`] statement for `count` movements whose articles are `articles`, each the
/// positions of its movements in order, so that each article's row is written once.
fn levels_text(count: usize, articles: &[Vec<usize>]) -> String {
    let id = |position: usize| format!("(last_insert_rowid() - {})", count - 1 - position);
    let rows = articles
        .iter()
        .map(|positions| {
            let first = positions[0];
            let on_hand = positions
                .iter()
                .map(|p| format!("${}", 4 + p * 2))
                .collect::<Vec<_>>()
                .join(" + ");
            let ids = positions.iter().map(|p| id(*p)).collect::<Vec<_>>().join(" || ',' || ");
            let last = id(positions[positions.len() - 1]);
            format!(
                "($1, ${}, {on_hand}, $2, CAST({ids} AS TEXT), {}, {last})",
                3 + first * 2,
                positions.len()
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "INSERT INTO stock (store_id, sku_id, on_hand, updated_at, recent, recent_count, recent_last) VALUES {rows}{LEVELS_UPSERT}"
    )
}

/// The [`LEVELS`] statement for `moves`: the kept one when each article moves once, else one
/// built for them, the articles in the order they first move.
fn levels_of(moves: &[(SkuId, i64)]) -> std::borrow::Cow<'static, str> {
    let mut articles: Vec<(&SkuId, Vec<usize>)> = Vec::with_capacity(moves.len());
    for (position, (sku, _)) in moves.iter().enumerate() {
        match articles.iter_mut().find(|(known, _)| *known == sku) {
            Some((_, positions)) => positions.push(position),
            None => articles.push((sku, vec![position])),
        }
    }
    if articles.len() == moves.len() {
        return LEVELS.get(moves.len());
    }
    let positions: Vec<Vec<usize>> = articles.into_iter().map(|(_, positions)| positions).collect();
    std::borrow::Cow::Owned(levels_text(moves.len(), &positions))
}

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

/// Queues the movements of one cause in a store: one statement for every article into the
/// ledger, then their levels. Where one writer runs, the levels are added into the articles'
/// `stock` rows with the ids of the movements just written (the ledger's index by article);
/// where writers run at once, queued into `stock_moves` (see the module's comment).
pub(crate) fn push_moves(
    batch: &mut Batch,
    writers: Writers,
    store_id: &StoreId,
    moves: &[(SkuId, i64)],
    cause: Cause<'_>,
    now: i64,
) {
    for chunk in moves.chunks(ROWS_PER_INSERT) {
        let pairs = chunk
            .iter()
            .flat_map(|(sku, delta)| [Param::from(sku.as_str()), Param::from(*delta)]);
        let mut ledger_params: Vec<Param> = vec![
            store_id.as_str().into(),
            now.into(),
            cause.reason.as_str().into(),
            cause.reference.into(),
        ];
        ledger_params.extend(pairs.clone());
        batch.push(MOVEMENTS.get(chunk.len()), ledger_params);
        match writers {
            Writers::One => {
                let mut level_params: Vec<Param> = vec![store_id.as_str().into(), now.into()];
                level_params.extend(pairs);
                batch.push(levels_of(chunk), level_params);
            }
            Writers::Many => {
                let mut level_params: Vec<Param> = vec![store_id.as_str().into(), now.into()];
                level_params.extend(pairs);
                batch.push(MOVES_QUEUED.get(chunk.len()), level_params);
            }
        }
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
        data: Some(feed::data_of(&StockAdjusted {
            store_id: &level.store_id,
            sku_id: &level.sku_id,
            on_hand: level.on_hand,
            updated_at: level.updated_at,
        })?),
    }
    .record(conn)
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::scratch_sqlite_store;

    fn ids(movements: &[Movement]) -> Vec<i64> {
        movements.iter().map(|m| m.id).collect()
    }

    /// Every movement of `sku` in `s1`, read `take` at a time.
    async fn paged(store: &Store, sku: &SkuId, take: usize) -> Vec<i64> {
        let (mut all, mut after) = (Vec::new(), None);
        loop {
            let page = store
                .stock_movements(&StoreId::from_trusted("s1".into()), sku, &Window { after, take })
                .await
                .unwrap();
            assert!(page.len() <= take);
            all.extend(ids(&page));
            if page.len() < take {
                return all;
            }
            after = page.last().map(|m| m.id);
        }
    }

    /// Ledgers recorded before SQLite kept their index in the `stock` rows (migration 0021) read
    /// the same after it, at every page size, and go on as movements are added: across the
    /// chunks the rows fill, and for an article whose row lists none.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_ledger_reads_the_same_across_its_chunks_and_the_migration_that_made_them() {
        let dir = tempfile::tempdir().unwrap();
        let (path, store) = scratch_sqlite_store(dir.path()).await;
        let mut before = crate::migrations::sqlite();
        before.migrations = before.migrations[..20].to_vec().into();
        let writer = store.database().sqlite_writer().expect("a SQLite store");
        writer.migrate(&before).await.unwrap();
        let (mug, pen, cup) = (
            SkuId::from_trusted("mug".into()),
            SkuId::from_trusted("pen".into()),
            SkuId::from_trusted("cup".into()),
        );
        {
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.execute_batch(
                "INSERT INTO stores (store_id, name, timezone, currency, created_at, updated_at) \
                     VALUES ('s1', 'S1', 'Europe/Paris', 'EUR', 0, 0); \
                 INSERT INTO skus (sku_id, name, price_cents, vat_rate, created_at, updated_at) \
                     VALUES ('mug', 'Mug', 100, 2000, 0, 0), ('pen', 'Pen', 100, 2000, 0, 0), ('cup', 'Cup', 100, 2000, 0, 0); \
                 INSERT INTO stock (store_id, sku_id, on_hand, updated_at) \
                     VALUES ('s1', 'mug', 70, 0), ('s1', 'pen', 5, 0), ('s1', 'cup', 0, 0);",
            )
            .unwrap();
            // 70 for the mug (two full chunks and a list of 6), 5 for the pen between them.
            for i in 0..75 {
                let sku = if i % 15 == 7 { "pen" } else { "mug" };
                conn.execute(
                    "INSERT INTO stock_movements (store_id, sku_id, delta, reason, reference, moved_at) \
                     VALUES ('s1', ?1, 1, 'adjustment', NULL, ?2)",
                    rusqlite::params![sku, i],
                )
                .unwrap();
            }
        }
        store.migrate().await.unwrap();
        let mug_before = paged(&store, &mug, 1000).await;
        assert_eq!(mug_before.len(), 70);
        assert_eq!(paged(&store, &pen, 1000).await.len(), 5);
        assert_eq!(paged(&store, &cup, 1000).await, Vec::<i64>::new());
        for take in [1, 7, 31, 32, 33, 64, 65] {
            assert_eq!(paged(&store, &mug, take).await, mug_before, "pages of {take}");
        }
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        for level in 0..40 {
            for sku in [&mug, &cup] {
                store
                    .put_stock(StoreId::from_trusted("s1".into()), sku.clone(), level, now)
                    .await
                    .unwrap();
            }
        }
        let mug_after = paged(&store, &mug, 1000).await;
        assert_eq!(mug_after[..70], mug_before[..]);
        assert_eq!(mug_after.len(), 110);
        assert!(mug_after.windows(2).all(|w| w[0] < w[1]));
        for take in [1, 5, 32, 33, 100] {
            assert_eq!(paged(&store, &mug, take).await, mug_after, "pages of {take}");
            assert_eq!(paged(&store, &cup, take).await.len(), 40, "pages of {take}");
        }
        let s1 = StoreId::from_trusted("s1".into());
        for count in [1, 6, 32, 33, 70, 200] {
            let latest = store.latest_stock_movements(&s1, &mug, count).await.unwrap();
            assert_eq!(
                ids(&latest),
                mug_after[mug_after.len().saturating_sub(count)..],
                "the last {count}"
            );
        }
        let level = store.get_stock(&s1, &mug).await.unwrap().unwrap();
        assert_eq!(level.on_hand, 39, "the level is the last one set");
        store.close().await;
    }

    /// Where one writer runs, an article moved twice by one write has its row written once, with
    /// the sum of its deltas and both ids in order; a full list goes into a chunk as the write
    /// starts it again (the trigger of migration 0022), and a row not yet there is made.
    #[tokio::test]
    async fn an_article_moved_twice_in_one_write_is_written_once_and_a_full_list_moves_to_a_chunk() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::db::migrated_scratch_database(dir.path()).await;
        conn.execute_batch(
            "INSERT INTO stores (store_id, name, timezone, currency, created_at, updated_at) \
                 VALUES ('s1', 'S1', 'Europe/Paris', 'EUR', 0, 0); \
             INSERT INTO skus (sku_id, name, price_cents, vat_rate, created_at, updated_at) \
                 VALUES ('mug', 'Mug', 100, 2000, 0, 0), ('pen', 'Pen', 100, 2000, 0, 0), ('cup', 'Cup', 100, 2000, 0, 0);",
        )
        .unwrap();
        let full: Vec<String> = (1..=32).map(|id| id.to_string()).collect();
        conn.execute(
            "INSERT INTO stock (store_id, sku_id, on_hand, updated_at, recent, recent_count, recent_last) \
             VALUES ('s1', 'mug', 100, 0, ?1, 32, 32), ('s1', 'pen', 10, 0, '7', 1, 7)",
            [full.join(",")],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO stock_movements (movement_id, store_id, sku_id, delta, reason, reference, moved_at) \
             VALUES (40, 's1', 'old', 1, 'adjustment', NULL, 0)",
            [],
        )
        .unwrap();
        let moves = [
            (SkuId::from_trusted("mug".into()), -1),
            (SkuId::from_trusted("pen".into()), -2),
            (SkuId::from_trusted("mug".into()), -3),
            (SkuId::from_trusted("cup".into()), 5),
        ];
        let mut ledger: Vec<rusqlite::types::Value> = vec![
            "s1".to_owned().into(),
            9_i64.into(),
            "sale".to_owned().into(),
            "t1".to_owned().into(),
        ];
        let mut levels: Vec<rusqlite::types::Value> = vec!["s1".to_owned().into(), 9_i64.into()];
        for (sku, delta) in &moves {
            for params in [&mut ledger, &mut levels] {
                params.push(sku.as_str().to_owned().into());
                params.push((*delta).into());
            }
        }
        let run = |sql: &str, params: &[rusqlite::types::Value]| {
            conn.execute(
                &crate::engine::sql::numbered_placeholders(sql),
                rusqlite::params_from_iter(params),
            )
            .unwrap()
        };
        run(&MOVEMENTS.get(moves.len()), &ledger);
        assert_eq!(run(&levels_of(&moves), &levels), 3, "one row per article");
        let rows: Vec<(String, i64, i64, String, i64, i64)> = conn
            .prepare("SELECT sku_id, on_hand, updated_at, recent, recent_count, recent_last FROM stock ORDER BY sku_id")
            .unwrap()
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            rows,
            [
                ("cup".to_owned(), 5, 9, "44".to_owned(), 1, 44),
                ("mug".to_owned(), 96, 9, "41,43".to_owned(), 2, 43),
                ("pen".to_owned(), 8, 9, "7,42".to_owned(), 2, 42),
            ]
        );
        let chunks: Vec<(String, i64, String)> = conn
            .prepare("SELECT sku_id, last_id, ids FROM stock_movement_chunks")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(chunks, [("mug".to_owned(), 32, full.join(","))]);
    }

    /// Where one writer runs, a movement reaches its article's row and a read its article's
    /// chunks by their keys: none of these statements reads a whole table.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_ledger_in_the_stock_rows_is_reached_by_key() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::db::migrated_scratch_database(dir.path()).await;
        let levels = LEVELS.get(3);
        let statements: [(&str, &[&str]); 3] = [
            (&levels, &["s1", "0", "mug", "1", "pen", "1", "cup", "1"]),
            (PAGE_FROM_STOCK_ROWS, &["s1", "mug", "0", "50", "3"]),
            (LATEST_FROM_STOCK_ROWS, &["s1", "mug", "50", "3"]),
        ];
        for (sql, params) in statements {
            let plan = crate::db::query_plan(&conn, sql, params).join("\n");
            for table in ["stock", "stock_movement_chunks"] {
                assert!(
                    !plan.contains(&format!("SCAN {table}\n")) && !plan.ends_with(&format!("SCAN {table}")),
                    "{sql}\n{plan}"
                );
            }
            assert!(
                !plan.contains("SCAN s\n") && !plan.contains("SCAN m\n"),
                "{sql}\n{plan}"
            );
        }
    }
}
