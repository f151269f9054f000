//! The stock ledger's arithmetic (docs/stock.md): why goods moved, what a count changes,
//! and what a transfer that arrived short or over records. Quantities are whole units; a level
//! may be negative (goods already in a customer's hands are never refused), a count or a
//! quantity received never is.

use crate::ids::{SkuId, StoreId, TransferId};
use crate::money::MAX_SAFE_INTEGER;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Why a movement changed a level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StockReason {
    Sale,
    Return,
    Count,
    TransferOut,
    TransferIn,
    /// A level set outside a count: `PUT /v1/stores/{storeId}/stock/{skuId}`, and the
    /// opening balance of a level recorded before the ledger.
    Adjustment,
}

impl StockReason {
    pub const ALL: [StockReason; 6] = [
        StockReason::Sale,
        StockReason::Return,
        StockReason::Count,
        StockReason::TransferOut,
        StockReason::TransferIn,
        StockReason::Adjustment,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StockReason::Sale => "sale",
            StockReason::Return => "return",
            StockReason::Count => "count",
            StockReason::TransferOut => "transfer_out",
            StockReason::TransferIn => "transfer_in",
            StockReason::Adjustment => "adjustment",
        }
    }

    pub fn parse(text: &str) -> Option<StockReason> {
        StockReason::ALL.into_iter().find(|reason| reason.as_str() == text)
    }
}

/// A quantity of units as a count, a transfer or a receipt states it: `0..=MAX_SAFE_INTEGER`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "i64")]
pub struct Units(i64);

impl Units {
    pub fn new(units: i64) -> Option<Units> {
        (0..=MAX_SAFE_INTEGER).contains(&units).then_some(Units(units))
    }

    pub fn get(self) -> i64 {
        self.0
    }
}

impl TryFrom<i64> for Units {
    type Error = &'static str;

    fn try_from(units: i64) -> Result<Units, &'static str> {
        Units::new(units).ok_or("a quantity out of range")
    }
}

impl From<Units> for i64 {
    fn from(units: Units) -> i64 {
        units.0
    }
}

/// The movement that brings a level to what was counted: counted minus the level the count
/// saw. `None` when the level is so far out of range that the difference would overflow.
pub fn count_delta(counted: Units, level: i64) -> Option<i64> {
    counted.get().checked_sub(level)
}

/// One article of a transfer as sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SentLine {
    pub sku_id: SkuId,
    pub quantity: Units,
}

/// One article of a transfer as received.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceivedLine {
    pub sku_id: SkuId,
    pub received_quantity: Units,
}

/// One article of a received transfer: what was sent, what arrived, and received minus sent
/// (negative when goods went missing on the way).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reconciled {
    pub sku_id: SkuId,
    pub quantity: Units,
    pub received: Units,
    pub difference: i64,
}

/// Why a receipt does not fit its transfer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReceiptMismatch {
    /// An article the transfer did not carry.
    NotSent { line: usize, sku_id: SkuId },
    /// An article of the transfer the receipt does not state.
    Missing(SkuId),
}

/// Pairs a receipt with its transfer, article by article, in the transfer's order. Every
/// article sent is stated once (a receipt says what arrived, zero included), and nothing
/// else; the receipt's lines are each once already.
pub fn reconcile(sent: &[SentLine], received: &[ReceivedLine]) -> Result<Vec<Reconciled>, ReceiptMismatch> {
    let mut arrived: BTreeMap<&SkuId, Units> = BTreeMap::new();
    for (line, receipt) in received.iter().enumerate() {
        if !sent.iter().any(|s| s.sku_id == receipt.sku_id) {
            return Err(ReceiptMismatch::NotSent {
                line,
                sku_id: receipt.sku_id.clone(),
            });
        }
        arrived.insert(&receipt.sku_id, receipt.received_quantity);
    }
    sent.iter()
        .map(|line| {
            let received = *arrived
                .get(&line.sku_id)
                .ok_or_else(|| ReceiptMismatch::Missing(line.sku_id.clone()))?;
            Ok(Reconciled {
                sku_id: line.sku_id.clone(),
                quantity: line.quantity,
                received,
                // Both within 0..=MAX_SAFE_INTEGER: the difference cannot overflow.
                difference: received.get() - line.quantity.get(),
            })
        })
        .collect()
}

/// A transfer as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransferRecord {
    pub transfer_id: TransferId,
    pub from_store_id: StoreId,
    pub to_store_id: StoreId,
    pub lines: Vec<SentLine>,
    pub sent_at: Timestamp,
    pub received: Option<Receipt>,
}

/// What arrived, article by article in the transfer's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Receipt {
    pub lines: Vec<Reconciled>,
    pub at: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sku(c: char) -> SkuId {
        SkuId::parse(&c.to_string().repeat(64)).unwrap()
    }

    fn sent(c: char, quantity: i64) -> SentLine {
        SentLine {
            sku_id: sku(c),
            quantity: Units::new(quantity).unwrap(),
        }
    }

    fn received(c: char, quantity: i64) -> ReceivedLine {
        ReceivedLine {
            sku_id: sku(c),
            received_quantity: Units::new(quantity).unwrap(),
        }
    }

    #[test]
    fn reasons_read_back_as_written() {
        for reason in StockReason::ALL {
            assert_eq!(StockReason::parse(reason.as_str()), Some(reason));
            assert_eq!(serde_json::to_value(reason).unwrap(), reason.as_str());
        }
        assert_eq!(StockReason::parse("theft"), None);
    }

    #[test]
    fn units_are_never_negative_nor_beyond_the_safe_range() {
        assert_eq!(Units::new(0).map(Units::get), Some(0));
        assert_eq!(Units::new(MAX_SAFE_INTEGER).map(Units::get), Some(MAX_SAFE_INTEGER));
        assert_eq!(Units::new(-1), None);
        assert_eq!(Units::new(MAX_SAFE_INTEGER + 1), None);
    }

    #[test]
    fn a_count_moves_the_level_to_what_was_counted() {
        let counted = Units::new(12).unwrap();
        assert_eq!(count_delta(counted, 20), Some(-8));
        assert_eq!(count_delta(counted, -3), Some(15));
        assert_eq!(count_delta(counted, 12), Some(0));
        assert_eq!(count_delta(counted, i64::MIN), None);
    }

    #[test]
    fn a_receipt_records_each_articles_difference_in_the_transfers_order() {
        let lines = [sent('a', 10), sent('b', 4)];
        let got = reconcile(&lines, &[received('b', 4), received('a', 7)]).unwrap();
        let differences: Vec<_> = got.iter().map(|r| (r.sku_id.clone(), r.difference)).collect();
        assert_eq!(differences, [(sku('a'), -3), (sku('b'), 0)]);
        let over = reconcile(&[sent('a', 2)], &[received('a', 3)]).unwrap();
        assert_eq!(over[0].difference, 1);
    }

    #[test]
    fn a_receipt_states_every_article_sent_and_nothing_else() {
        let lines = [sent('a', 10), sent('b', 4)];
        assert_eq!(
            reconcile(&lines, &[received('a', 10)]),
            Err(ReceiptMismatch::Missing(sku('b')))
        );
        assert_eq!(
            reconcile(&lines, &[received('a', 10), received('b', 4), received('c', 1)]),
            Err(ReceiptMismatch::NotSent {
                line: 2,
                sku_id: sku('c')
            })
        );
        let nothing_arrived = reconcile(&lines, &[received('a', 0), received('b', 0)]).unwrap();
        assert_eq!(
            nothing_arrived.iter().map(|r| r.difference).collect::<Vec<_>>(),
            [-10, -4]
        );
    }
}
