//! Webhook endpoints (docs/events.md, "Webhooks"): the back office creates, lists, deletes and
//! replays them; every node's delivery worker claims the endpoints that are due, reads the feed
//! after each one's cursor and writes how far it got, under a lease no other node can take
//! until it runs out. Webhooks keep real time, whatever the use cases' clock says: a receiver
//! checks a delivery's timestamp against its own clock.

use crate::app::App;
use crate::refusal::Error;
use crate::secret::{new_id, new_webhook_secret};
use crate::storage::feed::FeedEvent;
use crate::storage::feed::NewEndpoint;
use jiff::Timestamp;
use till_core::events::{EventType, FeedCursor};
use till_core::webhooks::WebhookSecret;

pub use crate::storage::feed::Attempt;
pub use crate::storage::feed::Claimed;
pub use crate::storage::feed::DeliveryRecord;
pub use crate::storage::feed::EndpointRecord;
pub use crate::storage::feed::Lease;
pub use crate::storage::feed::MOST_DELIVERIES_READ;
pub use crate::storage::feed::Progress;
pub use crate::storage::feed::Replayed;
pub use crate::storage::feed::Standing;

/// An endpoint created, with its signing secret: shown this once, kept only by storage.
pub struct Created {
    pub record: EndpointRecord,
    pub secret: WebhookSecret,
}

/// Creates an endpoint for `url` (checked by the caller to lead to a public address), starting
/// after the feed's last event now. `types: None` delivers every type.
pub async fn create(
    app: &App,
    url: String,
    types: Option<Vec<EventType>>,
    description: Option<String>,
) -> Result<Created, Error> {
    let secret = new_webhook_secret();
    let record = app
        .feed()
        .create_webhook(NewEndpoint {
            id: new_id("whk"),
            url,
            types,
            description,
            secret: secret.clone(),
            now: Timestamp::now(),
        })
        .await?;
    Ok(Created { record, secret })
}

/// Every endpoint, oldest first.
pub async fn endpoints(app: &App) -> Result<Vec<EndpointRecord>, Error> {
    Ok(app.feed().webhooks().await?)
}

/// Deletes an endpoint with its record of attempts; `false` when there is no such endpoint.
pub async fn delete(app: &App, id: String) -> Result<bool, Error> {
    Ok(app.feed().delete_webhook(id).await?)
}

/// An endpoint's latest `limit` attempts, newest first; `None` when there is no such endpoint.
pub async fn deliveries(app: &App, id: &str, limit: i64) -> Result<Option<Vec<DeliveryRecord>>, Error> {
    Ok(app.feed().webhook_deliveries(id, limit).await?)
}

/// Moves an endpoint's cursor back to `after`, clears its failures and enables it.
pub async fn replay(app: &App, id: String, after: FeedCursor) -> Result<Replayed, Error> {
    Ok(app.feed().replay_webhook(id, after, Timestamp::now()).await?)
}

/// Takes up to `most` endpoints that are due and behind the feed, for this node until `until`.
pub async fn claim(app: &App, now: Timestamp, until: Timestamp, most: i64) -> Result<Vec<Claimed>, Error> {
    let token = new_id("lease");
    Ok(app.feed().claim_webhooks(token, now, until, most).await?)
}

/// The feed as a delivery task reads it for an endpoint.
pub struct Unsent {
    /// The feed's last position, read first: a read of events that comes back short has seen
    /// every event up to it.
    pub head: FeedCursor,
    pub events: Vec<FeedEvent>,
}

/// Up to `most` events after `after`, of `types` only when not empty, with the feed's last
/// position.
pub async fn unsent(app: &App, after: FeedCursor, most: i64, types: &[EventType]) -> Result<Unsent, Error> {
    let head = app.feed().feed_head().await?;
    let events = app.feed().events_after(after, most, types).await?;
    Ok(Unsent { head, events })
}

/// Writes a batch's attempts and where it leaves the endpoint, while `lease` still holds it;
/// answers whether it did.
pub async fn record_progress(app: &App, id: &str, lease: &Lease, progress: Progress) -> Result<bool, Error> {
    Ok(app.feed().record_progress(id, lease, progress).await?)
}
