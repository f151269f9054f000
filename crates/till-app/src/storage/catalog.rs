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
    async fn catalog_items(
        &self,
        store_id: &StoreId,
        sku_ids: &[&SkuId],
        at: Timestamp,
    ) -> Result<HashMap<SkuId, ArticleAt>, StoreError>;
    async fn get_catalog_item(&self, sku_id: &SkuId, now: Timestamp) -> Result<Option<CatalogRecord>, StoreError>;
    async fn list_catalog_items(
        &self,
        window: &Window<SkuId>,
        now: Timestamp,
    ) -> Result<Vec<CatalogRecord>, StoreError>;
    async fn put_catalog_item(&self, write: CatalogWrite, now: Timestamp) -> Result<(CatalogRecord, bool), StoreError>;
    async fn write_catalog(&self, writes: Vec<CatalogWrite>, now: Timestamp) -> Result<ImportSummary, StoreError>;
    async fn search_catalog(
        &self,
        search: &NameQuery,
        window: &Window<WordKey>,
        now: Timestamp,
    ) -> Result<Vec<(WordKey, CatalogRecord)>, StoreError>;
    async fn sku_of_barcode(&self, gtin: &Gtin) -> Result<Option<SkuId>, StoreError>;
    async fn put_store_price(&self, write: StorePriceWrite, now: Timestamp) -> Result<(StorePrices, bool), StoreError>;
    async fn remove_store_price(&self, store_id: StoreId, sku_id: SkuId, now: Timestamp) -> Result<bool, StoreError>;
    async fn store_prices(&self, store_id: &StoreId, sku_id: &SkuId) -> Result<StorePrices, StoreError>;
}
