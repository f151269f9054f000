//! A store's snapshot for its tills: everything they price and sell with, read in one
//! consistent read, with the feed's cursor it is consistent with.

use super::*;
use crate::storage::catalog::CatalogRecord;
use crate::storage::offers::{CouponRecord, StoredRule};
use crate::storage::people::{StaffRecord, StoreRecord};
use jiff::Timestamp;
use till_core::catalog::StorePrices;
use till_core::events::FeedCursor;
use till_core::ids::StoreId;
use tokio::sync::mpsc;

/// What comes first: where the till follows the feed from, and the store.
#[derive(Clone, Debug)]
pub struct SnapshotHead {
    /// Every change with a position up to it is in the snapshot; one after it may be, or not.
    pub cursor: FeedCursor,
    /// The instant the prices in force are read at.
    pub taken_at: Timestamp,
    pub store: StoreRecord,
}

/// An article with the store's own prices of it from the snapshot's instant on (empty when it
/// sells at the catalog's).
#[derive(Clone, Debug)]
pub struct SnapshotArticle {
    pub record: CatalogRecord,
    pub own: StorePrices,
}

/// One part of a snapshot, in the order they are read: the head, then pages of each kind.
#[derive(Clone, Debug)]
pub enum SnapshotPart {
    Head(Box<SnapshotHead>),
    Articles(Vec<SnapshotArticle>),
    Promotions(Vec<StoredRule>),
    Coupons(Vec<CouponRecord>),
    Staff(Vec<StaffRecord>),
}

/// How a snapshot's read ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Taken {
    /// Every part was sent.
    Whole,
    /// No such store; nothing was sent.
    UnknownStore,
    /// The reader stopped taking parts; the read stopped there.
    Abandoned,
}

/// Snapshots of a store's selling data.
#[async_trait::async_trait]
pub trait Snapshots: Send + Sync {
    /// Reads `store_id`'s snapshot at `now` in one read transaction and sends its parts to
    /// `parts` in order, at the pace they are taken (a page at a time, so memory stays flat).
    /// Every article is sent, with every promotion rule and coupon and every staff member: what
    /// applies in the store is for the caller to choose.
    async fn store_snapshot(
        &self,
        store_id: &StoreId,
        now: Timestamp,
        parts: mpsc::Sender<SnapshotPart>,
    ) -> Result<Taken, StoreError>;
}
