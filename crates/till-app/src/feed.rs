//! The event feed read from outside (docs/events.md): every business fact once, in the order
//! the facts committed on any node, after a cursor the reader keeps.

use crate::app::App;
use crate::refusal::Error;
use till_core::events::{EventType, FeedCursor};

pub use crate::storage::feed::FeedEvent;
pub use crate::storage::feed::MOST_EVENTS_READ;

/// Up to `limit` events after `after`, in feed order, of `types` only when not empty.
pub async fn events_after(
    app: &App,
    after: FeedCursor,
    limit: i64,
    types: &[EventType],
) -> Result<Vec<FeedEvent>, Error> {
    Ok(app.feed().events_after(after, limit, types).await?)
}
