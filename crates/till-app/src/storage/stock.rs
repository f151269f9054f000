//! Stock: levels, the ledger's movements, counts and transfers between stores.

use super::*;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use till_core::ids::{CountId, SkuId, StoreId, TransferId};
use till_core::stock::{ReceiptMismatch, ReceivedLine, SentLine, StockReason, TransferRecord, Units};

/// One movement of the ledger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Movement {
    /// Increases with each movement written; on PostgreSQL two nodes' movements may commit out
    /// of this order.
    pub id: i64,
    pub store_id: StoreId,
    pub sku_id: SkuId,
    pub delta: i64,
    pub reason: StockReason,
    /// The sale's or return's transaction id, the count's or the transfer's id; none for an
    /// adjustment.
    pub reference: Option<String>,
    pub at: Timestamp,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StockLevel {
    pub store_id: StoreId,
    pub sku_id: SkuId,
    pub on_hand: i64,
    pub updated_at: Timestamp,
}

/// One article as counted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CountLine {
    pub sku_id: SkuId,
    pub counted_quantity: Units,
}

/// A count as recorded, lines in the order they were sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CountRecord {
    pub count_id: CountId,
    pub store_id: StoreId,
    #[serde(skip)]
    pub counted_at: Timestamp,
    pub lines: Vec<CountedLine>,
}

/// One article of a recorded count: the level the count saw and the movement it made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CountedLine {
    pub sku_id: SkuId,
    pub counted_quantity: i64,
    pub previous_quantity: i64,
    pub delta_quantity: i64,
}

/// How a count went.
#[derive(Clone, Debug)]
pub enum CountOutcome {
    Recorded(CountRecord),
    /// Recorded earlier with the same store and lines: answered again.
    Replayed(CountRecord),
    /// Its id was used for another count.
    IdTaken(CountRecord),
    NoSuchStore,
    /// The article of line `line` is not in the catalog.
    NotInCatalog {
        line: usize,
        sku_id: SkuId,
    },
}

/// A count as the back office sends it, each article once.
#[derive(Clone, Debug)]
pub struct NewCount {
    pub count_id: CountId,
    pub store_id: StoreId,
    pub lines: Vec<CountLine>,
    pub at: Timestamp,
}

/// A transfer as the back office sends it: two stores, each article once.
#[derive(Clone, Debug)]
pub struct NewTransfer {
    pub transfer_id: TransferId,
    pub from_store_id: StoreId,
    pub to_store_id: StoreId,
    pub lines: Vec<SentLine>,
    pub at: Timestamp,
}

/// How receiving went.
#[derive(Clone, Debug)]
pub enum ReceiveOutcome {
    Received(TransferRecord),
    /// Received earlier with the same lines: answered again.
    Replayed(TransferRecord),
    /// Received earlier with other quantities.
    AlreadyReceived(TransferRecord),
    NoSuchTransfer,
    /// The receipt does not state exactly the transfer's articles.
    Mismatch(ReceiptMismatch),
}

/// How sending went.
#[derive(Clone, Debug)]
pub enum SendOutcome {
    Sent(TransferRecord),
    /// Sent earlier with the same stores and lines: answered again.
    Replayed(TransferRecord),
    /// Its id was used for another transfer.
    IdTaken(TransferRecord),
    NoSuchStore(StoreId),
    NotInCatalog {
        line: usize,
        sku_id: SkuId,
    },
}

/// Stock levels, their ledger, counts and transfers between stores.
#[async_trait::async_trait]
pub trait Stock: Send + Sync {
    /// `None` when no quantity was ever recorded for the pair.
    async fn get_stock(&self, store_id: &StoreId, sku_id: &SkuId) -> Result<Option<StockLevel>, StoreError>;
    /// Sets the quantity on hand as an adjustment. The store and the article must exist.
    async fn put_stock(
        &self,
        store_id: StoreId,
        sku_id: SkuId,
        on_hand: i64,
        now: Timestamp,
    ) -> Result<StockLevel, StoreError>;
    /// The movements of an article in a store, oldest first, after the movement `window.after`.
    async fn stock_movements(
        &self,
        store_id: &StoreId,
        sku_id: &SkuId,
        window: &Window<i64>,
    ) -> Result<Vec<Movement>, StoreError>;
    /// The last `count` movements of an article in a store, oldest first.
    async fn latest_stock_movements(
        &self,
        store_id: &StoreId,
        sku_id: &SkuId,
        count: usize,
    ) -> Result<Vec<Movement>, StoreError>;
    /// Records a count: each article's level set to what was counted, in one transaction.
    async fn record_stock_count(&self, count: NewCount) -> Result<CountOutcome, StoreError>;
    /// Records a transfer and takes its goods out of the sending store.
    async fn send_transfer(&self, transfer: NewTransfer) -> Result<SendOutcome, StoreError>;
    /// Puts what arrived of a transfer into the receiving store.
    async fn receive_transfer(
        &self,
        transfer_id: TransferId,
        lines: Vec<ReceivedLine>,
        at: Timestamp,
    ) -> Result<ReceiveOutcome, StoreError>;
    async fn get_transfer(&self, transfer_id: &TransferId) -> Result<Option<TransferRecord>, StoreError>;
}
