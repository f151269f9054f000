//! The price authority: articles with their barcodes and effective-dated prices, written one at
//! a time or imported together, read by id, by barcode or by the words of their name. A
//! price starts at the instant a write names, or now, never before now: sales already booked
//! were priced with the price in force then.

use crate::app::App;
use crate::refusal::Error;
use crate::storage::Window;
use jiff::Timestamp;
use till_core::barcode::{Barcode, Gtin};
use till_core::catalog::{CatalogItem, StartsInThePast, price_starts};
use till_core::ids::SkuId;
use till_core::words::NameQuery;

pub use crate::storage::catalog::CatalogRecord;
pub use crate::storage::catalog::CatalogWrite;
pub use crate::storage::catalog::ImportSummary;
pub use crate::storage::catalog::WordKey;

/// An article as a request writes it, before its price's start is checked against the clock.
pub struct NewArticle {
    pub item: CatalogItem,
    /// When its price and VAT rate apply; `None`: now.
    pub effective_from: Option<Timestamp>,
    /// Its barcodes from now on; `None` leaves them as they are.
    pub barcodes: Option<Vec<Barcode>>,
}

impl NewArticle {
    /// The write made at `now`, its price starting at `effective_from` or now.
    pub fn write(self, now: Timestamp) -> Result<CatalogWrite, StartsInThePast> {
        Ok(CatalogWrite {
            starts: price_starts(self.effective_from, now)?,
            item: self.item,
            barcodes: self.barcodes,
        })
    }
}

/// What writing one article did.
pub enum Put {
    Written {
        record: CatalogRecord,
        created: bool,
    },
    /// Its price was asked to start before now; nothing was written.
    StartsInThePast,
}

/// What an import did.
pub enum Import {
    Written(ImportSummary),
    /// The article at `index` asked its price to start before now; nothing was written.
    StartsInThePast {
        index: usize,
    },
}

/// Creates or replaces one article, or schedules its next price.
pub async fn put(app: &App, article: NewArticle) -> Result<Put, Error> {
    let now = app.now();
    let Ok(write) = article.write(now) else {
        return Ok(Put::StartsInThePast);
    };
    let (record, created) = app.catalog().put_catalog_item(write, now).await?;
    Ok(Put::Written { record, created })
}

/// Creates or replaces every article in one transaction, all or none.
pub async fn import(app: &App, articles: Vec<NewArticle>) -> Result<Import, Error> {
    let now = app.now();
    let mut writes = Vec::with_capacity(articles.len());
    for (index, article) in articles.into_iter().enumerate() {
        match article.write(now) {
            Ok(write) => writes.push(write),
            Err(StartsInThePast) => return Ok(Import::StartsInThePast { index }),
        }
    }
    Ok(Import::Written(app.catalog().write_catalog(writes, now).await?))
}

/// One article, at the price in force now, with those scheduled after.
pub async fn article(app: &App, sku_id: &SkuId) -> Result<Option<CatalogRecord>, Error> {
    Ok(app.catalog().get_catalog_item(sku_id, app.now()).await?)
}

/// The article carrying a barcode, in any of its forms.
pub async fn by_barcode(app: &App, gtin: &Gtin) -> Result<Option<CatalogRecord>, Error> {
    let Some(sku_id) = app.catalog().sku_of_barcode(gtin).await? else {
        return Ok(None);
    };
    article(app, &sku_id).await
}

/// The articles by id, in `window`.
pub async fn articles(app: &App, window: &Window<SkuId>) -> Result<Vec<CatalogRecord>, Error> {
    Ok(app.catalog().list_catalog_items(window, app.now()).await?)
}

/// The articles whose name holds the words of `name`, in `window`, each with the key its page
/// ends on.
pub async fn search(
    app: &App,
    name: &NameQuery,
    window: &Window<WordKey>,
) -> Result<Vec<(WordKey, CatalogRecord)>, Error> {
    Ok(app.catalog().search_catalog(name, window, app.now()).await?)
}
