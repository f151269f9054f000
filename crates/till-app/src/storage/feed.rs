//! The event feed and the webhook endpoints it is delivered to: endpoints, deliveries, and the
//! lease a delivering node holds.

use super::*;
use jiff::Timestamp;
use std::time::Duration;
use till_core::events::{EventType, FeedCursor};
use till_core::webhooks::{DisableReason, Failure, Streak, WebhookSecret};

/// An event as the feed answers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeedEvent {
    /// Never changes, on any node: what a consumer de-duplicates by.
    pub id: i64,
    pub cursor: FeedCursor,
    pub kind: EventType,
    pub occurred_at: Timestamp,
    pub store_id: Option<String>,
    pub register_id: Option<String>,
    /// The event's data, JSON.
    pub data: String,
}

/// Most events one read answers.
pub const MOST_EVENTS_READ: i64 = 1_000;

/// An endpoint as it is created.
#[derive(Clone, Debug)]
pub struct NewEndpoint {
    pub id: String,
    pub url: String,
    /// `None`: every type.
    pub types: Option<Vec<EventType>>,
    pub description: Option<String>,
    pub secret: WebhookSecret,
    pub now: Timestamp,
}

/// An endpoint a node task holds until its lease expires.
#[derive(Debug)]
pub struct Claimed {
    pub endpoint: EndpointRecord,
    pub secret: WebhookSecret,
    pub lease: Lease,
}

/// An endpoint and where its deliveries stand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointRecord {
    pub id: String,
    pub url: String,
    pub types: Option<Vec<EventType>>,
    pub description: Option<String>,
    pub created_at: Timestamp,
    pub delivered_through: FeedCursor,
    /// When it may next be tried.
    pub due_at: Timestamp,
    /// Its failed attempts in a row, and the last of them (also once it is disabled).
    pub failing: Option<(Streak, Failure)>,
    pub disabled: Option<Disabled>,
}

/// The proof that a task holds an endpoint: its progress is written only while it does, and
/// only if no replay came since it took it.
#[derive(Clone, Debug)]
pub struct Lease {
    pub token: String,
    pub generation: i64,
}

/// What a batch of deliveries did.
#[derive(Clone, Debug)]
pub struct Progress {
    pub delivered_through: FeedCursor,
    pub attempts: Vec<Attempt>,
    pub standing: Standing,
    /// Keep the lease until then (there is more to send at once), or release it.
    pub hold_until: Option<Timestamp>,
    /// Prune the attempts past the [`KEPT_DELIVERIES`] latest.
    pub prune: bool,
    pub now: Timestamp,
}

/// What a replay did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Replayed {
    Done(EndpointRecord),
    Unknown,
    /// The cursor given lies past the feed's last event.
    PastHead(FeedCursor),
}

/// One recorded attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryRecord {
    pub id: i64,
    pub attempt: Attempt,
}

/// One attempt to deliver one event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The event's id, its `evt_` number.
    pub event_id: i64,
    /// 1 for the event's first try since the endpoint last moved on.
    pub attempt: u32,
    /// The receiver's status, if it answered.
    pub status: Option<u16>,
    /// `None` when delivered.
    pub failure: Option<Failure>,
    pub at: Timestamp,
    pub duration: Duration,
}

/// Most attempts one read of an endpoint's deliveries answers.
pub const MOST_DELIVERIES_READ: i64 = 500;

/// How an endpoint stands after a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Every attempt delivered: tried again as soon as there is more.
    Healthy,
    /// The last attempt failed: tried again at `retry_at`.
    Failing {
        streak: Streak,
        failure: Failure,
        retry_at: Timestamp,
    },
    /// Given up on until a replay.
    Disabled {
        reason: DisableReason,
        streak: Streak,
        failure: Failure,
    },
}

/// The event feed and the webhook endpoints it is delivered to.
#[async_trait::async_trait]
pub trait Feed: Send + Sync {
    /// Up to `limit` events after `after`, in feed order, of `types` only when not empty.
    async fn events_after(
        &self,
        after: FeedCursor,
        limit: i64,
        types: &[EventType],
    ) -> Result<Vec<FeedEvent>, StoreError>;
    /// The feed's last position now: a read of events after a cursor that comes back short
    /// has seen every event up to it.
    async fn feed_head(&self) -> Result<FeedCursor, StoreError>;
    /// Every endpoint, oldest first.
    async fn webhooks(&self) -> Result<Vec<EndpointRecord>, StoreError>;
    /// Creates an endpoint that receives the events numbered after the feed's last one now.
    async fn create_webhook(&self, endpoint: NewEndpoint) -> Result<EndpointRecord, StoreError>;
    /// Deletes an endpoint and its attempts; `false` when there was none.
    async fn delete_webhook(&self, id: String) -> Result<bool, StoreError>;
    /// Sets an endpoint's cursor back (or forward) to `after`, clears its failures and enables
    /// it, so that it is delivered again from there. A task that holds it finishes its batch,
    /// writes nothing of it but its attempts, and lets it go.
    async fn replay_webhook(&self, id: String, after: FeedCursor, now: Timestamp) -> Result<Replayed, StoreError>;
    /// An endpoint's latest attempts, newest first; `None` for an unknown endpoint.
    async fn webhook_deliveries(&self, id: &str, limit: i64) -> Result<Option<Vec<DeliveryRecord>>, StoreError>;
    /// Takes up to `limit` endpoints that are due, not disabled, not held and behind the feed,
    /// for a task of this node until `until`. Reads first, so that a node with nothing to do
    /// writes nothing.
    async fn claim_webhooks(
        &self,
        token: String,
        now: Timestamp,
        until: Timestamp,
        limit: i64,
    ) -> Result<Vec<Claimed>, StoreError>;
    /// Writes a batch's attempts and where it leaves the endpoint, if `lease` still holds it
    /// and no replay came since; answers whether it did. Otherwise only the attempts are kept
    /// (none for a deleted endpoint), and a lease a replay made stale is released.
    async fn record_progress(&self, id: &str, lease: &Lease, progress: Progress) -> Result<bool, StoreError>;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Disabled {
    pub at: Timestamp,
    pub reason: DisableReason,
}
