//! Writing the catalog: one article or a bulk import, in multi-row statements chunked under
//! both engines' parameter limits, a known article's rows replaced and a new one's inserted.

use super::{CatalogWrite, IMPORT_CHUNK, ImportSummary, cents, vat_rate};
use crate::barcodes;
use crate::error::{Classified, Rule, StoreError};
use crate::feed;
use crate::sku_words;
use crate::sql::{Conn, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
use std::collections::HashMap;
use till_core::instant::to_micros;
use till_core::money::{Cents, VatRate};

/// A bulk write of articles, as of `now`.
pub(super) struct PutItems {
    pub(super) writes: Vec<CatalogWrite>,
    pub(super) now: Timestamp,
}

pub(super) fn put_items<'a>(
    conn: &'a mut Conn,
    input: &'a PutItems,
) -> BoxFuture<'a, Result<ImportSummary, StoreError>> {
    Box::pin(async move {
        let now = to_micros(input.now);
        let mut created = 0;
        // The articles being replaced, with their names, whose words the search forgets.
        let mut former_names = Vec::new();
        for chunk in input.writes.chunks(IMPORT_CHUNK) {
            let present = present(conn, chunk, now).await?;
            if let Some(new) = chunk
                .iter()
                .find(|w| w.starts > input.now && !present.contains_key(w.item.sku_id.as_str()))
            {
                return Err(StoreError::Rule(Rule::FirstPriceLater(new.item.sku_id.clone())));
            }
            created += chunk.len() - present.len();
            former_names.extend(present.iter().map(|(id, found)| (id.clone(), found.name.clone())));
            let (known, new): (Vec<&CatalogWrite>, Vec<&CatalogWrite>) =
                chunk.iter().partition(|w| present.contains_key(w.item.sku_id.as_str()));

            // A new article takes its price in the columns of `skus` here; an existing one
            // below, from its schedule. Another write creating one of them at once (on another
            // PostgreSQL node, say) makes this insert wait for it, then fail on the key: the
            // whole write runs again, and finds the article there.
            write_skus(conn, &new, now, Rows::New)
                .await
                .map_err(StoreError::raced_on_key)?;
            write_skus(conn, &known, now, Rows::Known).await?;

            // A price written now that is the one in force changes nothing.
            let changes: Vec<&CatalogWrite> = known
                .iter()
                .copied()
                .filter(|w| {
                    w.starts > input.now
                        || present.get(w.item.sku_id.as_str()).map(|found| found.in_force)
                            != Some(Some((w.item.price, w.item.vat_rate)))
                })
                .collect();
            write_prices(conn, &new, now, Rows::New).await?;
            write_prices(conn, &changes, now, Rows::Known).await?;

            // `skus` keeps the price in force at the article's last write, for whoever reads
            // the table as it was before prices were dated. A new article has it already.
            if known.is_empty() {
                continue;
            }
            let in_force_now = |column: &str| {
                format!(
                    "(SELECT p.{column} FROM sku_prices p WHERE p.sku_id = skus.sku_id AND p.effective_from <= $1 \
                     ORDER BY p.effective_from DESC LIMIT 1)"
                )
            };
            let sql = format!(
                "UPDATE skus SET price_cents = COALESCE({}, price_cents), vat_rate = COALESCE({}, vat_rate) \
                 WHERE sku_id IN ({})",
                in_force_now("price_cents"),
                in_force_now("vat_rate"),
                placeholders(2, known.len())
            );
            let mut update = query(sql).bind(now);
            for write in known {
                update = update.bind(write.item.sku_id.as_str());
            }
            update.execute(&mut *conn).await?;
        }
        query("UPDATE catalog_revision SET revision = revision + 1 WHERE singleton = 1")
            .execute(&mut *conn)
            .await?;
        barcodes::replace(conn, &input.writes, &former_names).await?;
        sku_words::replace(conn, &input.writes, &former_names).await?;
        record_changes(conn, &input.writes, now).await?;
        Ok(ImportSummary {
            created,
            updated: input.writes.len() - created,
        })
    })
}

/// A `catalog.changed` event for every article written, which tills follow to stay current
/// (an article's id is digits and letters, so it needs no escaping in the event's JSON).
async fn record_changes(conn: &mut Conn, writes: &[CatalogWrite], now: i64) -> Result<(), StoreError> {
    let sku_ids: Vec<&str> = writes.iter().map(|write| write.item.sku_id.as_str()).collect();
    feed::record_catalog_changes(conn, &sku_ids, now).await
}

/// Whose rows a multi-row insert writes. A new article's cannot be in the table yet (an
/// article is never deleted, and its row in `skus` is written first): they are inserted
/// plainly, which spares the database a look-up of each key before writing it. A known
/// article's replace those with the same key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rows {
    New,
    Known,
}

impl Rows {
    /// What ends the insert: nothing, or how a row meets the one already there (`conflict`,
    /// then the columns it replaces).
    pub(crate) fn on_conflict(self, conflict: &str, replaced: &[&str]) -> String {
        match self {
            Rows::New => String::new(),
            Rows::Known => {
                let set = replaced
                    .iter()
                    .map(|column| format!("{column} = excluded.{column}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                format!(" ON CONFLICT ({conflict}) DO UPDATE SET {set}")
            }
        }
    }
}

/// Writes the articles' rows of `skus`, their price that of the write (a known article's
/// keeps its own until the schedule sets it).
async fn write_skus(conn: &mut Conn, writes: &[&CatalogWrite], now: i64, rows: Rows) -> Result<(), StoreError> {
    if writes.is_empty() {
        return Ok(());
    }
    let values = value_rows(writes.len(), 4, 2, ", $1, $1");
    let sql = format!(
        "INSERT INTO skus (sku_id, name, price_cents, vat_rate, created_at, updated_at) VALUES {values}{}",
        rows.on_conflict("sku_id", &["name", "updated_at"])
    );
    let mut insert = query(sql).bind(now);
    for write in writes {
        insert = insert
            .bind(write.item.sku_id.as_str())
            .bind(&write.item.name)
            .bind(write.item.price.get())
            .bind(write.item.vat_rate.hundredths());
    }
    insert.execute(&mut *conn).await?;
    Ok(())
}

/// Writes each write's price from its start, replacing one that starts at the same instant.
async fn write_prices(conn: &mut Conn, writes: &[&CatalogWrite], now: i64, rows: Rows) -> Result<(), StoreError> {
    if writes.is_empty() {
        return Ok(());
    }
    let values = value_rows(writes.len(), 4, 2, ", $1");
    let sql = format!(
        "INSERT INTO sku_prices (sku_id, effective_from, price_cents, vat_rate, written_at) VALUES {values}{}",
        rows.on_conflict("sku_id, effective_from", &["price_cents", "vat_rate", "written_at"])
    );
    let mut insert = query(sql).bind(now);
    for write in writes {
        insert = insert
            .bind(write.item.sku_id.as_str())
            .bind(to_micros(write.starts))
            .bind(write.item.price.get())
            .bind(write.item.vat_rate.hundredths());
    }
    insert.execute(&mut *conn).await?;
    Ok(())
}

/// An article of a write that the catalog holds already.
struct Present {
    /// Its price in force at the write (none when its prices all start later).
    in_force: Option<(Cents, VatRate)>,
    /// Its name before the write.
    name: String,
}

/// The articles of `chunk` already in the catalog.
async fn present(conn: &mut Conn, chunk: &[CatalogWrite], now: i64) -> Result<HashMap<String, Present>, StoreError> {
    let sql = format!(
        "SELECT s.sku_id, s.name, p.price_cents, p.vat_rate FROM skus s \
         LEFT JOIN sku_prices p ON p.sku_id = s.sku_id AND p.effective_from = (SELECT MAX(q.effective_from) \
             FROM sku_prices q WHERE q.sku_id = s.sku_id AND q.effective_from <= $1) \
         WHERE s.sku_id IN ({})",
        placeholders(2, chunk.len())
    );
    let mut existing = query(sql).bind(now);
    for write in chunk {
        existing = existing.bind(write.item.sku_id.as_str());
    }
    let mut found = HashMap::with_capacity(chunk.len());
    for row in existing.fetch_all(&mut *conn).await? {
        let price: Option<i64> = row.try_get("price_cents")?;
        let vat: Option<i64> = row.try_get("vat_rate")?;
        let in_force = match (price, vat) {
            (Some(price), Some(vat)) => Some((cents(price)?, vat_rate(vat)?)),
            _ => None,
        };
        let name = row.try_get("name")?;
        found.insert(row.try_get("sku_id")?, Present { in_force, name });
    }
    Ok(found)
}

/// `count` rows of a multi-row `VALUES`, each `width` parameters from `$first` on, then `tail`
/// (`, $1` for a value every row shares): `($2, $3, $1), ($4, $5, $1)`.
pub(crate) fn value_rows(count: usize, width: usize, first: usize, tail: &str) -> String {
    (0..count)
        .map(|row| format!("({}{tail})", placeholders(first + row * width, width)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `$first, $first+1, ...` for `count` parameters.
pub(crate) fn placeholders(first: usize, count: usize) -> String {
    (first..first + count)
        .map(|n| format!("${n}"))
        .collect::<Vec<_>>()
        .join(", ")
}
