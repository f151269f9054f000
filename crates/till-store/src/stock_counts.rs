//! Stock counts (docs/stock.md): the quantities found on a store's shelves, each setting
//! its article's level at the moment of the count as one `count` movement. Sales committed
//! after the count apply on top (see `crate::stock`). A count is kept with its answer, so that
//! sending it again answers it again rather than counting twice.

use crate::db::Store;
use crate::error::StoreError;
use crate::sql::{Conn, Row, query};
use crate::stock::{self, Cause, StockLevel};
use futures::future::BoxFuture;
pub use till_app::storage::stock::{CountLine, CountOutcome, CountRecord, CountedLine, NewCount};
use till_core::ids::SkuId;
use till_core::instant::{from_micros, to_micros};
use till_core::stock::StockReason;

impl Store {
    pub async fn record_stock_count(&self, count: NewCount) -> Result<CountOutcome, StoreError> {
        self.write(count, |c, i| Box::pin(record_count(c, i))).await
    }
}

fn record_count<'a>(conn: &'a mut Conn, count: &'a NewCount) -> BoxFuture<'a, Result<CountOutcome, StoreError>> {
    Box::pin(async move {
        let lines = serde_json::to_string(&count.lines).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        if let Some(earlier) = answered(conn, count, &lines).await? {
            return Ok(earlier);
        }
        let store = query("SELECT 1 FROM stores WHERE store_id = $1")
            .bind(count.store_id.as_str())
            .fetch_optional(&mut *conn)
            .await?;
        if store.is_none() {
            return Ok(CountOutcome::NoSuchStore);
        }
        for (line, counted) in count.lines.iter().enumerate() {
            let known = query("SELECT 1 FROM skus WHERE sku_id = $1")
                .bind(counted.sku_id.as_str())
                .fetch_optional(&mut *conn)
                .await?;
            if known.is_none() {
                return Ok(CountOutcome::NotInCatalog {
                    line,
                    sku_id: counted.sku_id.clone(),
                });
            }
        }
        let now = to_micros(count.at);
        // Claimed before anything moves: a second request with this id waits here for the
        // first to commit, then answers what it recorded.
        let claimed = query(
            "INSERT INTO stock_counts (count_id, store_id, lines, answer, counted_at) VALUES ($1, $2, $3, '', $4) \
             ON CONFLICT (count_id) DO NOTHING",
        )
        .bind(count.count_id.as_str())
        .bind(count.store_id.as_str())
        .bind(&lines)
        .bind(now)
        .execute(&mut *conn)
        .await?;
        if claimed == 0 {
            return answered(conn, count, &lines)
                .await?
                .ok_or_else(|| StoreError::Corrupt("a stock count claimed and not found".into()));
        }
        let mut targets: Vec<(SkuId, i64)> = count
            .lines
            .iter()
            .map(|line| (line.sku_id.clone(), line.counted_quantity.get()))
            .collect();
        targets.sort();
        let cause = Cause {
            reason: StockReason::Count,
            reference: Some(count.count_id.as_str()),
        };
        let set = stock::set_levels(conn, &count.store_id, &targets, cause, now).await?;
        let record = CountRecord {
            count_id: count.count_id.clone(),
            store_id: count.store_id.clone(),
            counted_at: count.at,
            lines: count
                .lines
                .iter()
                .filter_map(|line| set.iter().find(|s| s.sku_id == line.sku_id))
                .map(|s| CountedLine {
                    sku_id: s.sku_id.clone(),
                    counted_quantity: s.level,
                    previous_quantity: s.previous,
                    delta_quantity: s.delta,
                })
                .collect(),
        };
        let answer = serde_json::to_string(&record).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        query("UPDATE stock_counts SET answer = $2 WHERE count_id = $1")
            .bind(count.count_id.as_str())
            .bind(answer)
            .execute(&mut *conn)
            .await?;
        for line in &record.lines {
            let level = StockLevel {
                store_id: count.store_id.clone(),
                sku_id: line.sku_id.clone(),
                on_hand: line.counted_quantity,
                updated_at: count.at,
            };
            stock::record_adjusted(conn, &level).await?;
        }
        Ok(CountOutcome::Recorded(record))
    })
}

/// The answer to `count` when its id was recorded before: again, or refused as another's.
async fn answered(conn: &mut Conn, count: &NewCount, lines: &str) -> Result<Option<CountOutcome>, StoreError> {
    let Some(earlier) = query("SELECT store_id, lines, answer, counted_at FROM stock_counts WHERE count_id = $1")
        .bind(count.count_id.as_str())
        .fetch_optional(&mut *conn)
        .await?
    else {
        return Ok(None);
    };
    let record = read_record(&earlier)?;
    let same = earlier.try_get::<String>("store_id")? == count.store_id.as_str()
        && earlier.try_get::<String>("lines")? == lines;
    Ok(Some(if same {
        CountOutcome::Replayed(record)
    } else {
        CountOutcome::IdTaken(record)
    }))
}

fn read_record(row: &Row) -> Result<CountRecord, StoreError> {
    let answer: String = row.try_get("answer")?;
    let mut record: CountRecord =
        serde_json::from_str(&answer).map_err(|e| StoreError::Corrupt(format!("a stock count's answer: {e}")))?;
    record.counted_at = from_micros(row.try_get("counted_at")?);
    Ok(record)
}
