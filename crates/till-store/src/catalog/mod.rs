//! The price authority: articles, and every price each has had or will have (table
//! `sku_prices`, migration 0008). A sale is priced with the prices in force when it was rung.

use crate::cache::insert_within;
use crate::db::Store;
use crate::engine::Engine;
use crate::error::StoreError;
use crate::page::{Keyset, Window};
use crate::sql::{Row, query};
use jiff::Timestamp;
use std::collections::HashMap;
use std::sync::Arc;
use till_core::catalog::{Article, ArticleAt, CatalogItem, DatedPrice, PriceSchedule, StorePrices};
use till_core::ids::{SkuId, StoreId};
use till_core::instant::{from_micros, to_micros};
use till_core::money::{Cents, VatRate};

mod writes;

pub use till_app::storage::catalog::{CatalogRecord, CatalogWrite, ImportSummary};
use writes::{PutItems, put_items};
pub(crate) use writes::{Rows, placeholders, value_rows};

/// The articles this node priced lately, each with its whole schedule, by SKU, and the own
/// prices of the stores it priced them for (see [`crate::cache`]): a moved catalog revision
/// empties them, and a store price write moves it too. A price that starts later takes effect
/// at its instant with no write then, since the schedules are what is kept. The articles are
/// shared with the look-ups that found them: a sale takes a reference per line rather than a
/// copy of the article's texts.
#[derive(Default)]
pub(crate) struct PricedArticles {
    articles: HashMap<SkuId, Arc<Article>>,
    /// By store, then article: the store's own prices, empty where it has none (most), so
    /// that a sale finds out with no query that the catalog's price is the store's.
    store_prices: HashMap<StoreId, HashMap<SkuId, StorePrices>>,
    /// How many schedules `store_prices` holds, over all stores.
    store_entries: usize,
}

impl PricedArticles {
    /// The article as a store sells it at `at`, given what this node holds of the store's
    /// prices (`store`, looked up once per sale); `Err` when it does not hold the article or
    /// the store's prices of it yet. `Ok(None)` for an article without any price.
    fn in_store(
        &self,
        store: Option<&HashMap<SkuId, StorePrices>>,
        sku_id: &SkuId,
        at: Timestamp,
    ) -> Result<Option<ArticleAt>, Missing> {
        let article = self.articles.get(sku_id).ok_or(Missing)?;
        let own = store.and_then(|own| own.get(sku_id)).ok_or(Missing)?;
        Ok(article.in_store(Some(own), at))
    }

    /// Keeps what was read for `store_id`: its own prices of each of `sku_ids` (none where
    /// `own` has none). A full map starts over, which bounds its memory.
    fn keep_store_prices(&mut self, store_id: &StoreId, sku_ids: &[&SkuId], own: &HashMap<SkuId, StorePrices>) {
        if self.store_entries + sku_ids.len() > STORE_PRICE_ENTRIES {
            self.store_prices.clear();
            self.store_entries = 0;
        }
        let by_sku = self.store_prices.entry(store_id.clone()).or_default();
        for &sku_id in sku_ids {
            let prices = own.get(sku_id).cloned().unwrap_or_default();
            if by_sku.insert(sku_id.clone(), prices).is_none() {
                self.store_entries += 1;
            }
        }
    }
}

/// Not held by this node's cache.
struct Missing;

/// The most articles a node keeps priced, which bounds their memory (a few MiB) whatever the
/// size of the catalog.
const PRICED_ARTICLES: usize = 20_000;

/// The most (store, article) pairs whose store prices a node keeps, over all stores: a few
/// MiB too, whatever the number of stores.
const STORE_PRICE_ENTRIES: usize = 50_000;

/// Rows per multi-row statement in a bulk import or a read of many articles: 5 parameters
/// each stays far below the bind-parameter limits of both engines.
const IMPORT_CHUNK: usize = 500;

/// The columns of an article as the back office reads it, from `skus s`, `$1` being the
/// instant it is read at: its row; its prices from the one in force then on, by start, each
/// `from:cents:vat`, comma-separated; its barcodes in their order, comma-separated (digits
/// only). One statement reads a page of articles whole.
macro_rules! article_columns {
    () => {
        "s.sku_id, s.name, s.price_cents, s.vat_rate, s.created_at, s.updated_at, \
         (SELECT string_agg(p.effective_from || ':' || p.price_cents || ':' || p.vat_rate, ',' ORDER BY p.effective_from) \
             FROM sku_prices p WHERE p.sku_id = s.sku_id AND p.effective_from >= COALESCE((SELECT MAX(q.effective_from) \
                 FROM sku_prices q WHERE q.sku_id = s.sku_id AND q.effective_from <= $1), p.effective_from)) AS prices, \
         (SELECT string_agg(b.barcode, ',' ORDER BY b.position) FROM sku_barcodes b WHERE b.sku_id = s.sku_id) AS barcodes"
    };
}
pub(crate) use article_columns;

pub(crate) const SELECT_SKUS: &str = concat!("SELECT ", article_columns!(), " FROM skus s");
const SELECT_SKU: &str = concat!("SELECT ", article_columns!(), " FROM skus s WHERE s.sku_id = $2");

impl Store {
    pub async fn put_catalog_item(
        &self,
        write: CatalogWrite,
        now: Timestamp,
    ) -> Result<(CatalogRecord, bool), StoreError> {
        let sku_id = write.item.sku_id.clone();
        let summary = self.write_catalog(vec![write], now).await?;
        let record = self
            .get_catalog_item(&sku_id, now)
            .await?
            .ok_or_else(|| StoreError::Corrupt("article vanished after it was written".to_owned()))?;
        Ok((record, summary.created == 1))
    }

    /// Creates or replaces every article in one transaction, each priced from now: all or
    /// nothing.
    pub async fn import_catalog(&self, items: Vec<CatalogItem>, now: Timestamp) -> Result<ImportSummary, StoreError> {
        let writes = items
            .into_iter()
            .map(|item| CatalogWrite {
                item,
                starts: now,
                barcodes: None,
            })
            .collect();
        self.write_catalog(writes, now).await
    }

    pub async fn write_catalog(
        &self,
        mut writes: Vec<CatalogWrite>,
        now: Timestamp,
    ) -> Result<ImportSummary, StoreError> {
        // In key order, each statement of a big import walks its indexes' pages in turn
        // rather than at random.
        writes.sort_by(|a, b| a.item.sku_id.cmp(&b.item.sku_id));
        let summary = self
            .write(PutItems { writes, now }, |c, i| Box::pin(put_items(c, i)))
            .await?;
        // This node prices what it just wrote from its next sale on.
        self.catalog_cache().forget();
        Ok(summary)
    }

    /// After a chunk of a bulk import, on PostgreSQL: the planner's statistics of the
    /// catalog's tables, and their pages marked visible to all, which autovacuum would do
    /// only later. The next statements are planned for the tables as they now are (not as
    /// empty, say), and a search reads the words' index alone. SQLite keeps no statistics.
    pub async fn settle_catalog(&self) -> Result<(), StoreError> {
        if self.engine() == Engine::Postgres {
            crate::dry_run::stop_before_writing().await;
            let mut conn = self.reader().acquire().await?;
            conn.run_script("VACUUM (ANALYZE) skus, sku_prices, sku_barcodes, sku_words")
                .await?;
        }
        Ok(())
    }

    pub async fn get_catalog_item(&self, sku_id: &SkuId, now: Timestamp) -> Result<Option<CatalogRecord>, StoreError> {
        let row = query(SELECT_SKU)
            .bind(to_micros(now))
            .bind(sku_id.as_str())
            .fetch_optional(self.reader())
            .await?;
        row.map(|row| record(&row, now)).transpose()
    }

    pub async fn list_catalog_items(
        &self,
        window: &Window<SkuId>,
        now: Timestamp,
    ) -> Result<Vec<CatalogRecord>, StoreError> {
        let after = window.after.as_ref().map(SkuId::as_str);
        let rows = Keyset::binding(SELECT_SKUS, to_micros(now))
            .by_id("s.sku_id", after, window.take)
            .fetch_all(self.reader())
            .await?;
        rows.iter().map(|row| record(row, now)).collect()
    }

    pub async fn catalog_items(
        &self,
        store_id: &StoreId,
        sku_ids: &[&SkuId],
        at: Timestamp,
    ) -> Result<HashMap<SkuId, ArticleAt>, StoreError> {
        let cache = self.catalog_cache();
        cache
            .check(
                async || self.catalog_revision().await,
                async || Ok(PricedArticles::default()),
            )
            .await?;
        let seen = cache.look(|priced| {
            let mut found = HashMap::with_capacity(sku_ids.len());
            let mut missing = Vec::new();
            let store = priced.store_prices.get(store_id);
            for &sku_id in sku_ids {
                match priced.in_store(store, sku_id, at) {
                    Ok(Some(in_force)) => {
                        found.insert(sku_id.clone(), in_force);
                    }
                    Ok(None) => {}
                    Err(Missing) => missing.push(sku_id),
                }
            }
            (found, missing)
        });
        if seen.found.1.is_empty() {
            return Ok(seen.found.0);
        }
        let missing = &seen.found.1;
        let read = self.read_articles(missing).await?;
        let own = self.read_store_prices(store_id, missing).await?;
        cache.keep(&seen, |priced| {
            for article in &read {
                insert_within(
                    &mut priced.articles,
                    PRICED_ARTICLES,
                    article.sku_id.clone(),
                    article.clone(),
                );
            }
            priced.keep_store_prices(store_id, missing, &own);
        });
        let mut found = seen.found.0;
        found.extend(read.iter().filter_map(|article| {
            let in_force = article.in_store(own.get(&article.sku_id), at)?;
            Some((article.sku_id.clone(), in_force))
        }));
        Ok(found)
    }

    /// The catalog's revision: every catalog write moves it, on any node.
    async fn catalog_revision(&self) -> Result<i64, StoreError> {
        let row = query("SELECT revision FROM catalog_revision WHERE singleton = 1")
            .fetch_one(self.reader())
            .await?;
        row.try_get("revision")
    }

    /// The articles among `sku_ids`, each with every price it has had or will have.
    async fn read_articles(&self, sku_ids: &[&SkuId]) -> Result<Vec<Arc<Article>>, StoreError> {
        let mut articles = Vec::with_capacity(sku_ids.len());
        for chunk in sku_ids.chunks(IMPORT_CHUNK) {
            let sql = format!(
                "SELECT s.sku_id, s.name, p.effective_from, p.price_cents, p.vat_rate \
                 FROM skus s JOIN sku_prices p ON p.sku_id = s.sku_id \
                 WHERE s.sku_id IN ({}) ORDER BY s.sku_id, p.effective_from",
                placeholders(1, chunk.len())
            );
            let mut query = query(sql);
            for sku_id in chunk {
                query = query.bind(sku_id.as_str());
            }
            // The rows of one article follow each other.
            let mut current: Option<(String, String, Vec<DatedPrice>)> = None;
            for row in query.fetch_all(self.reader()).await? {
                let sku_id: String = row.try_get("sku_id")?;
                let price = dated_price(&row)?;
                match current.as_mut() {
                    Some((id, _, prices)) if *id == sku_id => prices.push(price),
                    _ => {
                        let next = (sku_id, row.try_get("name")?, vec![price]);
                        articles.extend(current.replace(next).map(article));
                    }
                }
            }
            articles.extend(current.map(article));
        }
        Ok(articles)
    }
}

/// The article of a row read with [`article_columns`], as the back office reads it at `now`.
pub(crate) fn record(row: &Row, now: Timestamp) -> Result<CatalogRecord, StoreError> {
    let prices: Option<String> = row.try_get("prices")?;
    let schedule = PriceSchedule::new(
        prices
            .iter()
            .flat_map(|prices| prices.split(','))
            .map(dated_price_of)
            .collect::<Result<_, _>>()?,
    );
    let mut record = catalog_from_row(row, &schedule, now)?;
    let barcodes: Option<String> = row.try_get("barcodes")?;
    record.barcodes = barcodes
        .iter()
        .flat_map(|barcodes| barcodes.split(','))
        .map(str::to_owned)
        .collect();
    Ok(record)
}

/// A price as [`article_columns`] writes it: `from:cents:vat`.
fn dated_price_of(text: &str) -> Result<DatedPrice, StoreError> {
    let corrupt = || StoreError::Corrupt(format!("a price read as {text:?}"));
    let mut fields = text.split(':').map(|field| field.parse::<i64>().map_err(|_| corrupt()));
    let (Some(from), Some(price), Some(vat), None) = (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Err(corrupt());
    };
    Ok(DatedPrice {
        effective_from: from_micros(from?),
        price: cents(price?)?,
        vat_rate: vat_rate(vat?)?,
    })
}

fn article((sku_id, name, prices): (String, String, Vec<DatedPrice>)) -> Arc<Article> {
    Arc::new(Article {
        sku_id: SkuId::from_trusted(sku_id),
        name,
        prices: PriceSchedule::new(prices),
    })
}

/// An article of `skus` at the price `schedule` has in force at `now`; before its first
/// price (a clock behind the one that wrote it), at the price of its last write.
fn catalog_from_row(row: &Row, schedule: &PriceSchedule, now: Timestamp) -> Result<CatalogRecord, StoreError> {
    let (price, vat_rate) = match schedule.at(now) {
        Some(in_force) => (in_force.price, in_force.vat_rate),
        None => (
            cents(row.try_get("price_cents")?)?,
            self::vat_rate(row.try_get("vat_rate")?)?,
        ),
    };
    Ok(CatalogRecord {
        item: CatalogItem {
            sku_id: SkuId::from_trusted(row.try_get("sku_id")?),
            name: row.try_get("name")?,
            price,
            vat_rate,
        },
        scheduled: schedule.after(now).to_vec(),
        barcodes: Vec::new(),
        created_at: from_micros(row.try_get("created_at")?),
        updated_at: from_micros(row.try_get("updated_at")?),
    })
}

fn dated_price(row: &Row) -> Result<DatedPrice, StoreError> {
    Ok(DatedPrice {
        effective_from: from_micros(row.try_get("effective_from")?),
        price: cents(row.try_get("price_cents")?)?,
        vat_rate: vat_rate(row.try_get("vat_rate")?)?,
    })
}

fn cents(price: i64) -> Result<Cents, StoreError> {
    Cents::new(price).ok_or_else(|| StoreError::Corrupt(format!("price {price} out of range")))
}

fn vat_rate(vat: i64) -> Result<VatRate, StoreError> {
    VatRate::from_hundredths(vat).ok_or_else(|| StoreError::Corrupt(format!("VAT rate {vat} out of range")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_rows_number_each_row_after_the_last_and_end_with_the_shared_tail() {
        assert_eq!(value_rows(2, 2, 2, ", $1"), "($2, $3, $1), ($4, $5, $1)");
        assert_eq!(value_rows(1, 3, 1, ""), "($1, $2, $3)");
    }
}
