//! The event feed's vocabulary: the types of business facts till publishes, and the cursor a
//! consumer follows (docs/events.md).

use serde::{Deserialize, Serialize};

/// What happened. Each write that makes a fact records its event in the same transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum EventType {
    #[serde(rename = "sale.completed")]
    SaleCompleted,
    #[serde(rename = "return.completed")]
    ReturnCompleted,
    #[serde(rename = "session.opened")]
    SessionOpened,
    #[serde(rename = "session.closed")]
    SessionClosed,
    #[serde(rename = "cash.moved")]
    CashMoved,
    #[serde(rename = "period.closed")]
    PeriodClosed,
    #[serde(rename = "stock.adjusted")]
    StockAdjusted,
    #[serde(rename = "stock.transferred")]
    StockTransferred,
    #[serde(rename = "promotion.changed")]
    PromotionChanged,
    #[serde(rename = "giftcard.changed")]
    GiftCardChanged,
    #[serde(rename = "creditnote.issued")]
    CreditNoteIssued,
    #[serde(rename = "customer.erased")]
    CustomerErased,
    #[serde(rename = "payment.captured")]
    PaymentCaptured,
    #[serde(rename = "payment.orphaned")]
    PaymentOrphaned,
    #[serde(rename = "payment.refunded")]
    PaymentRefunded,
    #[serde(rename = "catalog.changed")]
    CatalogChanged,
    #[serde(rename = "store_price.changed")]
    StorePriceChanged,
    #[serde(rename = "coupon.changed")]
    CouponChanged,
    #[serde(rename = "customer.changed")]
    CustomerChanged,
}

impl EventType {
    pub const ALL: [EventType; 19] = [
        EventType::SaleCompleted,
        EventType::ReturnCompleted,
        EventType::SessionOpened,
        EventType::SessionClosed,
        EventType::CashMoved,
        EventType::PeriodClosed,
        EventType::StockAdjusted,
        EventType::StockTransferred,
        EventType::PromotionChanged,
        EventType::GiftCardChanged,
        EventType::CreditNoteIssued,
        EventType::CustomerErased,
        EventType::PaymentCaptured,
        EventType::PaymentOrphaned,
        EventType::PaymentRefunded,
        EventType::CatalogChanged,
        EventType::StorePriceChanged,
        EventType::CouponChanged,
        EventType::CustomerChanged,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::SaleCompleted => "sale.completed",
            EventType::ReturnCompleted => "return.completed",
            EventType::SessionOpened => "session.opened",
            EventType::SessionClosed => "session.closed",
            EventType::CashMoved => "cash.moved",
            EventType::PeriodClosed => "period.closed",
            EventType::StockAdjusted => "stock.adjusted",
            EventType::StockTransferred => "stock.transferred",
            EventType::PromotionChanged => "promotion.changed",
            EventType::GiftCardChanged => "giftcard.changed",
            EventType::CreditNoteIssued => "creditnote.issued",
            EventType::CustomerErased => "customer.erased",
            EventType::PaymentCaptured => "payment.captured",
            EventType::PaymentOrphaned => "payment.orphaned",
            EventType::PaymentRefunded => "payment.refunded",
            EventType::CatalogChanged => "catalog.changed",
            EventType::StorePriceChanged => "store_price.changed",
            EventType::CouponChanged => "coupon.changed",
            EventType::CustomerChanged => "customer.changed",
        }
    }

    pub fn parse(text: &str) -> Option<EventType> {
        EventType::ALL.into_iter().find(|kind| kind.as_str() == text)
    }
}

/// A place in the feed: the position of the last event a consumer has seen, zero before the
/// first. Written as its decimal digits, which a consumer passes back as they were given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct FeedCursor(i64);

impl FeedCursor {
    /// The feed before its first event.
    pub const START: FeedCursor = FeedCursor(0);

    /// A cursor as a client sent it: ASCII digits of a position, at most 18 of them so that
    /// any value fits; nothing else (no sign, no spaces).
    pub fn parse(text: &str) -> Option<FeedCursor> {
        if text.is_empty() || text.len() > 18 || !text.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        text.parse().ok().map(FeedCursor)
    }

    /// The cursor of the event at `position`, as the store numbers them (from 1).
    pub fn at(position: i64) -> FeedCursor {
        FeedCursor(position.max(0))
    }

    pub fn position(self) -> i64 {
        self.0
    }
}

impl std::fmt::Display for FeedCursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::{EventType, FeedCursor};
    use proptest::prelude::*;

    #[test]
    fn every_type_reads_back_from_its_name() {
        for kind in EventType::ALL {
            assert_eq!(EventType::parse(kind.as_str()), Some(kind));
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
        }
        assert_eq!(EventType::parse("sale.Completed"), None);
    }

    #[test]
    fn a_cursor_is_digits_only() {
        assert_eq!(FeedCursor::parse("0"), Some(FeedCursor::START));
        assert_eq!(FeedCursor::parse("42").map(FeedCursor::position), Some(42));
        for bad in ["", "-1", "+1", " 1", "1e3", "0x10", "9999999999999999999", "١"] {
            assert_eq!(FeedCursor::parse(bad), None, "{bad:?}");
        }
    }

    proptest! {
        #[test]
        fn a_cursor_reads_back_from_its_text(position in 0i64..=999_999_999_999_999_999) {
            let cursor = FeedCursor::at(position);
            prop_assert_eq!(FeedCursor::parse(&cursor.to_string()), Some(cursor));
        }
    }
}
