//! Whether this node can serve (its database answers; load balancers route to a node only
//! while it does), and the figures an operator watches it by.

use crate::app::App;
use crate::refusal::Error;
use jiff::{SignedDuration, Timestamp};

pub use crate::storage::Engine;
pub use crate::storage::health::{Backlog, Connections, EndpointBacklog};

/// Asks the database for an answer; the engine it runs on when it gives one.
pub async fn ready(app: &App) -> Result<Engine, Error> {
    app.health().ping().await?;
    Ok(app.health().engine())
}

/// How this node and the deliveries it shares with the others stand at one instant.
#[derive(Clone, Debug, PartialEq)]
pub struct Vitals {
    pub engine: Engine,
    pub connections: Connections,
    /// `None` when the database did not answer.
    pub deliveries: Option<Deliveries>,
}

/// What waits to be delivered, summed over the webhook endpoints still tried.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Deliveries {
    pub feed_head: i64,
    /// Committed, not yet numbered into the feed.
    pub unplaced_events: u64,
    /// Positions past each cursor, of any type: an endpoint that takes only some types
    /// receives fewer.
    pub pending_events: u64,
    /// How long ago the oldest of them happened, by the event's own time: a sale made offline
    /// and sent late counts from when it was made.
    pub oldest_pending: SignedDuration,
    pub endpoints: EndpointCounts,
    /// The longest current streak of failures, from its first failure.
    pub longest_failing: SignedDuration,
}

/// Webhook endpoints by how they stand.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EndpointCounts {
    pub healthy: u64,
    pub failing: u64,
    pub disabled: u64,
}

/// Reads the figures; a database that does not answer leaves the deliveries out.
pub async fn vitals(app: &App, now: Timestamp) -> Vitals {
    let health = app.health();
    let deliveries = match health.backlog().await {
        Ok(backlog) => Some(deliveries(&backlog, now)),
        Err(error) => {
            tracing::warn!(%error, "the delivery backlog could not be read for the metrics");
            None
        }
    };
    Vitals {
        engine: health.engine(),
        connections: health.connections(),
        deliveries,
    }
}

/// Sums each endpoint's place in the feed.
pub fn deliveries(backlog: &Backlog, now: Timestamp) -> Deliveries {
    let head = backlog.head.position();
    let mut sums = Deliveries {
        feed_head: head,
        unplaced_events: backlog.unplaced_events,
        ..Deliveries::default()
    };
    for endpoint in &backlog.endpoints {
        if endpoint.disabled {
            sums.endpoints.disabled += 1;
            continue;
        }
        let since = |at: Timestamp| now.duration_since(at).max(SignedDuration::ZERO);
        match endpoint.failing_since {
            Some(first) => {
                sums.endpoints.failing += 1;
                sums.longest_failing = sums.longest_failing.max(since(first));
            }
            None => sums.endpoints.healthy += 1,
        }
        let behind = head.saturating_sub(endpoint.delivered_through.position()).max(0);
        sums.pending_events = sums.pending_events.saturating_add(behind.unsigned_abs());
        if behind > 0
            && let Some(at) = endpoint.next_event_at
        {
            sums.oldest_pending = sums.oldest_pending.max(since(at));
        }
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;
    use till_core::events::FeedCursor;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + seconds).unwrap()
    }

    fn endpoint(through: i64, next: Option<i64>, failing: Option<i64>, disabled: bool) -> EndpointBacklog {
        EndpointBacklog {
            delivered_through: FeedCursor::at(through),
            next_event_at: next.map(at),
            failing_since: failing.map(at),
            disabled,
        }
    }

    #[test]
    fn deliveries_sum_the_endpoints_still_tried() {
        let backlog = Backlog {
            head: FeedCursor::at(100),
            unplaced_events: 3,
            endpoints: vec![
                // Up to date.
                endpoint(100, None, None, false),
                // 40 behind, failing for 50 s, its next event 60 s old.
                endpoint(60, Some(40), Some(50), false),
                // 10 behind, next event 5 s old.
                endpoint(90, Some(95), None, false),
                // Disabled long ago: counted apart, its backlog left out.
                endpoint(1, Some(-1_000), Some(-2_000), true),
            ],
        };
        let sums = deliveries(&backlog, at(100));
        assert_eq!(sums.feed_head, 100);
        assert_eq!(sums.unplaced_events, 3);
        assert_eq!(sums.pending_events, 50);
        assert_eq!(sums.oldest_pending, SignedDuration::from_secs(60));
        assert_eq!(sums.longest_failing, SignedDuration::from_secs(50));
        assert_eq!(
            sums.endpoints,
            EndpointCounts {
                healthy: 2,
                failing: 1,
                disabled: 1
            }
        );
    }

    #[test]
    fn a_clock_behind_an_event_counts_no_negative_age() {
        let backlog = Backlog {
            head: FeedCursor::at(5),
            unplaced_events: 0,
            endpoints: vec![endpoint(4, Some(30), Some(30), false)],
        };
        let sums = deliveries(&backlog, at(0));
        assert_eq!(sums.oldest_pending, SignedDuration::ZERO);
        assert_eq!(sums.longest_failing, SignedDuration::ZERO);
        assert_eq!(sums.pending_events, 1);
    }
}
