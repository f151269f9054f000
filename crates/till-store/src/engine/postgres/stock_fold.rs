//! The stock fold: on PostgreSQL a sale appends its stock moves to `stock_moves` rather than
//! updating its articles' rows (see `crate::stock`), and each node adds the queued moves into
//! `stock` about once a second.

use crate::engine::Database;
use crate::engine::background::{Cadence, repeat_while_open};
use crate::engine::sql::{Readers, query};
use crate::error::StoreError;
use crate::metrics::STOCK_MOVES_FOLDED;
use std::sync::Weak;
use std::time::Duration;

/// Most moves one fold takes: a backlog (every node stopped for a while) goes a slice at a time.
pub const FOLD_LIMIT: i64 = 50_000;

/// How often each node folds, when the last fold left no backlog.
const FOLD_EVERY: Duration = Duration::from_secs(1);

/// Articles in order, so two folds lock `stock` rows in one order and cannot deadlock.
const FOLD_MOVES: &str = "WITH moved AS ( \
         DELETE FROM stock_moves WHERE ctid = ANY (ARRAY(SELECT ctid FROM stock_moves LIMIT $1)) \
         RETURNING store_id, sku_id, delta, moved_at), \
     added AS ( \
         INSERT INTO stock (store_id, sku_id, on_hand, updated_at) \
         SELECT store_id, sku_id, sum(delta), max(moved_at) FROM moved \
         GROUP BY store_id, sku_id ORDER BY store_id, sku_id \
         ON CONFLICT (store_id, sku_id) DO UPDATE SET on_hand = stock.on_hand + excluded.on_hand, \
             updated_at = GREATEST(stock.updated_at, excluded.updated_at)) \
     SELECT count(*) AS folded FROM moved";

/// Adds queued moves into `stock` and deletes them, in one statement, at most [`FOLD_LIMIT`]
/// at a time; answers how many it folded. Nodes fold at the same time without counting a move
/// twice: a fold that meets a move another has deleted waits for that one to commit, then
/// passes the move by.
pub(crate) async fn fold(readers: &Readers) -> Result<u64, StoreError> {
    let row = query(FOLD_MOVES).bind(FOLD_LIMIT).fetch_one(readers).await?;
    let folded: i64 = row.try_get("folded")?;
    Ok(u64::try_from(folded).unwrap_or(0))
}

/// Folds every [`FOLD_EVERY`], at once again while a backlog remains, until `owner` is dropped
/// or its database closed.
pub(crate) async fn fold_while_open<S>(owner: Weak<S>, database: fn(&S) -> &Database) {
    let cadence = Cadence {
        every: FOLD_EVERY,
        limit: FOLD_LIMIT as u64,
        after_error: FOLD_EVERY,
        done: STOCK_MOVES_FOLDED,
        failed: "stock moves not folded; levels still count them; trying again",
    };
    repeat_while_open(owner, database, cadence, |database| {
        Box::pin(database.fold_stock_moves())
    })
    .await
}
