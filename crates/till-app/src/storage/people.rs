//! Stores and staff, and a PIN attempt as the store counted it.

use super::*;
use jiff::Timestamp;
use till_core::ids::{RegisterId, StoreId, Subject};
use till_core::staff::{PinLimits, StaffMember};
use till_core::store::StoreProfile;

#[derive(Clone, Debug)]
pub struct StaffRecord {
    pub subject: Subject,
    pub member: StaffMember,
    /// argon2id PHC string.
    pub pin_hash: String,
    pub grants_synced_at: Timestamp,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// A staff write. `pin_hash` is `None` to keep the current PIN of an existing member.
pub struct PutStaff {
    pub subject: Subject,
    pub member: StaffMember,
    pub pin_hash: Option<String>,
}

/// Where a subject stands after reserving a PIN attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinAttempt {
    /// The attempt may be evaluated; `last` when a wrong PIN now leaves the subject locked.
    Allowed { last: bool },
    /// Locked until that instant.
    LockedUntil(Timestamp),
}

#[derive(Clone, Debug)]
pub struct StoreRecord {
    pub store_id: StoreId,
    pub profile: StoreProfile,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// Stores and staff, with the PIN attempts of each.
#[async_trait::async_trait]
pub trait People: Send + Sync {
    async fn get_staff(&self, subject: &Subject) -> Result<Option<StaffRecord>, StoreError>;
    /// The staff by subject, in `window`.
    async fn list_staff(&self, window: &Window<Subject>) -> Result<Vec<StaffRecord>, StoreError>;
    /// Creates or replaces a staff member; `true` when created. A new member needs a PIN.
    async fn put_staff(&self, put: PutStaff, now: Timestamp) -> Result<(StaffRecord, bool), StoreError>;
    /// Reserves one PIN attempt for `subject` at `register` before its PIN is evaluated, in
    /// two counts: the register's and every register's. Concurrent guesses cannot exceed either
    /// limit: the reservation that reaches one locks the subject at once (at that register, or
    /// at every register), and only a correct PIN (`clear_pin_failures`) lifts it
    /// early.
    async fn reserve_pin_attempt(
        &self,
        subject: &str,
        register: &RegisterId,
        now: Timestamp,
        limits: PinLimits,
        lockout: std::time::Duration,
    ) -> Result<PinAttempt, StoreError>;
    /// A correct PIN at `register`: the register's count and every register's start again
    /// from zero, and their locks are lifted. Another register's own count stays.
    async fn clear_pin_failures(&self, subject: &str, register: &RegisterId, now: Timestamp) -> Result<(), StoreError>;
    async fn get_store(&self, store_id: &StoreId) -> Result<Option<StoreRecord>, StoreError>;
    /// The stores by id, in `window`.
    async fn list_stores(&self, window: &Window<StoreId>) -> Result<Vec<StoreRecord>, StoreError>;
    /// Creates or replaces a store; `true` when it was created.
    async fn put_store(
        &self,
        store_id: StoreId,
        profile: StoreProfile,
        now: Timestamp,
    ) -> Result<(StoreRecord, bool), StoreError>;
    /// Whether `store_id` belongs to the network, `None` while the network has no store at all
    /// (the interface then skips the check).
    async fn store_in_network(&self, store_id: &StoreId) -> Result<Option<bool>, StoreError>;
}
