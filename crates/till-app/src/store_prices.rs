//! A store's own prices of an article: set or scheduled from an instant on, read as the store
//! sells the article now, removed. A store's own price overrides the catalog's in that store;
//! until its first one starts the store sells at the catalog's. A price starts at the instant
//! a write names, or now, never before now: sales already booked were priced then.

use crate::app::App;
use crate::refusal::Error;
use crate::storage::catalog::StorePriceWrite;
use jiff::Timestamp;
use till_core::catalog::{StorePrices, price_starts};
use till_core::ids::{SkuId, StoreId};
use till_core::money::Cents;

/// Whose price an article sells at in a store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The store's own price is in force.
    Store,
    /// The store's first own price starts later: until then it sells at the catalog's.
    Catalog,
}

/// A store's prices of an article as seen at `at`.
pub struct Seen {
    pub store_id: StoreId,
    pub sku_id: SkuId,
    /// Every price of its own the store has had or will have for the article.
    pub prices: StorePrices,
    pub at: Timestamp,
    /// The unit price the store sells the article at, at `at`.
    pub price: Cents,
    pub source: Source,
}

/// Why a store has no price of its own for an article to show or remove.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Absent {
    NoSuchStore,
    NotInCatalog,
    /// The store and the article exist; the store sells it at the catalog's price.
    NoPriceOfItsOwn,
}

/// What a write of a store's price did.
pub enum Put {
    Written {
        seen: Seen,
        /// The store had no price of its own for the article before.
        created: bool,
    },
    /// The price was asked to start before now; nothing was written.
    StartsInThePast,
    /// The article is not in the catalog now.
    NotInCatalog,
}

/// Sets a store's price of an article from `effective_from` (or now) on: one that starts now
/// replaces the one in force, one that starts later is scheduled. The store and the article
/// must exist.
pub async fn put(
    app: &App,
    store_id: StoreId,
    sku_id: SkuId,
    price: Cents,
    effective_from: Option<Timestamp>,
) -> Result<Put, Error> {
    let now = app.now();
    let Ok(starts) = price_starts(effective_from, now) else {
        return Ok(Put::StartsInThePast);
    };
    let write = StorePriceWrite {
        store_id: store_id.clone(),
        sku_id: sku_id.clone(),
        price,
        starts,
    };
    let (prices, created) = app.catalog().put_store_price(write, now).await?;
    Ok(match seen(app, store_id, sku_id, prices, now).await? {
        Some(seen) => Put::Written { seen, created },
        None => Put::NotInCatalog,
    })
}

/// The store's prices of an article now, when it has one of its own now or scheduled.
pub async fn read(app: &App, store_id: &StoreId, sku_id: &SkuId) -> Result<Result<Seen, Absent>, Error> {
    let now = app.now();
    let prices = app.catalog().store_prices(store_id, sku_id).await?;
    if !prices.any_from(now) {
        return Ok(Err(absent(app, store_id, sku_id, now).await?));
    }
    let seen = seen(app, store_id.clone(), sku_id.clone(), prices, now).await?;
    Ok(seen.ok_or(Absent::NotInCatalog))
}

/// Removes a store's own price of an article from now on, with those scheduled: the store sells
/// it at the catalog's price again. Sales already booked keep what they were charged.
pub async fn remove(app: &App, store_id: StoreId, sku_id: SkuId) -> Result<Result<(), Absent>, Error> {
    let now = app.now();
    if app
        .catalog()
        .remove_store_price(store_id.clone(), sku_id.clone(), now)
        .await?
    {
        return Ok(Ok(()));
    }
    Ok(Err(absent(app, &store_id, &sku_id, now).await?))
}

/// Why the store has no price of its own for the article: the store first, then the article.
async fn absent(app: &App, store_id: &StoreId, sku_id: &SkuId, now: Timestamp) -> Result<Absent, Error> {
    if app.people().get_store(store_id).await?.is_none() {
        return Ok(Absent::NoSuchStore);
    }
    if app.catalog().get_catalog_item(sku_id, now).await?.is_none() {
        return Ok(Absent::NotInCatalog);
    }
    Ok(Absent::NoPriceOfItsOwn)
}

/// The prices as seen at `now`: the catalog's price stands in until the store's first own
/// price starts. `None` when the article is not in the catalog.
async fn seen(
    app: &App,
    store_id: StoreId,
    sku_id: SkuId,
    prices: StorePrices,
    now: Timestamp,
) -> Result<Option<Seen>, Error> {
    let (price, source) = match prices.price_at(now) {
        Some(own) => (own, Source::Store),
        None => match app.catalog().get_catalog_item(&sku_id, now).await? {
            Some(catalog) => (catalog.item.price, Source::Catalog),
            None => return Ok(None),
        },
    };
    Ok(Some(Seen {
        store_id,
        sku_id,
        prices,
        at: now,
        price,
        source,
    }))
}
