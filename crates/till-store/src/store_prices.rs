//! Per-store prices (table `store_prices`, migration 0013): a store may sell an article at a
//! price of its own, effective-dated as the catalog's are. The price authority applies them
//! (see [`till_core::catalog::Article::in_store`]); the VAT rate stays the catalog's.
//!
//! A write moves the catalog's revision, so that every node's cache of prices (see
//! [`crate::catalog`]) is built again, as after a catalog write.

use crate::catalog::placeholders;
use crate::db::Store;
use crate::error::StoreError;
use crate::sql::{Conn, Row, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
use std::collections::HashMap;
use till_core::catalog::{StorePrice, StorePrices};
use till_core::ids::{SkuId, StoreId};
use till_core::instant::{from_micros, to_micros};
use till_core::money::Cents;

/// Articles per look-up statement: far below the bind-parameter limits of both engines.
const READ_CHUNK: usize = 500;

/// A store's price for an article to write, from `starts` (see
/// [`till_core::catalog::price_starts`]).
#[derive(Clone, Debug)]
pub struct StorePriceWrite {
    pub store_id: StoreId,
    pub sku_id: SkuId,
    /// Unit price including VAT.
    pub price: Cents,
    pub starts: Timestamp,
}

struct PutStorePrice {
    write: StorePriceWrite,
    now: Timestamp,
}

impl Store {
    /// Writes a store's price for an article: one that starts now replaces the one in force
    /// (the same price again writes nothing), one that starts later is scheduled and replaces
    /// one scheduled at the same instant. The store and the article must exist. Answers the
    /// store's prices of the article, and whether they are its first.
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

    /// Every price of its own a store has had or will have for an article; empty when none.
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
        let mut rows: HashMap<String, Vec<StorePrice>> = HashMap::new();
        for chunk in sku_ids.chunks(READ_CHUNK) {
            let sql = format!(
                "SELECT sku_id, effective_from, price_cents FROM store_prices \
                 WHERE store_id = $1 AND sku_id IN ({})",
                placeholders(2, chunk.len())
            );
            let mut select = query(sql).bind(store_id.as_str());
            for sku_id in chunk {
                select = select.bind(sku_id.as_str());
            }
            for row in select.fetch_all(self.reader()).await? {
                rows.entry(row.try_get("sku_id")?).or_default().push(store_price(&row)?);
            }
        }
        Ok(rows
            .into_iter()
            .map(|(sku_id, prices)| (SkuId::from_trusted(sku_id), StorePrices::new(prices)))
            .collect())
    }
}

/// Answers whether the store had no price of its own for the article before.
fn put_store_price<'a>(conn: &'a mut Conn, input: &'a PutStorePrice) -> BoxFuture<'a, Result<bool, StoreError>> {
    Box::pin(async move {
        let write = &input.write;
        let now = to_micros(input.now);
        let store = query("SELECT 1 FROM stores WHERE store_id = $1")
            .bind(write.store_id.as_str())
            .fetch_optional(&mut *conn)
            .await?;
        if store.is_none() {
            return Err(StoreError::NotFound("store"));
        }
        let sku = query("SELECT 1 FROM skus WHERE sku_id = $1")
            .bind(write.sku_id.as_str())
            .fetch_optional(&mut *conn)
            .await?;
        if sku.is_none() {
            return Err(StoreError::NotFound("article"));
        }
        let mut prices = Vec::new();
        for row in query("SELECT effective_from, price_cents FROM store_prices WHERE store_id = $1 AND sku_id = $2")
            .bind(write.store_id.as_str())
            .bind(write.sku_id.as_str())
            .fetch_all(&mut *conn)
            .await?
        {
            prices.push(store_price(&row)?);
        }
        let prices = StorePrices::new(prices);
        // A price written now that is the one in force changes nothing.
        let in_force = prices.at(input.now).map(|p| p.price);
        if write.starts <= input.now && in_force == Some(write.price) {
            return Ok(false);
        }
        query(
            "INSERT INTO store_prices (store_id, sku_id, effective_from, price_cents, written_at) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (store_id, sku_id, effective_from) DO UPDATE SET price_cents = excluded.price_cents, \
                 written_at = excluded.written_at",
        )
        .bind(write.store_id.as_str())
        .bind(write.sku_id.as_str())
        .bind(to_micros(write.starts))
        .bind(write.price.get())
        .bind(now)
        .execute(&mut *conn)
        .await?;
        query("UPDATE catalog_revision SET revision = revision + 1 WHERE singleton = 1")
            .execute(&mut *conn)
            .await?;
        Ok(prices.is_empty())
    })
}

fn store_price(row: &Row) -> Result<StorePrice, StoreError> {
    let price: i64 = row.try_get("price_cents")?;
    Ok(StorePrice {
        effective_from: from_micros(row.try_get("effective_from")?),
        price: Cents::new(price).ok_or_else(|| StoreError::Corrupt(format!("price {price} out of range")))?,
    })
}
