//! Receipts sent by e-mail (docs/receipts.md, "By e-mail"): the queue in the database, claimed
//! by one node's mailer at a time under a lease, and each send's record.

use super::*;
use till_core::customer::Email;
use till_core::e_receipt::{MailFailure, Recipient, RecipientKind, SendState};
use till_core::ids::SendId;

/// A send to queue.
#[derive(Clone, Debug)]
pub struct NewSend {
    pub id: SendId,
    pub transaction_id: TransactionId,
    pub recipient: Recipient,
    /// The sale's public page token, kept unless the sale has one already.
    pub link_token: String,
    pub requested_by: String,
    pub now: Timestamp,
}

/// A send as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendRecord {
    pub id: SendId,
    pub transaction_id: TransactionId,
    pub recipient: RecipientKind,
    /// A one-off address, held until the mail is delivered or given up.
    pub email: Option<Email>,
    pub state: SendState,
    pub attempts: u32,
    pub last_failure: Option<MailFailure>,
    pub queued_at: Timestamp,
    /// When the next attempt is due, while queued.
    pub due_at: Option<Timestamp>,
    pub sent_at: Option<Timestamp>,
}

/// How a request to send went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Queued {
    New(SendRecord),
    /// The send id named a send of this sale queued before: nothing was queued now.
    Replayed(SendRecord),
    /// The send id names a send of another sale.
    IdTaken,
}

/// A send a mailer took, with the lease under which it records how the attempt went.
#[derive(Clone, Debug)]
pub struct ClaimedSend {
    pub record: SendRecord,
    pub lease: String,
}

/// How an attempt went, to record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendOutcome {
    Delivered { at: Timestamp },
    RetryAt { failure: MailFailure, at: Timestamp },
    GaveUp { failure: MailFailure, at: Timestamp },
}

/// The queue at one instant, for `/metrics`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MailQueue {
    /// Sends waiting for an attempt.
    pub queued: u64,
    /// When the oldest of them was queued.
    pub oldest_queued_at: Option<Timestamp>,
    /// Sends given up, ever.
    pub failed: u64,
}

#[async_trait::async_trait]
pub trait ReceiptMail: Send + Sync {
    /// Queues a send, due now, and gives the sale its public page token if it has none.
    async fn queue_receipt_send(&self, send: NewSend) -> Result<Queued, StoreError>;
    /// The sends of a sale, oldest first.
    async fn receipt_sends(&self, transaction_id: &TransactionId) -> Result<Vec<SendRecord>, StoreError>;
    /// Takes up to `most` queued sends due at `now`, for the lease `token` until `until`.
    async fn claim_receipt_sends(
        &self,
        token: &str,
        now: Timestamp,
        until: Timestamp,
        most: i64,
    ) -> Result<Vec<ClaimedSend>, StoreError>;
    /// Records how an attempt went while `lease` still holds the send; `false`, writing
    /// nothing, when it does not. A delivered or given-up send lets its address go.
    async fn record_send(&self, id: &SendId, lease: &str, outcome: SendOutcome) -> Result<bool, StoreError>;
    /// Gives up, with `failure`, every queued send whose one-off address is the one the
    /// customer's profile holds now, letting the address go and ending any lease on the send;
    /// the number given up. None for a customer without a profile or an address.
    async fn give_up_sends_to_customer(
        &self,
        customer_id: &CustomerId,
        failure: MailFailure,
    ) -> Result<u64, StoreError>;
    async fn mail_queue(&self) -> Result<MailQueue, StoreError>;
}
