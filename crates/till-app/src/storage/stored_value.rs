//! Stored value: gift cards, credit notes and loyalty accounts.

use super::*;
use jiff::Timestamp;
use till_core::ids::{CustomerId, StoreId};
use till_core::money::Cents;
use till_core::stored_value::{ActivityKind, InstrumentCode, InstrumentKind};

/// A gift card issued without a sale.
#[derive(Clone, Debug)]
pub struct NewCard {
    pub code: InstrumentCode,
    pub balance: Cents,
    pub expires_at: Option<Timestamp>,
    pub store_ids: Vec<StoreId>,
    pub now: Timestamp,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Activity {
    pub id: i64,
    pub kind: ActivityKind,
    pub amount: i64,
    pub balance_after: i64,
    pub transaction_id: Option<String>,
    pub at: Timestamp,
}

/// An instrument as read, with its ledger, oldest activity first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstrumentRecord {
    pub kind: InstrumentKind,
    /// A card's last four symbols, a credit note's number.
    pub label: String,
    pub balance: Cents,
    pub issued_at: Timestamp,
    pub expires_at: Option<Timestamp>,
    pub blocked: bool,
    /// Empty: every store may take it.
    pub store_ids: Vec<String>,
    pub activities: Vec<Activity>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoyaltyAccount {
    pub customer_id: CustomerId,
    pub points: i64,
    pub enrolled_at: Timestamp,
}

/// A customer enrolled before any sale with the points they already hold, as when a loyalty
/// programme is brought over from another system (and the demo's regular customer).
#[derive(Clone, Debug)]
pub struct Enrollment {
    pub customer_id: CustomerId,
    pub points: u32,
    pub now: Timestamp,
}

/// Gift cards, credit notes and loyalty accounts.
#[async_trait::async_trait]
pub trait StoredValue: Send + Sync {
    /// Issues a gift card without a sale; `Conflict` when a card with this code exists.
    async fn issue_gift_card(&self, card: NewCard) -> Result<InstrumentRecord, StoreError>;
    /// The gift card `code`, if it exists and `store` (when given) may take it.
    async fn gift_card(
        &self,
        code: &InstrumentCode,
        store: Option<&StoreId>,
    ) -> Result<Option<InstrumentRecord>, StoreError>;
    /// The credit note whose code is `code`, if it exists and `store` (when given) may take
    /// it. Its fiscal number, or any text that is not its code, finds nothing.
    async fn credit_note(&self, code: &str, store: Option<&StoreId>) -> Result<Option<InstrumentRecord>, StoreError>;
    /// Blocks or unblocks the gift card `code`; `NotFound` when there is none.
    async fn block_gift_card(&self, code: &InstrumentCode, blocked: bool, now: Timestamp) -> Result<(), StoreError>;
    /// `None` for a customer never seen at a sale.
    async fn loyalty_account(&self, customer_id: &CustomerId) -> Result<Option<LoyaltyAccount>, StoreError>;
}
