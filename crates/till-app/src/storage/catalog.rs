//! The catalog: articles as written and read, the search key of a word, and a store's own
//! prices.

use super::*;
use jiff::Timestamp;
use std::collections::HashMap;
use till_core::barcode::Barcode;
use till_core::barcode::Gtin;
use till_core::catalog::{ArticleAt, CatalogItem, DatedPrice, StorePrices};
use till_core::ids::{SkuId, StoreId};
use till_core::money::Cents;
use till_core::words::NameQuery;

/// One article to write: its name applies at once, its price and VAT rate from `starts`
/// (see [`till_core::catalog::price_starts`]).
#[derive(Clone, Debug)]
pub struct CatalogWrite {
    pub item: CatalogItem,
    pub starts: Timestamp,
    /// The article's barcodes from now on; `None` leaves them as they are.
    pub barcodes: Option<Vec<Barcode>>,
}

/// An article as the back office reads it.
#[derive(Clone, Debug)]
pub struct CatalogRecord {
    /// The article at the price in force now.
    pub item: CatalogItem,
    /// The prices that start later, soonest first.
    pub scheduled: Vec<DatedPrice>,
    /// Its barcodes as written, in their order.
    pub barcodes: Vec<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// Counts of a bulk import.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImportSummary {
    pub created: usize,
    pub updated: usize,
}

/// Where a page of a search by name ends: the word it was found by and the article.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WordKey {
    pub word: String,
    pub sku_id: SkuId,
}

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

/// The catalog: articles, their barcodes, words and prices, and the prices of each store.
#[async_trait::async_trait]
pub trait Catalog: Send + Sync {
    /// The articles among `sku_ids` that the authority carries, each at the price `store_id`
    /// sells it at `at` (the store's own in force then, else the catalog's), from this node's
    /// cache where it has them (see [`super::kept`]). An article whose first price starts
    /// after `at` is sold at that first price (see [`Article::in_store`]).
    async fn catalog_items(
        &self,
        store_id: &StoreId,
        sku_ids: &[&SkuId],
        at: Timestamp,
    ) -> Result<HashMap<SkuId, ArticleAt>, StoreError>;
    /// One article, at the price in force at `now`, with those scheduled after.
    async fn get_catalog_item(&self, sku_id: &SkuId, now: Timestamp) -> Result<Option<CatalogRecord>, StoreError>;
    /// The articles by id, in `window`, as `get_catalog_item` reads one.
    async fn list_catalog_items(
        &self,
        window: &Window<SkuId>,
        now: Timestamp,
    ) -> Result<Vec<CatalogRecord>, StoreError>;
    /// Creates or replaces one article; `true` when it was created.
    async fn put_catalog_item(&self, write: CatalogWrite, now: Timestamp) -> Result<(CatalogRecord, bool), StoreError>;
    /// Creates or replaces every article in one transaction: all or nothing. A price that
    /// starts now replaces the one in force (a price the same as it writes no row); one that
    /// starts later is scheduled, and replaces one scheduled at the same instant. An article
    /// not in the catalog yet must be priced from now ([`Rule::FirstPriceLater`]).
    async fn write_catalog(&self, writes: Vec<CatalogWrite>, now: Timestamp) -> Result<ImportSummary, StoreError>;
    /// The articles whose name holds every whole word of `search` and a word starting with
    /// its prefix, in `window`, each with the key its page ends on.
    async fn search_catalog(
        &self,
        search: &NameQuery,
        window: &Window<WordKey>,
        now: Timestamp,
    ) -> Result<Vec<(WordKey, CatalogRecord)>, StoreError>;
    /// The article `gtin` belongs to.
    async fn sku_of_barcode(&self, gtin: &Gtin) -> Result<Option<SkuId>, StoreError>;
    /// Writes a store's price for an article: one that starts now replaces the one in force
    /// (the same price again writes nothing), one that starts later is scheduled and replaces
    /// one scheduled at the same instant. The store and the article must exist. Answers the
    /// store's prices of the article, and whether it had no price of its own for it before.
    async fn put_store_price(&self, write: StorePriceWrite, now: Timestamp) -> Result<(StorePrices, bool), StoreError>;
    /// Removes a store's own price of an article from now on, with those scheduled: the store
    /// sells it at the catalog's price again. Sales already booked keep what they were charged,
    /// and a late sale rung before now still pays the store's price then. `false` when the
    /// store had no price of its own for the article. The store and the article must exist.
    async fn remove_store_price(&self, store_id: StoreId, sku_id: SkuId, now: Timestamp) -> Result<bool, StoreError>;
    /// Every price of its own a store has had or will have for an article; empty when none.
    async fn store_prices(&self, store_id: &StoreId, sku_id: &SkuId) -> Result<StorePrices, StoreError>;
}
