//! The delivery of the event feed to webhook endpoints (docs/events.md,
//! "Webhooks"), running on every node.
//!
//! The database decides who sends what: every few milliseconds a node claims the endpoints
//! that are due and behind the feed, each with a lease that no other node can take until it
//! expires, and works on each on a task of its own ([`endpoint`]), so that a slow receiver
//! holds up nobody else. A task writes its progress under its lease and renews it while there
//! is more to send; a node that dies loses its leases and another node continues from the
//! cursors they left. Deliveries keep real time: a receiver checks `webhook-timestamp`
//! against its own clock.

mod endpoint;
pub mod sender;

use crate::state::{AppState, WebhookSettings};
use crate::worker::{StopSignal, Worker};
use jiff::Timestamp;
use sender::Sender;
use std::sync::Arc;
use std::time::Duration;
use till_app::App;
use till_core::webhooks::RetryPolicy;
use tokio::task::JoinSet;

/// How often a node looks for endpoints that are due.
const CLAIM_EVERY: Duration = Duration::from_millis(50);

/// How long a node waits after a claim the database refused.
const CLAIM_AGAIN_AFTER: Duration = Duration::from_secs(1);

/// Endpoints one node works on at once.
const MOST_AT_ONCE: usize = 64;

/// What every endpoint task of a node shares.
struct Context {
    /// The service's state, for its use cases' context.
    state: AppState,
    sender: Sender,
    retry: RetryPolicy,
    lease: Duration,
    /// A task starts no send past this time after its batch began, so that its lease (taken
    /// or renewed when the batch began) outlasts the send.
    batch_budget: Duration,
}

impl Context {
    fn new(state: AppState, settings: &WebhookSettings, sender: Sender) -> Context {
        let lease = (settings.timeout * 4).max(Duration::from_secs(60));
        Context {
            state,
            sender,
            retry: settings.retry,
            lease,
            batch_budget: lease.saturating_sub(settings.timeout * 2),
        }
    }

    fn app(&self) -> &App {
        self.state.app()
    }

    /// When a lease taken or renewed at `now` runs out.
    fn lease_until(&self, now: Timestamp) -> Timestamp {
        jiff::SignedDuration::try_from(self.lease)
            .ok()
            .and_then(|lease| now.checked_add(lease).ok())
            .unwrap_or(Timestamp::MAX)
    }
}

/// This node's deliveries, running until [`Deliveries::stop`] (or until dropped).
pub struct Deliveries {
    worker: Worker,
}

impl Deliveries {
    /// Starts delivering with the use cases and webhook settings of `state`.
    pub fn start(state: &AppState) -> Deliveries {
        let mut worker = Worker::default();
        let settings = &state.config().webhooks;
        match Sender::new(settings.allow_private, settings.timeout) {
            Ok(sender) => {
                let context = Arc::new(Context::new(state.clone(), settings, sender));
                worker.spawn(|stop| run(context, stop));
            }
            Err(error) => tracing::error!(%error, "webhook deliveries cannot start without an HTTP client"),
        }
        Deliveries { worker }
    }

    /// Stops claiming, stops every send under way (those events count as not sent), writes
    /// what was delivered and releases the leases, then returns.
    pub async fn stop(self) {
        self.worker.stop().await;
    }
}

async fn run(context: Arc<Context>, mut stop: StopSignal) {
    let mut tasks = JoinSet::new();
    loop {
        while tasks.try_join_next().is_some() {}
        let room = MOST_AT_ONCE.saturating_sub(tasks.len());
        let mut pause = CLAIM_EVERY;
        if room > 0 {
            let now = Timestamp::now();
            match till_app::webhooks::claim(context.app(), now, context.lease_until(now), room as i64).await {
                Ok(claimed) => {
                    for endpoint in claimed {
                        tasks.spawn(endpoint::deliver(endpoint, context.clone(), stop.clone()));
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, "webhook endpoints could not be claimed; trying again");
                    pause = CLAIM_AGAIN_AFTER;
                }
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = stop.changed() => break,
        }
    }
    while tasks.join_next().await.is_some() {}
}
