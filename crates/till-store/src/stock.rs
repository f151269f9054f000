//! Stock on hand per store and article.

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

    /// `None` when no quantity was ever recorded for the pair.
    pub async fn get_stock(&self, store_id: &StoreId, sku_id: &SkuId) -> Result<Option<StockLevel>, StoreError> {
        let row = query("SELECT on_hand, updated_at FROM stock WHERE store_id = $1 AND sku_id = $2")
            .bind(store_id.as_str())
            .bind(sku_id.as_str())
            .fetch_optional(self.reader())
            .await?;
        row.map(|row| {
            Ok(StockLevel {
                store_id: store_id.clone(),
                sku_id: sku_id.clone(),
                on_hand: row.try_get("on_hand")?,
                updated_at: from_micros(row.try_get("updated_at")?),
            })
        })
        .transpose()
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
