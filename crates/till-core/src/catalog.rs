//! The price authority: catalog articles and the prices each has had or will have.
//!
//! A price is effective-dated: a sale is priced with the price in force when it was rung
//! (its `issuedAt`), so that a sale rung offline before a price change and sent after it is
//! charged what the till showed. The VAT rate is dated with the price: the pair is what an
//! article costs.

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

/// Every price of one article, oldest first, one per instant.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PriceSchedule(Vec<DatedPrice>);

impl PriceSchedule {
    /// The schedule of `prices`, in any order; of two at one instant the later in `prices` stays.
    pub fn new(mut prices: Vec<DatedPrice>) -> PriceSchedule {
        prices.reverse();
        prices.sort_by_key(|p| p.effective_from);
        prices.dedup_by_key(|p| p.effective_from);
        PriceSchedule(prices)
    }

    /// The price in force at `at`: the latest one that started at or before it. None before
    /// the first.
    pub fn at(&self, at: Timestamp) -> Option<&DatedPrice> {
        let started = self.0.partition_point(|p| p.effective_from <= at);
        started.checked_sub(1).map(|last| &self.0[last])
    }

    /// The prices that start after `at`, soonest first: those scheduled, seen at `at`.
    pub fn after(&self, at: Timestamp) -> &[DatedPrice] {
        &self.0[self.0.partition_point(|p| p.effective_from <= at)..]
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
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
