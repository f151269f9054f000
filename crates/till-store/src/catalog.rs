//! The price authority.

use crate::cache::insert_within;
use crate::db::Store;
use crate::error::StoreError;
use crate::page::{Keyset, Window};
use crate::sql::{Conn, Row, query};
use futures::future::BoxFuture;
use jiff::Timestamp;
use std::collections::HashMap;
use std::sync::Arc;
use till_core::catalog::CatalogItem;
use till_core::ids::SkuId;
use till_core::instant::{from_micros, to_micros};
use till_core::money::{Cents, VatRate};

#[derive(Clone, Debug)]
pub struct CatalogRecord {
    pub item: CatalogItem,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// The articles this node priced lately, by SKU (see [`crate::cache`]): a moved catalog
/// revision empties them. Shared with the look-ups that found them: a sale takes a reference
/// per line rather than a copy of the article's texts.
pub(crate) type PricedArticles = HashMap<SkuId, Arc<CatalogItem>>;

/// The most articles a node keeps priced, which bounds their memory (a few MiB) whatever the
/// size of the catalog.
const PRICED_ARTICLES: usize = 20_000;

/// Rows per multi-row statement in a bulk import: 6 parameters each stays far below the
/// bind-parameter limits of both engines.
const IMPORT_CHUNK: usize = 500;

struct PutItems {
    items: Vec<CatalogItem>,
    now: i64,
}

/// Counts of a bulk import.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImportSummary {
    pub created: usize,
    pub updated: usize,
}

impl Store {
    /// Creates or replaces one article; `true` when it was created.
    pub async fn put_catalog_item(
        &self,
        item: CatalogItem,
        now: Timestamp,
    ) -> Result<(CatalogRecord, bool), StoreError> {
        let sku_id = item.sku_id.clone();
        let summary = self.import_catalog(vec![item], now).await?;
        let record = self
            .get_catalog_item(&sku_id)
            .await?
            .ok_or_else(|| StoreError::Corrupt("article vanished after it was written".to_owned()))?;
        Ok((record, summary.created == 1))
    }

    /// Creates or replaces every article in one transaction: all or nothing.
    pub async fn import_catalog(&self, items: Vec<CatalogItem>, now: Timestamp) -> Result<ImportSummary, StoreError> {
        let summary = self
            .write(
                PutItems {
                    items,
                    now: to_micros(now),
                },
                |c, i| Box::pin(put_items(c, i)),
            )
            .await?;
        // This node prices what it just wrote from its next sale on.
        self.catalog_cache().forget();
        Ok(summary)
    }

    pub async fn get_catalog_item(&self, sku_id: &SkuId) -> Result<Option<CatalogRecord>, StoreError> {
        let row =
            query("SELECT sku_id, name, price_cents, vat_rate, created_at, updated_at FROM skus WHERE sku_id = $1")
                .bind(sku_id.as_str())
                .fetch_optional(self.reader())
                .await?;
        row.as_ref().map(catalog_from_row).transpose()
    }

    /// The articles by id, in `window`.
    pub async fn list_catalog_items(&self, window: &Window<SkuId>) -> Result<Vec<CatalogRecord>, StoreError> {
        let after = window.after.as_ref().map(SkuId::as_str);
        let rows = Keyset::new("SELECT sku_id, name, price_cents, vat_rate, created_at, updated_at FROM skus")
            .by_id("sku_id", after, window.take)
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(catalog_from_row).collect()
    }

    /// The articles among `sku_ids` that the authority carries, from this node's cache where
    /// it has them (see [`crate::cache`]).
    pub async fn catalog_items(&self, sku_ids: &[&SkuId]) -> Result<HashMap<SkuId, Arc<CatalogItem>>, StoreError> {
        let cache = self.catalog_cache();
        cache
            .check(
                async || self.catalog_revision().await,
                async || Ok(PricedArticles::new()),
            )
            .await?;
        let seen = cache.look(|priced| {
            let mut found = HashMap::with_capacity(sku_ids.len());
            let mut missing = Vec::new();
            for &sku_id in sku_ids {
                match priced.get(sku_id) {
                    Some(item) => {
                        found.insert(sku_id.clone(), item.clone());
                    }
                    None => missing.push(sku_id),
                }
            }
            (found, missing)
        });
        if seen.found.1.is_empty() {
            return Ok(seen.found.0);
        }
        let read = self.read_catalog_items(&seen.found.1).await?;
        cache.keep(&seen, |priced| {
            for item in read.values() {
                insert_within(priced, PRICED_ARTICLES, item.sku_id.clone(), item.clone());
            }
        });
        let (mut found, _) = seen.found;
        found.extend(read);
        Ok(found)
    }

    /// The catalog's revision: every catalog write moves it, on any node.
    async fn catalog_revision(&self) -> Result<i64, StoreError> {
        let row = query("SELECT revision FROM catalog_revision WHERE singleton = 1")
            .fetch_one(self.reader())
            .await?;
        row.try_get("revision")
    }

    async fn read_catalog_items(&self, sku_ids: &[&SkuId]) -> Result<PricedArticles, StoreError> {
        let mut found = HashMap::with_capacity(sku_ids.len());
        for chunk in sku_ids.chunks(IMPORT_CHUNK) {
            let sql = format!(
                "SELECT sku_id, name, price_cents, vat_rate, created_at, updated_at FROM skus WHERE sku_id IN ({})",
                placeholders(1, chunk.len())
            );
            let mut query = query(sql);
            for sku_id in chunk {
                query = query.bind(sku_id.as_str());
            }
            for row in query.fetch_all(self.reader()).await? {
                let record = catalog_from_row(&row)?;
                found.insert(record.item.sku_id.clone(), Arc::new(record.item));
            }
        }
        Ok(found)
    }
}

fn put_items<'a>(conn: &'a mut Conn, input: &'a PutItems) -> BoxFuture<'a, Result<ImportSummary, StoreError>> {
    Box::pin(async move {
        let mut created = 0;
        for chunk in input.items.chunks(IMPORT_CHUNK) {
            let sql = format!(
                "SELECT COUNT(*) AS existing FROM skus WHERE sku_id IN ({})",
                placeholders(1, chunk.len())
            );
            let mut count = query(sql);
            for item in chunk {
                count = count.bind(item.sku_id.as_str());
            }
            let existing: i64 = count.fetch_one(&mut *conn).await?.try_get("existing")?;
            created += chunk.len() - existing as usize;

            let rows = (0..chunk.len())
                .map(|i| {
                    let p = i * 5;
                    format!(
                        "(${}, ${}, ${}, ${}, ${}, ${})",
                        p + 1,
                        p + 2,
                        p + 3,
                        p + 4,
                        p + 5,
                        p + 5
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!(
                "INSERT INTO skus (sku_id, name, price_cents, vat_rate, created_at, updated_at) VALUES {rows} \
                 ON CONFLICT (sku_id) DO UPDATE SET name = excluded.name, price_cents = excluded.price_cents, \
                     vat_rate = excluded.vat_rate, updated_at = excluded.updated_at"
            );
            let mut insert = query(sql);
            for item in chunk {
                insert = insert
                    .bind(item.sku_id.as_str())
                    .bind(&item.name)
                    .bind(item.price.get())
                    .bind(item.vat_rate.hundredths())
                    .bind(input.now);
            }
            insert.execute(&mut *conn).await?;
        }
        query("UPDATE catalog_revision SET revision = revision + 1 WHERE singleton = 1")
            .execute(&mut *conn)
            .await?;
        Ok(ImportSummary {
            created,
            updated: input.items.len() - created,
        })
    })
}

/// `$first, $first+1, ...` for `count` parameters.
pub(crate) fn placeholders(first: usize, count: usize) -> String {
    (first..first + count)
        .map(|n| format!("${n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn catalog_from_row(row: &Row) -> Result<CatalogRecord, StoreError> {
    let price: i64 = row.try_get("price_cents")?;
    let vat: i64 = row.try_get("vat_rate")?;
    Ok(CatalogRecord {
        item: CatalogItem {
            sku_id: SkuId::from_trusted(row.try_get("sku_id")?),
            name: row.try_get("name")?,
            price: Cents::new(price).ok_or_else(|| StoreError::Corrupt(format!("price {price} out of range")))?,
            vat_rate: VatRate::from_hundredths(vat)
                .ok_or_else(|| StoreError::Corrupt(format!("VAT rate {vat} out of range")))?,
        },
        created_at: from_micros(row.try_get("created_at")?),
        updated_at: from_micros(row.try_get("updated_at")?),
    })
}
