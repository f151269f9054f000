//! The payment-attempt ledger (docs/payments.md): attempts recorded before the terminal is
//! asked, the terminal's outcome, voids and orphans. Every change is written guarded by the
//! state it was computed from, so two requests racing on one attempt never both move it; the
//! capture by a sale and a refund by a return are written by the sale's own transaction
//! (`storage::sales`).

use super::*;
use jiff::Timestamp;
use till_core::ids::SessionId;
use till_core::payment::{Attempt, PaymentId, PaymentState};

/// Which attempts a list holds.
#[derive(Clone, Debug, Default)]
pub struct PaymentFilter {
    pub session_id: Option<SessionId>,
    pub state: Option<PaymentState>,
}

/// Why an attempt changed, for the feed: only an orphan is announced outside a sale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaymentChange {
    /// An outcome recorded, or a void.
    Settled,
    /// An approval no sale captured in time: `payment.orphaned`.
    Orphaned,
}

#[async_trait::async_trait]
pub trait Payments: Send + Sync {
    /// Records a new attempt. `false`, writing nothing, when an attempt of that id is held:
    /// the caller reads it and compares.
    async fn record_attempt(&self, attempt: &Attempt) -> Result<bool, StoreError>;
    async fn get_attempt(&self, payment_id: &PaymentId) -> Result<Option<Attempt>, StoreError>;
    /// Writes `next` in place of the attempt held in state `from`: `NotWritten` when it moved
    /// meanwhile (read it again and decide again).
    async fn replace_attempt(
        &self,
        from: PaymentState,
        next: &Attempt,
        change: PaymentChange,
    ) -> Result<(), StoreError>;
    /// Attempts by id, filtered, in `window`.
    async fn list_attempts(
        &self,
        filter: &PaymentFilter,
        window: &Window<PaymentId>,
    ) -> Result<Vec<Attempt>, StoreError>;
    /// Approvals no sale captured, recorded before `cutoff`, oldest first, at most `limit`.
    async fn awaiting_capture(&self, cutoff: Timestamp, limit: usize) -> Result<Vec<Attempt>, StoreError>;
    /// Takes the orphan sweep's turn for `holder` until `until`, when no node holds it at `now`.
    async fn claim_orphan_sweep(&self, holder: &str, now: Timestamp, until: Timestamp) -> Result<bool, StoreError>;
}
