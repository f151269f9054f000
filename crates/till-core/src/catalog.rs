//! The price authority: catalog articles and the prices each has had or will have.
//!
//! A price is effective-dated: a sale is priced with the price in force when it was rung
//! (its `issuedAt`), so that a sale rung offline before a price change and sent after it is
//! charged what the till showed. The VAT rate is dated with the price: the pair is what an
//! article costs.
//!
//! A store may have prices of its own for an article, effective-dated too. They override the
//! price only: the VAT rate is the catalog's, as the law of the article sets it, not the store.

use crate::ids::SkuId;
use crate::money::{Cents, VatRate};
use jiff::{SignedDuration, Timestamp};
use std::sync::Arc;

/// One article as the back office provisions it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogItem {
    pub sku_id: SkuId,
    pub name: String,
    /// Unit price including VAT.
    pub price: Cents,
    pub vat_rate: VatRate,
}

/// A price and VAT rate, in force from `effective_from` until the next one of its article.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DatedPrice {
    pub effective_from: Timestamp,
    /// Unit price including VAT.
    pub price: Cents,
    pub vat_rate: VatRate,
}

/// A store's own price for an article, in force from `effective_from` until the next one of
/// the store for that article. The VAT rate stays the catalog's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StorePrice {
    pub effective_from: Timestamp,
    /// Unit price including VAT; None where the store's own price was removed: from this
    /// instant it sells at the catalog's.
    pub price: Option<Cents>,
}

/// Something in force from an instant until the next of its schedule.
pub trait Dated {
    fn effective_from(&self) -> Timestamp;
}

impl Dated for DatedPrice {
    fn effective_from(&self) -> Timestamp {
        self.effective_from
    }
}

impl Dated for StorePrice {
    fn effective_from(&self) -> Timestamp {
        self.effective_from
    }
}

/// Every price of one article, oldest first, one per instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule<P>(Vec<P>);

/// The catalog's prices of one article.
pub type PriceSchedule = Schedule<DatedPrice>;

/// One store's own prices of one article.
pub type StorePrices = Schedule<StorePrice>;

impl<P> Default for Schedule<P> {
    fn default() -> Self {
        Schedule(Vec::new())
    }
}

impl<P: Dated> Schedule<P> {
    /// The schedule of `prices`, in any order; of two at one instant the later in `prices` stays.
    pub fn new(mut prices: Vec<P>) -> Schedule<P> {
        prices.reverse();
        prices.sort_by_key(P::effective_from);
        prices.dedup_by_key(|p| p.effective_from());
        Schedule(prices)
    }

    /// The price in force at `at`: the latest one that started at or before it. None before
    /// the first.
    pub fn at(&self, at: Timestamp) -> Option<&P> {
        let started = self.0.partition_point(|p| p.effective_from() <= at);
        started.checked_sub(1).map(|last| &self.0[last])
    }

    /// The prices that start after `at`, soonest first: those scheduled, seen at `at`.
    pub fn after(&self, at: Timestamp) -> &[P] {
        &self.0[self.0.partition_point(|p| p.effective_from() <= at)..]
    }

    /// The earliest price, if any.
    pub fn first(&self) -> Option<&P> {
        self.0.first()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl StorePrices {
    /// The store's own price in force at `at`; None where it sells at the catalog's.
    pub fn price_at(&self, at: Timestamp) -> Option<Cents> {
        self.at(at).and_then(|own| own.price)
    }

    /// Whether the store has a price of its own at `at` or scheduled after it.
    pub fn any_from(&self, at: Timestamp) -> bool {
        self.price_at(at).is_some() || self.after(at).iter().any(|own| own.price.is_some())
    }
}

/// An article with its whole price schedule: what a node keeps to price sales rung at any
/// instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Article {
    pub sku_id: SkuId,
    pub name: String,
    pub prices: PriceSchedule,
}

/// An article as priced at one instant.
#[derive(Clone, Debug)]
pub struct ArticleAt {
    pub article: Arc<Article>,
    pub price: Cents,
    pub vat_rate: VatRate,
}

impl Article {
    /// The article at the price in force at `at`; None when it had no price yet.
    pub fn at(self: &Arc<Self>, at: Timestamp) -> Option<ArticleAt> {
        let price = self.prices.at(at)?;
        Some(ArticleAt {
            article: self.clone(),
            price: price.price,
            vat_rate: price.vat_rate,
        })
    }

    /// The article as a store sells it at `at`, given the store's own prices of it: the
    /// store's price in force then if it has one, else the catalog's. Precedence holds per
    /// instant: before its first own price the store sells at the catalog's. Before the
    /// article's first price it sells as at that price's start: a till's clock a little behind
    /// the back office's, or an `issuedAt` to the minute, may name an instant just before the
    /// article was created. None only for an article without any price.
    pub fn in_store(self: &Arc<Self>, own: Option<&StorePrices>, at: Timestamp) -> Option<ArticleAt> {
        let at = at.max(self.prices.first()?.effective_from);
        let mut in_force = self.at(at)?;
        if let Some(own) = own.and_then(|own| own.price_at(at)) {
            in_force.price = own;
        }
        Some(in_force)
    }
}

/// How far before now a requested start may lie and still be read as now: the back office's
/// clock and the server's differ by a few seconds.
pub const START_TOLERANCE: SignedDuration = SignedDuration::from_secs(5);

/// A price asked to start before now: sales already booked were priced with the one then in
/// force, so a price cannot change in the past.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a price cannot start in the past")]
pub struct StartsInThePast;

/// When a price written at `now` starts: at `requested` when it is later, else now. A start
/// further in the past than [`START_TOLERANCE`] is refused. Instants are kept to the
/// microsecond, as they are stored, so that the same `requested` names the same price again.
pub fn price_starts(requested: Option<Timestamp>, now: Timestamp) -> Result<Timestamp, StartsInThePast> {
    let now = to_microsecond(now);
    let Some(requested) = requested.map(to_microsecond) else {
        return Ok(now);
    };
    let earliest = now.checked_sub(START_TOLERANCE).unwrap_or(now);
    if requested < earliest {
        return Err(StartsInThePast);
    }
    Ok(requested.max(now))
}

fn to_microsecond(at: Timestamp) -> Timestamp {
    Timestamp::from_microsecond(at.as_microsecond()).unwrap_or(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn price(from: &str, cents: i64) -> DatedPrice {
        DatedPrice {
            effective_from: at(from),
            price: Cents::new(cents).unwrap(),
            vat_rate: VatRate::from_hundredths(2000).unwrap(),
        }
    }

    fn cents_at(schedule: &PriceSchedule, instant: &str) -> Option<i64> {
        schedule.at(at(instant)).map(|p| p.price.get())
    }

    #[test]
    fn the_price_in_force_is_the_latest_started() {
        let schedule = PriceSchedule::new(vec![
            price("2026-03-01T00:00:00Z", 300),
            price("2026-01-01T00:00:00Z", 100),
            price("2026-02-01T00:00:00Z", 200),
        ]);
        assert_eq!(
            cents_at(&schedule, "2025-12-31T23:59:59.999999Z"),
            None,
            "before the first"
        );
        assert_eq!(cents_at(&schedule, "2026-01-01T00:00:00Z"), Some(100), "at the first");
        assert_eq!(cents_at(&schedule, "2026-01-31T23:59:59.999999Z"), Some(100));
        assert_eq!(cents_at(&schedule, "2026-02-01T00:00:00Z"), Some(200), "at a boundary");
        assert_eq!(cents_at(&schedule, "2026-03-01T00:00:00Z"), Some(300));
        assert_eq!(cents_at(&schedule, "2030-01-01T00:00:00Z"), Some(300), "after the last");
        let scheduled: Vec<i64> = schedule
            .after(at("2026-01-15T00:00:00Z"))
            .iter()
            .map(|p| p.price.get())
            .collect();
        assert_eq!(scheduled, [200, 300], "soonest first");
        assert!(schedule.after(at("2026-03-01T00:00:00Z")).is_empty());
        assert_eq!(PriceSchedule::default().at(at("2026-01-01T00:00:00Z")), None);
    }

    #[test]
    fn of_two_prices_at_one_instant_the_later_written_stays() {
        let schedule = PriceSchedule::new(vec![
            price("2026-01-01T00:00:00Z", 100),
            price("2026-02-01T00:00:00Z", 200),
            price("2026-02-01T00:00:00Z", 250),
        ]);
        assert_eq!(cents_at(&schedule, "2026-02-01T00:00:00Z"), Some(250));
        assert_eq!(schedule.after(at("2026-01-01T00:00:00Z")).len(), 1);
    }

    #[test]
    fn a_store_price_overrides_the_catalog_from_its_instant_on() {
        let article = Arc::new(Article {
            sku_id: SkuId::parse(&"a".repeat(64)).unwrap(),
            name: "Mug".to_owned(),
            prices: PriceSchedule::new(vec![
                price("2026-01-01T00:00:00Z", 100),
                DatedPrice {
                    vat_rate: VatRate::from_hundredths(1000).unwrap(),
                    ..price("2026-03-01T00:00:00Z", 300)
                },
            ]),
        });
        let own = |from: &str, cents: Option<i64>| StorePrice {
            effective_from: at(from),
            price: cents.map(|cents| Cents::new(cents).unwrap()),
        };
        let store = StorePrices::new(vec![
            own("2026-02-01T12:00:00Z", Some(150)),
            own("2026-04-01T00:00:00Z", Some(90)),
            own("2026-05-01T00:00:00Z", None),
        ]);
        let sold = |instant: &str| {
            article
                .in_store(Some(&store), at(instant))
                .map(|a| (a.price.get(), a.vat_rate.hundredths()))
        };
        assert_eq!(
            sold("2025-12-31T23:58:30Z"),
            Some((100, 2000)),
            "before the article's first price, its first"
        );
        assert_eq!(
            sold("2026-02-01T11:59:59.999999Z"),
            Some((100, 2000)),
            "before the store's first price, the catalog's"
        );
        assert_eq!(
            sold("2026-02-01T12:00:00Z"),
            Some((150, 2000)),
            "the store's from its instant"
        );
        assert_eq!(
            sold("2026-03-15T00:00:00Z"),
            Some((150, 1000)),
            "a catalog change moves the VAT rate, not the store's price"
        );
        assert_eq!(sold("2026-04-01T00:00:00Z"), Some((90, 1000)));
        assert_eq!(
            sold("2026-05-01T00:00:00Z"),
            Some((300, 1000)),
            "once its own price is removed, the catalog's"
        );
        assert!(store.any_from(at("2026-01-01T00:00:00Z")), "scheduled");
        assert!(store.any_from(at("2026-04-30T00:00:00Z")));
        assert!(!store.any_from(at("2026-05-01T00:00:00Z")), "removed");
        let elsewhere = article.in_store(None, at("2026-03-15T00:00:00Z")).unwrap();
        assert_eq!(elsewhere.price.get(), 300, "a store with no price of its own");
        let empty = article.in_store(Some(&StorePrices::default()), at("2026-03-15T00:00:00Z"));
        assert_eq!(empty.unwrap().price.get(), 300);
    }

    #[test]
    fn a_price_starts_now_or_later_never_before() {
        let now = at("2026-03-01T10:00:00.123456789Z");
        let micro = at("2026-03-01T10:00:00.123456Z");
        assert_eq!(price_starts(None, now), Ok(micro));
        assert_eq!(
            price_starts(Some(at("2026-03-02T00:00:00Z")), now),
            Ok(at("2026-03-02T00:00:00Z"))
        );
        assert_eq!(
            price_starts(Some(at("2026-03-01T09:59:58Z")), now),
            Ok(micro),
            "a start a few seconds ago is now"
        );
        assert_eq!(
            price_starts(Some(at("2026-03-01T09:59:50Z")), now),
            Err(StartsInThePast)
        );
        assert_eq!(
            price_starts(Some(at("2025-03-01T10:00:00Z")), now),
            Err(StartsInThePast)
        );
    }
}
