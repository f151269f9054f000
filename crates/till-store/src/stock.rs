//! Stock on hand per store and article, and the ledger of every movement that changed it
//! (docs/stock.md).
//!
//! Every change of stock is a row of `stock_movements` with its reason and reference, written
//! with the change; an article's level is the sum of its movements. Reading a level does not
//! add the whole ledger up: it reads the article's `stock` row, into which the movements are
//! folded in the background, plus its movements not folded yet. A sale writes its movements
//! only: updating each article's row in place cost every sale a random page per article (the
//! SQLite writer's largest statement and most of its log), and on PostgreSQL held the row's
//! lock until the sale committed, so every sale of a popular article, on every node, waited
//! for the one before it.
//!
//! - Where one writer runs every unit in turn (SQLite), movement ids are taken in commit
//!   order, so the movements not folded are those after the fold's mark (`stock_fold`); twice
//!   a second the fold reads them, adds them into their articles' rows in writes of a few
//!   hundred articles each (each row then says which movements it holds), and its last write
//!   moves the mark, so that no write holds up the sales queued behind it for long.
//! - Where writers run at once (PostgreSQL), a movement is also appended to `stock_moves`,
//!   and each node folds and deletes those (the stock fold, started with the store's
//!   maintenance).
//!
//! Either way a read sees a row and the movements not yet in it in one snapshot, so a level
//! is exact whenever it is read.
//!
//! A level is set (a count, an adjustment) by a movement of the difference between the level
//! wanted and the level the write sees, holding the article's row so that two settings take
//! turns; a sale committed meanwhile is not in what the write saw, and its own movement adds on
//! top. So no sale is ever lost to a count, on either engine.
//!
//! An article's movements are found through an index by store and article where writers run
//! at once; where one writer runs, through the article's `stock` row, which lists the ids of
//! its latest folded movements, the chunks those lists are moved into once they hold 32 (the
//! schema's migration 0021 says why and how), and the movements after the fold's mark.

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

/// Where one writer runs, the last movement id the row of the article `($1, $2)` holds: the
/// fold's mark, or the row's own when a fold's writes under way have reached it.
macro_rules! after_folds {
    () => {
        "max((SELECT folded_through FROM stock_fold), \
             COALESCE((SELECT folded_through FROM stock WHERE store_id = $1 AND sku_id = $2), 0))"
    };
}

/// The level of a pair: its row plus its movements not yet folded, in one statement, so one
/// snapshot (a fold adds movements to the row and marks them folded in one commit, seen whole or
/// not at all). `None` when no quantity was ever recorded for the pair.
pub(crate) async fn read_level(
    conn: &mut Conn,
    store_id: &StoreId,
    sku_id: &SkuId,
) -> Result<Option<StockLevel>, StoreError> {
    let sql = match conn.writers() {
        Writers::One => LEVEL_AFTER_MARK,
        Writers::Many => LEVEL_WITH_QUEUE,
    };
    let row = query(sql)
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

/// Where one writer runs: the row and the article's movements after the fold's mark and its
/// row's (a range of row ids: the movements of about a second).
const LEVEL_AFTER_MARK: &str = concat!(
    "SELECT count(*) AS found, CAST(sum(on_hand) AS BIGINT) AS on_hand, max(updated_at) AS updated_at \
     FROM (SELECT on_hand, updated_at FROM stock WHERE store_id = $1 AND sku_id = $2 \
         UNION ALL SELECT delta, moved_at FROM stock_movements WHERE movement_id > ",
    after_folds!(),
    " AND store_id = $1 AND sku_id = $2) AS level"
);

/// Where writers run at once: the row and the article's queued moves.
const LEVEL_WITH_QUEUE: &str = "SELECT count(*) AS found, CAST(sum(on_hand) AS BIGINT) AS on_hand, \
         max(updated_at) AS updated_at \
     FROM (SELECT on_hand, updated_at FROM stock WHERE store_id = $1 AND sku_id = $2 \
         UNION ALL SELECT delta, moved_at FROM stock_moves WHERE store_id = $1 AND sku_id = $2) AS level";

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
/// chunks) and by its `stock` row, and its movements after the fold's mark, in one statement
/// and so one snapshot.
const PAGE_FROM_STOCK_ROWS: &str = concat!(
    "SELECT m.movement_id, m.delta, m.reason, m.reference, m.moved_at \
     FROM (SELECT j.value AS id FROM (SELECT ids FROM stock_movement_chunks \
               WHERE store_id = $1 AND sku_id = $2 AND last_id > $3 ORDER BY last_id LIMIT $5) AS c, \
               json_each('[' || c.ids || ']') AS j \
           UNION ALL SELECT j.value FROM stock AS s, json_each('[' || s.recent || ']') AS j \
               WHERE s.store_id = $1 AND s.sku_id = $2 \
           UNION ALL SELECT movement_id FROM stock_movements WHERE movement_id > ",
    after_folds!(),
    " AND store_id = $1 AND sku_id = $2) AS listed \
     JOIN stock_movements AS m ON m.movement_id = listed.id \
     WHERE listed.id > $3 ORDER BY listed.id LIMIT $4"
);

/// The last `$3` movements of an article, newest first.
const LATEST_FROM_INDEX: &str = "SELECT movement_id, delta, reason, reference, moved_at FROM stock_movements \
     WHERE store_id = $1 AND sku_id = $2 ORDER BY movement_id DESC LIMIT $3";

const LATEST_FROM_STOCK_ROWS: &str = concat!(
    "SELECT m.movement_id, m.delta, m.reason, m.reference, m.moved_at \
     FROM (SELECT j.value AS id FROM (SELECT ids FROM stock_movement_chunks \
               WHERE store_id = $1 AND sku_id = $2 ORDER BY last_id DESC LIMIT $4) AS c, \
               json_each('[' || c.ids || ']') AS j \
           UNION ALL SELECT j.value FROM stock AS s, json_each('[' || s.recent || ']') AS j \
               WHERE s.store_id = $1 AND s.sku_id = $2 \
           UNION ALL SELECT movement_id FROM stock_movements WHERE movement_id > ",
    after_folds!(),
    " AND store_id = $1 AND sku_id = $2) AS listed \
     JOIN stock_movements AS m ON m.movement_id = listed.id \
     ORDER BY listed.id DESC LIMIT $3"
);

/// Where one writer runs, the most movements one fold takes: a backlog (a node stopped for a
/// while) goes a slice at a time.
pub(crate) const FOLD_LIMIT_ONE_WRITER: i64 = 20_000;

/// Articles one write of a fold sets: a few milliseconds of the writer, so that the sales
/// waiting behind it are not held up for long.
pub(crate) const FOLDED_PER_WRITE: usize = 256;

/// Articles the fold's write sets per statement.
const FOLDED_PER_STATEMENT: usize = 64;

/// The fold's write of `count` articles, each `(store, article, delta, moved at, ids, id
/// count, last id, folded through)`: a movement adds into its article's row and its ids onto
/// the row's list, started again where it was full (the trigger `stock_list_full` of migration
/// 0022 moves the full list into a chunk as this starts it again); a row not yet there is made;
/// a row that already holds these movements is left as it is.
static FOLDED: Shapes<{ FOLDED_PER_STATEMENT + 1 }> = Shapes::new(|count| {
    let rows = (0..count)
        .map(|i| {
            let p: Vec<String> = (1..=8).map(|k| format!("${}", i * 8 + k)).collect();
            format!("({})", p.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "INSERT INTO stock (store_id, sku_id, on_hand, updated_at, recent, recent_count, recent_last, folded_through) \
         VALUES {rows} \
         ON CONFLICT (store_id, sku_id) DO UPDATE SET on_hand = stock.on_hand + excluded.on_hand, \
             updated_at = max(stock.updated_at, excluded.updated_at), \
             recent = CASE WHEN stock.recent_count >= 32 OR stock.recent = '' THEN excluded.recent \
                 ELSE stock.recent || ',' || excluded.recent END, \
             recent_count = CASE WHEN stock.recent_count >= 32 THEN excluded.recent_count \
                 ELSE stock.recent_count + excluded.recent_count END, \
             recent_last = excluded.recent_last, \
             folded_through = excluded.folded_through \
         WHERE stock.folded_through < excluded.folded_through"
    )
});

/// One fold: the movements after the fold's mark, up to `upto`, summed per article, and the
/// fold's writes of them, a few hundred articles each.
#[derive(Debug)]
pub(crate) struct FoldSlice {
    pub(crate) moves: u64,
    pub(crate) writes: Vec<FoldWrite>,
}

/// One write of a fold.
#[derive(Debug)]
pub(crate) struct FoldWrite {
    mark: i64,
    upto: i64,
    /// The fold's last write, which moves the mark.
    last: bool,
    /// Per article in key order: its store and id, and its movements'.
    articles: Vec<((String, String), Folding)>,
}

/// An article's movements in one fold.
#[derive(Clone, Debug, Default)]
struct Folding {
    delta: i64,
    moved_at: i64,
    ids: Vec<i64>,
}

/// Where one writer runs: reads the movements after the fold's mark (at most `limit`, oldest
/// first) and sums them per article, on a reader, so that the writer only writes the sums.
/// Every movement up to the last one this reads is committed: the one writer takes their ids
/// in commit order. A fold whose writes were cut short (the node stopped) is taken up again
/// with the same last movement, leaving out the rows it reached. `None` when nothing is left.
pub(crate) async fn fold_slice(conn: &mut Conn, limit: i64) -> Result<Option<FoldSlice>, StoreError> {
    let state = query("SELECT folded_through, folding_to FROM stock_fold")
        .fetch_one(&mut *conn)
        .await?;
    let mark: i64 = state.try_get("folded_through")?;
    let folding_to: Option<i64> = state.try_get("folding_to")?;
    let mut reached = std::collections::BTreeSet::new();
    if let Some(folding_to) = folding_to {
        query("SELECT store_id, sku_id FROM stock WHERE folded_through = $1")
            .bind(folding_to)
            .for_each(conn, |row| {
                reached.insert((row.try_get::<String>("store_id")?, row.try_get::<String>("sku_id")?));
                Ok(())
            })
            .await?;
    }
    let mut articles: std::collections::BTreeMap<(String, String), Folding> = std::collections::BTreeMap::new();
    let (mut upto, mut moves) = (mark, 0_u64);
    query(
        "SELECT movement_id, store_id, sku_id, delta, moved_at FROM stock_movements \
         WHERE movement_id > $1 AND movement_id <= $2 ORDER BY movement_id LIMIT $3",
    )
    .bind(mark)
    .bind(folding_to.unwrap_or(i64::MAX))
    .bind(limit)
    .for_each(conn, |row| {
        let id: i64 = row.try_get("movement_id")?;
        (upto, moves) = (id, moves + 1);
        let article = (row.try_get("store_id")?, row.try_get("sku_id")?);
        if reached.contains(&article) {
            return Ok(());
        }
        let folding = articles.entry(article).or_default();
        folding.delta = folding
            .delta
            .checked_add(row.try_get("delta")?)
            .ok_or_else(|| StoreError::Corrupt("a stock level beyond every bound".into()))?;
        folding.moved_at = folding.moved_at.max(row.try_get("moved_at")?);
        folding.ids.push(id);
        Ok(())
    })
    .await?;
    if moves == 0 && folding_to.is_none() {
        return Ok(None);
    }
    let upto = folding_to.unwrap_or(upto);
    let articles: Vec<_> = articles.into_iter().collect();
    let mut writes: Vec<FoldWrite> = articles
        .chunks(FOLDED_PER_WRITE)
        .map(|chunk| FoldWrite {
            mark,
            upto,
            last: false,
            articles: chunk
                .iter()
                .map(|(key, folding)| (key.clone(), folding.clone()))
                .collect(),
        })
        .collect();
    match writes.last_mut() {
        Some(write) => write.last = true,
        None => writes.push(FoldWrite {
            mark,
            upto,
            last: true,
            articles: Vec::new(),
        }),
    }
    Ok(Some(FoldSlice { moves, writes }))
}

/// Where one writer runs: one write of a fold, in the writer's transaction, if the fold's mark
/// still stands where the fold was read from (else nothing, `NotWritten`): its articles' sums
/// into their rows, marked as holding the fold's movements; the last write also moves the
/// fold's mark past them.
pub(crate) async fn fold_into_rows(conn: &mut Conn, write: &FoldWrite) -> Result<(), StoreError> {
    let under_way = query(
        "UPDATE stock_fold SET folding_to = $2 \
         WHERE singleton = 1 AND folded_through = $1 AND (folding_to IS NULL OR folding_to = $2)",
    )
    .bind(write.mark)
    .bind(write.upto)
    .execute(&mut *conn)
    .await?;
    if under_way != 1 {
        return Err(StoreError::NotWritten);
    }
    for chunk in write.articles.chunks(FOLDED_PER_STATEMENT) {
        let mut params: Vec<Param> = Vec::with_capacity(chunk.len() * 8);
        for ((store_id, sku_id), folding) in chunk {
            let ids = folding.ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
            params.extend([
                Param::from(store_id.as_str()),
                Param::from(sku_id.as_str()),
                Param::from(folding.delta),
                Param::from(folding.moved_at),
                Param::from(ids),
                Param::from(i64::try_from(folding.ids.len()).unwrap_or(i64::MAX)),
                Param::from(folding.ids.last().copied().unwrap_or(0)),
                Param::from(write.upto),
            ]);
        }
        let mut batch = Batch::default();
        batch.push(FOLDED.get(chunk.len()), params);
        batch.run(conn).await?;
    }
    if write.last {
        query("UPDATE stock_fold SET folded_through = $1, folding_to = NULL WHERE singleton = 1")
            .bind(write.upto)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
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
/// ledger, which is all where one writer runs (the fold adds them into the articles' rows);
/// where writers run at once, they are also queued into `stock_moves` (see the module's
/// comment).
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
        if writers == Writers::Many {
            let mut queued_params: Vec<Param> = vec![store_id.as_str().into(), now.into()];
            queued_params.extend(pairs);
            batch.push(MOVES_QUEUED.get(chunk.len()), queued_params);
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

    /// A migrated scratch SQLite store with store `s1` and the named articles, for the fold's
    /// tests to write their movements and rows into.
    async fn folding_store(dir: &std::path::Path, skus: &[&str]) -> (std::path::PathBuf, Store) {
        let (path, store) = scratch_sqlite_store(dir).await;
        store.migrate().await.unwrap();
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute(
            "INSERT INTO stores (store_id, name, timezone, currency, created_at, updated_at) \
             VALUES ('s1', 'S1', 'Europe/Paris', 'EUR', 0, 0)",
            [],
        )
        .unwrap();
        for sku in skus {
            conn.execute(
                "INSERT INTO skus (sku_id, name, price_cents, vat_rate, created_at, updated_at) \
                 VALUES (?1, ?1, 100, 2000, 0, 0)",
                [sku],
            )
            .unwrap();
        }
        (path, store)
    }

    /// Where one writer runs, a sale's movements are read with their article's level and ledger
    /// before any fold; a fold writes each article's row once, with the sum of its deltas and
    /// its ids in order, moves a full list into a chunk as it starts it again (the trigger of
    /// migration 0022), makes a row not yet there,
    /// and changes no level nor ledger as read; a fold with nothing after its mark writes nothing.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_fold_adds_the_movements_after_its_mark_into_their_rows_and_reads_stay_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let (path, store) = folding_store(dir.path(), &["mug", "pen", "cup"]).await;
        let full: Vec<String> = (1..=32).map(|id| id.to_string()).collect();
        {
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.execute_batch(
                "INSERT INTO stock_movements (movement_id, store_id, sku_id, delta, reason, reference, moved_at) \
                     VALUES (33, 's1', 'pen', 10, 'adjustment', NULL, 0); \
                 UPDATE stock_fold SET folded_through = 33;",
            )
            .unwrap();
            for id in 1..=32 {
                conn.execute(
                    "INSERT INTO stock_movements (movement_id, store_id, sku_id, delta, reason, reference, moved_at) \
                     VALUES (?1, 's1', 'mug', 1, 'adjustment', NULL, 0)",
                    [id],
                )
                .unwrap();
            }
            conn.execute(
                "INSERT INTO stock (store_id, sku_id, on_hand, updated_at, recent, recent_count, recent_last) \
                 VALUES ('s1', 'mug', 100, 0, ?1, 32, 32), ('s1', 'pen', 10, 0, '33', 1, 33)",
                [full.join(",")],
            )
            .unwrap();
        }
        let s1 = StoreId::from_trusted("s1".into());
        let sku = |name: &str| SkuId::from_trusted(name.into());
        let moves = vec![(sku("mug"), -1), (sku("pen"), -2), (sku("mug"), -3), (sku("cup"), 5)];
        store
            .write((s1.clone(), moves), |c, (s1, moves)| {
                Box::pin(async move {
                    let cause = Cause {
                        reason: StockReason::Sale,
                        reference: Some("t1"),
                    };
                    let mut batch = Batch::default();
                    push_moves(&mut batch, Writers::One, s1, moves, cause, 9);
                    batch.run(c).await
                })
            })
            .await
            .unwrap();
        let levels = |store: &Store| {
            let (store, s1) = (store.clone(), s1.clone());
            async move {
                let mut levels = Vec::new();
                for name in ["cup", "mug", "pen"] {
                    let level = store.get_stock(&s1, &sku(name)).await.unwrap().unwrap();
                    levels.push((name, level.on_hand, level.updated_at.as_microsecond()));
                }
                levels
            }
        };
        let expected = [("cup", 5, 9), ("mug", 96, 9), ("pen", 8, 9)];
        assert_eq!(levels(&store).await, expected, "read before the fold");
        let ledger_before = paged(&store, &sku("mug"), 1000).await;
        assert_eq!(ledger_before.len(), 34);
        assert_eq!(ledger_before[32..], [34, 36]);
        assert_eq!(paged(&store, &sku("pen"), 1000).await, [33, 35]);
        assert_eq!(store.fold_stock_moves().await.unwrap(), 4);
        assert_eq!(
            store.fold_stock_moves().await.unwrap(),
            0,
            "nothing left after the mark"
        );
        assert_eq!(levels(&store).await, expected, "read after the fold");
        assert_eq!(paged(&store, &sku("mug"), 1000).await, ledger_before);
        for take in [1, 2, 31, 32, 33] {
            assert_eq!(paged(&store, &sku("mug"), take).await, ledger_before, "pages of {take}");
        }
        let conn = rusqlite::Connection::open(&path).unwrap();
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
                ("cup".to_owned(), 5, 9, "37".to_owned(), 1, 37),
                ("mug".to_owned(), 96, 9, "34,36".to_owned(), 2, 36),
                ("pen".to_owned(), 8, 9, "33,35".to_owned(), 2, 35),
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
        drop(conn);
        store.close().await;
    }

    /// Where one writer runs, a fold whose writes were cut short (the node stopped after the
    /// first) is taken up again with the same last movement, leaving the rows it reached as
    /// they are: no movement is added twice, and reads are exact meanwhile.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_fold_cut_short_is_taken_up_again_without_adding_a_movement_twice() {
        let dir = tempfile::tempdir().unwrap();
        let (path, store) = folding_store(dir.path(), &["mug", "pen"]).await;
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "UPDATE stock_fold SET folded_through = 40; \
             INSERT INTO stock_movements (movement_id, store_id, sku_id, delta, reason, reference, moved_at) \
                 VALUES (41, 's1', 'mug', -1, 'sale', 't1', 5), (42, 's1', 'pen', -2, 'sale', 't1', 5), \
                        (43, 's1', 'mug', -3, 'sale', 't2', 6); \
             INSERT INTO stock (store_id, sku_id, on_hand, updated_at, recent, recent_count, recent_last, folded_through) \
                 VALUES ('s1', 'mug', 96, 6, '41,43', 2, 43, 43), ('s1', 'pen', 10, 0, '', 0, 0, 0); \
             UPDATE stock_fold SET folding_to = 43;",
        )
        .unwrap();
        let s1 = StoreId::from_trusted("s1".into());
        let level = |sku: &'static str| {
            let (store, s1) = (store.clone(), s1.clone());
            async move {
                store
                    .get_stock(&s1, &SkuId::from_trusted(sku.into()))
                    .await
                    .unwrap()
                    .unwrap()
                    .on_hand
            }
        };
        assert_eq!(
            (level("mug").await, level("pen").await),
            (96, 8),
            "read while the fold is cut short"
        );
        assert_eq!(store.fold_stock_moves().await.unwrap(), 3);
        assert_eq!(
            (level("mug").await, level("pen").await),
            (96, 8),
            "read after it is taken up"
        );
        let rows: Vec<(String, i64, String, i64)> = conn
            .prepare("SELECT sku_id, on_hand, recent, folded_through FROM stock ORDER BY sku_id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            rows,
            [
                ("mug".to_owned(), 96, "41,43".to_owned(), 43),
                ("pen".to_owned(), 8, "42".to_owned(), 43)
            ]
        );
        let state: (i64, Option<i64>) = conn
            .query_row("SELECT folded_through, folding_to FROM stock_fold", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(state, (43, None), "the mark moved once the fold is whole");
        drop(conn);
        store.close().await;
    }

    /// Where one writer runs, a fold reaches its articles' rows and a read its article's chunks
    /// and its movements after the fold's mark by their keys: none of these statements reads a
    /// whole table.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_ledger_in_the_stock_rows_is_reached_by_key() {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::db::migrated_scratch_database(dir.path()).await;
        let folded = FOLDED.get(2);
        let statements: [(&str, &[&str]); 4] = [
            (
                &folded,
                &[
                    "s1", "mug", "1", "0", "1", "1", "1", "1", "s1", "pen", "1", "0", "2", "1", "2", "2",
                ],
            ),
            (PAGE_FROM_STOCK_ROWS, &["s1", "mug", "0", "50", "3"]),
            (LATEST_FROM_STOCK_ROWS, &["s1", "mug", "50", "3"]),
            (LEVEL_AFTER_MARK, &["s1", "mug"]),
        ];
        for (sql, params) in statements {
            let plan = crate::db::query_plan(&conn, sql, params).join("\n");
            for table in ["stock", "stock_movement_chunks", "stock_movements"] {
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
