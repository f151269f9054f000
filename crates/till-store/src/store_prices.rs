//! Per-store prices (table `store_prices`, migration 0013): a store may sell an article at a
//! price of its own, effective-dated as the catalog's are. The price authority applies them
//! (see [`till_core::catalog::Article::in_store`]); the VAT rate stays the catalog's.
//!
//! A write moves the catalog's revision, so that every node's cache of prices (see
//! [`crate::catalog`]) is built again, as after a catalog write.

use crate::catalog::placeholders;
use crate::db::Store;
use crate::error::StoreError;
use crate::feed::{self, NewEvent};
use crate::sql::{Conn, Query, Row, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
use std::collections::HashMap;
pub use till_app::storage::catalog::StorePriceWrite;
use till_core::catalog::{StorePrice, StorePrices};
use till_core::documents::StorePriceChanged;
use till_core::events::EventType;
use till_core::ids::{SkuId, StoreId};
use till_core::instant::{from_micros, to_micros};
use till_core::money::Cents;

/// Articles per look-up statement: far below the bind-parameter limits of both engines.
pub(crate) const READ_CHUNK: usize = 500;

struct PutStorePrice {
    write: StorePriceWrite,
    now: Timestamp,
}

struct RemoveStorePrice {
    store_id: StoreId,
    sku_id: SkuId,
    now: Timestamp,
}

impl Store {
    pub async fn put_store_price(
        &self,
        write: StorePriceWrite,
        now: Timestamp,
    ) -> Result<(StorePrices, bool), StoreError> {
        let (store_id, sku_id) = (write.store_id.clone(), write.sku_id.clone());
        let created = self
            .write(PutStorePrice { write, now }, |c, i| Box::pin(put_store_price(c, i)))
            .await?;
        // This node prices what it just wrote from its next sale on.
        self.catalog_cache().forget();
        Ok((self.store_prices(&store_id, &sku_id).await?, created))
    }

    pub async fn remove_store_price(
        &self,
        store_id: StoreId,
        sku_id: SkuId,
        now: Timestamp,
    ) -> Result<bool, StoreError> {
        let input = RemoveStorePrice { store_id, sku_id, now };
        let removed = self.write(input, |c, i| Box::pin(remove_store_price(c, i))).await?;
        self.catalog_cache().forget();
        Ok(removed)
    }

    pub async fn store_prices(&self, store_id: &StoreId, sku_id: &SkuId) -> Result<StorePrices, StoreError> {
        let mut found = self.read_store_prices(store_id, &[sku_id]).await?;
        Ok(found.remove(sku_id).unwrap_or_default())
    }

    /// The store's own prices of those among `sku_ids` it has any for.
    pub(crate) async fn read_store_prices(
        &self,
        store_id: &StoreId,
        sku_ids: &[&SkuId],
    ) -> Result<HashMap<SkuId, StorePrices>, StoreError> {
        let mut found = HashMap::new();
        for chunk in sku_ids.chunks(READ_CHUNK) {
            let rows = select_prices(store_id, chunk).fetch_all(self.reader()).await?;
            found.extend(schedules(&rows)?);
        }
        Ok(found)
    }
}

/// [`Store::read_store_prices`] on a connection in hand, for at most [`READ_CHUNK`] articles.
pub(crate) async fn store_prices_on(
    conn: &mut Conn,
    store_id: &StoreId,
    sku_ids: &[&SkuId],
) -> Result<HashMap<SkuId, StorePrices>, StoreError> {
    schedules(&select_prices(store_id, sku_ids).fetch_all(conn).await?)
}

fn select_prices(store_id: &StoreId, sku_ids: &[&SkuId]) -> Query {
    let sql = format!(
        "SELECT sku_id, effective_from, price_cents FROM store_prices WHERE store_id = $1 AND sku_id IN ({})",
        placeholders(2, sku_ids.len())
    );
    let mut select = query(sql).bind(store_id.as_str());
    for sku_id in sku_ids {
        select = select.bind(sku_id.as_str());
    }
    select
}

fn schedules(rows: &[Row]) -> Result<HashMap<SkuId, StorePrices>, StoreError> {
    let mut prices: HashMap<String, Vec<StorePrice>> = HashMap::new();
    for row in rows {
        prices
            .entry(row.try_get("sku_id")?)
            .or_default()
            .push(store_price(row)?);
    }
    Ok(prices
        .into_iter()
        .map(|(sku_id, prices)| (SkuId::from_trusted(sku_id), StorePrices::new(prices)))
        .collect())
}

/// Answers whether the store had no price of its own for the article before.
fn put_store_price<'a>(conn: &'a mut Conn, input: &'a PutStorePrice) -> BoxFuture<'a, Result<bool, StoreError>> {
    Box::pin(async move {
        let write = &input.write;
        let prices = existing_prices(conn, &write.store_id, &write.sku_id).await?;
        // A price written now that is the one in force changes nothing.
        if write.starts <= input.now && prices.price_at(input.now) == Some(write.price) {
            return Ok(false);
        }
        let row = (&write.store_id, &write.sku_id, write.starts);
        write_row(conn, row, Some(write.price), input.now).await?;
        record_change(conn, &write.store_id, &write.sku_id, input.now).await?;
        Ok(!prices.any_from(input.now))
    })
}

fn remove_store_price<'a>(conn: &'a mut Conn, input: &'a RemoveStorePrice) -> BoxFuture<'a, Result<bool, StoreError>> {
    Box::pin(async move {
        let prices = existing_prices(conn, &input.store_id, &input.sku_id).await?;
        if !prices.any_from(input.now) {
            return Ok(false);
        }
        let now = to_micros(input.now);
        query("DELETE FROM store_prices WHERE store_id = $1 AND sku_id = $2 AND effective_from > $3")
            .bind(input.store_id.as_str())
            .bind(input.sku_id.as_str())
            .bind(now)
            .execute(&mut *conn)
            .await?;
        write_row(conn, (&input.store_id, &input.sku_id, input.now), None, input.now).await?;
        record_change(conn, &input.store_id, &input.sku_id, input.now).await?;
        Ok(true)
    })
}

/// The `store_price.changed` event of a write, in the store's part of the feed.
async fn record_change(conn: &mut Conn, store_id: &StoreId, sku_id: &SkuId, now: Timestamp) -> Result<(), StoreError> {
    NewEvent {
        kind: EventType::StorePriceChanged,
        occurred_at: to_micros(now),
        store_id: Some(store_id.as_str()),
        register_id: None,
        subject: sku_id.as_str(),
        data: Some(feed::data_of(&StorePriceChanged {
            store_id: store_id.as_str(),
            sku_id: sku_id.as_str(),
        })?),
    }
    .record(conn)
    .await
}

/// The store's prices of the article, after checking that both exist.
async fn existing_prices(conn: &mut Conn, store_id: &StoreId, sku_id: &SkuId) -> Result<StorePrices, StoreError> {
    crate::stores::store_and_article_exist(conn, store_id, sku_id).await?;
    let rows = query("SELECT effective_from, price_cents FROM store_prices WHERE store_id = $1 AND sku_id = $2")
        .bind(store_id.as_str())
        .bind(sku_id.as_str())
        .fetch_all(&mut *conn)
        .await?;
    Ok(StorePrices::new(
        rows.iter().map(store_price).collect::<Result<_, _>>()?,
    ))
}

/// Writes the store's price of the article from `starts` (none: the catalog's), replacing the
/// one at that instant, and moves the catalog's revision so that every node prices with it.
async fn write_row(
    conn: &mut Conn,
    (store_id, sku_id, starts): (&StoreId, &SkuId, Timestamp),
    price: Option<Cents>,
    now: Timestamp,
) -> Result<(), StoreError> {
    query(
        "INSERT INTO store_prices (store_id, sku_id, effective_from, price_cents, written_at) \
         VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (store_id, sku_id, effective_from) DO UPDATE SET price_cents = excluded.price_cents, \
             written_at = excluded.written_at",
    )
    .bind(store_id.as_str())
    .bind(sku_id.as_str())
    .bind(to_micros(starts))
    .bind(price.map(Cents::get))
    .bind(to_micros(now))
    .execute(&mut *conn)
    .await?;
    query("UPDATE catalog_revision SET revision = revision + 1 WHERE singleton = 1")
        .execute(&mut *conn)
        .await?;
    Ok(())
}

fn store_price(row: &Row) -> Result<StorePrice, StoreError> {
    let price = match row.try_get::<Option<i64>>("price_cents")? {
        Some(price) => {
            Some(Cents::new(price).ok_or_else(|| StoreError::Corrupt(format!("price {price} out of range")))?)
        }
        None => None,
    };
    Ok(StorePrice {
        effective_from: from_micros(row.try_get("effective_from")?),
        price,
    })
}
